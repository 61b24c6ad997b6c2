// A minimal ELF64 image builder for the artifact reader's tests: an ELF header, one data section
// (.rodata) holding the given symbols' bytes, .dynstr, .dynsym and the section headers, in either
// byte order and for any e_machine. No program headers: it is read, never loaded.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace tessera::runtime::testing {

struct FakeElf {
  bool little_endian = true;
  uint16_t machine = 183;  // EM_AARCH64
  std::map<std::string, std::string> symbols;  // name -> bytes (in .rodata)
};

class ElfWriter {
 public:
  explicit ElfWriter(bool little) : little_(little) {}
  void U8(uint8_t v) { out_ += static_cast<char>(v); }
  void U16(uint16_t v) { Int(v, 2); }
  void U32(uint32_t v) { Int(v, 4); }
  void U64(uint64_t v) { Int(v, 8); }
  void Raw(const std::string& s) { out_ += s; }
  std::string& out() { return out_; }

 private:
  void Int(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_ += static_cast<char>((v >> (8 * (little_ ? i : n - 1 - i))) & 0xff);
  }
  bool little_;
  std::string out_;
};

/// An 8-byte integer symbol's bytes in the image's byte order.
inline std::string U64Bytes(uint64_t v, bool little) {
  ElfWriter w(little);
  w.U64(v);
  return w.out();
}

inline std::string BuildFakeElf(const FakeElf& spec) {
  constexpr uint64_t kRodataAddr = 0x1000;
  // .rodata: the symbols, each 8-byte aligned.
  std::string rodata, dynstr(1, '\0');
  struct Sym {
    uint32_t name;
    uint64_t value, size;
  };
  std::map<std::string, Sym> syms;
  for (const auto& [name, bytes] : spec.symbols) {
    rodata.append((8 - rodata.size() % 8) % 8, '\0');
    syms[name] = {static_cast<uint32_t>(dynstr.size()), kRodataAddr + rodata.size(), bytes.size()};
    rodata += bytes;
    dynstr += name + '\0';
  }
  const uint64_t rodata_off = 64, dynstr_off = rodata_off + rodata.size(), dynsym_off = dynstr_off + dynstr.size();
  const uint64_t dynsym_size = 24 * (syms.size() + 1), shoff = dynsym_off + dynsym_size;

  ElfWriter w(spec.little_endian);
  w.Raw(std::string("\x7f" "ELF", 4));
  w.U8(2);                               // ELFCLASS64
  w.U8(spec.little_endian ? 1 : 2);      // ELFDATA2LSB / MSB
  w.U8(1);                               // EV_CURRENT
  w.Raw(std::string(9, '\0'));
  w.U16(3);                              // ET_DYN
  w.U16(spec.machine);
  w.U32(1);
  w.U64(0);                              // e_entry
  w.U64(0);                              // e_phoff
  w.U64(shoff);
  w.U32(0);                              // e_flags
  w.U16(64);                             // e_ehsize
  w.U16(56);                             // e_phentsize
  w.U16(0);                              // e_phnum
  w.U16(64);                             // e_shentsize
  w.U16(4);                              // e_shnum: null, .rodata, .dynstr, .dynsym
  w.U16(0);                              // e_shstrndx (no section names)
  w.Raw(rodata);
  w.Raw(dynstr);
  w.Raw(std::string(24, '\0'));          // symbol 0
  for (const auto& [name, s] : syms) {
    w.U32(s.name);
    w.U8(0x11);                          // STB_GLOBAL, STT_OBJECT
    w.U8(0);
    w.U16(1);                            // .rodata
    w.U64(s.value);
    w.U64(s.size);
  }
  auto section = [&](uint32_t type, uint64_t addr, uint64_t off, uint64_t size, uint32_t link, uint64_t entsize) {
    w.U32(0);
    w.U32(type);
    w.U64(2);  // SHF_ALLOC
    w.U64(addr);
    w.U64(off);
    w.U64(size);
    w.U32(link);
    w.U32(0);
    w.U64(8);
    w.U64(entsize);
  };
  w.Raw(std::string(64, '\0'));                                     // SHN_UNDEF
  section(1, kRodataAddr, rodata_off, rodata.size(), 0, 0);         // SHT_PROGBITS
  section(3, 0, dynstr_off, dynstr.size(), 0, 0);                   // SHT_STRTAB
  section(11, 0, dynsym_off, dynsym_size, 2, 24);                   // SHT_DYNSYM -> .dynstr
  return w.out();
}

}  // namespace tessera::runtime::testing
