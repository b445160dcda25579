#!/usr/bin/env python3
"""Load-independent cost of one server decision (issue 8; figures in docs/performance.md).

  python3 bench/server_cost.py BINARY [BINARY...]

For each binary, in turn, over one kept-alive unix-socket connection, N sequential requests:
  hit   cache-hit dry-run POST /v1/admit (the card and config of bench/server.py)
  miss  cache-miss dry-run POST /v1/moves, `sandbox: off`, the trivial allow checker
and for each: system calls per request (`perf stat -e raw_syscalls:sys_enter -p SERVER` around
the N requests; the miss figure counts the server's process only, not the reaper or checker)
and, with BENCH_CALLGRIND=1, instructions per request (the server run under callgrind,
`callgrind_control --zero` before and `--dump` after the N requests; all the server's threads).
Every answer is checked (the hit one is "[cached] ", the miss one allowed and not cached).
Environment: BENCH_N (1000 hit, N/10 miss), BENCH_CALLGRIND (0).
BENCH_CALLGRIND=1 is UNFINISHED: in its first run (2026-12-04, branch server8b, load ~8) it printed
nothing in 9 minutes and was killed; whether the server under callgrind never logged "ready" or
callgrind_control stalled was not found. The system-call mode is the one that has been run.
"""
import json, os, re, shutil, signal, socket, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_setup import runner, workspace  # noqa: E402

gates = [os.path.abspath(g) for g in sys.argv[1:]]
if not gates:
    sys.exit("usage: server_cost.py BINARY [BINARY...]")
N = int(os.environ.get("BENCH_N", "1000"))
CG = os.environ.get("BENCH_CALLGRIND") == "1"
ws, checker = workspace("dg-bench-cost-")
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


def serve(gate, config_file):
    if os.path.exists(sock):
        os.unlink(sock)
    pre = []
    if CG:
        pre = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={ws}/cg.%p"]
    p = subprocess.Popen(pre + [gate, "--root", root, "--config", config_file, "serve", "--listen", "unix:" + sock],
                         cwd=ws, stderr=subprocess.PIPE, text=True)
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
        assert head.startswith(b"HTTP/1.1 200"), head
        return json.loads(rest[:n])


def admit(dry=True):
    return json.dumps({"id": cid, "from": "designing", "to": "ready", "expectedRevision": 3,
                       "by": {"kind": "human"}, "root": root, "at": "2026-09-16T08:00:00.000Z", "dryRun": dry})


def measure(gate, kind):
    p = serve(gate, os.path.join(ws, "cache.yaml" if kind == "hit" else "nocache.yaml"))
    c = Conn()
    n = N if kind == "hit" else max(N // 10, 1)
    if kind == "hit":
        c.post("/v1/admit", admit(dry=False))  # prime the cache (once per workspace is enough)
        req = ("/v1/admit", admit())
    else:
        req = ("/v1/moves", json.dumps({"id": cid, "to": "ready", "dryRun": True}))
    for _ in range(20):  # warm
        c.post(*req)
    out = {}
    if CG:
        subprocess.run(["callgrind_control", "--zero", str(p.pid)], capture_output=True, check=True)
    else:
        perf = subprocess.Popen(["perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter", "-p", str(p.pid)],
                                stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)  # perf attaches
    for _ in range(n):
        r = c.post(*req)
        checks = r.get("checks") or []
        assert r.get("allowed") is True or r.get("ok") is True, r
        cached = any((ch.get("summary") or "").startswith("[cached] ") for ch in checks)
        assert cached == (kind == "hit"), r
    if CG:
        for f in os.listdir(ws):
            if f.startswith("cg."):
                os.unlink(os.path.join(ws, f))
        subprocess.run(["callgrind_control", "--dump", str(p.pid)], capture_output=True, check=True)
        total = 0
        for f in os.listdir(ws):
            if f.startswith("cg."):
                for line in open(os.path.join(ws, f)):
                    if line.startswith("summary:") or line.startswith("totals:"):
                        total += int(line.split()[1])
                        break
        out["instructions"] = total / n
    else:
        perf.send_signal(signal.SIGINT)
        err = perf.communicate()[1]
        out["syscalls"] = int(re.search(r"^(\d+),", err, re.M).group(1)) / n
    c.s.close()
    p.terminate()
    p.wait()
    return out


for gate in gates:
    for kind in ("hit", "miss"):
        r = measure(gate, kind)
        figure = ", ".join(f"{v:,.1f} {k} per request" for k, v in r.items())
        print(f"{gate}  {kind:4}  {figure}", flush=True)
shutil.rmtree(ws, ignore_errors=True)
