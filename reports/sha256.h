// SHA-256 through OpenSSL's low-level one-shot digest (no provider start-up; issue 11 item 3).
#pragma once

#include <string>
#include <string_view>

namespace devflow {
/// Lowercase hex SHA-256 of the bytes.
std::string Sha256Hex(std::string_view data);
}  // namespace devflow
