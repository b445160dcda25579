#include "host/warnings.h"

#include <cstdio>

namespace devflow {
namespace {
class StderrSink : public Warnings {
 public:
  void Warn(const std::string& line) override {
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  }
};
}  // namespace

Warnings& StderrWarnings() {
  static StderrSink sink;
  return sink;
}
}  // namespace devflow
