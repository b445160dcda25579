#!/usr/bin/env python3
"""Admission-server benchmark (issue 8; figures in docs/performance.md), side by side in one run.

  python3 bench/server.py [PATH/TO/devflow-gate]     default: build-bench/, else build/

Measures, against one `devflow-gate serve` on loopback TCP:
  bare        the trivial allow checker (bench/allow_checker.c) spawned on its own, N times
  moves-miss  POST /v1/moves dryRun, no verdict cache, `sandbox: off`, same checker, N times
              over one keep-alive connection (median; the target is moves-miss - bare <= 2 ms)
  admit-hit   wrk -t2 -c32 on POST /v1/admit dryRun answered from the verdict cache
              (decisions/s and p99; targets >= 10,000/s and p99 <= 5 ms on 2 cores)
  cli-hit     the same cache-hit decision as `devflow-gate move --dry-run`, N times (per s)
Environment: BENCH_N (200), BENCH_SECONDS (10).
"""
import http.client, json, os, re, shutil, statistics, subprocess, sys, tempfile, time

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(here)
gate = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else next(
    (p for p in (f"{top}/build-bench/devflow-gate", f"{top}/build/devflow-gate") if os.access(p, os.X_OK)), None)
if not gate:
    sys.exit("bench: no devflow-gate binary; build one or pass its path")
N = int(os.environ.get("BENCH_N", "200"))
SECONDS = int(os.environ.get("BENCH_SECONDS", "10"))
ws = tempfile.mkdtemp(prefix="dg-bench-server-")
checker = os.path.join(ws, "allow_checker")
subprocess.run(["cc", "-O2", "-o", checker, os.path.join(here, "allow_checker.c")], check=True)


def run(*args):
    return subprocess.run([gate, *args], cwd=ws, check=True, capture_output=True, text=True).stdout.strip()


def config(cache):
    y = f"providers:\n  checker:\n    command: ['{checker}']\n    sandbox: off\n"
    y += "plugins:\n  - id: devflow-agent-gate\n    config:\n      edges:\n"
    y += "        'designing->ready':\n          provider: checker\n          inputs: [design]\n"
    y += "          prompt: Check the design.\n      checkTimeoutMs: 20000\n"
    if cache:
        y += "      verdictCacheDir: .cache\n"
    return y


root = os.path.join(ws, ".devflow")
with open(os.path.join(ws, "devflow-gate.yaml"), "w") as f:
    f.write(config(True))
with open(os.path.join(ws, "design.md"), "w") as f:
    f.write("# Design\n\nFine.\n")
cards = {}
for kind in ("hit", "miss"):
    cid = run("card", "create", "--title", f"bench {kind}")
    run("move", cid, "designing")
    run("artifact", "add", cid, "design", "design.md")
    cards[kind] = cid
run("move", cards["hit"], "ready", "--dry-run")  # a dry run caches nothing: prime for real below
with open(os.path.join(ws, "nocache.yaml"), "w") as f:
    f.write(config(False))


def serve(config_file):
    p = subprocess.Popen([gate, "--root", root, "--config", config_file, "serve", "--listen", "127.0.0.1:0",
                          "--max-checks", "4"], cwd=ws, stderr=subprocess.PIPE, text=True)
    port = None
    for line in p.stderr:
        if '"listening"' in line:
            port = json.loads(line)["port"]
        if '"msg":"ready"' in line:
            break
    # Keep draining the log so the server never blocks on a full pipe.
    import threading
    threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
    return p, port


def attempt(cid, rev=3, dry=True):
    return json.dumps({"id": cid, "from": "designing", "to": "ready", "expectedRevision": rev,
                       "by": {"kind": "human"}, "root": root, "at": "2026-09-16T08:00:00.000Z", "dryRun": dry})


# bare: the checker alone
prompt = b"x" * 2048
bare = []
for _ in range(N):
    t = time.perf_counter()
    subprocess.run([checker], input=prompt, capture_output=True, check=True)
    bare.append((time.perf_counter() - t) * 1000)

# moves-miss: no cache, sandbox off
srv, port = serve(os.path.join(ws, "nocache.yaml"))
conn = http.client.HTTPConnection("127.0.0.1", port)
miss = []
body = json.dumps({"id": cards["miss"], "to": "ready", "dryRun": True})
for _ in range(N):
    t = time.perf_counter()
    conn.request("POST", "/v1/moves", body, {"Content-Type": "application/json"})
    r = conn.getresponse(); r.read()
    miss.append((time.perf_counter() - t) * 1000)
srv.terminate(); srv.wait()

# admit-hit: cache primed by one real admission
srv, port = serve(os.path.join(ws, "devflow-gate.yaml"))
conn = http.client.HTTPConnection("127.0.0.1", port)
conn.request("POST", "/v1/admit", attempt(cards["hit"], dry=False), {"Content-Type": "application/json"})
first = json.loads(conn.getresponse().read())
conn.request("POST", "/v1/admit", attempt(cards["hit"]), {"Content-Type": "application/json"})
again = json.loads(conn.getresponse().read())
assert again["checks"][0]["summary"].startswith("[cached] "), again
lua = os.path.join(ws, "admit.lua")
with open(lua, "w") as f:
    f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = %s\n'
            % json.dumps(attempt(cards["hit"])))
wrk_out = ""
if shutil.which("wrk"):
    wrk_out = subprocess.run(["wrk", "-t2", "-c32", f"-d{SECONDS}s", "--latency", "-s", lua,
                              f"http://127.0.0.1:{port}/v1/admit"], capture_output=True, text=True).stdout
conn.request("GET", "/metrics")
metrics = conn.getresponse().read().decode()
rss_kib = int(re.search(r"VmRSS:\s+(\d+)", open(f"/proc/{srv.pid}/status").read()).group(1))
fds = len(os.listdir(f"/proc/{srv.pid}/fd"))
srv.terminate(); srv.wait()

# cli-hit
t = time.perf_counter()
for _ in range(N):
    run("move", cards["hit"], "ready", "--dry-run")
cli_s = time.perf_counter() - t

med_bare, med_miss = statistics.median(bare), statistics.median(miss)
print(f"bare checker           median {med_bare:.3f} ms  (N={N})")
print(f"/v1/moves miss (off)   median {med_miss:.3f} ms  over bare: {med_miss - med_bare:+.3f} ms  (target <= 2 ms)")
rps = re.search(r"Requests/sec:\s+([\d.]+)", wrk_out)
p99 = re.search(r"99%\s+([\d.]+\w+)", wrk_out)
errs = re.search(r"Non-2xx or 3xx responses: (\d+)", wrk_out)
if rps:
    print(f"/v1/admit hit (wrk)    {float(rps.group(1)):.0f} decisions/s  p99 {p99.group(1) if p99 else '?'}"
          f"  non-2xx {errs.group(1) if errs else 0}  (targets >= 10000/s, p99 <= 5 ms)")
else:
    print("/v1/admit hit (wrk)    wrk not installed (apt-get install wrk)")
print(f"CLI move --dry-run hit {N / cli_s:.0f} decisions/s  ({cli_s / N * 1000:.2f} ms each)")
if rps:
    print(f"server / CLI           {float(rps.group(1)) / (N / cli_s):.1f}x")
not_written = re.search(r"devflow_gate_ledger_rows_not_written_total (\d+)", metrics).group(1)
print(f"server after the run   RSS {rss_kib / 1024:.1f} MiB, {fds} fds; ledger rows not written: {not_written}")
shutil.rmtree(ws, ignore_errors=True)
