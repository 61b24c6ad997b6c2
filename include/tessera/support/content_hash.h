// ContentHash64: a fast 64-bit checksum of bytes, for integrity checks of artifacts (issue 15):
// codegen records the hash of a model library's graph JSON and params blob, and the loader
// recomputes it, so a library whose data was changed after compilation (a flipped bit, a bad
// copy, an edit) is refused instead of running with wrong weights.
//
// It detects corruption, not tampering: it is not cryptographic, and whoever can edit the file can
// edit the recorded hash too (integrity against accidents; trust comes from where the file came
// from). Speed matters more here: a 100 MB params blob is hashed at load time at several GB/s.
//
// Algorithm (Tessera's own; the value is part of the artifact format, so it must never change):
// four 64-bit lanes, seeded from `seed`, each absorb every fourth little-endian 64-bit word of the
// input as  lane = rotl64((lane ^ word) * kMulA, 29) * kMulB  (32 bytes per step, four independent
// multiply chains). The tail (size % 32 bytes) is absorbed a word at a time into lane 0, the last
// partial word zero-padded; then the length is mixed in and the lanes are folded together with a
// final avalanche (xor-shift-multiply). Reads are byte-order independent (explicit
// little-endian), so hosts of either order agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace tessera {

namespace content_hash_detail {

inline constexpr uint64_t kMulA = 0x9e3779b97f4a7c15ull;  // 2^64 / golden ratio, odd
inline constexpr uint64_t kMulB = 0xd6e8feb86659fd93ull;  // an odd constant with mixed bits
inline constexpr uint64_t kMulC = 0xc2b2ae3d27d4eb4full;

inline uint64_t Rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline uint64_t Load64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];  // little-endian; compilers emit one load
  return v;
}

inline uint64_t Absorb(uint64_t lane, uint64_t word) { return Rotl((lane ^ word) * kMulA, 29) * kMulB; }

inline uint64_t Avalanche(uint64_t h) {
  h ^= h >> 31;
  h *= kMulC;
  h ^= h >> 29;
  h *= kMulA;
  h ^= h >> 32;
  return h;
}

}  // namespace content_hash_detail

/// The hash of `size` bytes at `data` (see the header comment). `seed` chains hashes:
/// ContentHash64(b, n, ContentHash64(a, m)) covers a then b.
inline uint64_t ContentHash64(const void* data, size_t size, uint64_t seed = 0) {
  using namespace content_hash_detail;
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t l0 = seed ^ 0x243f6a8885a308d3ull, l1 = seed ^ 0x13198a2e03707344ull;
  uint64_t l2 = seed ^ 0xa4093822299f31d0ull, l3 = seed ^ 0x082efa98ec4e6c89ull;
  size_t i = 0;
  for (; i + 32 <= size; i += 32) {
    l0 = Absorb(l0, Load64(p + i));
    l1 = Absorb(l1, Load64(p + i + 8));
    l2 = Absorb(l2, Load64(p + i + 16));
    l3 = Absorb(l3, Load64(p + i + 24));
  }
  for (; i + 8 <= size; i += 8) l0 = Absorb(l0, Load64(p + i));
  if (i < size) {
    unsigned char last[8] = {};
    std::memcpy(last, p + i, size - i);
    l0 = Absorb(l0, Load64(last));
  }
  uint64_t h = Avalanche(l0 ^ Rotl(l1, 17) ^ Rotl(l2, 31) ^ Rotl(l3, 47) ^ (static_cast<uint64_t>(size) * kMulC));
  return Avalanche(h ^ l1 ^ Rotl(l0 + l3, 13) ^ l2);
}

inline uint64_t ContentHash64(std::string_view bytes, uint64_t seed = 0) {
  return ContentHash64(bytes.data(), bytes.size(), seed);
}

}  // namespace tessera
