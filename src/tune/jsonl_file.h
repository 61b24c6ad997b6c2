// An append-only JSON-lines file (private to the tune layer; the database's storage).
//
// ReadJsonLines returns the complete lines ('\n'-terminated) of a file; a last line without
// '\n' is a torn write (a writer killed mid-write) and is left out. AppendJsonLines appends
// whole lines under an exclusive flock with one write() and fsyncs the file (and its folder when
// it creates the file); before appending it cuts off a torn last line, so the file stays a
// sequence of whole lines.
#pragma once

#include <string>
#include <vector>

namespace tessera::tune::detail {

struct JsonLine {
  size_t number;     ///< 1-based line number in the file
  std::string text;  ///< without the '\n'
};

/// The complete lines of `path` (empty lines skipped); none when the file does not exist.
/// UserError naming `kind` and the path when it exists but cannot be read.
std::vector<JsonLine> ReadJsonLines(const std::string& path, const char* kind);

/// Appends `lines` (each already ending in '\n', none containing another '\n') with one write,
/// then fsync. UserError naming `kind` and the path when it cannot be written; the file is cut
/// back to its previous size then, so a failed append leaves no partial line behind.
void AppendJsonLines(const std::string& path, const char* kind, const std::string& lines);

}  // namespace tessera::tune::detail
