#!/usr/bin/env python3
"""Corpus benchmark of issue 9: real changelogs against their git history.

For each release section listed in corpus.txt (repository, changelog, previous tag, tag):
  claim    = the section of `tag` in the changelog as it stood at `tag`;
  evidence = `git log previous..tag` (full hashes, dates, subjects and bodies) and the tag list
             with dates.
Runs `devflow-gate ground --repo owner/name` and `ground --compat` on each section as written
and on planted copies (a ref +-1, a date +-1 day, one hash digit changed, an invented URL, a
link whose text names another ref than its target), and reports per tool: correct sections
admitted, reasons that name something the evidence holds in another form, truly absent
specifics reported, plants caught. "In the evidence in another form" is decided by this
script's own oracle (below), written from the rules of docs/grounding.md independently of the
C++ matcher.

Takes a folder of bare clones (DIR/<owner>+<name>/repo, DIR/<owner>+<name>, DIR/<name>.git or
DIR/<name>); nothing of their text is written outside --work.

Usage: bench/grounding/corpus.py --clones DIR [--list corpus.txt] [--work DIR] [--verbose]
"""
import argparse
import datetime
import os
import random
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?")
DATE = re.compile(r"(?<![\w])\d{4}-\d{2}-\d{2}(?!\d)")
URL = re.compile(r"(?<![\w])[hH][tT][tT][pP][sS]?://[^\s<>\"`\x7f-\U0010ffff]+")
REF = re.compile(r"(?<![\w&])#(\d+)(?!\w)")
HEX = re.compile(r"(?<![\w])([0-9a-fA-F]{7,40})(?![\w])")
FORGE = re.compile(r"^https?://(?:www\.)?github\.com/([^/\s]+)/([^/\s#?]+)/"
                   r"(pull|issues|commit|compare|releases/tag)/([^\s#?]+?)/?$", re.I)


def git(repo, *args):
    return subprocess.run(["git", "--git-dir", repo] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, check=True).stdout.decode("utf-8", "replace")


def find_clone(clones, name):
    owner, repo = name.split("/")
    for c in (f"{owner}+{repo}/repo", f"{owner}+{repo}", f"{repo}.git", repo):
        path = os.path.join(clones, c)
        if os.path.isdir(path):
            return path
    sys.exit(f"no clone of {name} under {clones}")


def strip_url(url):
    url = url.rstrip(".,;:!?'\"")
    while url.endswith(")") and url.count(")") > url.count("("):
        url = url[:-1]
    while url.endswith("]") and url.count("]") > url.count("["):
        url = url[:-1]
    return url.rstrip(".,;:!?'\"")


def section_of(text, version):
    """The lines of the release section whose heading names `version`."""
    lines = text.split("\n")

    def heading(i):
        line = lines[i]
        if line.startswith("#"):
            return True
        return i + 1 < len(lines) and re.fullmatch(r"[=-]{3,}\s*", lines[i + 1] or "x") is not None \
            and line.strip() != ""

    start = None
    for i in range(len(lines)):
        if heading(i) and re.search(r"(?<![\w.])v?" + re.escape(version) + r"(?![\w.]|\.\d)", lines[i]):
            start = i
            break
    if start is None:
        return None
    end = len(lines)
    for i in range(start + 1, len(lines)):
        if heading(i) and VERSION.search(lines[i]) and not lines[i].startswith("###"):
            end = i
            break
    return "\n".join(lines[start:end]).rstrip() + "\n"


# --- the oracle: is a specific in the evidence, in any form a project writes it? -----------

class Evidence:
    def __init__(self, text, repo):
        self.text = text
        self.repo = repo.lower()
        self.hashes = [h.lower() for h in HEX.findall(text) if re.search(r"[a-fA-F]", h)
                       or len(h) == 40]
        self.refs = set(REF.findall(text))
        for m in re.finditer(r"(?<![\w])(?:PR|GH-|pull request)\s*#?(\d+)(?!\w)", text, re.I):
            self.refs.add(m.group(1))
        name = re.escape(self.repo.split("/")[1])
        for m in re.finditer(r"(?:" + re.escape(self.repo) + "|(?<![\\w/])" + name + r")#(\d+)",
                             text, re.I):
            self.refs.add(m.group(1))
        self.dates = set(DATE.findall(text))
        self.urls = set()
        for u in URL.findall(text):
            u = strip_url(u)
            self.urls.add(self.norm(u))
            self.urls.add(self.norm(u.split("#")[0]))

    @staticmethod
    def norm(url):
        return re.sub(r"^https?://", "", url, flags=re.I).rstrip("/.")

    def has_hash(self, h):
        h = h.lower()
        return any(e.startswith(h) for e in self.hashes)

    def has_tag(self, t):
        return re.search(r"(?<![\w.+@-])" + re.escape(t) + r"(?![\w+@/-]|\.\w)", self.text) is not None

    def holds(self, kind, token):
        if kind == "date":
            return token in self.dates
        if kind == "ref":
            return token[1:] in self.refs
        if kind == "hash":
            return self.has_hash(token)
        m = FORGE.match(token)
        if m and f"{m.group(1)}/{m.group(2)}".lower() == self.repo:
            what, arg = m.group(3).lower(), m.group(4)
            if what in ("pull", "issues"):
                return arg.isdigit() and arg in self.refs
            if what == "commit":
                return self.has_hash(arg)
            if what == "releases/tag":
                return self.has_tag(arg)
            ends = re.split(r"\.\.\.?", arg)
            return len(ends) == 2 and all(
                self.has_hash(e) if re.fullmatch(r"[0-9a-fA-F]{7,40}", e) and not e.isdigit()
                else self.has_tag(e) for e in ends)
        return self.norm(token) in self.urls


def specifics(claim):
    """(kind, token) for every date, URL, #ref and hash the claim cites (the default kinds)."""
    out = set()
    for d in DATE.findall(claim):
        out.add(("date", d))
    urls = [strip_url(u) for u in URL.findall(claim)]
    for u in urls:
        out.add(("url", u))
    for r in REF.findall(claim):
        out.add(("ref", "#" + r))
    for h in HEX.findall(claim):
        if re.search(r"\d", h) and re.search(r"[a-fA-F]", h):
            out.add(("hash", h))
    return out


def link_mismatches(claim):
    """[#N](…/pull/M) and [vX](…/releases/tag/vY) with N != M, X != Y."""
    out = []
    for m in re.finditer(r"\[([^\[\]\n]*)\]\((https?://[^)\s]+)\)", claim):
        text, target = m.group(1), m.group(2)
        f = FORGE.match(target)
        if not f:
            continue
        what, arg = f.group(3).lower(), f.group(4)
        refs = re.findall(r"#(\d+)", text)
        if what in ("pull", "issues") and refs and arg not in refs:
            out.append(m.group(0))
    return out


# --- plants ----------------------------------------------------------------------------------

def plants(claim, ev, rng):
    """(name, planted claim, token the reason must name) for each plant this section allows."""
    out = []
    refs = sorted(set(REF.findall(claim)), key=int)
    for r in refs:
        for d in (1, -1):
            n = str(int(r) + d)
            if n not in ev.refs and not re.search(r"#" + n + r"(?!\d)", claim):
                planted = re.sub(r"(?<![\w&])#" + r + r"(?!\w)", "#" + n, claim, count=1)
                out.append(("ref ±1", planted, "#" + n))
                break
        break
    for d in sorted(set(DATE.findall(claim))):
        try:
            day = datetime.date.fromisoformat(d)
        except ValueError:
            continue
        new = (day + datetime.timedelta(days=1)).isoformat()
        if new not in ev.dates:
            out.append(("date ±1 day", claim.replace(d, new, 1), new))
        break
    hashes = sorted({h for h in HEX.findall(claim) if re.search(r"\d", h) and re.search(r"[a-f]", h, re.I)})
    if hashes:
        h = hashes[0]
        k = rng.randrange(len(h))
        c = "0123456789abcdef"[(int(h[k], 16) + 1) % 16]
        new = h[:k] + c + h[k + 1:]
        if not ev.has_hash(new):
            out.append(("hash digit", claim.replace(h, new, 1), new))
    url = "https://docs.example.org/release-notes/%d" % rng.randrange(10**6)
    out.append(("invented URL", claim.rstrip("\n") + "\nSee " + url + " for details.\n", url))
    m = re.search(r"\[([^\[\]\n]*?)#(\d+)([^\[\]\n]*)\]\((https?://github\.com/[^)\s]+/(?:pull|issues)/\2)\)",
                  claim)
    if m:
        n = str(int(m.group(2)) + 1)
        bad = "[" + m.group(1) + "#" + n + m.group(3) + "](" + m.group(4) + ")"
        out.append(("link text ≠ target", claim.replace(m.group(0), bad, 1), "link text does not match"))
    return out


def run(tool, claim_path, ev_path, repo, compat):
    argv = [tool, "ground", "--claim", claim_path, "--evidence", ev_path]
    argv += ["--compat"] if compat else ["--repo", repo]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reasons = [l[4:] for l in p.stderr.decode().splitlines() if l.startswith("  - ")]
    return p.returncode, reasons


def reason_token(reason):
    m = re.match(r"(\w[\w-]*) not in evidence: (\S+)", reason)
    return (m.group(1), m.group(2)) if m else (None, None)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clones", required=True)
    ap.add_argument("--list", default=os.path.join(HERE, "corpus.txt"))
    ap.add_argument("--work")
    ap.add_argument("--tool", default=os.environ.get("DEVFLOW_GATE", os.path.join(ROOT, "build", "devflow-gate")))
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="grounding-corpus-")
    rng = random.Random(9)

    rows = []
    for line in open(args.list):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        repo, changelog, prev, tag = line.split()
        clone = find_clone(args.clones, repo)
        text = git(clone, "show", f"{tag}:{changelog}")
        section = section_of(text, tag.lstrip("v"))
        if section is None:
            print(f"warning: no section for {repo} {tag}", file=sys.stderr)
            continue
        log = git(clone, "log", "--date=short", "--format=commit %H%nDate: %ad%n%n%B", f"{prev}..{tag}")
        tags = git(clone, "for-each-ref", "refs/tags", "--format=%(refname:short) %(creatordate:short)")
        evidence = log + "\ntags:\n" + tags
        rows.append((repo, tag, section, evidence))

    tools = [("ground", False), ("ground --compat", True)]
    stats = {t: dict(sections=0, full=0, admitted_full=0, admitted=0, reasons=0, false_reasons=0,
                     absent=0, absent_reported=0, plants=0, caught=0, by_pattern={}, plant_by={})
             for t, _ in tools}
    for n, (repo, tag, section, evidence) in enumerate(rows):
        ev = Evidence(evidence, repo)
        claim_path = os.path.join(work, f"c{n}.md")
        ev_path = os.path.join(work, f"e{n}.txt")
        open(claim_path, "w").write(section)
        open(ev_path, "w").write(evidence)
        spec = specifics(section)
        absent = {s for s in spec if not ev.holds(*s)}
        mismatched = link_mismatches(section)
        full = not absent and not mismatched
        planted = plants(section, ev, rng)
        for name, compat in tools:
            st = stats[name]
            st["sections"] += 1
            code, reasons = run(args.tool, claim_path, ev_path, repo, compat)
            st["admitted"] += code == 0
            if full:
                st["full"] += 1
                st["admitted_full"] += code == 0
            for r in reasons:
                st["reasons"] += 1
                kind, tok = reason_token(r)
                if kind and (kind, tok) in spec and (kind, tok) not in absent:
                    st["false_reasons"] += 1
                    pat = kind if kind != "url" else ("url " + (FORGE.match(tok).group(3) if FORGE.match(tok) else "other"))
                    st["by_pattern"][pat] = st["by_pattern"].get(pat, 0) + 1
                    if args.verbose:
                        print(f"{name} {repo} {tag}: false reason {r}", file=sys.stderr)
            for kind, tok in absent:
                st["absent"] += 1
                if any(reason_token(r) == (kind, tok) for r in reasons):
                    st["absent_reported"] += 1
                elif args.verbose:
                    print(f"{name} {repo} {tag}: absent {kind} {tok} not reported", file=sys.stderr)
            for pname, pclaim, token in planted:
                p_path = os.path.join(work, f"c{n}-plant.md")
                open(p_path, "w").write(pclaim)
                pcode, preasons = run(args.tool, p_path, ev_path, repo, compat)
                caught = pcode != 0 and any(token in r for r in preasons)
                st["plants"] += 1
                st["caught"] += caught
                got = st["plant_by"].setdefault(pname, [0, 0])
                got[0] += 1
                got[1] += caught
                if not caught and args.verbose:
                    print(f"{name} {repo} {tag}: plant {pname} {token} missed", file=sys.stderr)

    projects = sorted({r[0] for r in rows})
    print(f"Corpus: {len(rows)} release sections from {len(projects)} projects "
          f"({', '.join(projects)}).\n")
    print("| tool | sections admitted (all) | correct sections (all specifics in evidence) admitted | "
          "reasons on correct sections naming what the evidence holds | truly absent specifics "
          "reported | plants caught |")
    print("|---|---|---|---|---|---|")
    pct = lambda a, b: f"{a}/{b} ({100.0 * a / b:.0f}%)" if b else "0/0"
    for name, _ in tools:
        st = stats[name]
        print(f"| `{name}` | {pct(st['admitted'], st['sections'])} | {pct(st['admitted_full'], st['full'])} | "
              f"{pct(st['false_reasons'], st['reasons'])} | {pct(st['absent_reported'], st['absent'])} | "
              f"{pct(st['caught'], st['plants'])} |")
    print()
    print("| tool | plant | caught |")
    print("|---|---|---|")
    for name, _ in tools:
        for pname, (total, caught) in sorted(stats[name]["plant_by"].items()):
            print(f"| `{name}` | {pname} | {pct(caught, total)} |")
    print()
    print("| tool | reasons naming what the evidence holds, by pattern |")
    print("|---|---|")
    for name, _ in tools:
        pats = ", ".join(f"{k}: {v}" for k, v in sorted(stats[name]["by_pattern"].items(), key=lambda kv: -kv[1]))
        print(f"| `{name}` | {pats or 'none'} |")


if __name__ == "__main__":
    main()
