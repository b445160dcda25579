// The grounding ledger: Python-compatible JSONL rows, appended through the one durable append.
#include "reports/ledger.h"

#include <nlohmann/json.hpp>

#include "host/os.h"

namespace devflow {

std::string PyJsonString(std::string_view text) {
  // nlohmann's escaping with ensure_ascii off equals Python's: \" \\ \b \f \n \r \t, other
  // control characters as \u00XX, everything else raw.
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string PyJsonList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += PyJsonString(items[i]);
  }
  return out + "]";
}

std::string PyJsonOptional(const std::optional<std::string>& text) {
  return text ? PyJsonString(*text) : "null";
}

std::string FormatLedgerRow(const LedgerRow& row) {
  std::string out = "{\"ts\": " + PyJsonString(row.ts);
  out += ", \"label\": " + PyJsonOptional(row.label);
  out += ", \"verdict\": ";
  out += row.verified ? "\"verified\"" : "\"rejected\"";
  out += ", \"state\": " + PyJsonString(row.state);
  out += ", \"kinds\": " + PyJsonList(row.kinds);
  out += ", \"reject_reasons\": " + PyJsonList(row.reasons);
  out += ", \"rejected_claim\": " + PyJsonOptional(row.rejected_claim);
  for (const auto& [key, json] : row.extra) out += ", " + PyJsonString(key) + ": " + json;
  return out + "}\n";
}

std::string LedgerTimestamp(std::string_view iso_ms) {
  // 2026-09-16T08:00:00.000Z
  if (iso_ms.size() == 24 && iso_ms[19] == '.' && iso_ms[23] == 'Z') {
    return std::string(iso_ms.substr(0, 19)) + "+00:00";
  }
  return std::string(iso_ms);
}

Status AppendLocked(const std::string& path, std::string_view row) {
  return RealFileSystem().AppendDurable(path, row);
}

}  // namespace devflow
