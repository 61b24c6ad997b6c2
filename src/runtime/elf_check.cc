// CheckElfImage (artifact_info.h): the ranges an ELF file's headers name must lie in the file.
// Layouts from the System V gABI (<elf.h>: Elf64_Ehdr, Elf64_Phdr), read in this machine's byte
// order: a file of the other order or class is left to dlopen, which refuses it.
#include <elf.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "tessera/runtime/artifact_info.h"
#include "tessera/support/error.h"

namespace tessera::runtime {

namespace {

// Whether [offset, offset + size) lies in a file of `file_size` bytes (without overflow).
bool Fits(uint64_t offset, uint64_t size, uint64_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

}  // namespace

void CheckElfImage(const std::string& path, uint64_t file_size) {
  Elf64_Ehdr eh{};
  std::ifstream f(path, std::ios::binary);
  if (!f.read(reinterpret_cast<char*>(&eh), sizeof(eh))) return;
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) return;
  const bool native_order = (eh.e_ident[EI_DATA] == ELFDATA2LSB) == (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
  if (!native_order) return;
  auto truncated = [&](const std::string& what, uint64_t offset, uint64_t size) {
    TESSERA_THROW(UserError, "model library '", path, "' is truncated or corrupt: its ", what, " (bytes ", offset,
                  " to ", offset + size, ") lies beyond the end of the file (", file_size,
                  " bytes); copy or compile it again (tessera compile)");
  };
  const uint64_t ph_bytes = static_cast<uint64_t>(eh.e_phnum) * eh.e_phentsize;
  if (eh.e_phnum && (eh.e_phentsize != sizeof(Elf64_Phdr) || !Fits(eh.e_phoff, ph_bytes, file_size)))
    truncated("program header table", eh.e_phoff, ph_bytes);
  const uint64_t sh_bytes = static_cast<uint64_t>(eh.e_shnum) * eh.e_shentsize;
  if (eh.e_shnum && !Fits(eh.e_shoff, sh_bytes, file_size)) truncated("section header table", eh.e_shoff, sh_bytes);
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  f.seekg(static_cast<std::streamoff>(eh.e_phoff));
  if (eh.e_phnum && !f.read(reinterpret_cast<char*>(ph.data()), static_cast<std::streamsize>(ph_bytes)))
    truncated("program header table", eh.e_phoff, ph_bytes);
  for (size_t i = 0; i < ph.size(); ++i)
    if (ph[i].p_type == PT_LOAD && !Fits(ph[i].p_offset, ph[i].p_filesz, file_size))
      truncated("loadable segment " + std::to_string(i), ph[i].p_offset, ph[i].p_filesz);
}

}  // namespace tessera::runtime
