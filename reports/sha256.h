// SHA-256 through OpenSSL EVP (cpp-notes §4.4).
#pragma once

#include <string>
#include <string_view>

namespace devflow {
/// Lowercase hex SHA-256 of the bytes.
std::string Sha256Hex(std::string_view data);
}  // namespace devflow
