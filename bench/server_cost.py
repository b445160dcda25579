#!/usr/bin/env python3
"""Load-independent cost of one server decision (issue 8; figures in docs/performance.md).

  python3 bench/server_cost.py BINARY [BINARY...]

For each binary, in turn, over one kept-alive unix-socket connection, N sequential requests:
  hit   cache-hit dry-run POST /v1/admit (the card and config of bench/server.py)
  miss  cache-miss dry-run POST /v1/moves, `sandbox: off`, the trivial allow checker
and for each: system calls per request (`perf stat -e raw_syscalls:sys_enter -p SERVER` around
the N requests; the miss figure counts the server's process only, not the reaper or checker)
or, with BENCH_CALLGRIND=1, instructions per request: the server runs under callgrind twice,
each time the same start-up and 20 warm-up requests, then 0 requests in the first run and N in
the second, and SIGTERM (the drain ends it with exit 0 and callgrind writes its totals); the
figure is (second total - first total) / N, the whole server process (all its threads; not the
reaper or checker) with its start-up and exit cancelled out. Under valgrind 3.19 the server
refuses every unix peer (it lacks pidfd_send_signal, so the peer screen cannot pin the peer:
the 403 that stalled the first version of this mode); bench/valgrind_pidfd.c, preloaded into
the server under callgrind only, answers that call for the bench's live client. The miss path
needs pidfd_open, which no shim can give, so BENCH_CALLGRIND=1 measures `hit` only.
BENCH_CALLGRIND_KEEP=DIR keeps the second run's callgrind.out files in DIR, named
BINARYNAME.KIND.cg, for callgrind_annotate.
Every answer is checked (the hit one is "[cached] ", the miss one allowed and not cached).
Environment: BENCH_N (1000 hit, N/10 miss; under callgrind 200),
BENCH_CALLGRIND (0), BENCH_CALLGRIND_KEEP, BENCH_KINDS ("hit miss").
"""
import json, os, re, shutil, signal, socket, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_setup import runner, workspace  # noqa: E402

gates = [os.path.abspath(g) for g in sys.argv[1:]]
if not gates:
    sys.exit("usage: server_cost.py BINARY [BINARY...]")
CG = os.environ.get("BENCH_CALLGRIND") == "1"
N = int(os.environ.get("BENCH_N", "200" if CG else "1000"))
KEEP = os.environ.get("BENCH_CALLGRIND_KEEP")
KINDS = os.environ.get("BENCH_KINDS", "hit" if CG else "hit miss").split()
ws, checker = workspace("dg-bench-cost-")
SHIM = os.path.join(ws, "valgrind_pidfd.so")
if CG:  # valgrind 3.19 lacks pidfd_send_signal: bench/valgrind_pidfd.c
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", SHIM,
                    os.path.join(os.path.dirname(os.path.abspath(__file__)), "valgrind_pidfd.c"), "-ldl"], check=True)
run = runner(gates[0], ws)


def config(cache):
    y = f"providers:\n  checker:\n    command: ['{checker}']\n    sandbox: off\n"
    y += "plugins:\n  - id: devflow-agent-gate\n    config:\n      edges:\n"
    y += "        'designing->ready':\n          provider: checker\n          inputs: [design]\n"
    y += "          prompt: Check the design.\n      checkTimeoutMs: 20000\n"
    if cache:
        y += "      verdictCacheDir: .cache\n"
    return y


root = os.path.join(ws, ".devflow")
for name, cache in (("devflow-gate.yaml", True), ("cache.yaml", True), ("nocache.yaml", False)):
    with open(os.path.join(ws, name), "w") as f:
        f.write(config(cache))
with open(os.path.join(ws, "design.md"), "w") as f:
    f.write("# Design\n\nFine.\n")
cid = run("card", "create", "--title", "bench cost")
run("move", cid, "designing")
run("artifact", "add", cid, "design", "design.md")
sock = os.path.join(ws, "gate.sock")


def serve(gate, config_file, cg=CG):
    if os.path.exists(sock):
        os.unlink(sock)
    pre = []
    env = None
    if cg:
        env = dict(os.environ, LD_PRELOAD=SHIM)
        pre = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={ws}/cg.%p", "--trace-children=no"]
    p = subprocess.Popen(pre + [gate, "--root", root, "--config", config_file, "serve", "--listen", "unix:" + sock],
                         cwd=ws, stderr=subprocess.PIPE, text=True, env=env)
    for line in p.stderr:
        if '"msg":"ready"' in line:
            break
    threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
    return p


class Conn:
    def __init__(self):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(sock)
        self.buf = b""

    def post(self, path, body):
        b = body.encode()
        self.s.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       b"Content-Length: %d\r\n\r\n%s" % (path.encode(), len(b), b))
        while b"\r\n\r\n" not in self.buf:
            self.buf += self.s.recv(65536)
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        n = int(re.search(rb"(?i)content-length: (\d+)", head).group(1))
        while len(rest) < n:
            rest += self.s.recv(65536)
        self.buf = rest[n:]
        assert head.startswith(b"HTTP/1.1 200"), (head, rest)
        return json.loads(rest[:n])


def admit(dry=True):
    return json.dumps({"id": cid, "from": "designing", "to": "ready", "expectedRevision": 3,
                       "by": {"kind": "human"}, "root": root, "at": "2026-09-16T08:00:00.000Z", "dryRun": dry})


def measure(gate, kind, n):
    """Serves N requests of KIND after 20 warm-up ones; returns (system calls or None, path of
    the callgrind output or None)."""
    p = serve(gate, os.path.join(ws, "cache.yaml" if kind == "hit" else "nocache.yaml"))
    c = Conn()
    if kind == "hit":
        req = ("/v1/admit", admit())
    else:
        req = ("/v1/moves", json.dumps({"id": cid, "to": "ready", "dryRun": True}))
    for _ in range(20):  # warm
        c.post(*req)
    if not CG:
        perf = subprocess.Popen(["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "-p", str(p.pid)],
                                stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)  # perf attaches
    for _ in range(n):
        r = c.post(*req)
        checks = r.get("checks") or []
        assert r.get("allowed") is True or r.get("ok") is True, r
        cached = any((ch.get("summary") or "").startswith("[cached] ") for ch in checks)
        assert cached == (kind == "hit"), r
    syscalls = None
    if not CG:
        perf.send_signal(signal.SIGINT)
        err = perf.communicate()[1]
        syscalls = int(re.search(r"^(\d+),", err, re.M).group(1))
    c.s.close()
    p.terminate()
    assert p.wait() == 0, "the server did not exit 0 on SIGTERM"
    return syscalls, (os.path.join(ws, f"cg.{p.pid}") if CG else None)


def totals(path):
    for line in open(path):
        if line.startswith("summary:") or line.startswith("totals:"):
            return int(line.split()[1])
    raise RuntimeError(f"no totals in {path}")


# Prime the verdict cache (a non-dry admit writes the record), outside callgrind: under it the
# checker cannot be started (pidfd_open).
p = serve(gates[0], os.path.join(ws, "cache.yaml"), cg=False)
c = Conn()
primed = c.post("/v1/admit", admit(dry=False))
if primed.get("allowed") is not True:
    p.kill()
    sys.exit(f"priming the cache failed: {primed}")
c.s.close()
p.terminate()
p.wait()

for gate in gates:
    for kind in KINDS:
        n = N if kind == "hit" else max(N // 10, 1)
        if CG:
            _, zero = measure(gate, kind, 0)
            _, full = measure(gate, kind, n)
            figure = f"{(totals(full) - totals(zero)) / n:,.0f} instructions per request (N={n})"
            if KEEP:
                shutil.copy(full, os.path.join(KEEP, f"{os.path.basename(os.path.dirname(gate))}.{kind}.cg"))
            os.unlink(zero)
            os.unlink(full)
        else:
            calls, _ = measure(gate, kind, n)
            figure = f"{calls / n:,.1f} system calls per request (N={n})"
        print(f"{gate}  {kind:4}  {figure}", flush=True)
shutil.rmtree(ws, ignore_errors=True)
