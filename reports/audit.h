// `audit` (SPEC §7, docs/operations.md): a read-only health report of a devflow root — its
// cards, commit locks, parked cards, temp files, verdict cache, veto reports and decision
// ledger.
#pragma once

#include <iosfwd>

#include "reports/operator.h"

namespace devflow {

/// `audit [--json]`. Exit 0 healthy (warnings allowed), 1 problems found. The root is known to
/// exist (the CLI refuses one that does not, host/cli/operator_cli.h).
int Audit(const OperatorContext& ctx, bool json, std::ostream& out, std::ostream& err);

}  // namespace devflow
