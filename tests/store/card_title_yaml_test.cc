// card.md titles byte for byte as the TypeScript store writes them (issue 10 item 1):
// renderProjection's `---\n${YAML.stringify({title, stage, stageRevision})}---\n\n${body}\n`
// with the `yaml` 2.9 defaults. The expected bytes are literals measured with yaml 2.9.1 on
// node 20 by tests/fixtures/yaml_titles/generate.cjs (which also proves that yaml's own YAML
// 1.2 core-schema parser reads each title back unchanged); they are not generated at test time.
#include <doctest/doctest.h>

#include <string>

#include "host/card_file.h"

namespace devflow {
namespace {

using namespace std::string_literals;  // the titles hold NUL bytes

struct TitleCase {
  std::string title;
  std::string card_md;
};

// clang-format off
const TitleCase kTitles[] = {
    {"+1"s,
     "---\ntitle: \"+1\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {".5"s,
     "---\ntitle: \".5\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"+12.5e3"s,
     "---\ntitle: \"+12.5e3\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"+.5"s,
     "---\ntitle: \"+.5\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"1"s,
     "---\ntitle: \"1\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"42"s,
     "---\ntitle: \"42\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"-7"s,
     "---\ntitle: \"-7\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"007"s,
     "---\ntitle: \"007\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"0o17"s,
     "---\ntitle: \"0o17\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"0x1F"s,
     "---\ntitle: \"0x1F\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"1e3"s,
     "---\ntitle: \"1e3\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"1."s,
     "---\ntitle: \"1.\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"-.5"s,
     "---\ntitle: \"-.5\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {".inf"s,
     "---\ntitle: \".inf\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"-.Inf"s,
     "---\ntitle: \"-.Inf\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {".nan"s,
     "---\ntitle: \".nan\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"1_000"s,
     "---\ntitle: 1_000\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"0b101"s,
     "---\ntitle: 0b101\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"1:30"s,
     "---\ntitle: 1:30\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"12:30"s,
     "---\ntitle: 12:30\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"2026-09-16"s,
     "---\ntitle: 2026-09-16\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"2026-09-16T08:00:00Z"s,
     "---\ntitle: 2026-09-16T08:00:00Z\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"true"s,
     "---\ntitle: \"true\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"True"s,
     "---\ntitle: \"True\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"FALSE"s,
     "---\ntitle: \"FALSE\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"null"s,
     "---\ntitle: \"null\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"Null"s,
     "---\ntitle: \"Null\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"~"s,
     "---\ntitle: \"~\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"yes"s,
     "---\ntitle: yes\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"no"s,
     "---\ntitle: no\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"on"s,
     "---\ntitle: on\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"off"s,
     "---\ntitle: off\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"y"s,
     "---\ntitle: y\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"n"s,
     "---\ntitle: n\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"<<"s,
     "---\ntitle: <<\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"="s,
     "---\ntitle: =\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"\"double\""s,
     "---\ntitle: '\"double\"'\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"it's"s,
     "---\ntitle: it's\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"'single'"s,
     "---\ntitle: \"'single'\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"both ' and \""s,
     "---\ntitle: both ' and \"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"say \"hi\""s,
     "---\ntitle: say \"hi\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"a: b"s,
     "---\ntitle: \"a: b\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"a:b"s,
     "---\ntitle: a:b\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"key:"s,
     "---\ntitle: \"key:\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {":start"s,
     "---\ntitle: :start\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"a :b"s,
     "---\ntitle: a :b\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"http://x.y/z"s,
     "---\ntitle: http://x.y/z\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"#tag"s,
     "---\ntitle: \"#tag\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"a #b"s,
     "---\ntitle: \"a #b\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"a#b"s,
     "---\ntitle: a#b\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"C# rewrite"s,
     "---\ntitle: C# rewrite\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"- item"s,
     "---\ntitle: \"- item\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"-"s,
     "---\ntitle: \"-\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"?"s,
     "---\ntitle: \"?\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"? q"s,
     "---\ntitle: \"? q\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"-dash"s,
     "---\ntitle: -dash\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"?query"s,
     "---\ntitle: ?query\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"[x]"s,
     "---\ntitle: \"[x]\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"{x}"s,
     "---\ntitle: \"{x}\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"*star"s,
     "---\ntitle: \"*star\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"&amp"s,
     "---\ntitle: \"&amp\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"!bang"s,
     "---\ntitle: \"!bang\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"|pipe"s,
     "---\ntitle: \"|pipe\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {">gt"s,
     "---\ntitle: \">gt\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"%pct"s,
     "---\ntitle: \"%pct\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"@at"s,
     "---\ntitle: \"@at\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"`tick`"s,
     "---\ntitle: \"`tick`\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {",comma"s,
     "---\ntitle: \",comma\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"a, b"s,
     "---\ntitle: a, b\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"x [y] {z}"s,
     "---\ntitle: x [y] {z}\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"---"s,
     "---\ntitle: ---\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"..."s,
     "---\ntitle: ...\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"--- x"s,
     "---\ntitle: --- x\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"%YAML"s,
     "---\ntitle: \"%YAML\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {" lead"s,
     "---\ntitle: \" lead\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"trail "s,
     "---\ntitle: \"trail \"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"  both  "s,
     "---\ntitle: \"  both  \"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"a  b"s,
     "---\ntitle: a  b\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"a\tb"s,
     "---\ntitle: a\tb\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"\tlead"s,
     "---\ntitle: \"\\tlead\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"trail\t"s,
     "---\ntitle: \"trail\\t\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"Export the audit log of every card transition to the compliance archive nightly with retries"s,
     "---\ntitle: Export the audit log of every card transition to the compliance archive\n  nightly with retries\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij"s,
     "---\ntitle: abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"A title that says \"quoted\" and goes on long enough to need folding past the eighty column"s,
     "---\ntitle: A title that says \"quoted\" and goes on long enough to need folding past\n  the eighty column\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"#word word word word word word word word word word word word word word word word word word word word "s,
     "---\ntitle: \"#word word word word word word word word word word word word word word\n  word word word word word word \"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"back\\slash and more more more more more more more more more more more more more more more "s,
     "---\ntitle: \"back\\\\slash and more more more more more more more more more more more\n  more more more more \"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"bell\007 then more words then more words then more words then more words then more words then more words "s,
     "---\ntitle: \"bell\\a then more words then more words then more words then more words\n  then more words then more words \"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"verylongwordverylongwordverylongwordverylongword xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx tail"s,
     "---\ntitle: verylongwordverylongwordverylongwordverylongword\n  xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx tail\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"line one\nline two"s,
     "---\ntitle: |-\n  line one\n  line two\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"a\n\nb"s,
     "---\ntitle: |-\n  a\n\n  b\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"a\n"s,
     "---\ntitle: |\n  a\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"trailing space \nnext"s,
     "---\ntitle: |-\n  trailing space \n  next\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"a\n b"s,
     "---\ntitle: |-\n  a\n   b\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"\nlead newline"s,
     "---\ntitle: |-\n  \n  lead newline\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"first\nsecond line words second line words second line words second line words second line words second line words "s,
     "---\ntitle: >-\n  first\n\n  second line words second line words second line words second line words second\n  line words second line words \nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"x\n\n\n"s,
     "---\ntitle: |+\n  x\n\n\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"Ship \360\237\232\200 now"s,
     "---\ntitle: Ship \360\237\232\200 now\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"\360\237\232\200"s,
     "---\ntitle: \360\237\232\200\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"\360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 "s,
     "---\ntitle: \"\360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200\n  \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \360\237\232\200 \"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"\347\231\273\345\275\225\351\241\265\351\235\242"s,
     "---\ntitle: \347\231\273\345\275\225\351\241\265\351\235\242\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242"s,
     "---\ntitle: \347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\347\231\273\345\275\225\351\241\265\351\235\242\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"\320\224\320\276\320\261\320\260\320\262\320\270\321\202\321\214 \321\215\320\272\321\201\320\277\320\276\321\200\321\202"s,
     "---\ntitle: \320\224\320\276\320\261\320\260\320\262\320\270\321\202\321\214 \321\215\320\272\321\201\320\277\320\276\321\200\321\202\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"a\343\200\200b"s,
     "---\ntitle: a\343\200\200b\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"\343\200\200lead"s,
     "---\ntitle: \343\200\200lead\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"trail\343\200\200"s,
     "---\ntitle: trail\343\200\200\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"a\302\240b"s,
     "---\ntitle: a\302\240b\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"\357\273\277bom"s,
     "---\ntitle: \357\273\277bom\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"a\342\200\250b"s,
     "---\ntitle: a\342\200\250b\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"a\342\200\251b"s,
     "---\ntitle: a\342\200\251b\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"esc\033[31m"s,
     "---\ntitle: \"esc\\e[31m\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"nul\000x"s,
     "---\ntitle: \"nul\\0x\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"del\177"s,
     "---\ntitle: \"del\177\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"c1\302\205"s,
     "---\ntitle: \"c1\302\205\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"cr\015"s,
     "---\ntitle: \"cr\\r\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"a\015\nb"s,
     "---\ntitle: \"a\\r\\nb\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"\013vt"s,
     "---\ntitle: \"\\vvt\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"ff\014"s,
     "---\ntitle: \"ff\\f\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"bs\010"s,
     "---\ntitle: \"bs\\b\"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
    {"ctl\001 ctl\001 ctl\001 ctl\001 ctl\001 ctl\001 ctl\001 ctl\001 ctl\001 ctl\001 ctl\001 ctl\001 ctl\001 ctl\001 ctl\001 ctl\001 ctl\001 ctl\001 ctl\001 ctl\001 "s,
     "---\ntitle: \"ctl\\x01 ctl\\x01 ctl\\x01 ctl\\x01 ctl\\x01 ctl\\x01 ctl\\x01 ctl\\x01 ctl\\x01\n  ctl\\x01 ctl\\x01 ctl\\x01 ctl\\x01 ctl\\x01 ctl\\x01 ctl\\x01 ctl\\x01 ctl\\x01\n  ctl\\x01 ctl\\x01 \"\nstage: draft\nstageRevision: 1\n---\n\nBody.\n"s},
};
// clang-format on

Projection Draft() {
  Projection p;
  p.stage = Location::kDraft;
  p.stage_revision = 1;
  return p;
}

}  // namespace

TEST_CASE("a new card.md is byte-identical to the TypeScript store's for every title") {
  for (const TitleCase& c : kTitles) {
    const std::string& title = c.title;
    CAPTURE(title);
    CHECK(NewCardFile(title, "Body.", Draft()) == c.card_md);
  }
}

TEST_CASE("every title written into card.md reads back as the same string") {
  for (const TitleCase& c : kTitles) {
    const std::string& title = c.title;
    CAPTURE(title);
    auto parsed = ParseCardFile("/c/card.md", NewCardFile(title, "Body.", Draft()));
    REQUIRE(parsed.ok());
    CHECK(parsed->title == title);
    CHECK(parsed->body == "Body.");
  }
}

TEST_CASE("the titles the issue measured: numbers quoted, YAML 1.1 words and dates plain") {
  // The cases named in issue 10, restated one by one.
  CHECK(YamlPair("title", "+1") == "title: \"+1\"");
  CHECK(YamlPair("title", ".5") == "title: \".5\"");
  CHECK(YamlPair("title", "+12.5e3") == "title: \"+12.5e3\"");
  CHECK(YamlPair("title", "+.5") == "title: \"+.5\"");
  CHECK(YamlPair("title", "yes") == "title: yes");
  CHECK(YamlPair("title", "off") == "title: off");
  CHECK(YamlPair("title", "2026-09-16") == "title: 2026-09-16");
  CHECK(YamlPair("title", "12:30") == "title: 12:30");
  CHECK(YamlPair("title", "=") == "title: =");
  CHECK(YamlPair("title", "---") == "title: ---");
  CHECK(YamlPair("title", "a\tb") == "title: a\tb");
  CHECK(YamlPair("title", "\"double\"") == "title: '\"double\"'");
  CHECK(YamlPair("title", "one\ntwo") == "title: |-\n  one\n  two");
}

TEST_CASE("a parent id is written as the store writes it: plain, never quoted as a number") {
  Projection p = Draft();
  p.parent = "0001-login";
  CHECK(NewCardFile("Child", "", p) ==
        "---\ntitle: Child\nstage: draft\nstageRevision: 1\nparent: 0001-login\n---\n\n\n");
}

TEST_CASE("an ill-formed UTF-8 byte in a title is written as U+FFFD, as upstream holds it") {
  CHECK(NewCardFile("bad\xff byte", "", Draft()) ==
        "---\ntitle: bad\xEF\xBF\xBD byte\nstage: draft\nstageRevision: 1\n---\n\n\n");
}

}  // namespace devflow
