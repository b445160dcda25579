#!/usr/bin/env bash
# The quickstart: installs and builds devflow-gate if needed, copies the example devflow root to
# a fresh directory, and shows a dry run that would veto, the real veto with its report, the
# design fixed through `artifact add`, and the admitted move with its committed gate.checks.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
bash "$top/.ci/setup" devflow-gate
gate="$top/build/devflow-gate"

ws=$(mktemp -d "${TMPDIR:-/tmp}/devflow-quickstart-XXXXXX")
cp -R "$here/workspace/." "$ws/"
cd "$ws"
card=0001-audit-log-export

step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "${*:2}"; }
# run EXPECTED_EXIT CMD…: runs CMD, shows its exit code, and stops the quickstart if it differs.
run() {
  local want=$1 rc=0
  shift
  "$@" || rc=$?
  echo "(exit $rc)"
  if [ "$rc" != "$want" ]; then
    echo "quickstart: expected exit $want from: $*" >&2
    exit 1
  fi
}

echo "workspace: $ws (a fresh copy of examples/quickstart/workspace)"
step "The card, in designing with a PRD and a design" devflow-gate card show $card
run 0 "$gate" card show $card

step "1. Dry run: the whole waterfall and the real checker run, nothing is written" \
     devflow-gate move $card ready --dry-run
run 1 "$gate" move $card ready --dry-run

step "2. The real move: vetoed, with a report" devflow-gate move $card ready
run 1 "$gate" move $card ready
report=$(ls .devflow/reports/agent-gate/*.md)
step "   The veto report" cat "$report"
cat "$report"

step "3. Fix the design: register the revised version" \
     devflow-gate artifact add $card design design-fixed.md
cp "$here/design-fixed.md" design-fixed.md
run 0 "$gate" artifact add $card design design-fixed.md

step "4. Move again: admitted, and the check is in the journal" devflow-gate move $card ready
run 0 "$gate" move $card ready
step "   The committed journal line" tail -n 1 .devflow/tasks/$card/journal.jsonl
tail -n 1 .devflow/tasks/$card/journal.jsonl

final=$("$gate" card show $card --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["stage"])')
if [ "$final" != ready ]; then
  echo "quickstart: expected the card in ready, found $final" >&2
  exit 1
fi
echo
echo "quickstart: veto -> fix -> admit done; the workspace is kept at $ws"
