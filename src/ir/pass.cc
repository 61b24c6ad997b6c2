// Pass infrastructure: see include/tessera/ir/pass.h.
#include "tessera/ir/pass.h"

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "tessera/support/error.h"

namespace tessera::ir {

std::string PassContext::GetOption(const std::string& key, const std::string& dflt) const {
  auto it = options.find(key);
  return it == options.end() ? dflt : it->second;
}

long long PassContext::GetIntOption(const std::string& key, long long dflt) const {
  auto it = options.find(key);
  if (it == options.end()) return dflt;
  try {
    size_t used = 0;
    long long v = std::stoll(it->second, &used);
    if (used == it->second.size()) return v;
  } catch (const std::exception&) {
  }
  TESSERA_THROW(UserError, "pass option '", key, "' = '", it->second, "' is not an integer");
}

void PassContext::RunBeforePass(const PassInfo& info) const {
  for (const auto& i : instruments) i->RunBeforePass(info);
}

void PassContext::RunAfterPass(const PassInfo& info, const IRView& ir) const {
  for (const auto& i : instruments) i->RunAfterPass(info, ir);
}

void PassContext::Finish() const {
  for (const auto& i : instruments) i->ExitPipeline();
}

void PassTimingInstrument::RunBeforePass(const PassInfo& info) {
  starts_.push_back(std::chrono::steady_clock::now());
}

void PassTimingInstrument::RunAfterPass(const PassInfo& info, const IRView& ir) {
  TESSERA_ICHECK(!starts_.empty(), "RunAfterPass(", info.name, ") without RunBeforePass");
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - starts_.back()).count();
  starts_.pop_back();
  timings_.emplace_back(info.name, ms);
}

std::string PassTimingInstrument::Table() const {
  double total = 0;
  size_t width = 4;
  for (const auto& [name, ms] : timings_) {
    total += ms;
    width = std::max(width, name.size());
  }
  std::ostringstream os;
  os << std::fixed << std::setprecision(2);
  os << std::left << std::setw(static_cast<int>(width) + 2) << "pass" << std::right << std::setw(10) << "ms"
     << std::setw(8) << "%" << "\n";
  for (const auto& [name, ms] : timings_) {
    os << std::left << std::setw(static_cast<int>(width) + 2) << name << std::right << std::setw(10) << ms
       << std::setw(7) << std::setprecision(1) << (total > 0 ? 100.0 * ms / total : 0.0) << "%"
       << std::setprecision(2) << "\n";
  }
  os << std::left << std::setw(static_cast<int>(width) + 2) << "total" << std::right << std::setw(10) << total
     << "\n";
  return os.str();
}

void PassTimingInstrument::ExitPipeline() {
  if (os_) *os_ << Table() << std::flush;
}

DumpIRInstrument::DumpIRInstrument(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  TESSERA_CHECK(!ec, "--dump-ir: cannot create directory '", dir_, "': ", ec.message());
}

void DumpIRInstrument::RunAfterPass(const PassInfo& info, const IRView& ir) {
  std::ostringstream file;
  file << std::setw(2) << std::setfill('0') << index_++ << "_" << info.name << ".txt";
  std::filesystem::path path = std::filesystem::path(dir_) / file.str();
  std::ofstream out(path);
  TESSERA_CHECK(out.good(), "--dump-ir: cannot write '", path.string(), "'");
  out << ir.Print();
}

}  // namespace tessera::ir
