// Names for written outputs (issue 15): graph output names come from the model, which may be
// hostile ("../../evil", "/etc/passwd", names with '\0' or control characters), so they are mapped
// to safe names before they become file names (--output-dir) or .npz member names (--output).
//
// Rules (a byte at a time; bytes >= 0x80, i.e. UTF-8, are kept by the .npz rule):
// - .npy file names (NpyFileName): every character other than A-Z a-z 0-9 . _ - becomes '_', and
//   so does a leading '.' (no hidden files, no "." or ".."): "../../evil" -> "_._.._evil.npy";
//   the name is cut to 200 bytes; an empty name is "output"; then ".npy" is appended.
// - .npz members (NpzMemberName): '/', '\' and the control characters (0x00-0x1f, 0x7f) become
//   '_', so a member is never a path ("../../evil" -> ".._.._evil"); the name is cut to 200 bytes;
//   an empty name is "output". Other characters are kept, so np.load(f)["output:0"] still works.
// - Unique (UniqueNames): a name the rule leaves unchanged is kept as it is; a changed name that
//   another output already has gets "_2", "_3", ... appended (before ".npy"), in graph order.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace tessera::cli {

/// The .npy file name of an output (the rule above), with ".npy".
std::string NpyFileName(const std::string& output_name);
/// The .npz member name of an output (the rule above), without ".npy".
std::string NpzMemberName(const std::string& output_name);

/// `name` for a terminal or a log: control characters (0x00-0x1f, 0x7f) and '\' written as
/// "\xNN", so a hostile name cannot move the cursor or clear the screen.
std::string Printable(const std::string& name);

/// The names `rule` gives `names` (the graph's output names, all different), made unique as
/// above. `suffix` is kept at the end (".npy" for NpyFileName, "" for NpzMemberName).
std::vector<std::string> UniqueNames(const std::vector<std::string>& names,
                                     const std::function<std::string(const std::string&)>& rule,
                                     const std::string& suffix);

}  // namespace tessera::cli
