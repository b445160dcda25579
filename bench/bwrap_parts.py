#!/usr/bin/env python3
"""Where a check under bubblewrap spends its time over bubblewrap alone (issue 8), part by part.

Usage: python3 bench/bwrap_parts.py [GATE_BINARY]   (the reaper is devflow-gate-reaper beside it)

Runs, interleaved (one of each in turn, N rounds after two warm-up rounds), bubblewrap starting
bench/allow_checker.c with 2 KiB on stdin:
  A floor          bench/server.py's "bubblewrap alone" sandbox
  B +PATH dirs     A plus read-only binds of the $PATH directories outside /usr (as the gate binds)
  C +/etc masks    B plus the gate's /etc masks (/dev/null over shadow files, tmpfs ssl/private)
  D +rest          C plus /proc read-only, a scratch dir bound writable, / remounted read-only
  E +reaper R'     D with the inner reaper (devflow-gate-reaper, no limits) in front of the checker
  R                the reaper in front of the checker without bubblewrap, beside the checker alone
The gate's seccomp filter and the outer reaper are not in these rows. Prints medians and the
ratio to A. Environment: BENCH_N (40).
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_setup import bwrap_floor, gate_binary, workspace  # noqa: E402

gate = gate_binary()
reaper = os.path.join(os.path.dirname(gate), "devflow-gate-reaper")
bwrap = shutil.which("bwrap")
if not bwrap or not os.access(reaper, os.X_OK):
    sys.exit("bwrap_parts: needs bwrap on PATH and devflow-gate-reaper beside the gate binary")
N = int(os.environ.get("BENCH_N", "40"))
ws, checker = workspace("dg-bench-bwrap-parts-")
scratch = tempfile.mkdtemp(prefix="dg-bench-bwrap-scratch-")

floor = bwrap_floor(bwrap, ws, checker)
path_dirs = []
for d in dict.fromkeys(os.environ.get("PATH", "").split(":") + [os.path.dirname(reaper)]):
    if d.startswith("/") and not d.startswith(("/usr", "/bin", "/sbin")) and os.path.isdir(d):
        path_dirs += ["--ro-bind", d, d]
masks = []
for m in ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/security/opasswd"):
    if os.path.exists(m):
        masks += ["--ro-bind", "/dev/null", m]
if os.path.isdir("/etc/ssl/private"):
    masks += ["--tmpfs", "/etc/ssl/private", "--remount-ro", "/etc/ssl/private"]
rest = ["--remount-ro", "/proc", "--bind", scratch, scratch, "--remount-ro", "/"]
CONTROL = 23  # the reaper's control pipe: read end here, write end held open by this script
r, w = os.pipe()
os.dup2(r, CONTROL)
os.close(r)
in_reaper = [reaper, str(CONTROL), "-1", "0", "0", "0", "0", "-1", "-1", "-1", "-1", "-1", "--"]

rows = {
    "A floor": floor + ["--", checker],
    "B +PATH dirs": floor + path_dirs + ["--", checker],
    "C +/etc masks": floor + path_dirs + masks + ["--", checker],
    "D +/proc ro, scratch, / ro": floor + path_dirs + masks + rest + ["--", checker],
    "E D + reaper R'": floor + path_dirs + masks + rest + ["--"] + in_reaper + [checker],
    "checker alone": [checker],
    "reaper + checker": in_reaper + [checker],
}
times = {k: [] for k in rows}
prompt = b"x" * 2048
for i in range(N + 2):
    for name, argv in rows.items():
        t = time.perf_counter()
        subprocess.run(argv, input=prompt, capture_output=True, check=True, pass_fds=(CONTROL,))
        if i >= 2:
            times[name].append((time.perf_counter() - t) * 1000)
base = statistics.median(times["A floor"])
alone = statistics.median(times["checker alone"])
for name, v in times.items():
    m = statistics.median(v)
    ref = f"{m / base:.2f}x floor" if name[1] == " " else f"+{m - alone:.3f} ms over the checker alone"
    print(f"{name:28s} median {m:7.3f} ms  {ref}")
shutil.rmtree(ws, ignore_errors=True)
shutil.rmtree(scratch, ignore_errors=True)
