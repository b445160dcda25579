// `devflow-gate ground` (SPEC §6): release_gate.py's 17-case risk register as CLI cases with
// exact outputs, then every weak point the drop-in fixes (docs/grounding.md).
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "checker/ground_command.h"
#include "support/support.h"

namespace devflow {
namespace {

using test::FixedClock;
using test::Slurp;
using test::Spit;
using test::TempDir;

struct Run {
  int code;
  std::string out;
  std::string err;
};

// A scratch directory with named files; runs the command with paths made absolute.
struct Gate {
  TempDir tmp;
  FixedClock clock{"2026-09-16T08:00:00.000Z"};
  std::string File(const std::string& name, const std::string& content) {
    Spit(tmp / name, content);
    return tmp / name;
  }
  Run operator()(const std::vector<std::string>& args) {
    std::ostringstream out, err;
    const int code = RunGroundCommand(args, out, err, RealFileSystem(), clock);
    return Run{code, out.str(), err.str()};
  }
  // --claim <claim> --evidence <evidence> plus `extra`.
  Run Check(const std::string& claim, const std::string& evidence,
            std::vector<std::string> extra = {}, const std::string& evidence_name = "facts.txt") {
    std::vector<std::string> args = {"--claim", File("claim.md", claim), "--evidence",
                                     File(evidence_name, evidence)};
    args.insert(args.end(), extra.begin(), extra.end());
    return (*this)(args);
  }
};

const char kVerified[] = "VERIFIED\n";

std::string Rejected(const std::vector<std::string>& reasons) {
  std::string err = "REJECTED\n";
  for (const auto& r : reasons) err += "  - " + r + "\n";
  return err;
}

}  // namespace

// --- release_gate.py's risk register ------------------------------------------------------

TEST_CASE("ground: an invented #42 against #41, #43 is rejected as exactly one reason") {
  Gate gate;
  const Run r = gate.Check("Ship #42 today.", "pending: #41, #43");
  CHECK(r.code == 1);
  CHECK(r.out == "");
  CHECK(r.err == Rejected({"ref not in evidence: #42 (line 1:6; evidence has #41)"}));
}

TEST_CASE("ground: an invented date is rejected as exactly one reason") {
  Gate gate;
  const Run r = gate.Check("Demo is on 2026-09-24.", "day: 2026-09-19");
  CHECK(r.code == 1);
  CHECK(r.err ==
        Rejected({"date not in evidence: 2026-09-24 (line 1:12; evidence has 2026-09-19)"}));
}

TEST_CASE("ground: a claim whose ref, URL, date and short hash all appear passes") {
  Gate gate;
  const std::string claim =
      "Read #41 at https://example.org/view/41 today (2026-09-19), commit a1b2c3d.";
  const Run r = gate.Check(
      claim, "day 2026-09-19; pending #41; url https://example.org/view/41; commit a1b2c3d");
  CHECK(r.code == 0);
  CHECK(r.out == claim);
  CHECK(r.err == kVerified);
}

TEST_CASE("ground: JSON evidence never grounds through excluded keys, other keys do") {
  Gate gate;
  const std::string facts = R"({"history": ["2024-01-01 #7 shipped"], "pending": ["#9"]})";
  const Run bad = gate.Check("Reshipping #7 from 2024-01-01.", facts, {}, "facts.json");
  CHECK(bad.code == 1);
  CHECK(bad.err == Rejected({"date not in evidence: 2024-01-01 (line 1:20)",
                             "ref not in evidence: #7 (line 1:12; evidence has #9)"}));
  const Run good = gate.Check("Read #9.", facts, {}, "facts.json");
  CHECK(good.code == 0);
  CHECK(good.out == "Read #9.");
}

TEST_CASE("ground: an invented URL and an uppercase 7-hex commit are each rejected") {
  Gate gate;
  const Run url = gate.Check("See https://example.org/x.", "https://example.org/y");
  CHECK(url.code == 1);
  CHECK(url.err == Rejected({"url not in evidence: https://example.org/x (line 1:5)"}));
  const Run hash = gate.Check("Commit ABCDEF1.", "no commits");
  CHECK(hash.code == 1);
  CHECK(hash.err == Rejected({"hash not in evidence: ABCDEF1 (line 1:8)"}));
}

TEST_CASE("ground: a URL followed by . or ! or in parentheses is grounded by the bare URL") {
  Gate gate;
  CHECK(gate.Check("See https://example.org/docs.", "https://example.org/docs").code == 0);
  const Run r = gate.Check("(https://example.org/docs), then https://example.org/docs!",
                           "https://example.org/docs");
  CHECK(r.code == 0);
  CHECK(r.err == kVerified);
}

TEST_CASE("ground: with number on, 42. and -42 and 3.5% are extracted, a date yields none") {
  Gate gate;
  CHECK(gate.Check("Count is 42.", "no numbers", {"--kinds", "number"}).err ==
        Rejected({"number not in evidence: 42 (line 1:10)"}));
  CHECK(gate.Check("Delta -42 today", "no numbers", {"--kinds", "number"}).err ==
        Rejected({"number not in evidence: -42 (line 1:7)"}));
  const Run r = gate.Check("Rate 3.5% on 2026-09-19", "2026-09-19", {"--kinds", "number"});
  CHECK(r.code == 1);
  CHECK(r.err == Rejected({"number not in evidence: 3.5% (line 1:6)"}));
}

TEST_CASE("ground: truncated .json evidence is a usage error, never raw text, never ledgered") {
  Gate gate;
  const std::string ledger = gate.tmp / "gate.jsonl";
  const Run r =
      gate.Check("Ship #99.", R"({"history": "#99",)", {"--ledger", ledger}, "facts.json");
  CHECK(r.code == 2);
  CHECK(r.out == "");
  CHECK(r.err.rfind("cannot read: evidence " + gate.tmp / "facts.json" + " is not valid JSON: ",
                    0) == 0);
  CHECK(r.err.find("; fix the file or pass it as text\n") != std::string::npos);
  CHECK_FALSE(Slurp(ledger).has_value());
}

TEST_CASE("ground: BOM-prefixed JSON evidence still excludes its keys") {
  Gate gate;
  const Run r = gate.Check("Ship #99.", "\xEF\xBB\xBF{\"history\": \"#99\", \"pending\": [\"#1\"]}",
                           {}, "facts.json");
  CHECK(r.code == 1);
  CHECK(r.err == Rejected({"ref not in evidence: #99 (line 1:6; evidence has #1)"}));
}

TEST_CASE("ground: a missing --require pattern rejects with required pattern absent") {
  Gate gate;
  const Run absent =
      gate.Check("Nothing to read.", "pending /view/5", {"--require", R"(/view/\d+)"});
  CHECK(absent.code == 1);
  CHECK(absent.err == Rejected({R"(required pattern absent: /view/\d+)"}));
  const Run present = gate.Check("Read /view/5.", "pending /view/5", {"--require", R"(/view/\d+)"});
  CHECK(present.code == 0);
  CHECK(present.out == "Read /view/5.");
}

TEST_CASE("ground: a blank claim rejects with empty claim and nothing else") {
  Gate gate;
  const Run r = gate.Check("   \n\t", "anything", {"--require", "x"});
  CHECK(r.code == 1);
  CHECK(r.err == Rejected({"empty claim"}));
  // Unicode spaces count as blank, as Python's str.strip() sees them.
  CHECK(gate.Check("\xC2\xA0\xE3\x80\x80", "anything").err == Rejected({"empty claim"}));
}

TEST_CASE("ground: number and path stay off unless asked, with both on 87% then the path") {
  Gate gate;
  const std::string claim = "Coverage rose to 87% in src/app/main.py.";
  CHECK(gate.Check(claim, "no numbers here").code == 0);
  const Run r = gate.Check(claim, "no numbers here", {"--kinds", "date,url,ref,hash,number,path"});
  CHECK(r.code == 1);
  CHECK(r.err == Rejected({"number not in evidence: 87% (line 1:18)",
                           "path not in evidence: src/app/main.py (line 1:25)"}));
}

TEST_CASE("ground: rejection prints exactly the fallback and ledgers the claim and label") {
  Gate gate;
  const std::string ledger = gate.tmp / "gate.jsonl";
  const std::string claim = gate.File("claim.md", "Ship #99.");
  const std::string fallback = gate.File("fallback.md", "Nothing found.");
  const std::string facts = gate.File("facts.json", R"({"pending": ["#1"]})");
  const Run r = gate({"--claim", claim, "--evidence", facts, "--fallback", fallback, "--ledger",
                      ledger, "--label", "test"});
  CHECK(r.code == 1);
  CHECK(r.out == "Nothing found.");
  CHECK(r.err == Rejected({"ref not in evidence: #99 (line 1:6; evidence has #1)"}));
  CHECK(Slurp(ledger).value() ==
        "{\"ts\": \"2026-09-16T08:00:00+00:00\", \"label\": \"test\", \"verdict\": \"rejected\", "
        "\"state\": \"recovered\", \"kinds\": [\"date\", \"url\", \"ref\", \"hash\"], "
        "\"reject_reasons\": [\"ref not in evidence: #99 (line 1:6; evidence has #1)\"], "
        "\"rejected_claim\": \"Ship #99.\", "
        "\"options\": {\"compat\": false, \"exclude_keys\": [\"system_prompt\", \"policy\", "
        "\"seed\", \"history\", \"constitution\"], \"require\": [], \"claim\": \"" +
            claim + "\", \"evidence\": [\"" + facts + "\"], \"fallback\": \"" + fallback +
            "\", \"repo\": null}}\n");
}

TEST_CASE("ground: a verified claim passes byte for byte and ledgers released") {
  Gate gate;
  const std::string ledger = gate.tmp / "gate.jsonl";
  const std::string claim = "Ship #1.\r\n\r\n\xC3\xA9t\xC3\xA9 \xE2\x80\x94 done";  // no final EOL
  const Run r = gate.Check(claim, R"({"pending": ["#1"]})", {"--ledger", ledger}, "facts.json");
  CHECK(r.code == 0);
  CHECK(r.out == claim);
  CHECK(r.err == kVerified);
  const std::string row = Slurp(ledger).value();
  CHECK(row.rfind("{\"ts\": \"2026-09-16T08:00:00+00:00\", \"label\": null, \"verdict\": "
                  "\"verified\", \"state\": \"released\", \"kinds\": [\"date\", \"url\", \"ref\", "
                  "\"hash\"], \"reject_reasons\": [], \"rejected_claim\": null, \"options\": ",
                  0) == 0);
}

TEST_CASE("ground: a bad regex, a missing fallback, an unknown kind exit 2, no stdout, no ledger") {
  Gate gate;
  const std::string ledger = gate.tmp / "gate.jsonl";
  const Run regex =
      gate.Check("Ship #99.", "{}", {"--ledger", ledger, "--require", "["}, "facts.json");
  CHECK(regex.code == 2);
  CHECK(regex.out == "");
  CHECK(regex.err == "bad --require regex '[': missing ]: [\n");

  const std::string missing = gate.tmp / "missing.md";
  const Run fallback =
      gate.Check("Ship #99.", "{}", {"--ledger", ledger, "--fallback", missing}, "facts.json");
  CHECK(fallback.code == 2);
  CHECK(fallback.out == "");
  CHECK(fallback.err == "cannot read: [Errno 2] No such file or directory: '" + missing + "'\n");

  const Run kind =
      gate.Check("x", "{}", {"--ledger", ledger, "--kinds", "date,bogus"}, "facts.json");
  CHECK(kind.code == 2);
  CHECK(kind.out == "");
  CHECK(kind.err == "unknown kinds: bogus\n");
  CHECK_FALSE(Slurp(ledger).has_value());
}

// The register once more under --compat: release_gate.py's matching and its output, byte for
// byte (no positions, no nearest item).
TEST_CASE("ground --compat: the risk register's rejections are release_gate.py's bytes") {
  Gate gate;
  const std::vector<std::string> compat = {"--compat"};
  CHECK(gate.Check("Ship #42 today.", "pending: #41, #43", compat).err ==
        Rejected({"ref not in evidence: #42"}));
  CHECK(gate.Check("Demo is on 2026-09-24.", "day: 2026-09-19", compat).err ==
        Rejected({"date not in evidence: 2026-09-24"}));
  const std::string facts = R"({"history": ["2024-01-01 #7 shipped"], "pending": ["#9"]})";
  CHECK(gate.Check("Reshipping #7 from 2024-01-01.", facts, compat, "facts.json").err ==
        Rejected({"date not in evidence: 2024-01-01", "ref not in evidence: #7"}));
  CHECK(gate.Check("Read #9.", facts, compat, "facts.json").code == 0);
  CHECK(gate.Check("See https://example.org/x.", "https://example.org/y", compat).err ==
        Rejected({"url not in evidence: https://example.org/x"}));
  CHECK(gate.Check("Commit ABCDEF1.", "no commits", compat).err ==
        Rejected({"hash not in evidence: ABCDEF1"}));
  CHECK(gate.Check("(https://example.org/docs), then https://example.org/docs!",
                   "https://example.org/docs", compat)
            .err == kVerified);
  CHECK(gate.Check("Count is 42.", "no numbers", {"--compat", "--kinds", "number"}).err ==
        Rejected({"number not in evidence: 42"}));
  CHECK(gate.Check("Delta -42 today", "no numbers", {"--compat", "--kinds", "number"}).err ==
        Rejected({"number not in evidence: -42"}));
  CHECK(
      gate.Check("Rate 3.5% on 2026-09-19", "2026-09-19", {"--compat", "--kinds", "number"}).err ==
      Rejected({"number not in evidence: 3.5%"}));
  CHECK(gate.Check("Ship #99.", "\xEF\xBB\xBF{\"history\": \"#99\", \"pending\": [\"#1\"]}", compat,
                   "facts.json")
            .err == Rejected({"ref not in evidence: #99"}));
  CHECK(gate.Check("Nothing to read.", "pending /view/5", {"--compat", "--require", R"(/view/\d+)"})
            .err == Rejected({R"(required pattern absent: /view/\d+)"}));
  CHECK(gate.Check("   \n\t", "anything", {"--compat", "--require", "x"}).err ==
        Rejected({"empty claim"}));
  CHECK(gate.Check("Coverage rose to 87% in src/app/main.py.", "no numbers here",
                   {"--compat", "--kinds", "date,url,ref,hash,number,path"})
            .err ==
        Rejected({"number not in evidence: 87%", "path not in evidence: src/app/main.py"}));
  CHECK(gate.Check("Ship #1 and #2.", "#1", compat).err == Rejected({"ref not in evidence: #2"}));
}

// --- the command line itself -----------------------------------------------------------

TEST_CASE("ground: missing required flags are an argparse usage error naming both") {
  Gate gate;
  const Run r = gate({"--kinds", "date"});
  CHECK(r.code == 2);
  CHECK(r.out == "");
  CHECK(r.err ==
        "usage: devflow-gate ground [-h] --claim CLAIM --evidence EVIDENCE [--kinds KINDS]\n"
        "                           [--exclude-key EXCLUDE_KEY] [--require REQUIRE]\n"
        "                           [--fallback FALLBACK] [--ledger LEDGER] [--label LABEL]\n"
        "                           [--repo REPO] [--compat]\n"
        "devflow-gate ground: error: the following arguments are required: --claim, "
        "--evidence\n");
}

TEST_CASE("ground: flags parse like argparse: prefixes, --flag=value, repeats, stray words") {
  Gate gate;
  const std::string claim = gate.File("claim.md", "Ship #1 and #2.");
  const std::string one = gate.File("one.txt", "#1");
  const std::string two = gate.File("two.txt", "#2");
  CHECK(gate({"--cl", claim, "--evid=" + one, "--evidence", two}).code == 0);
  CHECK(gate({"--claim", claim, "--evidence", one}).err ==
        Rejected({"ref not in evidence: #2 (line 1:13; evidence has #1)"}));

  const Run ambiguous = gate({"--claim", claim, "--e", one});
  CHECK(ambiguous.code == 2);
  CHECK(ambiguous.err.find("devflow-gate ground: error: ambiguous option: --e could match "
                           "--evidence, --exclude-key\n") != std::string::npos);
  const Run no_value = gate({"--claim", claim, "--evidence", one, "--require", "-x"});
  CHECK(no_value.code == 2);
  CHECK(no_value.err.find("error: argument --require: expected one argument\n") !=
        std::string::npos);
  const Run stray = gate({"--claim", claim, "--evidence", one, "extra", "--bogus"});
  CHECK(stray.code == 2);
  CHECK(stray.err.find("error: unrecognized arguments: extra --bogus\n") != std::string::npos);

  const Run help = gate({"--help"});
  CHECK(help.code == 0);
  CHECK(help.out.rfind("usage: devflow-gate ground [-h] --claim CLAIM", 0) == 0);
  CHECK(help.err == "");
}

TEST_CASE("ground: a claim that is not UTF-8 is a usage error, a BOM is tolerated") {
  Gate gate;
  const Run bad = gate.Check("Ship \xFF #1.", "#1");
  CHECK(bad.code == 2);
  CHECK(bad.out == "");
  CHECK(bad.err ==
        "cannot read: " + gate.tmp / "claim.md" + ": not valid UTF-8 (byte 0xff at offset 5)\n");
  // A BOM glued to a ref must not hide it, and the claim is still printed as it was.
  const Run bom = gate.Check("\xEF\xBB\xBF#2 ships.", "#1");
  CHECK(bom.code == 1);
  CHECK(bom.err == Rejected({"ref not in evidence: #2 (line 1:1; evidence has #1)"}));
  const Run ok = gate.Check("\xEF\xBB\xBF#1 ships.", "\xEF\xBB\xBF#1");
  CHECK(ok.code == 0);
  CHECK(ok.out == "\xEF\xBB\xBF#1 ships.");
}

TEST_CASE("ground: an unreadable evidence file is a usage error naming the OS error") {
  Gate gate;
  const std::string claim = gate.File("claim.md", "Ship #1.");
  const Run r = gate({"--claim", claim, "--evidence", gate.tmp.path()});
  CHECK(r.code == 2);
  CHECK(r.out == "");
  CHECK(r.err.rfind("cannot read: [Errno 21] Is a directory: '" + gate.tmp.path() + "'\n", 0) == 0);
}

// --- weak points fixed ------------------------------------------------------------------

TEST_CASE("fix: a ref is grounded only as a whole token, --compat restores substrings") {
  Gate gate;
  const Run strict =
      gate.Check("Fixes #4, ABC-12, commit 3f2a9c1.", "Fixed #41, ABC-123, commit 3f2a9c1e8b7d.");
  CHECK(strict.code == 1);
  CHECK(strict.err == Rejected({"ref not in evidence: #4 (line 1:7; evidence has #41)",
                                "ref not in evidence: ABC-12 (line 1:11; evidence has ABC-123)"}));
  // A hash is grounded by a whole evidence hash that starts with it, never the other way.
  const Run longer = gate.Check("Commit 3f2a9c1e8b7d.", "commit 3f2a9c1");
  CHECK(longer.err == Rejected({"hash not in evidence: 3f2a9c1e8b7d (line 1:8)"}));
  const Run compat = gate.Check("Fixes #4, ABC-12, commit 3f2a9c1.",
                                "Fixed #41, ABC-123, commit 3f2a9c1e8b7d.", {"--compat"});
  CHECK(compat.code == 0);
}

TEST_CASE("fix: a ref a reader sees through markup or a bidi override is checked (trial21 3)") {
  Gate gate;
  const std::string evidence = "Requirements: REQ-1, REQ-2.\n";
  for (const std::string hidden : {"REQ<!-- -->-7", "RE<b></b>Q-7", "REQ&hyphen;7"}) {
    CAPTURE(hidden);
    const Run run = gate.Check("The design covers " + hidden + " well.\n", evidence);
    CHECK(run.code == 1);
    CHECK(run.err == Rejected({"ref not in evidence: REQ-7 (line 1:19; evidence has REQ-2)"}));
  }
  const Run rlo = gate.Check(
      "The design covers \xE2\x80\xAE"
      "7-QER\xE2\x80\xAC well.\n",
      evidence);
  CHECK(rlo.code == 1);
  const std::string why =
      " in all): a reader may see the text in another order than it is written, so its "
      "specifics cannot be checked; remove it";
  CHECK(rlo.err ==
        Rejected(
            {"bidi control U+202E RIGHT-TO-LEFT OVERRIDE in the claim (line 1:19, 1" + why,
             "bidi control U+202C POP DIRECTIONAL FORMATTING in the claim (line 1:25, 1" + why}));
  // Plain text, and a ref in a comment the evidence holds, are read as before.
  CHECK(gate.Check("The design covers REQ-2 <!-- and REQ-1 --> well.\n", evidence).code == 0);
}

TEST_CASE("fix: UTF-8, SHA-256, ISO-8601, COVID-19 are not refs, digits and defaced not hashes") {
  Gate gate;
  const std::string claim =
      "UTF-8 text, SHA-256 sums, ISO-8601 dates, COVID-19 rules; order 1234567890 was defaced.";
  const Run strict = gate.Check(claim, "nothing");
  CHECK(strict.code == 0);
  CHECK(strict.out == claim);
  const Run compat = gate.Check(claim, "nothing", {"--compat"});
  CHECK(compat.code == 1);
  CHECK(compat.err ==
        Rejected({"ref not in evidence: COVID-19", "ref not in evidence: ISO-8601",
                  "ref not in evidence: SHA-256", "ref not in evidence: UTF-8",
                  "hash not in evidence: 1234567890", "hash not in evidence: defaced"}));
}

TEST_CASE("fix: excluded keys are dropped at any depth and in top-level arrays") {
  Gate gate;
  const std::string nested = R"({"run": {"history": ["#7"]}, "pending": ["#9"]})";
  CHECK(gate.Check("Ship #7.", nested, {}, "facts.json").err ==
        Rejected({"ref not in evidence: #7 (line 1:6; evidence has #9)"}));
  const std::string array = R"([{"policy": "#7"}, {"pending": "#9"}])";
  CHECK(gate.Check("Ship #7.", array, {}, "facts.json").err ==
        Rejected({"ref not in evidence: #7 (line 1:6; evidence has #9)"}));
  CHECK(gate.Check("Ship #9.", array, {}, "facts.json").code == 0);
  // --exclude-key adds to the five, at any depth too.
  CHECK(gate.Check("Ship #9.", nested, {"--exclude-key", "pending"}, "facts.json").code == 1);
  // release_gate.py's matching reads both through: nested keys and arrays were never excluded.
  CHECK(gate.Check("Ship #7.", nested, {"--compat"}, "facts.json").code == 0);
  CHECK(gate.Check("Ship #7.", array, {"--compat"}, "facts.json").code == 0);
}

TEST_CASE("fix: --require runs in linear time, so a catastrophic pattern cannot hang") {
  Gate gate;
  const std::string claim = std::string(200000, 'a') + "!";
  const auto start = std::chrono::steady_clock::now();
  const Run r = gate.Check(claim, "x", {"--require", "^(a+)+$"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(r.code == 1);
  CHECK(r.err == Rejected({"required pattern absent: ^(a+)+$"}));
  CHECK(seconds < 5.0);
  // RE2 refuses what needs backtracking, before anything is read or ledgered.
  const Run backref = gate.Check("aa", "x", {"--require", R"((a)\1)"});
  CHECK(backref.code == 2);
  CHECK(backref.err == "bad --require regex '(a)\\\\1': invalid escape sequence: \\1\n");
}

TEST_CASE("fix: a ledger that cannot be written exits 3 with nothing on stdout") {
  // The row is written before the claim (or fallback) goes out (issue 7: a claim printed before
  // its row failed was shipped unrecorded by `ground | next`), so a ledger failure leaves stdout
  // empty. Real faults: a directory that does not exist, and /dev/full (ENOSPC).
  Gate gate;
  const std::string ledger = gate.tmp / "no-such-dir/gate.jsonl";
  const Run r = gate.Check("Ship #1.", "#1", {"--ledger", ledger});
  CHECK(r.code == 3);
  CHECK(r.out == "");
  CHECK(r.err == "cannot write the ledger: append " + ledger +
                     ": No such file or directory (ENOENT) at open; nothing was written; create "
                     "the directory " +
                     gate.tmp / "no-such-dir" + " and retry; nothing was released\n");
  const Run full = gate.Check(
      "Ship #2.", "#1", {"--ledger", "/dev/full", "--fallback", gate.File("fb.md", "fallback")});
  CHECK(full.code == 3);
  CHECK(full.out == "");
  CHECK(full.err ==
        "cannot write the ledger: append /dev/full: No space left on device (ENOSPC); free space "
        "on the file system holding /dev and retry; nothing was released\n");
  const Run verified = gate.Check("Ship #1.", "#1", {"--ledger", "/dev/full"});
  CHECK(verified.code == 3);
  CHECK(verified.out == "");
}

TEST_CASE("fix: each ledger row records the kinds and options in force") {
  Gate gate;
  const std::string ledger = gate.tmp / "gate.jsonl";
  const Run r = gate.Check("Ship #1.", "{}",
                           {"--ledger", ledger, "--kinds", "ref, number", "--compat",
                            "--exclude-key", "notes", "--require", "Ship"},
                           "facts.json");
  CHECK(r.code == 1);
  const std::string row = Slurp(ledger).value();
  CHECK(row.find("\"kinds\": [\"ref\", \"number\"], \"reject_reasons\": [\"ref not in evidence: "
                 "#1\", \"number not in evidence: 1\"]") != std::string::npos);
  CHECK(row.find("\"options\": {\"compat\": true, \"exclude_keys\": [\"system_prompt\", "
                 "\"policy\", \"seed\", \"history\", \"constitution\", \"notes\"], \"require\": "
                 "[\"Ship\"], ") != std::string::npos);
}

TEST_CASE("fix: date-text grounds a date in words or slashes against any written form") {
  Gate gate;
  const std::vector<std::string> kinds = {"--kinds", "date,date-text"};
  CHECK(gate.Check("Demo on 24 Sept 2026.", "day: 2026-09-24", kinds).code == 0);
  CHECK(gate.Check("Demo on Sept 24, 2026.", "on 24/09/2026", kinds).code == 0);
  CHECK(gate.Check("Demo on 24/09/2026.", "September 24th 2026", kinds).code == 0);
  const Run r = gate.Check("Demo on 24 Sept 2026, review Sept 25, 2026.", "day: 2026-09-24", kinds);
  CHECK(r.code == 1);
  CHECK(r.err == Rejected({"date-text not in evidence: Sept 25, 2026 (line 1:30)"}));
  // Off by default: release_gate.py never looked at these.
  CHECK(gate.Check("Demo on 25 Sept 2026.", "nothing").code == 0);
}

TEST_CASE("fix: curly quotes and dashes next to a token do not hide it") {
  Gate gate;
  const Run r = gate.Check(
      "Ships \xE2\x80\x9C#42\xE2\x80\x9D \xE2\x80\x94"
      "2026-09-24.",
      "#41");
  CHECK(r.code == 1);
  CHECK(r.err == Rejected({"date not in evidence: 2026-09-24 (line 1:14)",
                           "ref not in evidence: #42 (line 1:8; evidence has #41)"}));
}

// trial19 5g: the claim is the agent's own output; a link from it to a file the gate can read
// and the agent cannot printed that file's tokens as reasons (and ledgered them). The claim is
// read as a file the operator names: no link at any component is followed.
TEST_CASE(
    "ground: a claim that is a symbolic link is refused unread, nothing of its target shown") {
  Gate gate;
  const std::string secret = gate.File("secret.txt", "See https://user:s3cretpass@example.com/x\n");
  const std::string claim = gate.tmp / "claim.md";
  REQUIRE(::symlink(secret.c_str(), claim.c_str()) == 0);
  Run r = gate({"--claim", claim, "--evidence", gate.File("facts.txt", "nothing\n")});
  CHECK(r.code == 2);
  CHECK(r.out.find("s3cretpass") == std::string::npos);
  CHECK(r.err.find("s3cretpass") == std::string::npos);
  INFO(r.err);
  CHECK(r.err == "cannot read: [Errno 40] Too many levels of symbolic links: '" + claim + "'\n");
}

TEST_CASE("an evidence path that is a symbolic link is refused, its target never read") {
  // trial19: evidence followed a planted link, and the "evidence has ..." hints printed words of
  // a file the judged agent cannot read.
  Gate gate;
  const std::string secret = gate.File("secret.txt", "token s3cretpass for REQ-9\n");
  const std::string evidence = gate.tmp / "evidence.txt";
  REQUIRE(::symlink(secret.c_str(), evidence.c_str()) == 0);
  Run r = gate({"--claim", gate.File("claim.md", "We meet REQ-9 with s3cretpas.\n"), "--evidence",
                evidence});
  CHECK(r.code == 2);
  CHECK(r.out.find("s3cretpass") == std::string::npos);
  CHECK(r.err.find("s3cretpass") == std::string::npos);
  CHECK(r.err == "cannot read: [Errno 40] Too many levels of symbolic links: '" + evidence + "'\n");
  Run proc =
      gate({"--claim", gate.File("claim2.md", "We meet REQ-9.\n"), "--evidence", "/proc/version"});
  CHECK(proc.code == 2);
  CHECK(proc.err == "cannot read: [Errno 22] Invalid argument: '/proc/version'\n");
}

}  // namespace devflow
