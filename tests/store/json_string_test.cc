#include "host/json_string.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace devflow {
namespace {

std::string NlohmannString(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// AppendJsonString's fast path copies printable ASCII as is; everything it writes must be the
// bytes nlohmann writes (the journal, cache key, ledger and answers are compared byte for byte).
TEST_CASE("AppendJsonString writes exactly nlohmann's bytes for every text") {
  std::vector<std::string> texts = {"",
                                    "designing->ready",
                                    "/work/ws/.devflow",
                                    "0002-b",
                                    "a\"b",
                                    "a\\b",
                                    "a/b",
                                    "tab\there",
                                    "\x7f",
                                    "caf\xc3\xa9",
                                    "bad \xff byte",
                                    "cut \xe2\x82",
                                    "\x1b[31m",
                                    "\xe2\x80\xae"};
  for (int b = 0; b < 256; ++b) {
    texts.push_back(std::string(1, static_cast<char>(b)));
    texts.push_back("x" + std::string(1, static_cast<char>(b)) + "y");
  }
  for (const std::string& text : texts) {
    CAPTURE(text);
    CHECK(JsonString(text) == NlohmannString(text));
    std::string out = "prefix,";
    AppendJsonString(out, text);
    CHECK(out == "prefix," + NlohmannString(text));
  }
}

}  // namespace
}  // namespace devflow
