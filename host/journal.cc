#include "host/journal.h"
#include "host/json_depth.h"
#include "host/json_string.h"
#include "host/os.h"
#include "host/utf8.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <utility>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace devflow {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// The decode problem travels as an exception inside this file only (never across the module
// edge): every public function below catches it and returns a Status.
struct DecodeError {
  std::string problem;
};

[[noreturn]] void Fail(std::string problem) { throw DecodeError{std::move(problem)}; }

// A journal line as a small tree over the line's own bytes: the fast path of
// DecodeJournalLine. It reads only the plain subset of JSON the stores write (printable ASCII,
// no backslash escapes, integers without fraction or exponent, no duplicate keys, shallow
// nesting); anything else, and any line the decoder refuses, is decoded again by the full path
// (nlohmann), so what is accepted and every message are the full path's.
struct LiteNode {
  enum Kind : uint8_t { kNull, kBool, kUnsigned, kInteger, kString, kArray, kObject };
  Kind kind = kNull;
  std::string_view key;             // member name (object members only)
  std::string_view text;            // string value
  uint64_t u = 0;                   // kUnsigned
  int64_t i = 0;                    // kInteger (negative)
  const LiteNode* first = nullptr;  // first element / member
  const LiteNode* next = nullptr;   // next sibling
};

struct NotLite {};  // the line leaves the fast path's subset: decode it with the full path

// Equality of two short strings (keys, words) without a memcmp call per comparison.
inline bool Same(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// Every byte printable ASCII (0x20..0x7E) and none a backslash; eight bytes at a time.
bool PlainAscii(std::string_view s) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  auto zero_byte = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t v;
    std::memcpy(&v, s.data() + i, 8);
    // a byte >= 0x80, < 0x20, == 0x7F or == '\\'
    if ((v & kHigh) | ((v - kOnes * 0x20) & ~v & kHigh) | zero_byte(v ^ (kOnes * 0x7F)) |
        zero_byte(v ^ (kOnes * '\\'))) {
      return false;
    }
  }
  for (; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c > 0x7E || c == '\\') return false;
  }
  return true;
}

class LiteParser {
 public:
  // Parses `line` into `nodes` (cleared; capacity kept across lines). Throws NotLite.
  static const LiteNode* Parse(std::string_view line, std::vector<LiteNode>& nodes) {
    if (!PlainAscii(line)) throw NotLite{};
    nodes.clear();
    // Every node takes at least one byte of the line (`0`, `""`, `[]`), so this bound keeps the
    // vector from reallocating and the pointers between nodes stay valid.
    nodes.reserve(line.size() + 1);
    LiteParser p(line, nodes);
    p.Space();
    const LiteNode* top = p.Value(0);
    p.Space();
    if (p.at_ != line.size()) throw NotLite{};
    return top;
  }

 private:
  static constexpr int kDepth = 16;
  LiteParser(std::string_view s, std::vector<LiteNode>& nodes) : s_(s), nodes_(nodes) {}
  void Space() {
    while (at_ < s_.size() && s_[at_] == ' ') ++at_;
  }
  char Peek() const { return at_ < s_.size() ? s_[at_] : '\0'; }
  void Expect(char c) {
    if (Peek() != c) throw NotLite{};
    ++at_;
  }
  bool Word(std::string_view w) {
    if (s_.substr(at_, w.size()) != w) return false;
    at_ += w.size();
    return true;
  }
  std::string_view String() {
    Expect('"');
    // No backslash in the line: the next quote closes the string.
    const size_t start = at_;
    while (at_ < s_.size() && s_[at_] != '"') ++at_;
    if (at_ == s_.size()) throw NotLite{};
    return s_.substr(start, at_++ - start);
  }
  LiteNode* Value(int depth) {
    if (depth > kDepth) throw NotLite{};
    nodes_.emplace_back();
    LiteNode* n = &nodes_.back();
    const char c = Peek();
    if (c == '{') {
      n->kind = LiteNode::kObject;
      ++at_;
      Space();
      if (Peek() == '}') {
        ++at_;
        return n;
      }
      LiteNode* last = nullptr;
      for (;;) {
        Space();
        std::string_view key = String();
        for (const LiteNode* m = n->first; m; m = m->next) {
          if (Same(m->key, key)) throw NotLite{};  // duplicate keys: the full path decides
        }
        Space();
        Expect(':');
        Space();
        LiteNode* v = Value(depth + 1);
        v->key = key;
        (last ? last->next : n->first) = v;
        last = v;
        Space();
        if (Peek() == ',') {
          ++at_;
          continue;
        }
        Expect('}');
        return n;
      }
    }
    if (c == '[') {
      n->kind = LiteNode::kArray;
      ++at_;
      Space();
      if (Peek() == ']') {
        ++at_;
        return n;
      }
      LiteNode* last = nullptr;
      for (;;) {
        Space();
        LiteNode* v = Value(depth + 1);
        (last ? last->next : n->first) = v;
        last = v;
        Space();
        if (Peek() == ',') {
          ++at_;
          continue;
        }
        Expect(']');
        return n;
      }
    }
    if (c == '"') {
      n->kind = LiteNode::kString;
      n->text = String();
      return n;
    }
    if (Word("true") || Word("false")) {
      n->kind = LiteNode::kBool;
      return n;
    }
    if (Word("null")) return n;
    const bool negative = c == '-';
    if (negative) ++at_;
    const size_t digits = at_;
    uint64_t value = 0;
    while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') {
      if (at_ - digits >= 18) throw NotLite{};  // 19+ digits may overflow: full path
      value = value * 10 + static_cast<uint64_t>(s_[at_] - '0');
      ++at_;
    }
    const size_t count = at_ - digits;
    if (count == 0 || (count > 1 && s_[digits] == '0')) throw NotLite{};
    const char after = Peek();
    if (after == '.' || after == 'e' || after == 'E') throw NotLite{};  // a float: full path
    if (negative && value != 0) {
      n->kind = LiteNode::kInteger;
      n->i = -static_cast<int64_t>(value);
    } else {
      if (negative) throw NotLite{};  // -0 is a float to nlohmann's reading of JS
      n->kind = LiteNode::kUnsigned;
      n->u = value;
    }
    return n;
  }
  std::string_view s_;
  std::vector<LiteNode>& nodes_;
  size_t at_ = 0;
};

// The value accessors DecodeEntry is written against, for both trees.
bool IsObject(const Json* v) { return v != nullptr && v->is_object(); }
bool IsObject(const LiteNode* v) { return v != nullptr && v->kind == LiteNode::kObject; }
bool IsString(const Json& v) { return v.is_string(); }
bool IsString(const LiteNode& v) { return v.kind == LiteNode::kString; }
bool IsArray(const Json& v) { return v.is_array(); }
bool IsArray(const LiteNode& v) { return v.kind == LiteNode::kArray; }
std::string_view Text(const Json& v) { return v.get_ref<const std::string&>(); }
std::string_view Text(const LiteNode& v) { return v.text; }
const Json* Field(const Json& object, std::string_view key) {
  auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}
const LiteNode* Field(const LiteNode& object, std::string_view key) {
  for (const LiteNode* m = object.first; m; m = m->next) {
    if (Same(m->key, key)) return m;
  }
  return nullptr;
}
template <class F>
void ForEach(const Json& array, F f) {
  for (const Json& item : array) f(item);
}
template <class F>
void ForEach(const LiteNode& array, F f) {
  for (const LiteNode* m = array.first; m; m = m->next) f(*m);
}

// What JS's `${JSON.stringify(value)}` prints for a possibly absent value.
std::string JsGot(const Json* value) {
  if (value == nullptr) return "undefined";
  return value->dump(-1, ' ', false, Json::error_handler_t::replace);
}
// The fast path never words a refusal: the full path decodes the line again and does.
std::string JsGot(const LiteNode*) { throw NotLite{}; }

template <class J>
std::optional<std::string> OptionalString(const J& record, std::string_view key) {
  const J* v = Field(record, key);
  if (v == nullptr) return std::nullopt;
  if (!IsString(*v) || Text(*v).empty()) {
    Fail("field \"" + std::string(key) + "\" must be a non-empty string when present");
  }
  return std::string(Text(*v));
}

template <class J>
Actor DecodeActor(const J* value) {
  if (!IsObject(value)) Fail("actor must be a JSON object");
  const J* kind = Field(*value, "kind");
  std::string k = kind != nullptr && IsString(*kind) ? std::string(Text(*kind)) : "";
  // Upstream keeps only the field its kind defines: name for human/command, session for agent.
  if (k == "human" || k == "command") return Actor{k, OptionalString(*value, "name"), std::nullopt};
  if (k == "agent") return Actor{k, std::nullopt, OptionalString(*value, "session")};
  Fail("actor field \"kind\" must be human, agent, or command (got " + JsGot(kind) + ")");
}

template <class J>
std::vector<GateCheck> DecodeGateChecks(const J& value) {
  if (!IsArray(value)) Fail("transition field \"gate.checks\" must be an array");
  std::vector<GateCheck> checks;
  ForEach(value, [&](const J& check) {
    if (!IsObject(&check)) Fail("gate check must be a JSON object");
    const J* verdict = Field(check, "verdict");
    if (verdict == nullptr || !IsString(*verdict) || Text(*verdict) != "allowed") {
      Fail("gate check field \"verdict\" must be \"allowed\" (got " + JsGot(verdict) + ")");
    }
    GateCheck c;
    c.by = DecodeActor(Field(check, "by"));
    c.summary = OptionalString(check, "summary");
    checks.push_back(std::move(c));
  });
  return checks;
}

template <class J>
Gate DecodeGate(const J& value) {
  if (!IsObject(&value)) Fail("transition field \"gate\" must be a JSON object");
  const J* approved = Field(value, "approvedBy");
  const J* checks = Field(value, "checks");
  if (approved == nullptr && checks == nullptr) {
    Fail("transition field \"gate\" requires \"approvedBy\" or \"checks\"");
  }
  Gate gate;
  if (approved != nullptr) gate.approved_by = DecodeActor(approved);
  if (checks != nullptr) gate.checks = DecodeGateChecks(*checks);
  return gate;
}

// JS Number.isInteger accepts 3 and 3.0 alike.
std::optional<int64_t> PositiveInteger(const Json* v) {
  if (v == nullptr) return std::nullopt;
  if (v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    if (u >= 1 && u <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(u);
    return std::nullopt;
  }
  if (v->is_number_integer()) {
    int64_t i = v->get<int64_t>();
    return i >= 1 ? std::optional<int64_t>(i) : std::nullopt;
  }
  if (v->is_number_float()) {
    double d = v->get<double>();
    if (std::isfinite(d) && d >= 1 && std::trunc(d) == d && d < 9.2e18) {
      return static_cast<int64_t>(d);
    }
  }
  return std::nullopt;
}
// The lite tree holds no floats, and its integers have at most 18 digits.
std::optional<int64_t> PositiveInteger(const LiteNode* v) {
  if (v == nullptr || v->kind != LiteNode::kUnsigned || v->u < 1) return std::nullopt;
  return static_cast<int64_t>(v->u);
}

template <class J>
std::optional<Location> LocationField(const J* v) {
  if (v == nullptr || !IsString(*v)) return std::nullopt;
  return ParseLocation(Text(*v));
}

// JS `s.trim().length === 0`: upstream skips such journal lines and refuses such reasons.
// A line whose first byte is printable ASCII other than a space is not blank (the common
// case, decided without decoding the line).
bool IsBlank(std::string_view s) {
  if (!s.empty() && static_cast<unsigned char>(s[0]) > 0x20 &&
      static_cast<unsigned char>(s[0]) < 0x7F) {
    return false;
  }
  return JsTrim(s).empty();
}

template <class J>
JournalEntry DecodeEntry(const J& value) {
  if (!IsObject(&value)) Fail("journal entry must be a JSON object");
  JournalEntry e;
  auto rev = PositiveInteger(Field(value, "rev"));
  if (!rev) Fail("journal entry field \"rev\" must be a positive integer");
  e.rev = *rev;
  const J* at = Field(value, "at");
  if (at == nullptr || !IsString(*at) || Text(*at).empty()) {
    Fail("journal entry field \"at\" must be a non-empty string");
  }
  e.at = std::string(Text(*at));
  const J* type = Field(value, "type");
  std::string_view t = type != nullptr && IsString(*type) ? Text(*type) : std::string_view();
  if (t == "created") {
    e.type = EntryType::kCreated;
    e.by = DecodeActor(Field(value, "by"));
    if (const J* parent = Field(value, "parent")) {
      if (!IsString(*parent) || Text(*parent).empty()) {
        Fail("field \"parent\" must be a non-empty card id when present");
      }
      e.parent = std::string(Text(*parent));
    }
    if (const J* sc = Field(value, "serviceClass")) {
      auto parsed = IsString(*sc) ? ParseServiceClass(Text(*sc)) : std::nullopt;
      if (!parsed) {
        Fail(
            "created field \"serviceClass\" must be one of standard, express, emergency when "
            "present");
      }
      e.service_class = parsed;
    }
  } else if (t == "transition") {
    e.type = EntryType::kTransition;
    e.from = LocationField(Field(value, "from"));
    if (!e.from) Fail("transition field \"from\" must be a stage or \"blocked\"");
    e.to = LocationField(Field(value, "to"));
    if (!e.to) Fail("transition field \"to\" must be a stage or \"blocked\"");
    if (const J* by = Field(value, "by")) e.by = DecodeActor(by);
    e.reason = OptionalString(value, "reason");
    if (const J* gate = Field(value, "gate")) e.gate = DecodeGate(*gate);
  } else if (t == "artifact") {
    e.type = EntryType::kArtifact;
    const J* path = Field(value, "path");
    if (path == nullptr || !IsString(*path) || Text(*path).empty()) {
      Fail("artifact field \"path\" must be a non-empty string");
    }
    e.path = std::string(Text(*path));
    e.stage = LocationField(Field(value, "stage"));
    if (!e.stage || !IsStage(*e.stage)) {
      Fail(
          "artifact field \"stage\" must be one of draft, designing, ready, developing, "
          "reviewing, testing, done");
    }
    if (const J* by = Field(value, "by")) e.by = DecodeActor(by);
    e.kind = OptionalString(value, "kind");
  } else if (t == "abandoned") {
    e.type = EntryType::kAbandoned;
    const J* reason = Field(value, "reason");
    if (reason == nullptr || !IsString(*reason) || IsBlank(Text(*reason))) {
      Fail(
          "abandoned field \"reason\" must be a non-empty string; a card leaving the board "
          "without one loses the decision");
    }
    e.by = DecodeActor(Field(value, "by"));
    e.reason = std::string(Text(*reason));
  } else if (t == "archived" || t == "restored") {
    e.type = t == "archived" ? EntryType::kArchived : EntryType::kRestored;
    e.by = DecodeActor(Field(value, "by"));
    e.reason = OptionalString(value, "reason");
  } else if (t == "claim-expired") {
    e.type = EntryType::kClaimExpired;
    const J* previous = Field(value, "previousOwner");
    if (previous == nullptr) Fail("claim-expired field \"previousOwner\" is required");
    e.previous_owner = DecodeActor(previous);
    e.by = DecodeActor(Field(value, "by"));
  } else {
    Fail(
        "journal entry field \"type\" must be created, transition, artifact, abandoned, "
        "archived, restored, or claim-expired (got " +
        JsGot(type) + ")");
  }
  return e;
}

// A store-shaped line's fields as views into the journal's bytes: what the fold of a decision
// (FoldKeeps::kState) decodes a line into, so nothing is allocated per line. The same fields as
// JournalEntry, of which the fold rules read rev, at, type, from, to, path, stage, kind, parent
// and serviceClass; actors, reasons and gate checks are decoded (so checked) and dropped.
struct ActorView {
  std::string_view kind;
  std::optional<std::string_view> name;
  std::optional<std::string_view> session;
};
struct GateCheckView {
  ActorView by;
  std::optional<std::string_view> summary;
};
struct GateView {
  std::optional<ActorView> approved_by;
  GateCheckView check;  // each check in turn
};
struct EntryView {
  int64_t rev = 0;
  std::string_view at;
  EntryType type = EntryType::kCreated;
  std::optional<ActorView> by;
  std::optional<std::string_view> parent;
  std::optional<ServiceClass> service_class;
  std::optional<Location> from;
  std::optional<Location> to;
  std::optional<std::string_view> reason;
  std::optional<GateView> gate;
  std::string_view path;
  std::optional<Location> stage;
  std::optional<std::string_view> kind;
  std::optional<ActorView> previous_owner;
};

// The first decoder DecodeJournalLine tries: a line in exactly the shape the stores write
// (EncodeJournalLine's bytes, which are JSON.stringify's): no whitespace, the fields in their
// written order (JournalEntry's comment), plain printable-ASCII strings without a backslash,
// `rev` a positive integer of at most 18 digits. Such a line is read in one pass straight into
// the entry: no tree, no key search. It only ever accepts: a line that leaves the shape
// anywhere, or that the decoder would refuse, returns false with `e` in an unspecified state,
// and the caller decodes it again by the general paths, which decide and word every refusal.
// Whatever it accepts, DecodeEntry accepts with the same entry (tests/store/fold_once_test.cc
// checks both on every shape). The entry is a JournalEntry or, for a fold that keeps no
// entries, an EntryView of the same fields.
class StoreShape {
 public:
  template <class E>
  static bool Decode(std::string_view line, E& e) {
    // Every byte outside a string is matched literally (or is a digit of rev), and Str checks
    // every byte inside one.
    StoreShape r(line);
    return r.Entry(e) && r.p_ == r.end_;
  }
  // Decode of the line starting at `start` in `content`, without finding its end first: no
  // byte the decoder accepts is a '\n' (a string stops at any control byte), so a line in the
  // shape is one whose entry is followed by a '\n' or the end. On success `line_end` is the
  // offset of that '\n' (or content's size).
  template <class E>
  static bool DecodeAt(std::string_view content, size_t start, E& e, size_t& line_end) {
    StoreShape r(content.substr(start));
    if (!r.Entry(e) || (r.p_ != r.end_ && *r.p_ != '\n')) return false;
    line_end = static_cast<size_t>(r.p_ - content.data());
    return true;
  }

 private:
  explicit StoreShape(std::string_view s) : p_(s.data()), end_(s.data() + s.size()) {}

  // Consumes `lit` when the bytes at the cursor are exactly it.
  template <size_t N>
  [[gnu::always_inline]] bool Lit(const char (&lit)[N]) {
    constexpr size_t n = N - 1;
    if (static_cast<size_t>(end_ - p_) < n || !Same<n>(p_, lit)) return false;
    p_ += n;
    return true;
  }
  // Whether the `n` bytes at `a` and `b` are equal, in word compares (a literal's words are
  // constants): GCC called the library's memcmp for some literals (~19 instructions a call).
  template <size_t n>
  [[gnu::always_inline]] static bool Same(const char* a, const char* b) {
    auto same = [&]<class W>(W, size_t at) {
      W x, y;
      std::memcpy(&x, a + at, sizeof(W));
      std::memcpy(&y, b + at, sizeof(W));
      return x == y;
    };
    if constexpr (n > 16) {
      return same(uint64_t{}, 0) && same(uint64_t{}, 8) && Same<n - 16>(a + 16, b + 16);
    } else if constexpr (n > 8) {  // two words that overlap when n < 16
      return same(uint64_t{}, 0) && same(uint64_t{}, n - 8);
    } else if constexpr (n == 8) {
      return same(uint64_t{}, 0);
    } else if constexpr (n > 4) {
      return same(uint32_t{}, 0) && same(uint32_t{}, n - 4);
    } else if constexpr (n == 4) {
      return same(uint32_t{}, 0);
    } else if constexpr (n > 2) {
      return same(uint16_t{}, 0) && same(uint16_t{}, n - 2);
    } else if constexpr (n == 2) {
      return same(uint16_t{}, 0);
    } else if constexpr (n == 1) {
      return *a == *b;
    } else {
      return true;
    }
  }
  // The first byte from `p` on that ends a plain string: '"', '\\', a control byte, DEL or a
  // byte >= 0x80 (eight bytes a step); `end` when there is none.
  [[gnu::always_inline]] static const char* PlainEnd(const char* p, const char* end) {
#if defined(__SSE2__)
    // Sixteen bytes a step: as signed bytes, a control byte and a byte >= 0x80 are both < 0x20.
    for (; end - p >= 16; p += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      const __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                                                    _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7F))),
                                       _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                                    _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
      if (const int mask = _mm_movemask_epi8(hit); mask != 0) return p + __builtin_ctz(mask);
    }
#endif
    constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
    auto zero_byte = [](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
    for (; end - p >= 8; p += 8) {
      uint64_t v;
      std::memcpy(&v, p, 8);
      // Each term can flag a byte above a truly flagged one (a borrow), never below it, so the
      // lowest flag (the first byte, little-endian) is exact.
      const uint64_t hit = (v & kHigh) | ((v - kOnes * 0x20) & ~v & kHigh) |
                           zero_byte(v ^ (kOnes * 0x7F)) | zero_byte(v ^ (kOnes * '"')) |
                           zero_byte(v ^ (kOnes * '\\'));
      if (hit != 0) return p + (__builtin_ctzll(hit) >> 3);
    }
    for (; p < end; ++p) {
      const unsigned char c = static_cast<unsigned char>(*p);
      if (c < 0x20 || c >= 0x7F || c == '"' || c == '\\') return p;
    }
    return end;
  }
  // The rest of a string whose opening quote was consumed, up to its closing quote: non-empty,
  // printable ASCII without a backslash (anything else is the general decoder's to read).
  [[gnu::always_inline]] bool Str(std::string_view& out) {
    const char* close = PlainEnd(p_, end_);
    if (close == end_ || *close != '"' || close == p_) return false;
    out = std::string_view(p_, static_cast<size_t>(close - p_));
    p_ = close + 1;
    return true;
  }
  bool Str(std::string& out) {  // `out` is empty: constructed, not assigned into
    std::string_view v;
    if (!Str(v)) return false;
    out = std::string(v);
    return true;
  }
  bool Str(std::optional<std::string>& out) {
    std::string_view v;
    if (!Str(v)) return false;
    out.emplace(v);
    return true;
  }
  [[gnu::always_inline]] bool Str(std::optional<std::string_view>& out) {
    return Str(out.emplace());
  }
  // The rest of a string that must name a location (ParseLocation's names), up to its closing
  // quote: the name and the quote matched in place, after a switch on the first byte, instead
  // of Str's scan and ParseLocation's compares (~70 instructions a line of a decision's fold).
  // Accepts exactly what Str then ParseLocation accept (tests/store/fold_once_test.cc).
  bool Loc(std::optional<Location>& out) {
    if (p_ == end_) return false;
    auto is = [&](auto& name_quote, Location l) {
      if (!Lit(name_quote)) return false;
      out = l;
      return true;
    };
    switch (*p_) {
      case 'd':
        return is("designing\"", Location::kDesigning) ||
               is("developing\"", Location::kDeveloping) || is("draft\"", Location::kDraft) ||
               is("done\"", Location::kDone);
      case 'r':
        return is("ready\"", Location::kReady) || is("reviewing\"", Location::kReviewing);
      case 't':
        return is("testing\"", Location::kTesting);
      case 'b':
        return is("blocked\"", Location::kBlocked);
      default:
        return false;
    }
  }
  // {"kind":"human"|"command"[,"name":"…"]} or {"kind":"agent"[,"session":"…"]}
  template <class A>  // Actor or ActorView
  bool Who(A& a) {
    if (!Lit("{\"kind\":\"")) return false;
    if (Lit("agent\"")) {
      a.kind = "agent";
      if (Lit(",\"session\":\"") && !Str(a.session)) return false;
    } else if (Lit("human\"")) {
      a.kind = "human";
      if (Lit(",\"name\":\"") && !Str(a.name)) return false;
    } else if (Lit("command\"")) {
      a.kind = "command";
      if (Lit(",\"name\":\"") && !Str(a.name)) return false;
    } else {
      return false;
    }
    return Lit("}");
  }
  template <class A>
  bool Who(std::optional<A>& a) {
    return Who(a.emplace());
  }
  static GateCheck& NextCheck(Gate& g) { return g.checks.emplace_back(); }
  static GateCheckView& NextCheck(GateView& g) { return g.check = GateCheckView{}; }
  // {"approvedBy":…[,"checks":[…]]} or {"checks":[…]}, checks non-empty, each
  // {"by":…,"verdict":"allowed"[,"summary":"…"]}
  template <class G>  // Gate or GateView
  bool GateOf(G& g) {
    if (!Lit("{\"")) return false;
    if (Lit("approvedBy\":")) {
      if (!Who(g.approved_by)) return false;
      if (!Lit(",\"")) return Lit("}");
    }
    if (!Lit("checks\":[")) return false;
    for (;;) {
      auto& c = NextCheck(g);
      if (!Lit("{\"by\":") || !Who(c.by) || !Lit(",\"verdict\":\"allowed\"")) return false;
      if (Lit(",\"summary\":\"") && !Str(c.summary)) return false;
      if (!Lit("}")) return false;
      if (Lit("]")) break;
      if (!Lit(",")) return false;
    }
    return Lit("}");
  }
  // archived, restored: ,"by":…[,"reason":"…"]
  template <class E>
  bool ByAndReason(E& e) {
    if (!Lit(",\"by\":") || !Who(e.by)) return false;
    return !Lit(",\"reason\":\"") || Str(e.reason);
  }
  template <class E>  // JournalEntry or EntryView
  bool Entry(E& e) {
    if (!Lit("{\"rev\":")) return false;
    const char* digits = p_;
    const char* const most = p_ + std::min<ptrdiff_t>(end_ - p_, 18);  // at most 18 digits
    uint64_t rev = 0;
    for (; p_ < most; ++p_) {
      const unsigned digit = static_cast<unsigned char>(*p_) - unsigned{'0'};
      if (digit > 9) break;
      rev = rev * 10 + digit;
    }
    if (p_ == digits || *digits == '0' || !Lit(",\"at\":\"") || !Str(e.at)) return false;
    e.rev = static_cast<int64_t>(rev);
    if (!Lit(",\"type\":\"")) return false;
    if (Lit("artifact\"")) {
      e.type = EntryType::kArtifact;
      if (!Lit(",\"path\":\"") || !Str(e.path) || !Lit(",\"stage\":\"") || !Loc(e.stage) ||
          !IsStage(*e.stage)) {
        return false;
      }
      if (Lit(",\"by\":") && !Who(e.by)) return false;
      if (Lit(",\"kind\":\"") && !Str(e.kind)) return false;
    } else if (Lit("transition\"")) {
      e.type = EntryType::kTransition;
      if (!Lit(",\"from\":\"") || !Loc(e.from) || !Lit(",\"to\":\"") || !Loc(e.to)) return false;
      if (Lit(",\"by\":") && !Who(e.by)) return false;
      if (Lit(",\"reason\":\"") && !Str(e.reason)) return false;
      if (Lit(",\"gate\":") && !GateOf(e.gate.emplace())) return false;
    } else if (Lit("created\"")) {
      e.type = EntryType::kCreated;
      if (!Lit(",\"by\":") || !Who(e.by)) return false;
      if (Lit(",\"parent\":\"") && !Str(e.parent)) return false;
      if (Lit(",\"serviceClass\":\"")) {
        std::string_view sc;
        if (!Str(sc)) return false;
        e.service_class = ParseServiceClass(sc);
        if (!e.service_class) return false;
      }
    } else if (Lit("abandoned\"")) {
      e.type = EntryType::kAbandoned;
      if (!Lit(",\"by\":") || !Who(e.by) || !Lit(",\"reason\":\"") || !Str(e.reason) ||
          IsBlank(*e.reason)) {
        return false;
      }
    } else if (Lit("archived\"")) {
      e.type = EntryType::kArchived;
      if (!ByAndReason(e)) return false;
    } else if (Lit("restored\"")) {
      e.type = EntryType::kRestored;
      if (!ByAndReason(e)) return false;
    } else if (Lit("claim-expired\"")) {
      e.type = EntryType::kClaimExpired;
      if (!Lit(",\"previousOwner\":") || !Who(e.previous_owner) || !Lit(",\"by\":") || !Who(e.by)) {
        return false;
      }
    } else {
      return false;
    }
    return Lit("}");
  }

  const char* p_;
  const char* end_;
};

OrderedJson EncodeActor(const Actor& a) {
  OrderedJson j = OrderedJson::object();
  j["kind"] = a.kind;
  if (a.name) j["name"] = *a.name;
  if (a.session) j["session"] = *a.session;
  return j;
}

OrderedJson EncodeChecks(const std::vector<GateCheck>& checks) {
  OrderedJson out = OrderedJson::array();
  for (const GateCheck& c : checks) {
    OrderedJson check = OrderedJson::object();
    check["by"] = EncodeActor(c.by);
    check["verdict"] = "allowed";
    if (c.summary) check["summary"] = *c.summary;
    out.push_back(std::move(check));
  }
  return out;
}

std::string Quoted(Location l) { return "\"" + std::string(LocationName(l)) + "\""; }

// What the state keeps of an entry's optional string: a copy of a JournalEntry's, or of an
// EntryView's view.
const std::optional<std::string>& Own(const std::optional<std::string>& s) { return s; }
std::optional<std::string> Own(const std::optional<std::string_view>& s) {
  if (!s) return std::nullopt;
  return std::string(*s);
}

// The fold rules of foldJournal (reference §1.7) for one more entry (a JournalEntry, or an
// EntryView when the state keeps no entries). The state's revision is the number of entries
// folded so far (revisions are contiguous from 1). When the state keeps entries the caller has
// placed this one at the end of `state.entries` (decoded in place: no temporary moved in).
// Every Fail comes before the first change to `state`, so on a refusal the caller pops that
// entry and `state` is as it was before it.
// `pinned`: an EntryView's strings lie in bytes pinned in `state.record_bytes`, so a record
// views them; otherwise (and always for a JournalEntry's own strings) the record's strings are
// copied into `state.record_bytes`.
template <class E>
void FoldOne(CardState& state, const E& entry, bool pinned) {
  const int64_t index = state.stage_revision;
  // Worded only when a rule refuses the entry.
  auto rev = [&entry] { return std::to_string(entry.rev); };
  if (entry.rev != index + 1) {
    Fail("journal entry " + std::to_string(index + 1) + " carries rev " + rev() +
         "; revisions must be contiguous from 1");
  }
  if (index == 0) {
    if (entry.type != EntryType::kCreated) Fail("journal entry 1 must be \"created\"");
    state.stage = Location::kDraft;
    state.parent = Own(entry.parent);
    state.service_class = entry.service_class.value_or(ServiceClass::kStandard);
    state.created_at = entry.at;
  } else {
    if (state.abandoned) {
      Fail("journal entry rev " + rev() + " follows an abandoned card; abandoning is terminal");
    }
    if (state.archived && entry.type != EntryType::kRestored) {
      Fail("journal entry rev " + rev() + " is \"" + std::string(EntryTypeName(entry.type)) +
           "\" on an archived card; only \"restored\" may follow archiving");
    }
    switch (entry.type) {
      case EntryType::kCreated:
        Fail("journal entry rev " + rev() + " repeats \"created\"");
      case EntryType::kTransition: {
        if (!entry.from || !entry.to) Fail("transition rev " + rev() + " lacks \"from\" or \"to\"");
        if (*entry.from != state.stage) {
          Fail("transition rev " + rev() + " departs from " + Quoted(*entry.from) +
               " but the card is at " + Quoted(state.stage));
        }
        if (*entry.to == state.stage) {
          Fail("transition rev " + rev() + " does not move the card (already at " +
               Quoted(*entry.to) + ")");
        }
        if (*entry.to == Location::kBlocked) {
          state.blocked_from = *entry.from;
        } else if (state.stage == Location::kBlocked) {
          if (!state.blocked_from || *entry.to != *state.blocked_from) {
            Fail("transition rev " + rev() + " recovers to " + Quoted(*entry.to) +
                 " but the card blocked from " +
                 (state.blocked_from ? Quoted(*state.blocked_from) : std::string("\"\"")));
          }
          state.blocked_from.reset();
        }
        state.stage = *entry.to;
        break;
      }
      case EntryType::kArtifact:
        if (!entry.stage || !IsStage(*entry.stage) || entry.path.empty()) {
          Fail("artifact rev " + rev() + " lacks a path or a stage");
        }
        {
          auto keep = [&](std::string_view s) {
            if constexpr (std::is_same_v<E, EntryView>) {
              if (pinned) return s;
            }
            return state.record_bytes.Keep(s);
          };
          ArtifactRecord& record = state.artifact_records.emplace_back();  // built in place
          record.path = keep(entry.path);
          if (entry.kind) record.kind.emplace(keep(*entry.kind));
          record.rev = entry.rev;
          record.stage = *entry.stage;
        }
        break;
      case EntryType::kAbandoned:
        state.abandoned = true;
        break;
      case EntryType::kArchived:
        if (state.stage != Location::kDone) {
          Fail("archived rev " + rev() + " files a card at " + Quoted(state.stage) +
               "; only a done card is archived");
        }
        state.archived = true;
        break;
      case EntryType::kRestored:
        if (!state.archived) Fail("restored rev " + rev() + " returns a card that is not archived");
        state.archived = false;
        break;
      case EntryType::kClaimExpired:
        break;
    }
  }
  state.stage_revision = entry.rev;
  // An EntryView's `at` is set by its caller once the run of viewed lines ends (FoldLines):
  // the state's copy is made once, not once a line.
  if constexpr (!std::is_same_v<E, EntryView>) state.updated_at = entry.at;
}

std::string StripJsonExceptionPrefix(std::string what) {
  // "[json.exception.parse_error.101] parse error at line 1, column 9: …" → "parse error at …"
  if (!what.empty() && what[0] == '[') {
    size_t close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
  }
  return what;
}

}  // namespace

std::string_view EntryTypeName(EntryType t) {
  switch (t) {
    case EntryType::kCreated:
      return "created";
    case EntryType::kTransition:
      return "transition";
    case EntryType::kArtifact:
      return "artifact";
    case EntryType::kAbandoned:
      return "abandoned";
    case EntryType::kArchived:
      return "archived";
    case EntryType::kRestored:
      return "restored";
    case EntryType::kClaimExpired:
      return "claim-expired";
  }
  return "created";
}

std::string EncodeJournalLine(const JournalEntry& e) {
  OrderedJson j = OrderedJson::object();
  j["rev"] = e.rev;
  j["at"] = e.at;
  j["type"] = std::string(EntryTypeName(e.type));
  switch (e.type) {
    case EntryType::kCreated:
      if (e.by) j["by"] = EncodeActor(*e.by);
      if (e.parent) j["parent"] = *e.parent;
      if (e.service_class && *e.service_class != ServiceClass::kStandard) {
        j["serviceClass"] = std::string(ServiceClassName(*e.service_class));
      }
      break;
    case EntryType::kTransition:
      if (e.from) j["from"] = std::string(LocationName(*e.from));
      if (e.to) j["to"] = std::string(LocationName(*e.to));
      if (e.by) j["by"] = EncodeActor(*e.by);
      if (e.reason) j["reason"] = *e.reason;
      if (e.gate && (e.gate->approved_by || !e.gate->checks.empty())) {
        OrderedJson gate = OrderedJson::object();
        if (e.gate->approved_by) gate["approvedBy"] = EncodeActor(*e.gate->approved_by);
        if (!e.gate->checks.empty()) gate["checks"] = EncodeChecks(e.gate->checks);
        j["gate"] = std::move(gate);
      }
      break;
    case EntryType::kArtifact:
      j["path"] = e.path;
      if (e.stage) j["stage"] = std::string(LocationName(*e.stage));
      if (e.by) j["by"] = EncodeActor(*e.by);
      if (e.kind) j["kind"] = *e.kind;
      break;
    case EntryType::kAbandoned:
      if (e.by) j["by"] = EncodeActor(*e.by);
      if (e.reason) j["reason"] = *e.reason;
      break;
    case EntryType::kArchived:
    case EntryType::kRestored:
      if (e.by) j["by"] = EncodeActor(*e.by);
      if (e.reason) j["reason"] = *e.reason;
      break;
    case EntryType::kClaimExpired:
      if (e.previous_owner) j["previousOwner"] = EncodeActor(*e.previous_owner);
      if (e.by) j["by"] = EncodeActor(*e.by);
      break;
  }
  return j.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

namespace {

// DecodeJournalLine for a line outside the store's shape (StoreShape above).
Result<JournalEntry> DecodeGeneral(std::string_view line) {
  // The lite path: a line in the plain subset the stores write, which the decoder accepts
  // (reused node storage, strings viewed in place). Anything else goes the full way below.
  {
    thread_local std::vector<LiteNode> nodes;
    try {
      const LiteNode* top = LiteParser::Parse(line, nodes);
      return DecodeEntry(*top);
    } catch (const NotLite&) {
    } catch (const DecodeError&) {
    }
  }
  if (JsonNestingDepth(line) > kMaxJsonDepth) {
    return Status::Error("corrupt", "the line nests deeper than " + std::to_string(kMaxJsonDepth) +
                                        " levels; no journal entry does");
  }
  // JSON.parse refuses a byte-order mark (nlohmann would skip it), and reads what
  // readFile decoded: U+FFFD for ill-formed bytes, lone surrogate escapes kept (as U+FFFD here).
  if (line.substr(0, 3) == "\xEF\xBB\xBF") {
    return Status::Error("corrupt", "invalid JSON: a byte-order mark starts the line");
  }
  const std::string text = JsonTextAsJsReadsIt(line);
  Json value;
  try {
    value = Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    return Status::Error("corrupt", "invalid JSON: " + StripJsonExceptionPrefix(e.what()));
  }
  try {
    return DecodeEntry(value);
  } catch (const DecodeError& e) {
    return Status::Error("corrupt", e.problem);
  } catch (const Json::exception& e) {
    return Status::Error("corrupt", StripJsonExceptionPrefix(e.what()));
  }
}

// One line into `e` (default-constructed): the store's shape in one pass, else the general
// paths, which word every refusal.
Status DecodeInto(std::string_view line, JournalEntry& e) {
  if (StoreShape::Decode(line, e)) return Status::Ok();
  auto general = DecodeGeneral(line);
  if (!general.ok()) return general.status();
  e = std::move(*general);
  return Status::Ok();
}

}  // namespace

Result<JournalEntry> DecodeJournalLine(std::string_view line) {
  JournalEntry e;
  if (Status s = DecodeInto(line, e); !s.ok()) return s;
  return e;
}

bool DecodeStoreShapedLine(std::string_view line, JournalEntry& e) {
  return StoreShape::Decode(line, e);
}

namespace {

// The number of '\n' in `s` (memchr runs many bytes a step; std::count ran one).
size_t CountLines(std::string_view s) {
  size_t n = 0;
  for (const char* p = s.data(); const void* hit = std::memchr(p, '\n', s.data() + s.size() - p);
       p = static_cast<const char*>(hit) + 1) {
    ++n;
  }
  return n;
}

// The fold loop of FoldJournal from byte `start` (a line start). A line's number is counted
// only when a message names it (the '\n' before it, plus one), so a fold of the lines appended
// since a known prefix never walks the prefix. A state that keeps entries decodes each line
// straight into its slot at the end of `state.entries`; one that keeps only the state decodes a
// line in the store's shape into views of the bytes (nothing allocated but what the state
// keeps), any other line into a JournalEntry by the same decoders. Either way a line refused
// by the decoder or the fold leaves nothing of it in `state` (FoldJournalFrom's contract).
Status FoldLines(std::string_view path, std::string_view content, size_t start, CardState& state,
                 bool pinned) {
  auto line_no = [&](size_t line_start) { return CountLines(content.substr(0, line_start)) + 1; };
  const bool keep_entries = state.keeps == FoldKeeps::kEntries;
  auto refused_by_fold = [&](const DecodeError& e, size_t line_start) {
    // A fold error concerns the stream, so it is reported against the file; the line is
    // appended because blank lines make entry numbers and line numbers differ.
    return Status::Error("corrupt", std::string(path) + ": " + e.problem + " (line " +
                                        std::to_string(line_no(line_start)) + ")");
  };
  std::string_view viewed_at;  // `at` of the last line folded as a view, not yet in the state
  auto settle_at = [&] {
    if (viewed_at.data() != nullptr) state.updated_at = viewed_at;
    viewed_at = {};
  };
  // One view for every line: only the fields the fold rules read and a line may leave out are
  // cleared before each decode (value-initialising the whole view was ~60 instructions a
  // line). The actors, reason and gate a line may carry are decoded (so checked) into it and
  // never read: the decoder emplaces each before writing into it, so nothing of an earlier
  // line is taken for this one's.
  EntryView view;
  while (start <= content.size()) {
    const size_t line_start = start;
    if (!keep_entries) {
      view.parent.reset();
      view.service_class.reset();
      view.from.reset();
      view.to.reset();
      view.path = {};
      view.stage.reset();
      view.kind.reset();
      size_t end = 0;
      if (StoreShape::DecodeAt(content, start, view, end)) {
        start = end + 1;
        try {
          FoldOne(state, view, pinned);
        } catch (const DecodeError& e) {
          settle_at();
          return refused_by_fold(e, line_start);
        }
        viewed_at = view.at;
        continue;
      }
      settle_at();
    }
    size_t end = content.find('\n', start);
    if (end == std::string_view::npos) end = content.size();
    std::string_view line = content.substr(start, end - start);
    start = end + 1;
    if (IsBlank(line)) continue;
    JournalEntry scratch;
    JournalEntry& entry = keep_entries ? state.entries.emplace_back() : scratch;
    if (Status s = DecodeInto(line, entry); !s.ok()) {
      if (keep_entries) state.entries.pop_back();
      std::string fix;
      if (end == content.size()) {
        // A last line without its line end is what a writer that stopped mid-append leaves
        // (a crash, a full disk before the durable append existed; trial12): say how to cut it.
        fix =
            "; it is the file's last line and has no line end: a writer stopped in the middle "
            "of an append (a crash or a full disk). With no writer running, cut it off (truncate "
            "-s " +
            std::to_string(line_start) + " " + std::string(path) +
            ") and check the card with devflow-gate audit";
      }
      return Status::Error(
          "corrupt",
          std::string(path) + ":" + std::to_string(line_no(line_start)) + ": " + s.message() + fix);
    }
    try {
      FoldOne(state, entry, false);
    } catch (const DecodeError& e) {
      if (keep_entries) state.entries.pop_back();
      return refused_by_fold(e, line_start);
    }
  }
  settle_at();
  if (state.stage_revision == 0) {
    return Status::Error("corrupt", std::string(path) +
                                        ": journal is empty; every card starts with a "
                                        "\"created\" entry");
  }
  return Status::Ok();
}

}  // namespace

namespace {

// FoldJournal of `content`, whose bytes `state.record_bytes` pins when `pinned`.
Result<CardState> FoldWhole(std::string_view path, std::string_view content, CardState state,
                            bool pinned) {
  // No regrowth moving every entry; a line that decodes is at least 32 bytes, so blank lines
  // cannot make this reserve more than the content's size warrants.
  if (state.keeps == FoldKeeps::kEntries) {
    state.entries.reserve(std::min(CountLines(content), content.size() / 32) + 1);
  }
  // Nor one moving every artifact record (~120 instructions a line of a 10,000-line journal):
  // a line that registers an artifact is at least 63 bytes with its line end
  // ({"rev":2,"at":"t","type":"artifact","path":"x","stage":"done"}: `at` and `path` are not
  // empty), so this is at least the number of records the content can hold; it costs at most
  // one record (56 bytes: its strings are views) per 63 bytes of journal.
  static_assert(sizeof(ArtifactRecord) <= 56);
  state.artifact_records.reserve(content.size() / 63 + 1);
  if (Status s = FoldLines(path, content, 0, state, pinned); !s.ok()) return s;
  return state;
}

}  // namespace

Result<CardState> FoldJournal(std::string_view path, std::string_view content, FoldKeeps keeps) {
  CardState state;
  state.keeps = keeps;
  return FoldWhole(path, content, std::move(state), false);
}

Result<CardState> FoldJournal(std::string_view path, std::shared_ptr<const FileBytes> bytes,
                              FoldKeeps keeps) {
  CardState state;
  state.keeps = keeps;
  const std::string_view content = bytes->view();
  state.record_bytes.Pin(std::move(bytes));
  return FoldWhole(path, content, std::move(state), true);
}

Status FoldJournalFrom(std::string_view path, std::string_view content, size_t offset,
                       CardState& state) {
  return FoldLines(path, content, offset, state, false);
}

RecordBytes& RecordBytes::operator=(const RecordBytes& other) {
  if (this != &other) {
    held_ = other.held_;
    free_ = nullptr;  // the chunks are shared now: later copies go to a chunk of this one's own
    left_ = 0;
    next_chunk_ = 256;
  }
  return *this;
}

RecordBytes::RecordBytes(RecordBytes&& other) noexcept
    : held_(std::move(other.held_)),
      free_(std::exchange(other.free_, nullptr)),
      left_(std::exchange(other.left_, 0)),
      next_chunk_(std::exchange(other.next_chunk_, 256)) {
  other.held_.clear();
}

RecordBytes& RecordBytes::operator=(RecordBytes&& other) noexcept {
  if (this != &other) {
    held_ = std::move(other.held_);
    other.held_.clear();
    free_ = std::exchange(other.free_, nullptr);
    left_ = std::exchange(other.left_, 0);
    next_chunk_ = std::exchange(other.next_chunk_, 256);
  }
  return *this;
}

void RecordBytes::Pin(std::shared_ptr<const void> bytes) { held_.push_back(std::move(bytes)); }

std::string_view RecordBytes::Keep(std::string_view s) {
  if (s.size() > left_) {
    const size_t size = std::max(s.size(), next_chunk_);
    next_chunk_ = std::min<size_t>(next_chunk_ * 2, 64 << 10);
    std::unique_ptr<char[]> chunk(new char[size]);
    free_ = chunk.get();
    left_ = size;
    held_.emplace_back(std::move(chunk));
  }
  if (!s.empty()) std::memcpy(free_, s.data(), s.size());
  const std::string_view kept(free_, s.size());
  free_ += s.size();
  left_ -= s.size();
  return kept;
}

Status ApplyEntry(CardState& state, const JournalEntry& entry) {
  // Round-trip through the line codec first: an entry the decoder would refuse (an empty
  // optional string, an unknown actor kind, a blank abandon reason) must never be appended.
  auto decoded = DecodeJournalLine(EncodeJournalLine(entry));
  if (!decoded.ok()) return decoded.status();
  try {
    // FoldOne refuses before it changes anything.
    FoldOne(state, *decoded, false);
  } catch (const DecodeError& e) {
    return Status::Error("corrupt", e.problem);
  }
  if (state.keeps == FoldKeeps::kEntries) state.entries.push_back(std::move(*decoded));
  return Status::Ok();
}

namespace {
// EncodeActor(actor)'s compact dump, written as text (issue 8: an answer's checks went through
// an ordered_json per decision); tests/store/journal_text_test.cc holds the two equal.
void AppendActorJson(std::string& out, const Actor& actor) {
  out += "{\"kind\":";
  AppendJsonString(out, actor.kind);
  if (actor.name) {
    out += ",\"name\":";
    AppendJsonString(out, *actor.name);
  }
  if (actor.session) {
    out += ",\"session\":";
    AppendJsonString(out, *actor.session);
  }
  out += '}';
}
}  // namespace

std::string EncodeActorJson(const Actor& actor) {
  std::string out;
  AppendActorJson(out, actor);
  return out;
}

std::string EncodeChecksJson(const std::vector<GateCheck>& checks) {
  std::string out = "[";
  for (const GateCheck& c : checks) {
    if (out.size() > 1) out += ',';
    out += "{\"by\":";
    AppendActorJson(out, c.by);
    out += ",\"verdict\":\"allowed\"";
    if (c.summary) {
      out += ",\"summary\":";
      AppendJsonString(out, *c.summary);
    }
    out += '}';
  }
  out += ']';
  return out;
}

}  // namespace devflow
