// ElfArch (artifact_info.h): the target architecture in an ELF file's header.
#include <cstdint>
#include <fstream>

#include "tessera/runtime/artifact_info.h"

namespace tessera::runtime {

std::string ElfArch(const std::string& path) {
  // ELF header (System V gABI): e_ident[16] (magic 0x7f 'E' 'L' 'F', class, data encoding, ...),
  // e_type (2 bytes), e_machine (2 bytes) in the file's byte order.
  unsigned char h[20] = {};
  std::ifstream f(path, std::ios::binary);
  if (!f.read(reinterpret_cast<char*>(h), sizeof(h))) return "";
  if (h[0] != 0x7f || h[1] != 'E' || h[2] != 'L' || h[3] != 'F') return "";
  const bool little = h[5] == 1;  // EI_DATA: 1 ELFDATA2LSB, 2 ELFDATA2MSB
  const uint16_t machine = little ? static_cast<uint16_t>(h[18] | (h[19] << 8)) : static_cast<uint16_t>((h[18] << 8) | h[19]);
  return ElfMachineArch(machine);
}

std::string ElfMachineArch(uint16_t machine) {
  switch (machine) {
    case 62: return "x86_64";    // EM_X86_64
    case 183: return "aarch64";  // EM_AARCH64
    case 243: return "riscv64";  // EM_RISCV (64-bit: the only RISC-V Tessera targets)
    default: return "elf-machine-" + std::to_string(machine);
  }
}

}  // namespace tessera::runtime
