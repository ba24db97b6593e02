#include "core/manifests/claims.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "core/base/text.h"

namespace plugboard::core {
namespace fs = std::filesystem;
namespace {

using NameVersion = std::pair<std::string, std::string>;

NameVersion nameVersion(const CatalogEntry& e) {
  return {toLower(e.manifest.name), e.manifest.version.text()};
}

// Files that carry the same name and version: the incumbent's file keeps it, or none does.
void refuseDuplicates(std::vector<CatalogEntry>& entries, const Catalog* incumbent,
                      std::vector<CatalogProblem>& problems) {
  std::map<NameVersion, std::vector<std::size_t>> claims;
  for (std::size_t i = 0; i < entries.size(); ++i) claims[nameVersion(entries[i])].push_back(i);
  std::map<NameVersion, fs::path> served;
  if (incumbent != nullptr) {
    for (const auto& e : incumbent->entries()) served.emplace(nameVersion(e), e.file);
  }
  std::vector<bool> refused(entries.size(), false);
  for (const auto& [key, idx] : claims) {
    if (idx.size() < 2) continue;
    const CatalogEntry* keeper = nullptr;
    if (auto it = served.find(key); it != served.end()) {
      for (std::size_t i : idx) {
        if (entries[i].file == it->second) keeper = &entries[i];
      }
    }
    for (std::size_t i : idx) {
      const CatalogEntry& e = entries[i];
      if (&e == keeper) continue;
      refused[i] = true;
      const std::string what = "plugin '" + e.manifest.name + "' " + key.second;
      if (keeper != nullptr) {
        problems.push_back(
            {e.file, what + " is already served from " + keeper->file.string() +
                         ", which keeps serving it; this file is not used: remove one"});
        continue;
      }
      std::vector<std::string> others;
      for (std::size_t j : idx) {
        if (j != i) others.push_back(entries[j].file.string());
      }
      problems.push_back({e.file, what + " is also provided by " + join(others) +
                                      "; neither file is used: remove one"});
    }
  }
  std::vector<CatalogEntry> kept;
  kept.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (!refused[i]) kept.push_back(std::move(entries[i]));
  }
  entries = std::move(kept);
}

struct Claim {
  std::string plugin;  // lower-cased name
  bool by_name = false;
  const CatalogEntry* entry = nullptr;  // the plugin's highest version
};

std::string describe(const Claim& c) {
  return (c.by_name ? "the name of plugin '" : "an alias of plugin '") + c.entry->manifest.name +
         "' (" + c.entry->file.string() + ")";
}

// Every key and the plugins that claim it. REQUIRES: `entries` sorted by name, then version
// from highest to lowest.
std::map<std::string, std::vector<Claim>> keyClaims(const std::vector<CatalogEntry>& entries) {
  std::map<std::string, std::vector<Claim>> out;
  std::string previous;
  for (const auto& e : entries) {
    std::string name = toLower(e.manifest.name);
    if (name == previous) continue;  // an older version: its aliases do not count
    previous = name;
    std::set<std::string> aliases;
    for (const auto& alias : e.manifest.aliases) aliases.insert(toLower(alias));
    if (name.ends_with(kLegacyKeySuffix))
      aliases.insert(name.substr(0, name.size() - kLegacyKeySuffix.size()));
    aliases.erase(name);
    out[name].push_back({name, true, &e});
    for (const auto& alias : aliases) out[alias].push_back({name, false, &e});
  }
  return out;
}

// The claim of `claims` that the incumbent's route for `key` goes to, or nullptr.
const Claim* heldBy(const std::string& key, const std::vector<Claim>& claims,
                    const Catalog* incumbent) {
  const std::string* holder = incumbent != nullptr ? incumbent->holderOf(key) : nullptr;
  if (holder == nullptr) return nullptr;
  for (const auto& c : claims) {
    if (c.plugin == *holder) return &c;
  }
  return nullptr;
}

// Newcomers whose name is a key another plugin already holds: refused as a whole.
void refuseTakenNames(std::vector<CatalogEntry>& entries, const Catalog* incumbent,
                      std::vector<CatalogProblem>& problems) {
  if (incumbent == nullptr) return;
  std::map<std::string, std::string> refused;  // plugin -> why
  for (const auto& [key, claims] : keyClaims(entries)) {
    if (claims.size() < 2) continue;
    const Claim* kept = heldBy(key, claims, incumbent);
    if (kept == nullptr) continue;
    for (const auto& c : claims) {
      if (&c == kept || !c.by_name) continue;
      refused.emplace(c.plugin, "plugin '" + c.entry->manifest.name + "' is not used: '" + key +
                                    "' is already " + describe(*kept) +
                                    ", which keeps it; rename the plugin or remove the alias");
    }
  }
  if (refused.empty()) return;
  std::erase_if(entries, [&](const CatalogEntry& e) {
    auto it = refused.find(toLower(e.manifest.name));
    if (it == refused.end()) return false;
    problems.push_back({e.file, it->second});
    return true;
  });
}

}  // namespace

Claims decideClaims(std::vector<CatalogEntry> entries, const Catalog* incumbent) {
  Claims out;
  refuseDuplicates(entries, incumbent, out.problems);
  std::sort(entries.begin(), entries.end(), [](const CatalogEntry& a, const CatalogEntry& b) {
    const std::string la = toLower(a.manifest.name), lb = toLower(b.manifest.name);
    if (la != lb) return la < lb;
    return a.manifest.version > b.manifest.version;
  });
  refuseTakenNames(entries, incumbent, out.problems);

  for (const auto& [key, claims] : keyClaims(entries)) {
    if (claims.size() == 1) {
      out.routes.emplace(key, claims.front().plugin);
      continue;
    }
    CatalogConflict conflict;
    conflict.key = key;
    if (const Claim* kept = heldBy(key, claims, incumbent)) {
      out.routes.emplace(key, kept->plugin);
      conflict.holder = kept->plugin;
      conflict.files.push_back(kept->entry->file);
      std::vector<std::string> refused;
      for (const auto& c : claims) {
        if (&c == kept) continue;
        conflict.files.push_back(c.entry->file);
        refused.push_back(describe(c));
      }
      conflict.message = "'" + key + "' stays " + describe(*kept) + "; the claim as " +
                         join(refused, " and as ") + " is refused";
    } else {
      std::vector<std::string> all;
      for (const auto& c : claims) {
        conflict.files.push_back(c.entry->file);
        all.push_back(describe(c));
      }
      conflict.message = "'" + key + "' is " + join(all, " and ") +
                         "; it routes to neither until only one plugin claims it";
    }
    out.conflicts.push_back(std::move(conflict));
  }
  out.entries = std::move(entries);
  return out;
}

}  // namespace plugboard::core
