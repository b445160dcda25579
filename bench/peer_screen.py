#!/usr/bin/env python3
"""What the loopback-TCP peer screen costs per connection (issue 7/8; docs/performance.md).

  python3 bench/peer_screen.py [PATH/TO/devflow-gate]     default: build-bench/, else build/

One `devflow-gate serve` listening on a unix socket and on 127.0.0.1 at once answers the same
cache-hit dry-run POST /v1/admit. Every accepted connection is screened before its first
request: a unix peer by SO_PEERCRED/SO_PEERPIDFD and its /proc status and ancestry; a TCP peer
by a NETLINK_SOCK_DIAG round trip for the client socket's uid and inode, then a scan of every
/proc/<pid>/fd for the holders of that inode, then the same /proc checks of each holder
(host/server/peer.cc RefuseTcpPeer). Measured side by side, in alternating rounds:
  conn-unix / conn-tcp   one new connection per request (Connection: close), sequential, the
                         same Python client for both: median and p90 ms per request
  wrk keep-alive / close wrk -t2 -c32 over TCP with keep-alive (one screen per connection) and
                         with `Connection: close` (one screen per request): requests/s
  unix keep-alive        sequential requests on one kept-alive unix connection, alone and then
                         while wrk -t1 -c16 opens a TCP connection per request: median, p99 and
                         max ms (a screen on the I/O thread delays this client by its length)
The difference conn-tcp - conn-unix is the TCP screen's cost over the unix one plus the TCP
handshake's over a unix connect; the process count is printed (the /proc scan grows with it).
Environment: BENCH_N (300 per round), BENCH_ROUNDS (5), BENCH_SECONDS (5).
"""
import json, os, re, shutil, socket, statistics, subprocess, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_setup import gate_binary, runner, start_server, workspace  # noqa: E402

gate = gate_binary()
N = int(os.environ.get("BENCH_N", "300"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
SECONDS = int(os.environ.get("BENCH_SECONDS", "5"))
ws, checker = workspace("dg-bench-peer-")

run = runner(gate, ws)


with open(os.path.join(ws, "devflow-gate.yaml"), "w") as f:
    f.write(f"providers:\n  checker:\n    command: ['{checker}']\n    sandbox: off\n"
            "plugins:\n  - id: devflow-agent-gate\n    config:\n      edges:\n"
            "        'designing->ready':\n          provider: checker\n          inputs: [design]\n"
            "          prompt: Check the design.\n      checkTimeoutMs: 20000\n"
            "      verdictCacheDir: .cache\n")
with open(os.path.join(ws, "design.md"), "w") as f:
    f.write("# Design\n\nFine.\n")
cid = run("card", "create", "--title", "bench peer")
run("move", cid, "designing")
run("artifact", "add", cid, "design", "design.md")
root = os.path.join(ws, ".devflow")
sock_path = os.path.join(ws, "gate.sock")
srv, port = start_server(gate, ["--root", root, "--config", os.path.join(ws, "devflow-gate.yaml"), "serve",
                                "--listen", "unix:" + sock_path, "--listen", "127.0.0.1:0"], ws)
import atexit
atexit.register(lambda: srv.poll() is None and (srv.terminate(), srv.wait()))
assert port, "no TCP port in the server's log"


def body(dry):
    return json.dumps({"id": cid, "from": "designing", "to": "ready", "expectedRevision": 3,
                       "by": {"kind": "human"}, "root": root, "at": "2026-09-16T08:00:00.000Z",
                       "dryRun": dry}).encode()


def request(b, close=True):
    return (b"POST /v1/admit HTTP/1.1\r\nHost: x\r\n" + (b"Connection: close\r\n" if close else b"") +
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(b), b))


def once(family, address, payload):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.connect(address)
    s.sendall(payload)
    chunks = []
    while True:
        c = s.recv(65536)
        if not c:
            break
        chunks.append(c)
    s.close()
    raw = b"".join(chunks)
    assert raw.startswith(b"HTTP/1.1 200"), raw[:200]
    return raw


# Prime the cache with one real admission, then check the dry run is a cache hit on both.
once(socket.AF_UNIX, sock_path, request(body(False)))
for fam, addr in ((socket.AF_UNIX, sock_path), (socket.AF_INET, ("127.0.0.1", port))):
    answer = json.loads(once(fam, addr, request(body(True))).partition(b"\r\n\r\n")[2])
    assert answer["checks"][0]["summary"].startswith("[cached] "), answer

dry = request(body(True))
times = {"unix": [], "tcp": []}
for _ in range(ROUNDS):
    for label, fam, addr in (("unix", socket.AF_UNIX, sock_path), ("tcp", socket.AF_INET, ("127.0.0.1", port))):
        for _ in range(N):
            t = time.perf_counter()
            once(fam, addr, dry)
            times[label].append((time.perf_counter() - t) * 1000)

wrk = {}
if shutil.which("wrk"):
    for label, close in (("keep-alive", False), ("close", True)):
        lua = os.path.join(ws, f"{label}.lua")
        with open(lua, "w") as f:
            f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n')
            if close:
                f.write('wrk.headers["Connection"] = "close"\n')
            f.write("wrk.body = %s\n" % json.dumps(body(True).decode()))
        out = subprocess.run(["wrk", "-t2", "-c32", f"-d{SECONDS}s", "--latency", "-s", lua,
                              f"http://127.0.0.1:{port}/v1/admit"], capture_output=True, text=True).stdout
        r = re.search(r"Requests/sec:\s+([\d.]+)", out)
        p99 = re.search(r"99%\s+([\d.]+\w+)", out)
        errs = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        wrk[label] = (float(r.group(1)) if r else 0.0, p99.group(1) if p99 else "?", errs.group(1) if errs else "0")



def unix_keepalive(seconds):
    """Sequential keep-alive requests on one unix connection for `seconds`: ms per request."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path)
    payload, buf, lat = request(body(True), close=False), b"", []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.perf_counter()
        s.sendall(payload)
        while True:
            head_end = buf.find(b"\r\n\r\n")
            if head_end >= 0:
                length = int(re.search(rb"Content-Length: (\d+)", buf[:head_end], re.I).group(1))
                if len(buf) >= head_end + 4 + length:
                    assert buf.startswith(b"HTTP/1.1 200"), buf[:200]
                    buf = buf[head_end + 4 + length:]
                    break
            chunk = s.recv(65536)
            assert chunk, "the server closed the unix connection"
            buf += chunk
        lat.append((time.perf_counter() - t) * 1000)
    s.close()
    return lat


# What a burst of TCP connections costs everyone else: the same keep-alive unix client alone,
# then while wrk opens a new TCP connection per request (each one screened).
burst = {}
if shutil.which("wrk"):
    burst["alone"] = unix_keepalive(SECONDS)
    flood = subprocess.Popen(["wrk", "-t1", "-c16", f"-d{SECONDS + 2}s", "-s",
                              os.path.join(ws, "close.lua"), f"http://127.0.0.1:{port}/v1/admit"],
                             stdout=subprocess.PIPE, text=True)
    time.sleep(1)  # let the flood start (a measurement window, not a synchronisation)
    burst["during a TCP connect flood"] = unix_keepalive(SECONDS)
    flood_out = flood.communicate()[0]
    r = re.search(r"Requests/sec:\s+([\d.]+)", flood_out)
    burst_rate = float(r.group(1)) if r else 0.0

procs = sum(1 for d in os.listdir("/proc") if d.isdigit())
srv.terminate(); srv.wait()


def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


mu, mt = statistics.median(times["unix"]), statistics.median(times["tcp"])
print(f"processes on the machine   {procs}")
print(f"conn-unix (new conn/req)   median {mu:.3f} ms  p90 {q(times['unix'], 0.9):.3f} ms  (N={len(times['unix'])})")
print(f"conn-tcp  (new conn/req)   median {mt:.3f} ms  p90 {q(times['tcp'], 0.9):.3f} ms  (N={len(times['tcp'])})")
print(f"tcp - unix per connection  {mt - mu:+.3f} ms  (tcp/unix {mt / mu:.2f}x)")
for label, (rps, p99, errs) in wrk.items():
    print(f"wrk tcp {label:<10}         {rps:.0f} requests/s  p99 {p99}  non-2xx {errs}")
if len(wrk) == 2 and wrk["close"][0]:
    print(f"keep-alive / close         {wrk['keep-alive'][0] / wrk['close'][0]:.2f}x")
for label, lat in burst.items():
    print(f"unix keep-alive {label:<27} median {statistics.median(lat):.3f} ms  "
          f"p99 {q(lat, 0.99):.3f} ms  max {max(lat):.1f} ms  (N={len(lat)})")
if burst:
    print(f"  (the flood: wrk -t1 -c16 Connection: close over TCP, {burst_rate:.0f} connections/s)")
if os.environ.get("BENCH_KEEP"):
    print(f"workspace kept: {ws}")
else:
    shutil.rmtree(ws, ignore_errors=True)
