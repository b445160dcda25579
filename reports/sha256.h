// SHA-256 through OpenSSL's low-level one-shot digest (no provider start-up; issue 11 item 3).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace devflow {
/// Lowercase hex SHA-256 of the bytes.
std::string Sha256Hex(std::string_view data);
/// Lowercase hex SHA-256 of the pieces' bytes concatenated, without concatenating them (a
/// digest over 32 MiB of inputs needs no 32 MiB string; issue 11 item 2).
std::string Sha256Hex(std::span<const std::string_view> pieces);
}  // namespace devflow
