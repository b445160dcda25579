// What reaches an operator's terminal from a checker, a journal or a file.
#pragma once

#include <string>
#include <string_view>

namespace devflow {

/// `text` made safe to print on a terminal: every C0 control character, DEL and C1 control
/// (U+0080–U+009F) becomes a space, so checker-controlled bytes cannot send escape sequences
/// or forge lines; an ill-formed UTF-8 byte becomes U+FFFD (ReplaceInvalidUtf8). With
/// `keep_lines`, '\n' and '\t' stay (a whole report printed by `reports show`); without, the
/// text is one line. Files keep their bytes: only terminal output goes through here.
std::string TerminalSafe(std::string_view text, bool keep_lines = false);

}  // namespace devflow
