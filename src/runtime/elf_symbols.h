// Internal: the exported data symbols of an ELF64 shared library, read from the file's bytes
// (no dlopen, no loader, no code of the library runs). Used by artifact_file.cc.
//
// Layouts from the System V gABI (<elf.h>: Elf64_Ehdr, Elf64_Shdr, Elf64_Sym), decoded field by
// field in the file's byte order (EI_DATA), so a library for another architecture (aarch64 on an
// x86 host) or byte order reads the same. Symbols come from the dynamic symbol table (.dynsym,
// the one dlsym uses; .symtab when a file has no .dynsym) through the section headers: a library
// whose section headers were stripped is refused. Every offset and size is checked against the
// file's size before it is read, without overflow.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tessera::runtime::detail {

class ElfSymbols {
 public:
  /// Reads n bytes at `offset` into `out`; only called for ranges inside the file.
  using ReadFn = std::function<void(uint64_t offset, void* out, size_t n)>;

  /// A defined symbol: where its bytes are in the file and how many.
  struct Symbol {
    uint64_t file_offset = 0;
    uint64_t size = 0;
  };

  /// Reads the ELF header, the section headers and the symbol table of a file of `file_size`
  /// bytes. UserError naming `what` when it is not an ELF file, not 64-bit, or when a table lies
  /// outside the file or is malformed (the file is truncated or corrupt).
  ElfSymbols(ReadFn read, uint64_t file_size, std::string what);

  /// The symbol `name`, or nullopt when the table does not define it (absent, undefined, or in
  /// a section without file bytes). UserError when its bytes would lie outside its section or
  /// the file.
  std::optional<Symbol> Find(const std::string& name) const;

  /// The symbol's bytes (at most `max_bytes` of them: UserError when it is larger).
  std::string Bytes(const Symbol& symbol, uint64_t max_bytes) const;
  /// A 64-bit integer symbol in the file's byte order (UserError when its size is not 8).
  uint64_t U64(const Symbol& symbol, const std::string& name) const;

  bool little_endian() const { return little_; }
  uint16_t machine() const { return machine_; }

 private:
  struct Section {
    uint32_t type = 0;
    uint64_t addr = 0, offset = 0, size = 0, entsize = 0;
    uint32_t link = 0;
  };
  uint16_t U16At(const unsigned char* p) const;
  uint32_t U32At(const unsigned char* p) const;
  uint64_t U64At(const unsigned char* p) const;
  [[noreturn]] void Corrupt(const std::string& why) const;
  void CheckInFile(uint64_t offset, uint64_t size, const std::string& what) const;

  ReadFn read_;
  uint64_t file_size_;
  std::string what_;
  bool little_ = true;
  uint16_t machine_ = 0;
  std::vector<Section> sections_;
  std::string symtab_;  // the raw Elf64_Sym entries
  std::string strtab_;  // their names
};

}  // namespace tessera::runtime::detail
