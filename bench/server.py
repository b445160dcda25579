#!/usr/bin/env python3
"""Admission-server benchmark (issue 8; figures in docs/performance.md), side by side in one run.

  python3 bench/server.py [PATH/TO/devflow-gate]     default: build-bench/, else build/

Measures, against one `devflow-gate serve` on loopback TCP:
  bare        the trivial allow checker (bench/allow_checker.c) spawned on its own, N times
  moves-miss  POST /v1/moves dryRun, no verdict cache, `sandbox: off`, same checker, N times
              over one keep-alive connection (median; the target is moves-miss - bare <= 2 ms)
  bwrap       the same miss under bubblewrap, interleaved with bubblewrap alone starting the
              checker in a sandbox of the same kind (median; target <= 1.5x bubblewrap alone)
  admit-hit   wrk -t2 -c32 on POST /v1/admit dryRun answered from the verdict cache
              (decisions/s and p99; targets >= 10,000/s and p99 <= 5 ms on 2 cores)
  cli-hit     the same cache-hit decision as `devflow-gate move --dry-run`, N times (per s)
  slow        BENCH_SLOW (1000) concurrent POST /v1/admit dry runs over loopback TCP on as many
              cards, each a cache miss whose checker sleeps 1 s, with --max-checks 64 and the
              other limits at their defaults: all answered and allowed (none faulted, none
              unanswered), the server's fds back to the baseline after, its peak RSS (<= 100 MiB)
  flat        BENCH_FLAT (100000) cache-hit dry-run admits (wrk in slices): RSS and fds sampled
              after each slice (flat = the last sample equals the one after the first slice)
Environment: BENCH_N (200), BENCH_SECONDS (10), BENCH_SLOW (1000), BENCH_FLAT (100000).
"""
import asyncio, http.client, json, os, re, shutil, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_setup import bwrap_floor, gate_binary, runner, workspace  # noqa: E402

gate = gate_binary()
N = int(os.environ.get("BENCH_N", "200"))
SECONDS = int(os.environ.get("BENCH_SECONDS", "10"))
SLOW = int(os.environ.get("BENCH_SLOW", "1000"))
FLAT = int(os.environ.get("BENCH_FLAT", "100000"))
ws, checker = workspace("dg-bench-server-")

run = runner(gate, ws)


def config(cache, args=""):
    y = f"providers:\n  checker:\n    command: ['{checker}'{args}]\n    sandbox: off\n"
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


def serve(config_file, *extra):
    p = subprocess.Popen([gate, "--root", root, "--config", config_file, "serve", "--listen", "127.0.0.1:0",
                          *(extra or ("--max-checks", "4"))], cwd=ws, stderr=subprocess.PIPE, text=True)
    port = None
    for line in p.stderr:
        if '"listening"' in line:
            port = json.loads(line)["port"]
        if '"msg":"ready"' in line:
            break
    # Keep draining the log so the server never blocks on a full pipe (into BENCH_LOG when set).
    import threading
    sink = open(os.environ["BENCH_LOG"], "a") if os.environ.get("BENCH_LOG") else None
    threading.Thread(target=lambda: [sink.write(l) if sink else None for l in p.stderr], daemon=True).start()
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

# moves-miss under bubblewrap beside bubblewrap alone starting the same checker, interleaved
# (one of each in turn). The floor's sandbox is the gate's in kind: the system trees and the
# checker's and workspace's directories read-only, /dev, /proc, every namespace unshared, a
# new session, no capabilities; it lacks the gate's seccomp filter, /etc masks, scratch dir
# and per-check reaper, so it is the cheaper side.
bw_alone, bw_miss = [], []
bwrap = shutil.which("bwrap")
if bwrap:
    with open(os.path.join(ws, "bwrap.yaml"), "w") as f:
        f.write(config(False).replace("    sandbox: off\n", ""))
    floor = bwrap_floor(bwrap, ws, checker) + ["--", checker]
    srv, port = serve(os.path.join(ws, "bwrap.yaml"))
    conn = http.client.HTTPConnection("127.0.0.1", port)
    for i in range(N + 2):  # the first two of each warm up
        t = time.perf_counter()
        subprocess.run(floor, input=prompt, capture_output=True, check=True)
        if i >= 2:
            bw_alone.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        conn.request("POST", "/v1/moves", body, {"Content-Type": "application/json"})
        r = json.loads(conn.getresponse().read())
        assert r.get("ok") is True, r
        if i >= 2:
            bw_miss.append((time.perf_counter() - t) * 1000)
    srv.terminate(); srv.wait()

# admit-hit: cache primed by one real admission per card. On one card attempts run one at a
# time (the per-card chain), so wrk's 32 connections on it measure one attempt after another;
# spread over 32 cards they measure the server's parallel throughput. Both are printed.
def copy_card(src_id, n, base):
    tasks = os.path.join(root, "tasks")
    slug = src_id.split("-", 1)[1]
    out = []
    for i in range(n):
        cid = f"{base + i:05d}-{slug}"
        if not os.path.exists(os.path.join(tasks, cid)):
            shutil.copytree(os.path.join(tasks, src_id), os.path.join(tasks, cid), symlinks=True)
        out.append(cid)
    return out


spread = [cards["hit"]] + copy_card(cards["hit"], 31, 8000)
srv, port = serve(os.path.join(ws, "devflow-gate.yaml"))
conn = http.client.HTTPConnection("127.0.0.1", port)
for cid in spread:
    conn.request("POST", "/v1/admit", attempt(cid, dry=False), {"Content-Type": "application/json"})
    first = json.loads(conn.getresponse().read())
    conn.request("POST", "/v1/admit", attempt(cid), {"Content-Type": "application/json"})
    again = json.loads(conn.getresponse().read())
    assert again["checks"][0]["summary"].startswith("[cached] "), again
lua = os.path.join(ws, "admit.lua")
with open(lua, "w") as f:
    f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = %s\n'
            % json.dumps(attempt(cards["hit"])))
lua_spread = os.path.join(ws, "admit_spread.lua")
with open(lua_spread, "w") as f:
    f.write("local bodies = {%s}\nlocal i = 0\nrequest = function()\n  i = i %% #bodies + 1\n"
            "  return wrk.format('POST', '/v1/admit', {['Content-Type'] = 'application/json'}, bodies[i])\nend\n"
            % ", ".join(json.dumps(attempt(c)) for c in spread))
wrk_out = wrk_spread = ""
perf = None
if os.environ.get("BENCH_PERF"):  # perf record of the server during the wrk run (BENCH_PERF=FILE)
    perf = subprocess.Popen(["perf", "record", "--call-graph", "dwarf,16384", "-F", "499", "-o",
                             os.environ["BENCH_PERF"], "-p", str(srv.pid)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if shutil.which("wrk"):
    wrk_out = subprocess.run(["wrk", "-t2", "-c32", f"-d{SECONDS}s", "--latency", "-s", lua,
                              f"http://127.0.0.1:{port}/v1/admit"], capture_output=True, text=True).stdout
    wrk_spread = subprocess.run(["wrk", "-t2", "-c32", f"-d{SECONDS}s", "--latency", "-s", lua_spread,
                                 f"http://127.0.0.1:{port}/v1/admit"], capture_output=True, text=True).stdout
if perf:
    perf.send_signal(2); perf.wait()
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



def proc_status(pid):
    st = open(f"/proc/{pid}/status").read()
    kib = lambda key: int(re.search(key + r":\s+(\d+)", st).group(1))
    return kib("VmRSS"), kib("VmHWM"), len(os.listdir(f"/proc/{pid}/fd"))


# flat: RSS and fds across FLAT cache-hit admits, in wrk slices
flat = []
if shutil.which("wrk") and FLAT > 0:
    srv, port = serve(os.path.join(ws, "devflow-gate.yaml"))
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("POST", "/v1/admit", attempt(cards["hit"]), {"Content-Type": "application/json"})
    conn.getresponse().read()
    conn.close()
    served = 0
    fds_base = proc_status(srv.pid)[2]
    while served < FLAT:
        out = subprocess.run(["wrk", "-t2", "-c32", "-d2s", "-s", lua, f"http://127.0.0.1:{port}/v1/admit"],
                             capture_output=True, text=True).stdout
        served += int(re.search(r"(\d+) requests in", out).group(1))
        for _ in range(40):  # wrk's connections close as it exits: let the server see it (bounded)
            rss, _, fds = proc_status(srv.pid)
            if fds <= fds_base:
                break
            time.sleep(0.05)
        flat.append((served, rss, fds))
    srv.terminate(); srv.wait()

# slow: SLOW concurrent cache-miss admits on SLOW cards, each checker sleeping 1 s, --max-checks 64
slow = None
if SLOW > 0:
    with open(os.path.join(ws, "slow.yaml"), "w") as f:
        f.write(config(False, ", '1000'"))
    ids = copy_card(cards["miss"], SLOW, 10000)
    # The defaults of --max-queue and --max-connections (issue 8: the defaults must answer it).
    srv, port = serve(os.path.join(ws, "slow.yaml"), "--max-checks", "64")
    # One read below the root first: the server keeps the root's descriptor open from its first
    # use (one per served root, docs/decisions.md), part of the baseline, not a leak.
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.request("GET", f"/v1/cards/{ids[0]}")
    assert conn.getresponse().read()
    conn.close()
    _, _, fds_before = proc_status(srv.pid)

    # Every caller is counted: an answer's status, or 0 for a connection closed (or reset)
    # without an HTTP answer, which is reported, not a crash.
    async def one(cid):
        try:
            r, w = await asyncio.open_connection("127.0.0.1", port)
            body = attempt(cid).encode()
            w.write(b"POST /v1/admit HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            await w.drain()
            raw = await r.read()
            w.close()
        except OSError as e:
            return 0, str(e).encode()
        head, _, payload = raw.partition(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 ") or not head[9:12].isdigit():
            return 0, raw
        return int(head[9:12]), payload

    async def all_of():
        return await asyncio.gather(*(one(cid) for cid in ids))

    t = time.perf_counter()
    answers = asyncio.run(all_of())
    slow_s = time.perf_counter() - t
    allowed = sum(1 for st, p in answers if st == 200 and json.loads(p).get("allowed") is True)
    faulted = sum(1 for st, p in answers if st == 200 and "park" in json.loads(p))
    statuses = {}
    for st, p in answers:
        statuses[st] = statuses.get(st, 0) + 1
    refusals = {}  # the error of each non-200 answer, by count
    for st, p in answers:
        if st != 200:
            try:
                why = json.loads(p).get("error", "")[:100] if st else "unanswered"
            except ValueError:
                why = "unparsable answer"
            refusals[(st, why)] = refusals.get((st, why), 0) + 1
    # The last answer is written before its connection closes: wait (bounded) for the server's
    # side of the connections to go.
    for _ in range(100):
        rss_now, hwm, fds_after = proc_status(srv.pid)
        if fds_after <= fds_before:
            break
        time.sleep(0.05)
    slow = (SLOW, allowed, faulted, statuses, slow_s, fds_before, fds_after, hwm, refusals)
    srv.terminate(); srv.wait()

med_bare, med_miss = statistics.median(bare), statistics.median(miss)
print(f"bare checker           median {med_bare:.3f} ms  (N={N})")
print(f"/v1/moves miss (off)   median {med_miss:.3f} ms  over bare: {med_miss - med_bare:+.3f} ms  (target <= 2 ms)")
if bw_alone:
    med_bw, med_bw_miss = statistics.median(bw_alone), statistics.median(bw_miss)
    print(f"bubblewrap alone       median {med_bw:.3f} ms  (the same checker, N={N}, interleaved with the next row)")
    print(f"/v1/moves miss (bwrap) median {med_bw_miss:.3f} ms  = {med_bw_miss / med_bw:.2f}x bubblewrap alone  (target <= 1.5x)")
else:
    print("bubblewrap rows        skipped: bwrap is not on PATH")
rps = re.search(r"Requests/sec:\s+([\d.]+)", wrk_out)
for label, out in (("one card", wrk_out), ("32 cards", wrk_spread if rps else "")):
    r = re.search(r"Requests/sec:\s+([\d.]+)", out)
    p99 = re.search(r"99%\s+([\d.]+\w+)", out)
    errs = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if r:
        print(f"/v1/admit hit, {label} {float(r.group(1)):.0f} decisions/s  p99 {p99.group(1) if p99 else '?'}"
              f"  non-2xx {errs.group(1) if errs else 0}  (targets >= 10000/s, p99 <= 5 ms)")
if not rps:
    print("/v1/admit hit (wrk)    wrk not installed (apt-get install wrk)")
print(f"CLI move --dry-run hit {N / cli_s:.0f} decisions/s  ({cli_s / N * 1000:.2f} ms each)")
if rps:
    print(f"server / CLI           {float(rps.group(1)) / (N / cli_s):.1f}x")
not_written = re.search(r"devflow_gate_ledger_rows_not_written_total (\d+)", metrics).group(1)
print(f"server after the run   RSS {rss_kib / 1024:.1f} MiB, {fds} fds; ledger rows not written: {not_written}")
if flat:
    print(f"flat over {flat[-1][0]} cache-hit admits: RSS {flat[0][1] / 1024:.1f} -> {flat[-1][1] / 1024:.1f} MiB, "
          f"fds {flat[0][2]} -> {flat[-1][2]} (after {flat[0][0]} and after {flat[-1][0]} requests; "
          f"RSS samples {', '.join(f'{r / 1024:.1f}' for _, r, _ in flat)})")
if slow:
    n, allowed, faulted, statuses, secs, fb, fa, hwm, refusals = slow
    shown = ", ".join(f"{st or 'unanswered'}: {c}" for st, c in sorted(statuses.items()))
    print(f"slow checks (1 s each) {n} concurrent, --max-checks 64: {allowed} allowed, {faulted} faulted, "
          f"{statuses.get(0, 0)} unanswered; statuses {{{shown}}}, {secs:.1f} s (floor {n / 64:.1f} s); "
          f"fds {fb} -> {fa}; peak RSS {hwm / 1024:.1f} MiB (target <= 100 MiB)")
    for (st, why), c in sorted(refusals.items(), key=lambda kv: -kv[1]):
        print(f"  {c} x {st or 'unanswered'} {why}")
if os.environ.get("BENCH_KEEP"):
    print(f"workspace kept: {ws}")
else:
    shutil.rmtree(ws, ignore_errors=True)
