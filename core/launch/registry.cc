#include "core/launch/registry.h"

#include <algorithm>

#include <toml++/toml.h>

#include "core/manifests/manifest.h"
#include "core/base/text.h"
#include "core/base/toml_json.h"

namespace plugboard::core {
namespace {

std::string where(const std::filesystem::path& file, const toml::source_region& src) {
  return file.string() + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column) + ": ";
}


}  // namespace

Expected<Registry> Registry::parse(std::string_view text, const std::filesystem::path& file) {
  toml::table root;
  try {
    root = toml::parse(text, file.string());
  } catch (const toml::parse_error& e) {
    return Error(where(file, e.source()) + "TOML syntax error: " + std::string(e.description()));
  }
  Registry registry;
  for (auto&& [key, node] : root) {
    if (key.str() != "plugins") {
      return Error(where(file, key.source()) + "'" + std::string(key.str()) +
                   "' is not a registry key (expected plugins)");
    }
    const auto* plugins = node.as_table();
    if (plugins == nullptr) return Error(where(file, node.source()) + "'plugins' must be a table");
    for (auto&& [name, versions_node] : *plugins) {
      const std::string plugin(name.str());
      if (!isValidPluginName(plugin)) return Error(where(file, name.source()) + "'" + plugin + "' is not a valid plugin name");
      const auto* versions = versions_node.as_table();
      if (versions == nullptr) {
        return Error(where(file, versions_node.source()) + "plugins." + plugin + " must be a table of versions");
      }
      for (auto&& [version_key, artifacts_node] : *versions) {
        auto version = Version::parse(version_key.str());
        if (!version) return Error(where(file, version_key.source()) + "plugins." + plugin + ": " + version.error().message());
        const auto* artifacts = artifacts_node.as_table();
        if (artifacts == nullptr || artifacts->empty()) {
          return Error(where(file, artifacts_node.source()) + plugin + "@" + version->text() +
                       " must be a table of artifacts by deployer kind, e.g. native = \"x.so\"");
        }
        RegistryEntry entry{plugin, *version, {}};
        for (auto&& [kind, artifact] : *artifacts) {
          if (const auto* path = artifact.as_string()) {
            std::filesystem::path p(path->get());
            if (p.is_relative()) p = file.parent_path() / p;
            entry.artifacts[std::string(kind.str())] = Json{{"path", p.lexically_normal().string()}};
          } else if (artifact.is_table()) {
            Json table = tomlToJson(artifact);
            if (auto it = table.find("path"); it != table.end() && it->is_string()) {
              std::filesystem::path p(it->get<std::string>());
              if (p.is_relative()) *it = (file.parent_path() / p).lexically_normal().string();
            }
            entry.artifacts[std::string(kind.str())] = std::move(table);
          } else {
            return Error(where(file, artifact.source()) + plugin + "@" + version->text() + ": artifact '" +
                         std::string(kind.str()) + "' must be a path or a table");
          }
        }
        registry.entries_.push_back(std::move(entry));
      }
    }
  }
  registry.sortEntries();
  return registry;
}

void Registry::sortEntries() {
  std::stable_sort(entries_.begin(), entries_.end(), [](const RegistryEntry& a, const RegistryEntry& b) {
    const std::string la = toLower(a.name), lb = toLower(b.name);
    return la != lb ? la < lb : a.version > b.version;
  });
}

void Registry::add(std::vector<RegistryEntry> entries) {
  for (auto& e : entries) entries_.push_back(std::move(e));
  sortEntries();
}

Expected<Registry> Registry::load(const std::filesystem::path& file, const TrustPolicy& trust) {
  auto text = readTrustedFile(file, trust, "registry file");
  if (!text) return text.error();
  return parse(*text, file);
}

RegistryEntry Registry::withPluginFile(const CatalogEntry& plugin,
                                      const std::filesystem::path& file) const {
  RegistryEntry entry{plugin.manifest.name, plugin.manifest.version, {}};
  const std::string wanted = toLower(plugin.manifest.name);
  for (const auto& e : entries_) {
    if (toLower(e.name) == wanted && e.version == plugin.manifest.version) {
      entry.artifacts = e.artifacts;
      break;
    }
  }
  entry.artifacts["native"] = Json{{"path", file.string()}};
  return entry;
}

Expected<RegistryEntry> Registry::resolve(const std::string& name, const std::string& version,
                                          const Catalog* catalog) const {
  const std::string wanted = toLower(name);
  std::vector<std::string> known;
  const RegistryEntry* listed = nullptr;  // the registry's highest match
  for (const auto& e : entries_) {
    if (toLower(e.name) != wanted) continue;
    known.push_back(e.version.text());
    if (listed == nullptr && (version.empty() || e.version.matchesPrefix(version))) listed = &e;
  }
  const CatalogEntry* found = catalog != nullptr ? catalog->find(name, version) : nullptr;
  if (found != nullptr && (listed == nullptr || !(found->manifest.version < listed->version))) {
    return withPluginFile(*found, found->file);
  }
  if (listed != nullptr) return *listed;
  const std::string spec = name + (version.empty() ? "" : "@" + version);
  if (!known.empty()) return Error("no version of '" + name + "' matches '" + version + "' (registered: " + join(known) + ")", Error::Code::kNotFound);
  return Error("'" + spec + "' is neither in the registry nor in the plugin directories", Error::Code::kNotFound);
}

}  // namespace plugboard::core
