// The devflow state machine: locations, edges, legality, rework, service classes, and the
// id / slug / kind grammars. Source: reference/devflow-upstream.md §1.2, §1.4, §1.5, §1.8
// (stages.ts, newest service-class version).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace devflow {

/// A card location: the seven stages in flow order plus the parking place `blocked`
/// (which is not a stage).
enum class Location {
  kDraft,
  kDesigning,
  kReady,
  kDeveloping,
  kReviewing,
  kTesting,
  kDone,
  kBlocked
};

/// "draft", …, "done", "blocked".
std::string_view LocationName(Location l);
/// Parses a location name; nullopt for anything else (case-sensitive).
std::optional<Location> ParseLocation(std::string_view name);
/// True for the seven stages, false for kBlocked.
bool IsStage(Location l);

/// `standard` (default), `express`, `emergency`; a class only ever adds edges.
enum class ServiceClass { kStandard, kExpress, kEmergency };
std::string_view ServiceClassName(ServiceClass c);
std::optional<ServiceClass> ParseServiceClass(std::string_view name);

/// An edge `<from>-><to>` between two locations.
struct Edge {
  Location from;
  Location to;
  /// "designing->ready".
  std::string Name() const;
  bool operator==(const Edge&) const = default;
};
/// Splits on the literal "->" into exactly two valid location names; nullopt otherwise.
/// Does not check legality (upstream key validation, §1.4).
std::optional<Edge> ParseEdge(std::string_view name);

/// isLegalTransition (§1.4): same location illegal; from blocked only to `blocked_from`;
/// to blocked from anything but done; otherwise the base flow table plus class extras.
bool IsLegalTransition(Location from, Location to, std::optional<Location> blocked_from,
                       ServiceClass service_class);

/// isReworkEdge (§1.4): → designing from developing/reviewing/testing, → developing from
/// reviewing/testing. Such a move needs a reason (`reason-required`).
bool IsReworkEdge(Location from, Location to);

/// Kind grammar `^[a-z0-9][a-z0-9-]*$` (artifact kinds; also the slug grammar).
bool IsValidKind(std::string_view kind);
/// Slug grammar, identical to the kind grammar.
bool IsValidSlug(std::string_view slug);
/// Card directory grammar `^[0-9]+-[a-z0-9][a-z0-9-]*$`.
bool IsValidCardId(std::string_view id);
/// Slug derived from a title (§1.2): lowercase, runs of non-[a-z0-9] → one dash, trim dashes,
/// cut to 48, trim trailing dashes again; empty → "card".
std::string SlugFromTitle(std::string_view title);

}  // namespace devflow
