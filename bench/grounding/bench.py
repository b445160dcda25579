#!/usr/bin/env python3
"""Whole-process benchmark: `devflow-gate ground` vs release_gate.py (issue 3, SPEC §6).

Generates, at three sizes, a claim of N specifics (dates, refs, URLs, hashes; 1 in 100
invented, so both tools reject and every token is looked up) and an evidence text file in
which the grounded ones stand spread out among prose. Runs, side by side:
  - devflow-gate ground (DEVFLOW_GATE, default <repo>/build/devflow-gate), best of --repeat;
  - release_gate.py when RELEASE_GATE_PY names a copy (never commit it; the public skill is
    jfkconstruct/claude-skills skills/release-gate/release_gate.py), once per size;
  - `wc -w` over the largest evidence, best of --repeat;
and the doubling check: the same claim against half of the largest evidence.
Both tools must agree on the exit code and the reasons. Prints a Markdown report.

Usage: bench/grounding/bench.py [--sizes small,medium,large] [--repeat 3] [--work DIR]
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

SIZES = {  # name: (claim tokens, evidence bytes)
    "small": (500, 1 << 20),
    "medium": (5000, 16 << 20),
    "large": (20000, 64 << 20),
}
WORDS = ("the release train left after review and the build went green while the team "
         "wrote notes about flaky tests retries caches and the new dashboard").split()


def token(rng, n):
    kind = n % 4
    if kind == 0:
        return "%04d-%02d-%02d" % (2000 + rng.randrange(30), 1 + rng.randrange(12),
                                   1 + rng.randrange(28))
    if kind == 1:
        return "PROJ-%d" % rng.randrange(10**7) if rng.random() < 0.5 else "#%d" % rng.randrange(10**7)
    if kind == 2:
        return "https://example.org/items/%d/view" % rng.randrange(10**9)
    return "%012x" % rng.getrandbits(48) + "a1"


def generate(work, name, claim_tokens, evidence_bytes, seed=7):
    rng = random.Random(seed + claim_tokens)
    grounded = [token(rng, i) for i in range(claim_tokens)]
    invented = set(range(0, claim_tokens, 100))
    claim_tokens_text = []
    for i, t in enumerate(grounded):
        claim_tokens_text.append(token(random.Random(-i - 1), i) if i in invented else t)
    # Claim: about 1 MiB for 20,000 tokens (prose between the specifics).
    filler = 5
    claim = []
    for t in claim_tokens_text:
        claim.append(" ".join(rng.choice(WORDS) for _ in range(filler)) + " " + t + ".")
    claim_path = os.path.join(work, name + "-claim.md")
    with open(claim_path, "w") as f:
        f.write("\n".join(claim) + "\n")
    # Evidence: prose lines; the grounded tokens at evenly spread lines.
    lines, size, slots = [], 0, {}
    line_len = 120
    n_lines = -(-evidence_bytes // line_len)
    for i, t in enumerate(grounded):
        if i not in invented:
            slots[(i * 7919) % n_lines] = t
    for k in range(n_lines):
        tail = " " + slots[k] if k in slots else " build %d" % k
        words = " ".join(rng.choice(WORDS) for _ in range(30))
        lines.append(words[:line_len - 1 - len(tail)] + tail)
    ev_path = os.path.join(work, name + "-evidence.txt")
    with open(ev_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return claim_path, ev_path


def run(argv):
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return time.perf_counter() - start, proc


def best(argv, repeat):
    times, proc = [], None
    for _ in range(repeat):
        t, proc = run(argv)
        times.append(t)
    return min(times), proc


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="small,medium,large")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", help="scratch directory (default: a temp dir, removed)")
    args = ap.parse_args()
    gate = os.environ.get("DEVFLOW_GATE", os.path.join(repo, "build", "devflow-gate"))
    ref = os.environ.get("RELEASE_GATE_PY")
    work = args.work or tempfile.mkdtemp(prefix="grounding-bench-")
    os.makedirs(work, exist_ok=True)
    print("| size | claim | tokens | evidence | devflow-gate ground | release_gate.py | speed-up |")
    print("|---|---|---|---|---|---|---|")
    largest = None
    try:
        for name in args.sizes.split(","):
            tokens, ev_bytes = SIZES[name]
            claim, ev = generate(work, name, tokens, ev_bytes)
            ours, proc = best([gate, "ground", "--claim", claim, "--evidence", ev], args.repeat)
            if proc.returncode != 1:
                sys.exit("devflow-gate ground exited %d: %s" % (proc.returncode, proc.stderr[-500:]))
            theirs = "n/a (set RELEASE_GATE_PY)"
            speedup = ""
            if ref:
                t, rproc = run([sys.executable, ref, "--claim", claim, "--evidence", ev])
                # Our reasons add "(line L:C; evidence has X)"; the tokens must be the same.
                ours_plain = re.sub(rb" \(line \d+:\d+(?:; evidence has [^)]*)?\)\n", b"\n",
                                    proc.stderr)
                if rproc.returncode != proc.returncode or rproc.stderr != ours_plain:
                    sys.exit("release_gate.py disagrees at %s: exit %d\n%s\n---\n%s" % (
                        name, rproc.returncode, rproc.stderr[:800].decode(),
                        proc.stderr[:800].decode()))
                theirs = "%.3f s" % t
                speedup = "%.0f×" % (t / ours)
            print("| %s | %.2f MiB | %d | %.1f MiB | %.3f s | %s | %s |" % (
                name, os.path.getsize(claim) / 2**20, tokens, os.path.getsize(ev) / 2**20, ours,
                theirs,
                speedup))
            largest = (claim, ev, ours)
        if largest:
            claim, ev, full = largest
            half = ev + ".half"
            with open(ev, "rb") as src, open(half, "wb") as dst:
                data = src.read()
                dst.write(data[: len(data) // 2])
            t_half, _ = best([gate, "ground", "--claim", claim, "--evidence", half], args.repeat)
            t_wc, _ = best(["wc", "-w", ev], args.repeat)
            print()
            print("Doubling the evidence (%.1f → %.1f MiB, same claim): %.3f s → %.3f s = %.2f× "
                  "(target ≤ 2.2×)." % (os.path.getsize(half) / 2**20, os.path.getsize(ev) / 2**20,
                                        t_half, full, full / t_half))
            print("`wc -w` over the %.1f MiB evidence: %.3f s; devflow-gate ground: %.3f s = "
                  "%.2f× (target ≤ 3×)." % (os.path.getsize(ev) / 2**20, t_wc, full, full / t_wc))
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
