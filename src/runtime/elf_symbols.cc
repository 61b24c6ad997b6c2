// ElfSymbols (elf_symbols.h): section headers and a symbol table, bounds-checked.
#include "elf_symbols.h"

#include <elf.h>

#include <cstddef>

#include "tessera/support/error.h"

namespace tessera::runtime::detail {
namespace {

// Field offsets inside the gABI structures (the same in either byte order).
constexpr size_t kEhdrBytes = sizeof(Elf64_Ehdr);  // 64
constexpr size_t kShdrBytes = sizeof(Elf64_Shdr);  // 64
constexpr size_t kSymBytes = sizeof(Elf64_Sym);    // 24
static_assert(kEhdrBytes == 64 && kShdrBytes == 64 && kSymBytes == 24);

// The symbol and string tables are read whole; a library has a few thousand symbols at most.
constexpr uint64_t kMaxTableBytes = uint64_t{256} << 20;

bool Fits(uint64_t offset, uint64_t size, uint64_t total) { return offset <= total && size <= total - offset; }

}  // namespace

uint16_t ElfSymbols::U16At(const unsigned char* p) const {
  return little_ ? static_cast<uint16_t>(p[0] | (p[1] << 8)) : static_cast<uint16_t>((p[0] << 8) | p[1]);
}
uint32_t ElfSymbols::U32At(const unsigned char* p) const {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[little_ ? i : 3 - i]) << (8 * i);
  return v;
}
uint64_t ElfSymbols::U64At(const unsigned char* p) const {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[little_ ? i : 7 - i]) << (8 * i);
  return v;
}

void ElfSymbols::Corrupt(const std::string& why) const {
  TESSERA_THROW(UserError, what_, " is truncated or corrupt: ", why,
                "; copy or compile it again (tessera compile)");
}

void ElfSymbols::CheckInFile(uint64_t offset, uint64_t size, const std::string& what) const {
  if (!Fits(offset, size, file_size_))
    Corrupt("its " + what + " (" + std::to_string(size) + " bytes at offset " + std::to_string(offset) +
            ") lies beyond the end of the file (" + std::to_string(file_size_) + " bytes)");
}

ElfSymbols::ElfSymbols(ReadFn read, uint64_t file_size, std::string what)
    : read_(std::move(read)), file_size_(file_size), what_(std::move(what)) {
  unsigned char eh[kEhdrBytes] = {};
  TESSERA_CHECK(file_size_ >= kEhdrBytes, what_, " is not a shared library (", file_size_,
                " bytes, shorter than an ELF header): pass the .so that tessera compile wrote");
  read_(0, eh, kEhdrBytes);
  TESSERA_CHECK(eh[EI_MAG0] == ELFMAG0 && eh[EI_MAG1] == ELFMAG1 && eh[EI_MAG2] == ELFMAG2 && eh[EI_MAG3] == ELFMAG3,
                what_, " is not a shared library (no ELF header): pass the .so that tessera compile wrote");
  TESSERA_CHECK(eh[EI_CLASS] == ELFCLASS64, what_, " is a ", eh[EI_CLASS] == ELFCLASS32 ? "32-bit" : "malformed",
                " ELF file, not a Tessera model library (Tessera builds 64-bit libraries)");
  TESSERA_CHECK(eh[EI_DATA] == ELFDATA2LSB || eh[EI_DATA] == ELFDATA2MSB, what_,
                " is a malformed ELF file (unknown byte order ", int(eh[EI_DATA]), ")");
  little_ = eh[EI_DATA] == ELFDATA2LSB;
  machine_ = U16At(eh + offsetof(Elf64_Ehdr, e_machine));
  const uint64_t shoff = U64At(eh + offsetof(Elf64_Ehdr, e_shoff));
  const uint16_t shentsize = U16At(eh + offsetof(Elf64_Ehdr, e_shentsize));
  const uint16_t shnum = U16At(eh + offsetof(Elf64_Ehdr, e_shnum));
  if (shnum == 0 || shoff == 0)
    TESSERA_THROW(UserError, what_, " has no section headers (stripped with --strip-section-headers?), so its "
                  "symbols cannot be read without loading it; use the library as tessera compile wrote it");
  if (shentsize != kShdrBytes) Corrupt("its section header size is " + std::to_string(shentsize) + ", not 64");
  CheckInFile(shoff, uint64_t{shnum} * kShdrBytes, "section header table");

  std::string table(uint64_t{shnum} * kShdrBytes, '\0');
  read_(shoff, table.data(), table.size());
  sections_.resize(shnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    const auto* sh = reinterpret_cast<const unsigned char*>(table.data()) + size_t{i} * kShdrBytes;
    Section& s = sections_[i];
    s.type = U32At(sh + offsetof(Elf64_Shdr, sh_type));
    s.addr = U64At(sh + offsetof(Elf64_Shdr, sh_addr));
    s.offset = U64At(sh + offsetof(Elf64_Shdr, sh_offset));
    s.size = U64At(sh + offsetof(Elf64_Shdr, sh_size));
    s.link = U32At(sh + offsetof(Elf64_Shdr, sh_link));
    s.entsize = U64At(sh + offsetof(Elf64_Shdr, sh_entsize));
  }

  // The dynamic symbol table (what dlsym searches), else the static one.
  const Section* symtab = nullptr;
  for (const Section& s : sections_)
    if (s.type == SHT_DYNSYM) symtab = &s;
  if (!symtab)
    for (const Section& s : sections_)
      if (s.type == SHT_SYMTAB) symtab = &s;
  TESSERA_CHECK(symtab != nullptr, what_, " has no symbol table: it is not a shared library that tessera compile "
                "wrote");
  if (symtab->entsize != kSymBytes) Corrupt("its symbol table entries are " + std::to_string(symtab->entsize) +
                                            " bytes, not 24");
  if (symtab->link >= sections_.size() || sections_[symtab->link].type != SHT_STRTAB)
    Corrupt("its symbol table names no string table");
  const Section& strtab = sections_[symtab->link];
  CheckInFile(symtab->offset, symtab->size, "symbol table");
  CheckInFile(strtab.offset, strtab.size, "symbol string table");
  if (symtab->size > kMaxTableBytes || strtab.size > kMaxTableBytes)
    Corrupt("its symbol tables are larger than " + std::to_string(kMaxTableBytes >> 20) + " MiB");
  symtab_.resize(symtab->size / kSymBytes * kSymBytes);
  read_(symtab->offset, symtab_.data(), symtab_.size());
  strtab_.resize(strtab.size);
  read_(strtab.offset, strtab_.data(), strtab_.size());
}

std::optional<ElfSymbols::Symbol> ElfSymbols::Find(const std::string& name) const {
  const auto* table = reinterpret_cast<const unsigned char*>(symtab_.data());
  for (size_t at = 0; at < symtab_.size(); at += kSymBytes) {
    const unsigned char* sym = table + at;
    const uint32_t name_at = U32At(sym + offsetof(Elf64_Sym, st_name));
    // The name must end (NUL) inside the string table.
    if (name_at >= strtab_.size() || strtab_.compare(name_at, name.size() + 1, name.c_str(), name.size() + 1) != 0)
      continue;
    const uint16_t shndx = U16At(sym + offsetof(Elf64_Sym, st_shndx));
    if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE) return std::nullopt;  // undefined, absolute, common
    if (shndx >= sections_.size()) Corrupt("symbol " + name + " names section " + std::to_string(shndx) +
                                           " of " + std::to_string(sections_.size()));
    const Section& s = sections_[shndx];
    if (s.type == SHT_NOBITS) return std::nullopt;  // .bss: no bytes in the file
    const uint64_t value = U64At(sym + offsetof(Elf64_Sym, st_value));
    const uint64_t size = U64At(sym + offsetof(Elf64_Sym, st_size));
    if (value < s.addr || !Fits(value - s.addr, size, s.size))
      Corrupt("symbol " + name + " (" + std::to_string(size) + " bytes) lies outside its section");
    CheckInFile(s.offset, s.size, "section of symbol " + name);
    return Symbol{s.offset + (value - s.addr), size};
  }
  return std::nullopt;
}

std::string ElfSymbols::Bytes(const Symbol& symbol, uint64_t max_bytes) const {
  if (symbol.size > max_bytes)
    Corrupt("a symbol of " + std::to_string(symbol.size) + " bytes where at most " + std::to_string(max_bytes) +
            " are expected");
  CheckInFile(symbol.file_offset, symbol.size, "symbol data");
  std::string bytes(symbol.size, '\0');
  read_(symbol.file_offset, bytes.data(), bytes.size());
  return bytes;
}

uint64_t ElfSymbols::U64(const Symbol& symbol, const std::string& name) const {
  if (symbol.size != 8) Corrupt("symbol " + name + " is " + std::to_string(symbol.size) + " bytes, not 8");
  const std::string bytes = Bytes(symbol, 8);
  return U64At(reinterpret_cast<const unsigned char*>(bytes.data()));
}

}  // namespace tessera::runtime::detail
