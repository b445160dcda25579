#!/usr/bin/env python3
"""The admission server under abuse (issue 8: load, bad input, reload, idle connections).

  python3 bench/server_abuse.py [BINARY]

One server (unix socket and loopback TCP), the trivial allow checker with `sandbox: off`, eight
cards whose verdicts are cached. Three phases, each printing what the callers saw:

  reload   BENCH_CLIENTS (4) keep-alive unix clients send cache-hit dry-run POST /v1/admit, and
           one more sends non-dry admits (each writes a ledger row) on other cards, for
           BENCH_RELOAD_SECONDS (10) while the config file is replaced every 50 ms, in turn by a
           broken and a good one, and reloaded (POST /v1/reload, every fifth time SIGHUP).
           Expected: every admit answered 200 and allowed, every good reload a new generation,
           every broken one 422 with /readyz naming the error, ledger rows = non-dry admits,
           devflow_gate_ledger_rows_not_written_total 0.
  input    while one client measures cache-hit admits (median / p99), BENCH_SLOWLORIS (50)
           connections trickle a header byte a second, and another client sends bad requests in
           a loop: a body past 1 MiB (413), malformed JSON, an unknown field, a wrong type (400),
           a foreign root (403), each error naming its field. Expected: each bad request its status, every
           trickling connection closed by the server (--read-timeout-ms 2000), the measuring
           client's p99 beside its figure with no abuse.
  idle     BENCH_IDLE (2000) idle TCP connections opened (--max-connections 1024) while a
           kept-alive unix client measures cache-hit admits; then closed. Expected: the connections past the cap
           refused or closed, the measuring client answered, fds and RSS back to the baseline.

Figures go to docs/performance.md. Exit status 1 when an expectation fails.
"""
import http.client, json, os, re, signal, socket, subprocess, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_setup import gate_binary, runner, start_server, workspace  # noqa: E402

gate = gate_binary()
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "4"))
RELOAD_SECONDS = float(os.environ.get("BENCH_RELOAD_SECONDS", "10"))
SLOWLORIS = int(os.environ.get("BENCH_SLOWLORIS", "50"))
IDLE = int(os.environ.get("BENCH_IDLE", "2000"))
ws, checker = workspace("dg-bench-abuse-")
run = runner(gate, ws)
root = os.path.join(ws, ".devflow")
sock = os.path.join(ws, "gate.sock")
failures = []


def expect(ok, what):
    print(("  ok    " if ok else "  FAIL  ") + what)
    if not ok:
        failures.append(what)


def config(broken=False):
    y = f"providers:\n  checker:\n    command: ['{checker}']\n    sandbox: off\n"
    y += "plugins:\n  - id: devflow-agent-gate\n    config:\n      edges:\n"
    y += "        'designing->ready':\n          provider: checker\n          inputs: [design]\n"
    y += "          prompt: Check the design.\n      checkTimeoutMs: 20000\n"
    y += "      verdictCacheDir: .cache\n"
    if broken:
        y += "      unknownKey: 1\n"
    return y


cfg = os.path.join(ws, "devflow-gate.yaml")


def write_config(broken):
    tmp = cfg + ".tmp"
    with open(tmp, "w") as f:
        f.write(config(broken))
    os.replace(tmp, cfg)


write_config(False)
with open(os.path.join(ws, "design.md"), "w") as f:
    f.write("# Design\n\nFine.\n")
cards = []
for i in range(8):
    cid = run("card", "create", "--title", f"abuse {i}")
    run("move", cid, "designing")
    run("artifact", "add", cid, "design", "design.md")
    cards.append(cid)

srv, port = start_server(gate, ["--root", root, "--config", cfg, "serve", "--listen", "unix:" + sock,
                                "--listen", "127.0.0.1:0", "--max-checks", "8", "--read-timeout-ms",
                                "2000", "--max-connections", "1024"], ws)


class Conn:
    """One kept-alive HTTP/1.1 connection on the unix socket (or TCP with `tcp`)."""

    def __init__(self, tcp=False):
        if tcp:
            self.s = socket.create_connection(("127.0.0.1", port))
        else:
            self.s = socket.socket(socket.AF_UNIX)
            self.s.connect(sock)
        self.buf = b""

    def request(self, method, path, body=b""):
        """(status, parsed JSON or text) of one request; raises when the server closes."""
        self.s.sendall(b"%s %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       b"Content-Length: %d\r\n\r\n%s" % (method.encode(), path.encode(), len(body), body))
        while b"\r\n\r\n" not in self.buf:
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        n = int(re.search(rb"(?i)content-length: (\d+)", head).group(1))
        while len(rest) < n:
            chunk = self.s.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            rest += chunk
        self.buf = rest[n:]
        status = int(head.split(b" ", 2)[1])
        text = rest[:n].decode()
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def close(self):
        self.s.close()


def admit(cid, dry=True, **extra):
    body = {"id": cid, "from": "designing", "to": "ready", "expectedRevision": 3,
            "by": {"kind": "human"}, "root": root, "at": "2026-09-16T08:00:00.000Z", "dryRun": dry}
    body.update(extra)
    return json.dumps(body).encode()


def metric(name):
    c = Conn()
    _, text = c.request("GET", "/metrics")
    c.close()
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total += float(line.rsplit(" ", 1)[1])
    return total


def proc():
    """(open fds, RSS in KiB) of the server."""
    fds = len(os.listdir(f"/proc/{srv.pid}/fd"))
    with open(f"/proc/{srv.pid}/status") as f:
        rss = int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
    return fds, rss


def ledger_rows():
    path = os.path.join(root, "ledger", "decisions.jsonl")
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        return sum(1 for _ in f)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))] if xs else float("nan")


# Prime each card's verdict (a non-dry admit writes the cache record and a ledger row).
c = Conn()
for cid in cards:
    status, r = c.request("POST", "/v1/admit", admit(cid, dry=False))
    assert status == 200 and r.get("allowed") is True, (status, r)
c.close()

# ---- reload: admits answered while the config flips every 50 ms ----
print(f"reload: {CLIENTS} hit clients + 1 writing client for {RELOAD_SECONDS:.0f} s, the config "
      "replaced and reloaded every 50 ms (broken / good in turn, every fifth by SIGHUP)")
stop = threading.Event()
counts = {"hit": {}, "write": {}}
bad_answers = []
lock = threading.Lock()


def client(kind, cid_list):
    conn = Conn()
    i = 0
    while not stop.is_set():
        cid = cid_list[i % len(cid_list)]
        i += 1
        status, r = conn.request("POST", "/v1/admit", admit(cid, dry=(kind == "hit")))
        with lock:
            counts[kind][status] = counts[kind].get(status, 0) + 1
            if status != 200 or r.get("allowed") is not True:
                bad_answers.append((kind, status, r))
    conn.close()


rows_before = ledger_rows()
gen_before = metric("devflow_gate_config_generation")
threads = [threading.Thread(target=client, args=("hit", cards[:4])) for _ in range(CLIENTS)]
threads.append(threading.Thread(target=client, args=("write", cards[4:])))
for t in threads:
    t.start()
reloads = {"good-ok": 0, "good-refused": 0, "broken-refused": 0, "broken-ok": 0, "sighup": 0}
readyz_named_error = 0
broken_seen = 0
deadline = time.time() + RELOAD_SECONDS
k = 0
ctl = Conn()
while time.time() < deadline:
    broken = k % 2 == 0
    write_config(broken)
    if k % 5 == 4:
        os.kill(srv.pid, signal.SIGHUP)
        reloads["sighup"] += 1
    else:
        status, r = ctl.request("POST", "/v1/reload")
        key = ("broken-" if broken else "good-") + ("ok" if status == 200 else "refused")
        reloads[key] += 1
        if broken and status != 200:
            broken_seen += 1
            _, rz = ctl.request("GET", "/readyz")
            if isinstance(rz, dict) and "unknownKey" in json.dumps(rz):
                readyz_named_error += 1
    k += 1
    time.sleep(0.05)
write_config(False)
ctl.request("POST", "/v1/reload")
ctl.close()
stop.set()
for t in threads:
    t.join()
time.sleep(0.2)
rows_after = ledger_rows()
writes = sum(counts["write"].values())
hits = sum(counts["hit"].values())
gen_after = metric("devflow_gate_config_generation")
print(f"  hit admits {hits} by status {counts['hit']}; writing admits {writes} by status {counts['write']}")
print(f"  reloads {reloads}; config generation {gen_before:.0f} -> {gen_after:.0f}")
expect(not bad_answers, f"every admit answered 200 allowed ({len(bad_answers)} not: {bad_answers[:2]})")
expect(reloads["broken-ok"] == 0 and reloads["good-refused"] == 0,
       "every broken config refused (422) and every good one taken")
expect(readyz_named_error == broken_seen, f"/readyz named the broken config's error after "
       f"{readyz_named_error} of {broken_seen} refused reloads")
expect(gen_after - gen_before >= reloads["good-ok"], "the generation advanced with every good reload")
expect(rows_after - rows_before == writes, f"ledger rows {rows_after - rows_before} = non-dry admits {writes}")
expect(metric("devflow_gate_ledger_rows_not_written_total") == 0, "ledger rows not written: 0")

# ---- input: bad requests and trickling clients beside a measured client ----


def measure(seconds, tcp=False):
    conn = Conn(tcp)
    lat = []
    end = time.time() + seconds
    while time.time() < end:
        t = time.perf_counter()
        status, r = conn.request("POST", "/v1/admit", admit(cards[0]))
        lat.append((time.perf_counter() - t) * 1000)
        assert status == 200 and r.get("allowed") is True, (status, r)
    conn.close()
    return lat


quiet = measure(3)
print(f"input: a measuring client alone: {len(quiet)} admits, median {pct(quiet, .5):.2f} ms, "
      f"p99 {pct(quiet, .99):.2f} ms")
trickle = []
for _ in range(SLOWLORIS):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    s.sendall(b"POST /v1/admit HTTP/1.1\r\n")
    trickle.append(s)
bad_status = {}
stop.clear()


def trickler():
    i = 0
    while not stop.is_set():
        for s in trickle:
            try:
                s.send(b"X"[:1] if i % 2 else b"-")
            except OSError:
                pass
        i += 1
        stop.wait(1.0)


big = admit(cards[0], reason="x" * (1 << 20))
bad_bodies = {"oversized": (big, 413),
              "malformed": (b'{"id": ', 400),
              "unknown field": (admit(cards[0], color="red"), 400),
              "wrong type": (admit(cards[0], expectedRevision="three"), 400),
              "foreign root": (admit(cards[0], root="/etc"), 403)}  # docs/server.md
named = {"unknown field": "color", "wrong type": "expectedRevision", "foreign root": "root"}
misnamed = []


def abuser():
    while not stop.is_set():
        for name, (body, want) in bad_bodies.items():
            conn = Conn()
            try:
                status, r = conn.request("POST", "/v1/admit", body)
            except (ConnectionError, OSError):
                status, r = "closed", None
            conn.close()
            with lock:
                bad_status.setdefault(name, {}).setdefault(status, 0)
                bad_status[name][status] += 1
                if name in named and (not isinstance(r, dict) or r.get("field") != named[name]):
                    misnamed.append((name, r))


ts = [threading.Thread(target=trickler), threading.Thread(target=abuser)]
for t in ts:
    t.start()
loud = measure(5)
stop.set()
for t in ts:
    t.join()
closed = 0  # answered (a 408 or 400) or closed by the server: recv returns at once
for s in trickle:
    s.settimeout(0.5)
    try:
        s.recv(4096)
        closed += 1
    except socket.timeout:
        pass  # still open: the server is waiting on it
    except OSError:
        closed += 1  # reset by the server
    s.close()
print(f"  beside {SLOWLORIS} trickling connections and a bad-request loop: {len(loud)} admits, "
      f"median {pct(loud, .5):.2f} ms, p99 {pct(loud, .99):.2f} ms")
print(f"  bad requests by status: {bad_status}")
for name, (_, want) in bad_bodies.items():
    got = bad_status.get(name, {})
    expect(set(got) == {want}, f"{name}: every answer {want} (got {got})")
expect(not misnamed, f"every 400 and 403 names its field ({misnamed[:2]})")
expect(closed == SLOWLORIS, f"the server answered or closed {closed} of {SLOWLORIS} trickling connections")

# ---- idle: thousands of idle TCP connections beside a measured client ----
fds0, rss0 = proc()
# The measuring client keeps one unix connection, as the cordis plugin does; the idle flood is
# TCP, whose peer screen admits connections one by one (docs/server.md "Who may call").
watcher = Conn()
watched = []
stop.clear()


def watch():
    while not stop.is_set():
        t = time.perf_counter()
        status, r = watcher.request("POST", "/v1/admit", admit(cards[0]))
        watched.append((time.perf_counter() - t) * 1000)
        assert status == 200 and r.get("allowed") is True, (status, r)


wt = threading.Thread(target=watch)
wt.start()
idle = []
refused = 0
for _ in range(IDLE):
    try:
        idle.append(socket.create_connection(("127.0.0.1", port), timeout=2))
    except OSError:
        refused += 1
time.sleep(3)
fds1, rss1 = proc()
stop.set()
wt.join()
watcher.close()
during = watched
shut = 0
for s in idle:
    s.settimeout(0.01)
    try:
        if s.recv(1) == b"":
            shut += 1
    except (socket.timeout, BlockingIOError):
        pass
    except OSError:
        shut += 1
    s.close()
time.sleep(1.0)
fds2, rss2 = proc()
print(f"idle: {IDLE} TCP connections opened ({refused} refused at connect, {shut} closed by the "
      f"server: the --max-connections 1024 cap); server fds {fds0} -> {fds1} -> {fds2}, "
      f"RSS {rss0 / 1024:.1f} -> {rss1 / 1024:.1f} -> {rss2 / 1024:.1f} MiB")
print(f"  a measuring unix client during it: {len(during)} admits, median {pct(during, .5):.2f} ms, "
      f"p99 {pct(during, .99):.2f} ms; refused by the cap: "
      f"{metric('devflow_gate_connections_refused_total'):.0f} (all reasons, whole run)")
expect(len(during) > 0, "the measuring client was answered while the idle connections were open")
expect(fds2 <= fds0 + 2, f"fds back to the baseline ({fds0} -> {fds2})")
expect(rss2 <= 100 * 1024, f"RSS {rss2 / 1024:.1f} MiB <= 100 MiB")

srv.send_signal(signal.SIGTERM)
expect(srv.wait(timeout=30) == 0, "SIGTERM drained and exited 0")
print("failed: " + "; ".join(failures) if failures else "all expectations held")
sys.exit(1 if failures else 0)
