// The one writer of every JSON the commands print (`--json` of the operator commands, `card`,
// `move`, `move --explain`, `config check`; the server's answers): nlohmann's dump (invalid
// UTF-8 as U+FFFD) passed through host/terminal.h TerminalJson, so ESC, BEL, C1 controls and
// bidirectional overrides reach a terminal only as `\u` escapes. Files the gate writes for
// other readers (journal, cache records, ledgers) keep their own byte-exact writers.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "host/terminal.h"

namespace devflow {

/// `indent` < 0: one line; else pretty-printed with that many spaces. No trailing newline.
inline std::string OutputJson(const nlohmann::ordered_json& j, int indent = -1) {
  return TerminalJson(j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace devflow
