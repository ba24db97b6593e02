// core/manifests/claims.h: the one rule for plugin files that claim the same thing.
//
// Two kinds of claim can collide:
//  * a name and version: two files carry the same plugin name (case-insensitive) and
//    version;
//  * a key a template names: every plugin claims its name, its aliases and, for a
//    "<x>-executor-plugin", "<x>" (lower-cased; only its highest version's aliases count).
//    A key claimed by two plugins (an alias both declare, or one's alias equal to the
//    other's name) is a conflict.
//
// Without an incumbent (`plugins list`, `validate`, `run`, and the first generation of
// `serve`) nobody may take over: both files of a name and version are refused, and a
// conflicting key routes to neither, with a message naming every claimant's file.
//
// With an incumbent (the catalog `serve` served from until this change), what served
// keeps serving: the file that served a name and version keeps it and the newcomer file
// is refused; the plugin that a key reached keeps it, a newcomer's alias claim is refused
// (the plugin still serves under its other keys), and a newcomer whose *name* is the key
// is refused as a whole, since it could not be reached by name. A conflict nobody held
// before routes to neither, as without an incumbent.
//
// Thread-safety: decideClaims() is a pure function of its arguments.
#ifndef PLUGBOARD_CORE_MANIFESTS_CLAIMS_H_
#define PLUGBOARD_CORE_MANIFESTS_CLAIMS_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "core/manifests/catalog.h"

namespace plugboard::core {

struct Claims {
  // The usable entries, sorted by name (case-insensitive), then version, highest first.
  std::vector<CatalogEntry> entries;
  std::vector<CatalogProblem> problems;    // files refused here
  std::vector<CatalogConflict> conflicts;  // sorted by key
  // lower-cased key -> lower-cased name of the plugin it reaches
  std::unordered_map<std::string, std::string> routes;
};

Claims decideClaims(std::vector<CatalogEntry> entries, const Catalog* incumbent);

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_MANIFESTS_CLAIMS_H_
