// Where warnings go: stderr for the CLI, a vector in tests. Warnings never change a decision.
#pragma once

#include <string>
#include <vector>

namespace devflow {

/// Sink for one-line warnings such as
/// `devflow-agent-gate: could not cache the allow verdict at <file>: <error>`.
class Warnings {
 public:
  virtual ~Warnings() = default;
  virtual void Warn(const std::string& line) = 0;
};

/// Prints each warning as one line on stderr.
Warnings& StderrWarnings();

/// Collects warnings in memory (tests, and `--json` output).
class CollectedWarnings : public Warnings {
 public:
  void Warn(const std::string& line) override { lines.push_back(line); }
  std::vector<std::string> lines;
};

}  // namespace devflow
