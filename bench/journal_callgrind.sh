#!/usr/bin/env bash
# Issue 11 item 1, journal length: callgrind instruction counts (they repeat exactly under
# load) of one or more devflow-gate binaries side by side, in one run, on the same workspaces
# (docs/performance.md, "Journal decode in place"):
#   - fold/line: the instructions inside FoldJournal* (callgrind --toggle-collect: the strict
#     fold of the whole journal, its line split, decode and fold rules; not the read, not the
#     state's destruction) of `card show` on a 10,000-line journal minus the same on a 10-line
#     one, over the 9,990 lines between them;
#   - the whole cache-hit `move` (a real one: it commits) on a 10-line and a 10,000-line journal,
#     their ratio and the instructions a journal line adds to the move (every fold and read of
#     it included); floor: `cat` of the 10,000-line journal. Every measured move is asserted to
#     be a cache hit that commits.
# Targets: fold/line <= 3,000; 10,000-line move <= 3x the 10-line move. A missed target exits 3
# only with BENCH_STRICT=1 (for the last binary given).
# usage: bash bench/journal_callgrind.sh BINARY [BINARY...]   e.g. main's build, then yours
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: bash bench/journal_callgrind.sh BINARY [BINARY...]" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "journal_callgrind: valgrind is not installed" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/devflow-journal-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

ir() {  # ir [callgrind option...] -- CMD...: instructions; output of CMD in $tmp/out
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "${opts[@]}" "$@" >"$tmp/out" 2>&1 || true
  sed -n 's/^summary: //p' "$tmp/cg.out"
}
label() { basename "$(dirname "$(realpath "$1")")"; }  # a binary by its build directory
fail() { echo "journal_callgrind: $*" >&2; cat "$tmp/out" >&2; exit 1; }

if command -v cc >/dev/null && cc -O2 -o "$tmp/allow_checker" "$here/allow_checker.c"; then
  checker=$tmp/allow_checker
else
  cp "$here/allow_checker.sh" "$tmp/allow_checker"
  chmod +x "$tmp/allow_checker"
  checker=$tmp/allow_checker
fi
declare -A card
for lines in 10 10000; do
  card[$lines]=$(python3 "$here/make_root.py" --out "$tmp/ws-$lines" --cards 1 --checker "$checker" \
                   --journal "$lines")
done
printf 'floor: cat of the 10,000-line journal: %s instructions\n' \
  "$(ir -- cat "$tmp/ws-10000/.devflow/tasks/${card[10000]}/journal.jsonl")"

printf '%-44s' "binary"
for gate in "$@"; do printf '  %14s' "$(label "$gate")"; done
printf '\n'
declare -A fold move
for gate in "$@"; do
  gate=$(realpath "$gate")
  for lines in 10 10000; do
    ws=$tmp/ws-$lines c=${card[$lines]}
    args=(--root "$ws/.devflow" --config "$ws/devflow-gate.yaml")
    fold[$gate,$lines]=$(ir '--toggle-collect=devflow::FoldJournal*' -- "$gate" "${args[@]}" card show "$c")
    grep -q "$c" "$tmp/out" || fail "card show on $lines lines failed"
    restore() { bash "$here/restore.sh" "$ws/.devflow/tasks/$c" "$ws/pristine"; }
    "$gate" "${args[@]}" move "$c" ready >"$tmp/out" 2>&1 || fail "the cache-filling move failed"
    restore
    move[$gate,$lines]=$(ir -- "$gate" "${args[@]}" move "$c" ready)
    grep -q 'check by agent: \[cached\] bench allow' "$tmp/out" || fail "move on $lines lines was not a cache hit"
    grep -q 'moved designing->ready' "$tmp/out" || fail "move on $lines lines did not commit"
    restore
  done
done
row() {  # LABEL AWK-EXPR TABLE BINARY...: the expression over s (10 lines), l (10,000 lines)
  local label=$1 expr=$2
  local -n table=$3
  shift 3
  printf '%-44s' "$label"
  for gate in "$@"; do
    gate=$(realpath "$gate")
    printf '  %14s' "$(awk -v s="${table[$gate,10]}" -v l="${table[$gate,10000]}" "BEGIN{$expr}")"
  done
  printf '\n'
}
row "fold of a 10-line journal (FoldJournal*)" 'print s' fold "$@"
row "fold of a 10,000-line journal (FoldJournal*)" 'print l' fold "$@"
row "fold per journal line (target <= 3,000)" 'printf "%d", (l-s)/9990' fold "$@"
row "cache-hit move, 10-line journal" 'print s' move "$@"
row "cache-hit move, 10,000-line journal" 'print l' move "$@"
row "10,000-line / 10-line move (target <= 3x)" 'printf "%.2fx", l/s' move "$@"
row "instructions a line adds to the move" 'printf "%d", (l-s)/9990' move "$@"

last=$(realpath "${@: -1}")
per_line=$(((fold[$last,10000] - fold[$last,10]) / 9990))
missed=0
[ "$per_line" -le 3000 ] || missed=$((missed + 1))
[ "${move[$last,10000]}" -le $((3 * move[$last,10])) ] || missed=$((missed + 1))
printf 'targets missed by %s: %d\n' "$(label "$last")" "$missed"
if [ "$missed" -gt 0 ] && [ "${BENCH_STRICT:-0}" = 1 ]; then exit 3; fi
exit 0
