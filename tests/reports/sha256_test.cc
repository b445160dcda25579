#include "reports/sha256.h"

#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

namespace devflow {
namespace {

TEST_CASE("sha256 hex matches the FIPS 180-2 test vectors") {
  CHECK(Sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST_CASE("sha256 hashes bytes, NUL and non-ASCII included") {
  CHECK(Sha256Hex(std::string("a\0b", 3)) != Sha256Hex("ab"));
  CHECK(Sha256Hex("Check that the design cites only requirements the PRD states.") ==
        "5f9100d7025dfe5cb18ac1bc80be584dc66346d4c1fb224f83795cf33b71f61a");
}

TEST_CASE("sha256 gives the same digest from many threads at once") {
  std::vector<std::string> results(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&results, i] {
      for (int n = 0; n < 200; ++n) results[i] = Sha256Hex("abc");
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& r : results) {
    CHECK(r == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  }
}

}  // namespace
}  // namespace devflow
