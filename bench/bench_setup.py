"""Shared set-up of the Python benches (bench/server.py, bench/peer_screen.py): which
devflow-gate binary to measure, a scratch workspace with bench/allow_checker.c compiled in it,
and a runner for gate commands in that workspace."""
import os, subprocess, sys, tempfile

here = os.path.dirname(os.path.abspath(__file__))
top = os.path.dirname(here)


def gate_binary():
    """argv[1] if given, else build-bench/devflow-gate, else build/devflow-gate; exits if none."""
    gate = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else next(
        (p for p in (f"{top}/build-bench/devflow-gate", f"{top}/build/devflow-gate") if os.access(p, os.X_OK)),
        None)
    if not gate:
        sys.exit("bench: no devflow-gate binary; build one or pass its path")
    return gate


def workspace(prefix):
    """A fresh temporary directory and the path of the allow checker compiled into it."""
    ws = tempfile.mkdtemp(prefix=prefix)
    checker = os.path.join(ws, "allow_checker")
    subprocess.run(["cc", "-O2", "-o", checker, os.path.join(here, "allow_checker.c")], check=True)
    return ws, checker


def runner(gate, ws):
    """run(*args): the gate's stripped stdout for `devflow-gate ARGS` in `ws`; raises on failure."""
    def run(*args):
        return subprocess.run([gate, *args], cwd=ws, check=True, capture_output=True, text=True).stdout.strip()
    return run


def start_server(gate, args, cwd):
    """Starts `devflow-gate ARGS` (a `serve` command line) in `cwd` and waits for its "ready" log
    line; returns (the Popen, the TCP port it logged as listening on, or None). The server's log
    is drained from then on, so it never blocks on a full pipe."""
    import json, threading
    srv = subprocess.Popen([gate, *args], cwd=cwd, stderr=subprocess.PIPE, text=True)
    port = None
    for line in srv.stderr:
        if '"listening"' in line and '"port"' in line:
            port = json.loads(line)["port"]
        if '"msg":"ready"' in line:
            break
    threading.Thread(target=lambda: [None for _ in srv.stderr], daemon=True).start()
    return srv, port


def bwrap_floor(bwrap, ws, checker):
    """bubblewrap alone starting `checker` in a sandbox of the gate's kind, without the checker
    argv: the system trees and the checker's and workspace's directories read-only, /dev,
    /proc, every namespace unshared, a new session, no capabilities (the floor the gate's
    bubblewrap level is compared with; it lacks the seccomp filter, /etc masks, scratch dir and
    reapers)."""
    floor = [bwrap]
    for tree in ("/usr", "/etc", "/opt", os.path.dirname(checker), ws):
        if os.path.isdir(tree):
            floor += ["--ro-bind", tree, tree]
    for link, target in (("/bin", "usr/bin"), ("/sbin", "usr/sbin"), ("/lib", "usr/lib"), ("/lib64", "usr/lib64")):
        floor += ["--symlink", target, link]
    return floor + ["--dev", "/dev", "--proc", "/proc", "--unshare-all", "--die-with-parent", "--new-session",
                    "--cap-drop", "ALL", "--chdir", ws]
