#!/usr/bin/env bash
# Spawn cost against the host's size (issue 11 item 5; docs/performance.md).
#
#   bash bench/spawn.sh [BUILD_DIR]     default: build-bench, else build (needs target spawn_bench)
#
# In one run of BUILD_DIR/spawn_bench (bench/spawn_bench.cc, Google Benchmark), with 8 MiB,
# 170 MiB and 1 GiB of touched memory in the host and the same trivial checker
# (bench/allow_checker.c):
#   floor_posix_spawn   posix_spawn + waitpid of the checker (the floor)
#   fork_exec           fork + exec + waitpid of it (what a fork-based spawn pays)
#   reaper_plain        posix_spawn of devflow-gate-reaper with no ruleset, filter or limits,
#                       which starts the checker unconfined (the reaper's own exec, beside
#                       reaper_landlock: their difference is what the confinement costs)
#   reaper_landlock     the Landlock level's spawn alone: posix_spawn of devflow-gate-reaper,
#                       which forks the checker, applies Landlock + seccomp + the capability drop
#                       between fork and exec and execs it (no scratch dir, pipes or event loop)
#   dispatch_off        a whole check through SubprocessChecker::Dispatch, `sandbox: off`
#   dispatch_landlock   the same at the Landlock + seccomp level (confinement between fork and
#                       exec, in the reaper's child)
#   dispatch_bwrap      the same under bubblewrap
# Each figure is the best of SPAWN_REPS repetitions (5; each the mean over >= 0.5 s) of wall time
# and of CPU time (the host and every descendant it reaped): on a machine shared with builds the
# best repetition is the one the load disturbed least. Beside them, the fastest single spawn of
# every repetition (counter min_ms): a repetition's mean counts every preemption in it, the
# fastest of its hundreds of spawns the fewest. Shown, and judged only for the 1 ms row: at load
# 7 on 2 cores the floor's own fastest spawn still moved 2.2-3.5 ms between sizes.
#
# Targets (side by side, so the machine's load cancels out): the confined spawn and each dispatch
# level keep their ratio to the floor as the host grows (ratio at 1 GiB <= 1.25x the ratio at
# 8 MiB, by wall and by CPU time; fork_exec, for contrast, goes from ~1.5x to >10x), and at 1 GiB
# the Landlock level's confinement between clone and exec (reaper_landlock - reaper_plain) costs
# <= 1 ms (issue 11 item 5), judged by wall time, CPU time and the fastest spawn.
# reaper_landlock - floor is printed beside it, not judged: it holds the reaper's own exec, which
# the per-check subreaper needs and which does not grow with the host.
# The table is always printed; a missed target fails the script only with BENCH_STRICT=1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=${1:-}
if [ -z "$build" ]; then
  for candidate in "$top/build-bench" "$top/build"; do
    if [ -x "$candidate/spawn_bench" ]; then build=$candidate; break; fi
  done
fi
if [ -z "$build" ] || [ ! -x "$build/spawn_bench" ]; then
  echo "bench: no spawn_bench; build it (cmake --build build --target spawn_bench) or pass its build dir" >&2
  exit 2
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/devflow-spawn-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/allow_checker" "$here/allow_checker.c"
echo "machine: nproc=$(nproc), load=$(cut -d' ' -f1-3 /proc/loadavg), kernel=$(uname -r)"
SPAWN_BENCH_CHECKER="$work/allow_checker" "$build/spawn_bench" \
  --benchmark_repetitions="${SPAWN_REPS:-5}" --benchmark_format=json >"$work/spawn.json"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
rc=0
python3 - "$work/spawn.json" <<'PY' || rc=$?
import json, os, sys
rows = {}
skipped = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    name, size = b["run_name"].split("/")[0], int(b["run_name"].split("/")[1])
    if b.get("error_occurred"):
        skipped[name] = b.get("error_message", "")
        continue
    if b.get("run_type") != "iteration":
        continue
    wall, cpu = b["real_time"], b.get("cpu_ms", 0.0)  # ms (Unit kMillisecond)
    fastest = b.get("min_ms", float("inf"))  # the fastest single iteration of the repetition
    best = rows.get((name, size), (float("inf"), float("inf"), float("inf")))
    rows[(name, size)] = (min(best[0], wall), min(best[1], cpu), min(best[2], fastest))
variants = ["floor_posix_spawn", "fork_exec", "reaper_plain", "reaper_landlock", "dispatch_off", "dispatch_landlock", "dispatch_bwrap"]
sizes = [8, 170, 1024]
print("\nbest repetition, wall ms / cpu ms (ratio of wall to the floor at the same size)")
print("%-18s" % "variant" + "".join("%28s" % ("%d MiB" % s) for s in sizes) + "%22s" % "1 GiB - 8 MiB")
missed = 0
for v in variants:
    if v in skipped:
        print("%-18s skipped: %s" % (v, skipped[v]))
        continue
    line = "%-18s" % v
    for s in sizes:
        wall, cpu, _ = rows[(v, s)]
        line += "%28s" % ("%.2f / %.2f (%.2fx)" % (wall, cpu, wall / rows[("floor_posix_spawn", s)][0]))
    grow_wall = rows[(v, 1024)][0] - rows[(v, 8)][0]
    grow_cpu = rows[(v, 1024)][1] - rows[(v, 8)][1]
    line += "%22s" % ("%+.2f / %+.2f" % (grow_wall, grow_cpu))
    print(line)
# The fastest spawns: only from a spawn_bench that reports them (min_ms, 2026-12-05).
fastest = all(r[2] != float("inf") for (v, _), r in rows.items() if v in variants)
if fastest:
    print("\nfastest single spawn over every repetition, ms (ratio to the floor's fastest at that "
          "size)")
    print("%-18s" % "variant" + "".join("%16s" % ("%d MiB" % s) for s in sizes)
          + "%16s" % "1 GiB - 8 MiB")
    for v in variants:
        if v in skipped:
            continue
        line = "%-18s" % v
        for s in sizes:
            line += "%16s" % ("%.2f (%.2fx)" % (rows[(v, s)][2],
                                                rows[(v, s)][2] / rows[("floor_posix_spawn", s)][2]))
        print(line + "%16s" % ("%+.2f" % (rows[(v, 1024)][2] - rows[(v, 8)][2])))
print("\ntargets:")
def target(label, value, ok):
    global missed
    print("  %-4s %-60s %.2f ms" % ("ok" if ok else "MISS", label, value))
    missed += not ok
def ratio(v, size, i=0):
    return rows[(v, size)][i] / rows[("floor_posix_spawn", size)][i]
def target_x(label, value, ok):
    global missed
    print("  %-4s %-60s %.2fx" % ("ok" if ok else "MISS", label, value))
    missed += not ok
print("  ---- fork_exec (contrast): ratio to the floor grows %.2fx from 8 MiB to 1 GiB"
      % (ratio("fork_exec", 1024) / ratio("fork_exec", 8)))
for v in ["reaper_plain", "reaper_landlock", "dispatch_off", "dispatch_landlock", "dispatch_bwrap"]:
    if v in skipped:
        continue
    for i, kind in enumerate(["wall", "cpu"]):  # the fastest spawns are shown above, not judged
        growth = ratio(v, 1024, i) / ratio(v, 8, i)
        target_x("%s/floor at 1 GiB <= 1.25x the same at 8 MiB (%s)" % (v, kind), growth,
                 growth <= 1.25)
if "reaper_landlock" not in skipped:
    # Shown, not judged: the difference is mostly the reaper's own exec (a second exec, the price
    # of a per-check subreaper, issue 7 item 7), which does not grow with the host; the issue's
    # figure is the confinement between clone and exec, the next row (docs/performance.md).
    over = rows[("reaper_landlock", 1024)][0] - rows[("floor_posix_spawn", 1024)][0]
    print("  ---- %-60s %.2f ms" % ("reaper_landlock - floor at 1 GiB (the reaper's exec included)", over))
    if "reaper_plain" not in skipped:
        confine = rows[("reaper_landlock", 1024)][0] - rows[("reaper_plain", 1024)][0]
        target("reaper_landlock - reaper_plain at 1 GiB <= 1 ms (wall)", confine, confine <= 1.0)
        # The same by CPU time (the host and both children): the confinement is work in the
        # reaper's child (rlimits, no_new_privs, the capability drop, landlock_restrict_self,
        # the seccomp filter), which a loaded machine delays (wall) far more than it inflates.
        confine_cpu = rows[("reaper_landlock", 1024)][1] - rows[("reaper_plain", 1024)][1]
        target("reaper_landlock - reaper_plain at 1 GiB <= 1 ms (cpu)", confine_cpu,
               confine_cpu <= 1.0)
        # And by the fastest single spawn of each (bench/spawn_bench.cc, Fastest): the one
        # spawn of hundreds that the load disturbed least, a figure a busy machine still gives.
        if fastest:
            confine_min = rows[("reaper_landlock", 1024)][2] - rows[("reaper_plain", 1024)][2]
            target("reaper_landlock - reaper_plain at 1 GiB <= 1 ms (fastest)", confine_min,
                   confine_min <= 1.0)
elif "not usable here" not in skipped["reaper_landlock"]:
    # A row that failed is a missed target, not a quiet skip: the reaper's argv fell out of step
    # with checker/reaper.h once and the 1 ms row went unmeasured for three days.
    print("  MISS %-60s %s" % ("reaper_landlock ran", skipped["reaper_landlock"]))
    missed += 1
sys.exit(3 if missed else 0)
PY
if [ "$rc" = 3 ] && [ "${BENCH_STRICT:-0}" = 1 ]; then
  echo "bench: a spawn target was missed (BENCH_STRICT=1)" >&2
  exit 1
fi
[ "$rc" = 0 ] || [ "$rc" = 3 ] || exit "$rc"
