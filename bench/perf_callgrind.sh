#!/usr/bin/env bash
# Instruction counts (callgrind; repeatable under load) for issue 11 items 2 and 3, each beside
# its floor in the same run:
#   - a cache-hit `move --dry-run` on the quickstart workspace vs a bare `true` spawn and
#     `sha256sum` of the same prompt-sized bytes;
#   - `checker grounding` with a 16 MiB prompt on stdin vs `cat` of the same prompt.
# usage: bash bench/perf_callgrind.sh [path/to/devflow-gate]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
gate=${1:-$top/build/devflow-gate}
gate=$(cd "$(dirname "$gate")" && pwd)/$(basename "$gate")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/devflow-perf-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# ir CMD...: total instructions of CMD (stdin passed through), children not traced.
ir() {
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$@" >/dev/null 2>"$tmp/cg.err" || true
  sed -n 's/^summary: //p' "$tmp/cg.out"
}

cp -R "$top/examples/quickstart/workspace/." "$tmp/ws/" 2>/dev/null || { mkdir -p "$tmp/ws"; cp -R "$top/examples/quickstart/workspace/." "$tmp/ws/"; }
card=0001-audit-log-export
(cd "$tmp/ws" && "$gate" move $card ready >/dev/null 2>&1 || true)  # fills the verdict cache
printf 'row\tinstructions\n'
printf 'floor: true\t%s\n' "$(ir /bin/true)"
head -c 8192 /dev/urandom >"$tmp/key"
printf 'floor: sha256sum 8 KiB\t%s\n' "$(ir sha256sum "$tmp/key")"
printf 'move --dry-run (cache hit)\t%s\n' "$(cd "$tmp/ws" && ir "$gate" move $card ready --dry-run)"

# A 16 MiB prompt: the gate's layout with one large input.
python3 - "$tmp/prompt" <<'PY'
import sys
body = ("evidence line with words and 2026-01-01 and https://example.com/x\n" * 300000)[: 16 << 20]
open(sys.argv[1], "w").write("# card\n\n## prd (rev 1)\n\n" + body + "\n")
PY
printf 'floor: cat 16 MiB\t%s\n' "$(ir cat "$tmp/prompt" <"$tmp/prompt")"
printf 'checker grounding 16 MiB\t%s\n' "$(ir "$gate" checker grounding <"$tmp/prompt")"
