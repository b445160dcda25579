#include "host/yaml_schema.h"

#include <algorithm>

namespace devflow {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool AllOf(std::string_view s, bool (*pred)(char)) {
  return !s.empty() && std::all_of(s.begin(), s.end(), pred);
}
std::string_view WithoutSign(std::string_view s) {
  return (!s.empty() && (s[0] == '-' || s[0] == '+')) ? s.substr(1) : s;
}

}  // namespace

bool IsYamlNullWord(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

bool IsYamlBoolWord(std::string_view s) {
  return s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE";
}

bool IsYamlIntWord(std::string_view s) {
  if (s.starts_with("0o")) {
    return AllOf(s.substr(2), [](char c) { return c >= '0' && c <= '7'; });
  }
  if (s.starts_with("0x")) return AllOf(s.substr(2), IsHexDigit);
  return AllOf(WithoutSign(s), IsDigit);
}

bool IsYamlFloatWord(std::string_view s) {
  if (s == ".nan" || s == ".NaN" || s == ".NAN") return true;
  std::string_view m = WithoutSign(s);
  if (m == ".inf" || m == ".Inf" || m == ".INF") return true;
  size_t i = 0, int_digits = 0, frac_digits = 0;
  while (i < m.size() && IsDigit(m[i])) ++i, ++int_digits;
  if (i < m.size() && m[i] == '.') {
    ++i;
    while (i < m.size() && IsDigit(m[i])) ++i, ++frac_digits;
    if (int_digits == 0 && frac_digits == 0) return false;
  } else if (int_digits == 0) {
    return false;
  }
  if (i < m.size() && (m[i] == 'e' || m[i] == 'E')) {
    return AllOf(WithoutSign(m.substr(i + 1)), IsDigit);
  }
  return i == m.size();
}

}  // namespace devflow
