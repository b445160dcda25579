// Build-time generator of the look-alike fold's table (host/lookalike_table.h): for every code
// point from U+0080 to U+10FFFF, the ASCII character a reader takes it for, read from ICU's
// Unicode data (general categories, NFKC, character names and the UTS #39 confusable skeleton;
// the rules and their order are host/lookalike.h's AsciiLookAlike docstring), written as a
// sorted table of runs to the .cc file named by argv[1]; `--list` prints every mapping with the
// rule that made it, for review. Linked with ICU; no product target is.
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/uspoof.h>
#include <unicode/uversion.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace {

// The characters the fold maps to: ASCII letters, digits and '-'.
bool IsTarget(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-'; }

std::string Utf8(const icu::UnicodeString& s) {
  std::string out;
  s.toUTF8String(out);
  return out;
}

struct Generator {
  USpoofChecker* spoof = nullptr;
  const icu::Normalizer2* normalizer = nullptr;
  const icu::Normalizer2* nfd = nullptr;
  // skeleton -> the ASCII targets whose own skeleton it is ("l" -> "1Il", "rn" -> "m").
  std::map<std::string, std::string> ascii_by_skeleton;
  // The rule that decided the last Map (for --list).
  const char* rule = "";

  std::string Skeleton(const icu::UnicodeString& s) {
    UErrorCode status = U_ZERO_ERROR;
    icu::UnicodeString out;
    uspoof_getSkeletonUnicodeString(spoof, 0, s, out, &status);
    if (U_FAILURE(status)) {
      std::fprintf(stderr, "lookalike_gen: uspoof_getSkeleton: %s\n", u_errorName(status));
      std::exit(1);
    }
    return Utf8(out);
  }

  // Which case the letter `cp` is drawn in: 'U' upper (a capital, a small capital: "LATIN
  // LETTER SMALL CAPITAL V" is drawn as a V), 'L' lower (a lowercase letter, a superscript or
  // subscript letter), 0 neither (a letter of a caseless script, a symbol).
  static char CaseOf(UChar32 cp) {
    char name[256];
    UErrorCode status = U_ZERO_ERROR;
    u_charName(cp, U_UNICODE_CHAR_NAME, name, sizeof name, &status);
    const std::string n = U_SUCCESS(status) ? name : "";
    if (n.find("SMALL CAPITAL") != std::string::npos) return 'U';
    if (n.find("CAPITAL") != std::string::npos) return 'U';
    if (u_hasBinaryProperty(cp, UCHAR_UPPERCASE)) return 'U';
    if (u_hasBinaryProperty(cp, UCHAR_LOWERCASE)) return 'L';
    if (n.find("SMALL") != std::string::npos) return 'L';
    return 0;
  }

  // The Latin letter cp's name says it is (see Map), or 0.
  char ByName(UChar32 cp, const icu::UnicodeString& one) const {
    static const std::regex kLatin(
        "(?:[A-Z -]+ )?LATIN (CAPITAL|SMALL) LETTER ([A-Z])(?: WITH .+)?|"
        "(?:LATIN|MODIFIER) LETTER (SMALL CAPITAL|CAPITAL|SMALL) ([A-Z])(?: WITH .+)?");
    char name[256];
    UErrorCode status = U_ZERO_ERROR;
    u_charName(cp, U_UNICODE_CHAR_NAME, name, sizeof name, &status);
    std::cmatch m;
    if (U_FAILURE(status) || !std::regex_match(name, m, kLatin)) return 0;
    if (std::string(name).find(" WITH SMALL LETTER") != std::string::npos) return 0;  // ǅ
    status = U_ZERO_ERROR;
    if (!nfd->isNormalized(one, status) || U_FAILURE(status)) return 0;  // é: its own letter
    const std::string kase = m[1].matched ? m[1].str() : m[3].str();
    const char letter = (m[2].matched ? m[2].str() : m[4].str())[0];
    return kase == "SMALL" ? static_cast<char>(std::tolower(static_cast<unsigned char>(letter)))
                           : letter;
  }

  // The ASCII character cp reads as, or 0.
  char Map(UChar32 cp) {
    rule = "regional indicator";
    if (cp >= 0x1F1E6 && cp <= 0x1F1FF) return static_cast<char>('A' + (cp - 0x1F1E6));
    const int8_t type = u_charType(cp);
    if (type == U_UNASSIGNED || type == U_SURROGATE || type == U_PRIVATE_USE_CHAR ||
        type == U_CONTROL_CHAR || type == U_SPACE_SEPARATOR || type == U_FORMAT_CHAR ||
        type == U_NON_SPACING_MARK || type == U_ENCLOSING_MARK ||
        type == U_COMBINING_SPACING_MARK) {  // a mark is never a letter of its own
      return 0;
    }
    rule = "Nd";
    // A decimal digit of any script is its digit (general category Nd).
    if (type == U_DECIMAL_DIGIT_NUMBER) return static_cast<char>('0' + u_charDigitValue(cp));
    rule = "dash";
    // A hyphen or dash (general category Pd) is '-'; so are the minus signs and the other
    // code points whose NFKC or skeleton is '-' (below).
    if (type == U_DASH_PUNCTUATION) return '-';

    const icu::UnicodeString one(cp);
    UErrorCode status = U_ZERO_ERROR;
    const std::string nfkc = Utf8(normalizer->normalize(one, status));
    if (U_FAILURE(status)) std::exit(1);
    // NFKC: a full-width form is its ASCII twin, punctuation included; otherwise one ASCII
    // letter or digit or '-', or a parenthesized one ("(v)").
    rule = "NFKC";
    if (nfkc.size() == 1 && static_cast<unsigned char>(nfkc[0]) < 0x80) {
      if (cp >= 0xFF01 && cp <= 0xFF5E) return nfkc[0];
      if (IsTarget(nfkc[0])) return nfkc[0];
    }
    if (nfkc.size() == 3 && nfkc[0] == '(' && nfkc[2] == ')' && std::isalnum(nfkc[1])) {
      return nfkc[1];
    }
    rule = "name";
    // A Latin letter by its name: a decorated form ("NEGATIVE SQUARED LATIN CAPITAL LETTER V"),
    // a small capital ("LATIN LETTER SMALL CAPITAL R", "MODIFIER LETTER SMALL CAPITAL I"), a
    // letter with an attached hook, stroke or tail that has no canonical decomposition ("LATIN
    // SMALL LETTER V WITH HOOK"; a letter with an accent that decomposes, `é`, stays its own).
    if (const char by_name = ByName(cp, one)) return by_name;
    rule = "skeleton";
    // UTS #39: the ASCII target whose skeleton is this code point's skeleton.
    const auto found = ascii_by_skeleton.find(Skeleton(one));
    if (found == ascii_by_skeleton.end()) return 0;
    const std::string& targets = found->second;
    const bool number = type == U_OTHER_NUMBER || type == U_LETTER_NUMBER;
    std::string letters;
    for (char c : targets) {
      if (number && std::isdigit(static_cast<unsigned char>(c))) return c;
      if (!std::isdigit(static_cast<unsigned char>(c))) letters += c;
    }
    if (letters.empty()) return targets[0];
    if (letters == "-") return '-';
    const char kase = CaseOf(cp);
    // Several letters share the skeleton ("l": I and l): the one in the code point's case; a
    // caseless letter reads as the capital (Lisu, Cherokee and Canadian syllabics draw like
    // Latin capitals).
    char c = letters[0];
    for (char l : letters) {
      if ((kase == 'L') == (std::islower(static_cast<unsigned char>(l)) != 0)) {
        c = l;
        break;
      }
    }
    if (kase == 'U') return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (kase == 'L') return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return c;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: lookalike_gen OUT.cc | --list\n");
    return 2;
  }
  Generator gen;
  UErrorCode status = U_ZERO_ERROR;
  gen.spoof = uspoof_open(&status);
  gen.normalizer = icu::Normalizer2::getNFKCInstance(status);
  gen.nfd = icu::Normalizer2::getNFDInstance(status);
  if (U_FAILURE(status)) {
    std::fprintf(stderr, "lookalike_gen: ICU: %s\n", u_errorName(status));
    return 1;
  }
  for (int c = 0x21; c < 0x7F; ++c) {
    if (IsTarget(static_cast<char>(c))) {
      gen.ascii_by_skeleton[gen.Skeleton(icu::UnicodeString(static_cast<UChar32>(c)))] +=
          static_cast<char>(c);
    }
  }
  if (std::string(argv[1]) == "--list") {  // every mapping, one a line, for review
    for (UChar32 cp = 0x80; cp <= 0x10FFFF; ++cp) {
      const char a = gen.Map(cp);
      if (a == 0) continue;
      char name[256] = "";
      UErrorCode ignored = U_ZERO_ERROR;
      u_charName(cp, U_UNICODE_CHAR_NAME, name, sizeof name, &ignored);
      std::printf("U+%04X\t%s\t%c\t%s\t%s\n", static_cast<unsigned>(cp),
                  Utf8(icu::UnicodeString(cp)).c_str(), a, gen.rule, name);
    }
    return 0;
  }
  // Runs: consecutive code points mapping to one character (step 0) or to consecutive
  // characters (step 1).
  struct Run {
    UChar32 first;
    int length;
    char ascii;
    int step;
  };
  std::vector<Run> runs;
  for (UChar32 cp = 0x80; cp <= 0x10FFFF; ++cp) {
    const char a = gen.Map(cp);
    if (a == 0) continue;
    if (!runs.empty()) {
      Run& r = runs.back();
      if (r.first + r.length == cp && r.length < 0xFFFF) {
        const int delta = a - (r.ascii + (r.length - 1) * r.step);
        if (r.length == 1 && (delta == 0 || delta == 1)) r.step = delta;
        if ((r.length == 1 && (delta == 0 || delta == 1)) || delta == r.step) {
          ++r.length;
          continue;
        }
      }
    }
    runs.push_back({cp, 1, a, 0});
  }
  if (runs.size() >= 0xFFFF) {  // kPageStart holds run indexes as uint16_t
    std::fprintf(stderr, "lookalike_gen: %zu runs do not fit the page index\n", runs.size());
    return 1;
  }
  std::FILE* out = std::fopen(argv[1], "w");
  if (out == nullptr) {
    std::perror(argv[1]);
    return 1;
  }
  UVersionInfo icu, unicode;
  u_getVersion(icu);
  u_getUnicodeVersion(unicode);
  char icu_text[U_MAX_VERSION_STRING_LENGTH], unicode_text[U_MAX_VERSION_STRING_LENGTH];
  u_versionToString(icu, icu_text);
  u_versionToString(unicode, unicode_text);
  std::fprintf(out,
               "// Generated by tools/lookalike_gen.cc from ICU %s (Unicode %s): do not edit.\n"
               "#include \"host/lookalike_table.h\"\n\n"
               "namespace devflow::lookalike_table {\n\n"
               "const char kIcuVersion[] = \"%s\";\n"
               "const char kUnicodeVersion[] = \"%s\";\n"
               "const size_t kRunCount = %zu;\n"
               "const Run kRuns[] = {\n",
               icu_text, unicode_text, icu_text, unicode_text, runs.size());
  for (const Run& r : runs) {
    std::fprintf(out, "    {0x%X, %d, '%s%c', %d},\n", static_cast<unsigned>(r.first), r.length,
                 r.ascii == '\'' || r.ascii == '\\' ? "\\" : "", r.ascii, r.step);
  }
  // The page index: for each 256 code points, the first run that ends in or after it.
  std::fprintf(out, "};\nconst uint16_t kPageStart[kPages + 1] = {\n");
  size_t next = 0;
  for (UChar32 page = 0; page <= 0x110000 >> 8; ++page) {
    while (next < runs.size() && runs[next].first + runs[next].length - 1 < (page << 8)) ++next;
    std::fprintf(out, "%s%zu,%s", page % 16 == 0 ? "    " : " ", next, page % 16 == 15 ? "\n" : "");
  }
  std::fprintf(out, "\n};\n\n}  // namespace devflow::lookalike_table\n");
  uspoof_close(gen.spoof);
  return std::fclose(out) == 0 ? 0 : 1;
}
