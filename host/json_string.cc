#include "host/json_string.h"

#include <nlohmann/json.hpp>

namespace devflow {

void AppendJsonString(std::string& out, std::string_view text) {
  bool plain = true;
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b > 0x7e || b == '"' || b == '\\') {
      plain = false;
      break;
    }
  }
  if (!plain) {
    out += nlohmann::json(std::string(text))
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return;
  }
  out.reserve(out.size() + text.size() + 2);
  out += '"';
  out += text;
  out += '"';
}

std::string JsonString(std::string_view text) {
  std::string out;
  AppendJsonString(out, text);
  return out;
}

}  // namespace devflow
