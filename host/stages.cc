#include "host/stages.h"

#include <array>
#include <utility>

namespace devflow {
namespace {

constexpr std::array<std::pair<Location, std::string_view>, 8> kLocationNames{{
    {Location::kDraft, "draft"},
    {Location::kDesigning, "designing"},
    {Location::kReady, "ready"},
    {Location::kDeveloping, "developing"},
    {Location::kReviewing, "reviewing"},
    {Location::kTesting, "testing"},
    {Location::kDone, "done"},
    {Location::kBlocked, "blocked"},
}};

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// The base flow table of stages.ts (newest, service-class version, reference §1.4).
bool InBaseFlow(Location from, Location to) {
  using L = Location;
  switch (from) {
    case L::kDraft:
      return to == L::kDesigning;
    case L::kDesigning:
      return to == L::kReady;
    case L::kReady:
      return to == L::kDeveloping;
    case L::kDeveloping:
      return to == L::kReviewing || to == L::kDesigning;
    case L::kReviewing:
      return to == L::kTesting || to == L::kDeveloping || to == L::kDesigning;
    case L::kTesting:
      return to == L::kDone || to == L::kDeveloping || to == L::kDesigning;
    case L::kDone:
    case L::kBlocked:
      return false;
  }
  return false;
}

// Edges a service class adds on top of the base flow (a class never removes one).
bool InClassExtras(Location from, Location to, ServiceClass service_class) {
  using L = Location;
  switch (service_class) {
    case ServiceClass::kStandard:
      return false;
    case ServiceClass::kExpress:
      return (from == L::kDraft && to == L::kDeveloping) ||
             (from == L::kReviewing && to == L::kDone);
    case ServiceClass::kEmergency:
      return (from == L::kDraft && to == L::kDeveloping) ||
             (from == L::kDeveloping && to == L::kDone);
  }
  return false;
}

}  // namespace

std::string_view LocationName(Location l) {
  for (const auto& [loc, name] : kLocationNames) {
    if (loc == l) return name;
  }
  return "unknown";
}

std::optional<Location> ParseLocation(std::string_view name) {
  for (const auto& [loc, n] : kLocationNames) {
    if (n == name) return loc;
  }
  return std::nullopt;
}

bool IsStage(Location l) { return l != Location::kBlocked; }

std::string_view ServiceClassName(ServiceClass c) {
  switch (c) {
    case ServiceClass::kStandard:
      return "standard";
    case ServiceClass::kExpress:
      return "express";
    case ServiceClass::kEmergency:
      return "emergency";
  }
  return "standard";
}

std::optional<ServiceClass> ParseServiceClass(std::string_view name) {
  if (name == "standard") return ServiceClass::kStandard;
  if (name == "express") return ServiceClass::kExpress;
  if (name == "emergency") return ServiceClass::kEmergency;
  return std::nullopt;
}

std::string Edge::Name() const {
  std::string out(LocationName(from));
  out += "->";
  out += LocationName(to);
  return out;
}

std::optional<Edge> ParseEdge(std::string_view name) {
  size_t pos = name.find("->");
  if (pos == std::string_view::npos) return std::nullopt;
  if (name.find("->", pos + 2) != std::string_view::npos) return std::nullopt;
  auto from = ParseLocation(name.substr(0, pos));
  auto to = ParseLocation(name.substr(pos + 2));
  if (!from || !to) return std::nullopt;
  return Edge{*from, *to};
}

bool IsLegalTransition(Location from, Location to, std::optional<Location> blocked_from,
                       ServiceClass service_class) {
  if (from == to) return false;
  if (from == Location::kBlocked) return blocked_from.has_value() && to == *blocked_from;
  if (to == Location::kBlocked) return from != Location::kDone;
  return InBaseFlow(from, to) || InClassExtras(from, to, service_class);
}

bool IsReworkEdge(Location from, Location to) {
  using L = Location;
  if (to == L::kDesigning) {
    return from == L::kDeveloping || from == L::kReviewing || from == L::kTesting;
  }
  if (to == L::kDeveloping) return from == L::kReviewing || from == L::kTesting;
  return false;
}

bool IsValidKind(std::string_view kind) {
  if (kind.empty() || !IsLowerAlnum(kind[0])) return false;
  for (char c : kind) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

bool IsValidSlug(std::string_view slug) { return IsValidKind(slug); }

bool IsValidCardId(std::string_view id) {
  size_t i = 0;
  while (i < id.size() && id[i] >= '0' && id[i] <= '9') ++i;
  if (i == 0 || i >= id.size() || id[i] != '-') return false;
  return IsValidSlug(id.substr(i + 1));
}

std::string SlugFromTitle(std::string_view title) {
  // JS toLowerCase() maps exactly two non-ASCII code points onto ASCII letters: U+0130 (İ →
  // "i" + U+0307) and U+212A (Kelvin sign → "k"); every other non-ASCII byte becomes a dash.
  std::string lowered;
  for (size_t i = 0; i < title.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(title[i]);
    if (c >= 'A' && c <= 'Z') {
      lowered += static_cast<char>(c - 'A' + 'a');
    } else if (title.substr(i, 2) == "\xC4\xB0") {
      lowered += "i-";
      i += 1;
    } else if (title.substr(i, 3) == "\xE2\x84\xAA") {
      lowered += 'k';
      i += 2;
    } else {
      lowered += static_cast<char>(c);
    }
  }
  std::string slug;
  bool pending_dash = false;
  for (char c : lowered) {
    if (IsLowerAlnum(c)) {
      if (pending_dash && !slug.empty()) slug += '-';
      pending_dash = false;
      slug += c;
    } else {
      pending_dash = true;
    }
  }
  if (slug.size() > 48) slug.resize(48);
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug.empty() ? "card" : slug;
}

}  // namespace devflow
