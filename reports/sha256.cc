#include "reports/sha256.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <array>
#include <memory>
#include <stdexcept>

namespace devflow {
namespace {

struct MdDeleter {
  void operator()(EVP_MD* md) const { EVP_MD_free(md); }
};
struct CtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

// Fetching the algorithm is the expensive part of a one-shot digest (cpp-notes §4.4), so it is
// fetched once per process; EVP_MD objects are safe to share between threads, contexts are not.
// OpenSSL's default start-up reads openssl.cnf and registers an atexit OPENSSL_cleanup; for one
// digest in a short-lived CLI that was 48% of a cache-hit move's instructions (issue 11 item 3).
// SHA-256 needs neither: the built-in default provider serves it without a config file.
const EVP_MD* Sha256Md() {
  static const std::unique_ptr<EVP_MD, MdDeleter> md([] {
    OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ATEXIT, nullptr);
    return EVP_MD_fetch(nullptr, "SHA256", nullptr);
  }());
  return md.get();
}

EVP_MD_CTX* ThreadContext() {
  thread_local const std::unique_ptr<EVP_MD_CTX, CtxDeleter> ctx(EVP_MD_CTX_new());
  return ctx.get();
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  const EVP_MD* md = Sha256Md();
  EVP_MD_CTX* ctx = ThreadContext();
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (!md || !ctx || EVP_DigestInit_ex(ctx, md, nullptr) != 1 ||
      EVP_DigestUpdate(ctx, data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(ctx, digest.data(), &size) != 1) {
    // Only on a broken OpenSSL installation; nothing sensible can continue without hashing.
    throw std::runtime_error("OpenSSL SHA-256 is unavailable");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (unsigned int i = 0; i < size; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 0xf]);
  }
  return out;
}

}  // namespace devflow
