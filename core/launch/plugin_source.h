// core/launch/plugin_source.h: where the plugin of a catalog entry comes from.
//
// The catalog (core/manifests/catalog.h) knows manifests; this knows what the launcher
// loads or calls for each entry:
//   * a plugin file: loaded from its private copy (core/manifests/plugin_mirror.h), which
//     the source holds, or from the installed file itself (one-shot commands);
//   * a plugin already started (serve's plugins known only to the registry,
//     core/launch/registry_plugins.h): the source holds it, with its deployer's name;
//   * a registry artifact not started yet (a poll-only entry of the one-shot commands):
//     placed and started at its first poll.
// PluginSources maps a generation's entries to their sources; the dispatcher made for that
// catalog holds it, so a copy or a started plugin lives exactly as long as a generation (or
// a plugin started from it) holds it. Value types; a built PluginSources is immutable.
#ifndef PLUGBOARD_CORE_LAUNCH_PLUGIN_SOURCE_H_
#define PLUGBOARD_CORE_LAUNCH_PLUGIN_SOURCE_H_

#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>

#include "core/launch/plugin_handle.h"
#include "core/manifests/catalog.h"
#include "core/manifests/held_file.h"

namespace plugboard::core {

struct PluginSource {
  enum class Kind { kFile, kStarted, kRegistry };
  Kind kind = Kind::kFile;
  std::shared_ptr<const HeldFile> copy;    // kFile: its private copy; null: the file itself
  std::shared_ptr<StartedPlugin> started;  // kStarted
  std::string deployer;                    // kStarted: the deployer it was started through

  static PluginSource file(std::shared_ptr<const HeldFile> copy = nullptr) {
    return {Kind::kFile, std::move(copy), nullptr, {}};
  }
  static PluginSource startedBy(std::shared_ptr<StartedPlugin> plugin, std::string deployer) {
    return {Kind::kStarted, nullptr, std::move(plugin), std::move(deployer)};
  }
  static PluginSource registry() { return {Kind::kRegistry, nullptr, nullptr, {}}; }

  // The file a plugin file's plugin is loaded from: its copy, else `entry`'s file.
  const std::filesystem::path& loadPath(const CatalogEntry& entry) const {
    return copy ? copy->path() : entry.file;
  }
  // What tells one source from another across generations: a reload keeps the started
  // plugin of an entry whose source is the same.
  std::string identity(const CatalogEntry& entry) const {
    switch (kind) {
      case Kind::kFile:
        return "file " + loadPath(entry).string();
      case Kind::kStarted:
        return "started " + std::to_string(reinterpret_cast<std::uintptr_t>(started.get()));
      case Kind::kRegistry:
        break;
    }
    return "registry " + entry.label;
  }
};

// The sources of one catalog's entries. An entry without one is a plugin file loaded from
// where it is installed.
class PluginSources {
 public:
  void add(const CatalogEntry& entry, PluginSource source) {
    by_entry_.insert_or_assign(keyOf(entry), std::move(source));
  }
  const PluginSource& of(const CatalogEntry& entry) const {
    static const PluginSource kInstalledFile;
    auto it = by_entry_.find(keyOf(entry));
    return it == by_entry_.end() ? kInstalledFile : it->second;
  }

 private:
  // Unique within a catalog: two entries of one name and version have different files.
  static std::string keyOf(const CatalogEntry& entry) {
    return entry.label + "\n" + entry.file.string();
  }
  std::unordered_map<std::string, PluginSource> by_entry_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_LAUNCH_PLUGIN_SOURCE_H_
