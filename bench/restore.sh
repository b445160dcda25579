#!/usr/bin/env bash
# hyperfine --prepare step of bench/run.sh: puts ONE card back as it was before a timed move, so
# the cost of preparing does not grow with the root.
#   restore.sh CARD_DIR PRISTINE_DIR [CACHE_DIR]
# - journal.jsonl is cut back to its pristine length (the move only appended one line), so no
#   rewritten journal sits dirty in the page cache when the next move fsyncs its append;
# - card.md (rewritten by rename on every commit) is copied back;
# - a leftover commit.lock is removed;
# - with CACHE_DIR: its verdict files are deleted, so the next move is a cache miss;
# - the touched files are synced, so the timed move only flushes what it writes itself.
set -euo pipefail
card=$1 pristine=$2 cache=${3:-}
truncate -s "$(stat -c %s "$pristine/journal.jsonl")" "$card/journal.jsonl"
cp "$pristine/card.md" "$card/card.md"
rm -f "$card/commit.lock"
sync_list=("$card/journal.jsonl" "$card/card.md" "$card")
if [ -n "$cache" ] && [ -d "$cache" ]; then
  rm -f "$cache"/*.json
  sync_list+=("$cache")
fi
sync "${sync_list[@]}"
