#include "core/launch/launcher.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <set>

#include <spdlog/spdlog.h>

#include "core/base/text.h"
#include "core/manifests/file_handle.h"
#include "core/manifests/trust.h"
#include "plugboard/abi.h"
#include "plugboard/host/artifact.h"
#include "plugboard/host/module.h"
#include "plugboard/host/sha256.h"

namespace plugboard::core {
namespace {

// What identifies an artifact's content: the SHA-256 of its file when it names one (so a
// changed file is a different plugin), else the artifact itself.
std::string artifactDigest(const Json& artifact) {
  if (auto p = artifact.find("path"); p != artifact.end() && p->is_string()) {
    const int fd = ::open(p->get_ref<const std::string&>().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      auto digest = host::sha256File(fd);
      ::close(fd);
      if (digest) return "sha256:" + host::hexOf(*digest);
    }
  }
  return artifact.dump();
}

// The artifact a deployer receives: the registry's, with the plugin it belongs to and the
// ceiling of what it may start.
Json withPlugin(const LaunchTarget& target, const ContainmentPolicy& containment) {
  Json artifact = target.artifact;
  if (artifact.is_object()) {
    artifact[host::kPluginMember] = target.plugin;
    artifact[host::kContainmentMember] = host::toJson(containment.forKind(target.kind));
  }
  return artifact;
}

// The file or directory a non-native artifact names, as the trust rules and pins see it;
// what the deployer finds inside (modules, interpreters) it checks itself with the same
// rules. A path that does not exist is left to the deployer to report.
Status checkArtifactFile(const RegistryEntry& entry, const std::string& kind,
                         const std::string& file, const TrustPolicy& trust) {
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(file, ec);
  if (ec || !std::filesystem::exists(status)) return Status::Ok();
  auto opened = host::openTrusted(file, trust.rules());
  if (!opened) return opened.error();
  struct stat st {};
  ::fstat(opened->fd.get(), &st);
  const TrustPolicy::Pin* pin = findPin(entry.name, entry.version.text(), trust);
  if (S_ISDIR(st.st_mode) && pin != nullptr) {
    return Error("plugin '" + entry.name + "' is pinned ('" + pin->first + "'), but its " + kind +
                     " artifact is a directory, not one file whose SHA-256 could be checked",
                 Error::Code::kUntrusted);
  }
  if (S_ISDIR(st.st_mode)) return Status::Ok();
  return checkPin(opened->fd.get(), entry.name, entry.version.text(), file, trust);
}

// A native plugin's file, opened and checked once more where it is loaded from: the
// deployer gets "/proc/self/fd/N" of the checked descriptor, so a path changed since
// placement cannot slip another file in. Its manifest section must still be `expected`
// (when known) and its pin must hold. The descriptor is kept with the started plugin.
struct CheckedNative {
  Json artifact;
  std::shared_ptr<const HeldFile> file;
};
Expected<CheckedNative> openNative(const LaunchTarget& target, const TrustPolicy& trust) {
  const std::string path = target.artifact.value("path", "");
  auto opened = host::openTrusted(path, trust.rules());
  if (!opened) return host::refusal(path, opened.error()).error();
  auto read = readPluginManifest(opened->fd.get(), path, trust);
  if (!read) return host::refusal(path, read.error()).error();
  if (target.expected && !sameManifest(read->manifest, *target.expected)) {
    return Error(path + ": the plugin file changed since it was read; run again",
                 Error::Code::kUntrusted);
  }
  auto file = HeldFile::open(std::move(opened->fd));
  CheckedNative out{target.artifact, nullptr};
  out.artifact["path"] = file->path().string();
  out.artifact["file"] = path;  // as named, for the deployer's messages
  out.file = std::move(file);
  return out;
}

std::string searched(const DeployerSet& deployers) {
  std::vector<std::string> dirs;
  for (const auto& d : deployers.dirs()) dirs.push_back(d.string());
  return "(deployer directories: " + join(dirs) +
         "; set --deployers DIR or deployer_dirs in the config)";
}

}  // namespace

struct LaunchSlot {
  std::mutex mu;                                                         // held while starting
  bool tried = false;                                                    // keep_started:
  Expected<std::shared_ptr<StartedPlugin>> kept = Error("not started");  // the outcome
  std::weak_ptr<StartedPlugin> live;                                     // otherwise; under mu
};

std::string LaunchTarget::describe() const {
  return "plugin " + plugin + " through deployer '" + deployer->manifest.name + "' (" + kind +
         " artifact)";
}

Launcher::Launcher(std::shared_ptr<DeployerSet> deployers, std::shared_ptr<const Registry> registry,
                   LaunchOptions options)
    : deployers_(std::move(deployers)),
      registry_(std::move(registry)),
      options_(std::move(options)) {}

Expected<LaunchTarget> Launcher::place(const RegistryEntry& entry, const std::string& deployer,
                                       const Json& options) const {
  return placeEntry(entry, deployer, options, nullptr);
}

Expected<LaunchTarget> Launcher::placeEntry(const RegistryEntry& entry,
                                            const std::string& deployer_name,
                                            const Json& step_options, const Manifest* known,
                                            bool apart, bool from_workflow) const {
  const std::string plugin = entry.name + "@" + entry.version.text();
  std::string name = deployer_name;
  Json options = step_options;
  bool configured = false;
  bool for_every_plugin = false;  // [deploy] "*": used where that deployer has an artifact
  if (name.empty()) {
    auto it = options_.placement.find(toLower(entry.name));
    if (it == options_.placement.end()) {
      it = options_.placement.find("*");
      for_every_plugin = it != options_.placement.end();
    }
    if (it != options_.placement.end()) {
      name = it->second.deployer;
      options = it->second.options;
      configured = true;
    }
  }
  std::vector<std::string> kinds;
  for (const auto& [kind, _] : entry.artifacts) kinds.push_back(kind);
  auto pick = [&](const CatalogEntry& deployer) -> std::optional<LaunchTarget> {
    for (const auto& kind : deployer.manifest.deploys) {
      if (auto a = entry.artifacts.find(kind); a != entry.artifacts.end()) {
        return LaunchTarget{&deployer, plugin, kind, a->second, options, nullptr, {}, nullptr};
      }
    }
    return std::nullopt;
  };

  std::optional<LaunchTarget> target;
  if (!name.empty()) {
    const CatalogEntry* deployer = deployers_->find(name);
    if (deployer == nullptr && configured) {
      return Error("plugin '" + entry.name + "' is configured to run through deployer '" + name +
                   "', which is not installed " + searched(*deployers_));
    }
    if (deployer == nullptr) {
      std::vector<std::string> names;
      for (const auto& e : deployers_->catalog().entries()) names.push_back(e.manifest.name);
      return Error("no deployer '" + name + "' (installed deployers: " + join(names) + ")");
    }
    // A step's options are refused by what they are, whatever the plugin's artifacts.
    if (from_workflow && !configured) {
      if (Status st = checkDeployerOptions(deployer->manifest, options, true); !st)
        return st.error();
    }
    target = pick(*deployer);
    if (target) {
      if (Status st = checkDeployerOptions(deployer->manifest, target->options,
                                           from_workflow && !configured);
          !st)
        return st.error();
    } else if (for_every_plugin) {
      // Not a plugin that deployer can run: the default order places it.
      options = Json::object();
      name.clear();
    } else {
      return Error("deployer '" + deployer->manifest.name + "' deploys " +
                   join(deployer->manifest.deploys, " or ") + " artifacts, and plugin " + plugin +
                   " has only: " + join(kinds));
    }
  }
  if (name.empty()) {
    // The default order: the first deployer, by priority, that has an artifact for it.
    const CatalogEntry* passed_over = nullptr;  // in-process, for a poll in a server
    for (const CatalogEntry* deployer : deployers_->inOrder()) {
      if (apart && deployer->manifest.in_process) {
        if (passed_over == nullptr && pick(*deployer)) passed_over = deployer;
        continue;
      }
      if ((target = pick(*deployer))) break;
    }
    if (!target && passed_over != nullptr) {
      const std::string& in_process = passed_over->manifest.name;
      return Error("plugin " + plugin + " is not started for a poll: its deployer '" + in_process +
                   "' would run it inside this server, where a plugin the request did not name "
                   "must not be able to crash it, and no installed deployer runs it apart; "
                   "[deploy] " + entry.name + " = \"" + in_process + "\" allows it on purpose");
    }
    if (!target && kinds == std::vector<std::string>{"native"}) {
      return Error("plugin '" + entry.name +
                   "' needs a deployer of native plugins, and none is installed " +
                   searched(*deployers_));
    }
    if (!target) {
      return Error("no installed deployer deploys any artifact of plugin " + plugin +
                   " (it has: " + join(kinds) + ")");
    }
  }
  if (known != nullptr && target->kind == "native") {
    target->expected = std::make_shared<const Manifest>(*known);
    return std::move(*target);
  }
  const auto path = target->artifact.find("path");
  if (path == target->artifact.end() || !path->is_string()) {
    // Nothing here to digest: a pin cannot be honoured, so it refuses.
    if (const TrustPolicy::Pin* pin = findPin(entry.name, entry.version.text(), options_.trust)) {
      return Error("plugin " + plugin + " is pinned ('" + pin->first + "'), but its " +
                       target->kind + " artifact names no file whose SHA-256 could be checked",
                   Error::Code::kUntrusted);
    }
    return std::move(*target);
  }
  const std::string file = path->get<std::string>();
  if (target->kind == "native") {
    // A plugin file named by the registry is checked as one in a plugin directory.
    auto read = readPluginFile(file, options_.trust);
    if (!read) return host::refusal(file, read.error()).error();
    target->expected = std::make_shared<const Manifest>(std::move(read->manifest));
  } else if (Status st = checkArtifactFile(entry, target->kind, file, options_.trust); !st) {
    return host::refusal(file, st).error();
  }
  return std::move(*target);
}

namespace {
// A plugin loaded from a private copy holds the copy, and each copy is a start of its own
// even when an earlier one, now gone, had the same path.
Expected<LaunchTarget> holdingCopy(Expected<LaunchTarget> target, const PluginSource& source) {
  struct stat st {};
  if (!target || target->kind != "native" || !source.copy ||
      ::stat(source.copy->path().c_str(), &st) != 0)
    return target;
  target->copy = source.copy;
  target->revision += "copy " + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  return target;
}
}  // namespace

RegistryEntry Launcher::asEntry(const CatalogEntry& entry, const PluginSource& source) const {
  static const Registry kNone;
  return (registry_ != nullptr ? *registry_ : kNone).withPluginFile(entry, source.loadPath(entry));
}

Expected<LaunchTarget> Launcher::place(const CatalogEntry& entry,
                                       const PluginSource& source) const {
  return holdingCopy(placeEntry(asEntry(entry, source), "", Json::object(), &entry.manifest),
                     source);
}

Status Launcher::unambiguous(const std::string& name, const std::string& version,
                             const Catalog* catalog, const std::string& deployer) const {
  if (!version.empty() || registry_ == nullptr) return Status::Ok();
  const CatalogEntry* chosen = deployer.empty() ? nullptr : deployers_->find(deployer);
  const std::string lowered = toLower(name);
  // Versions, highest first, with the artifact kinds each has.
  std::vector<std::pair<Version, std::set<std::string>>> versions;
  const auto kindsOf = [&](const Version& v) -> std::set<std::string>& {
    for (auto& [known, kinds] : versions) {
      if (known.text() == v.text()) return kinds;
    }
    return versions.emplace_back(v, std::set<std::string>()).second;
  };
  for (const auto& e : registry_->entries()) {
    if (toLower(e.name) != lowered) continue;
    auto& kinds = kindsOf(e.version);
    for (const auto& [kind, _] : e.artifacts) kinds.insert(kind);
  }
  if (versions.empty()) return Status::Ok();
  if (catalog != nullptr) {
    for (const auto& e : catalog->entries()) {
      if (toLower(e.manifest.name) == lowered) kindsOf(e.manifest.version).insert("native");
    }
  }
  if (chosen != nullptr) {  // the step's deployer runs only the versions of its kinds
    const auto& deploys = chosen->manifest.deploys;
    std::erase_if(versions, [&](const auto& v) {
      return std::none_of(v.second.begin(), v.second.end(), [&](const std::string& k) {
        return std::find(deploys.begin(), deploys.end(), k) != deploys.end();
      });
    });
  }
  // Versions sharing a kind are one plugin; so are the versions linked through them.
  std::vector<std::size_t> family(versions.size());
  for (std::size_t i = 0; i < versions.size(); ++i) family[i] = i;
  const auto root = [&](std::size_t i) {
    while (family[i] != i) i = family[i];
    return i;
  };
  for (std::size_t i = 0; i < versions.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const auto& a = versions[i].second;
      const auto& b = versions[j].second;
      if (std::any_of(a.begin(), a.end(), [&](const std::string& k) { return b.count(k) > 0; }))
        family[root(i)] = root(j);
    }
  }
  std::set<std::size_t> families;
  for (std::size_t i = 0; i < versions.size(); ++i) families.insert(root(i));
  if (families.size() < 2) return Status::Ok();
  std::sort(versions.begin(), versions.end(),
            [](const auto& a, const auto& b) { return b.first < a.first; });
  std::vector<std::string> listed;
  for (const auto& [v, kinds] : versions) {
    listed.push_back(name + "@" + v.text() + " (" +
                     join(std::vector<std::string>(kinds.begin(), kinds.end())) + ")");
  }
  return Error("plugin '" + name + "' is ambiguous: " + join(listed) +
               "; name one as NAME@VERSION");
}

Expected<LaunchTarget> Launcher::place(const PluginRef& ref, const Catalog* catalog) const {
  if (Status st = unambiguous(ref.name, ref.version, catalog, ref.deployer); !st)
    return st.error();
  // The registry's versions and the plugin directories' (one plugin where both have a
  // version: Registry::withPluginFile()).
  static const Registry kNone;
  auto entry = (registry_ != nullptr ? *registry_ : kNone).resolve(ref.name, ref.version, catalog);
  if (!entry && catalog != nullptr && catalog->conflictFor(ref.name) != nullptr) {
    return Error("plugin '" + ref.name +
                 "' is ambiguous: " + catalog->conflictFor(ref.name)->message);
  }
  if (!entry) return entry.error();
  // The manifest of a plugin directory's file, read already (trust checked) when the
  // entry's native artifact is that file.
  const CatalogEntry* found = catalog != nullptr ? catalog->find(ref.name, ref.version) : nullptr;
  const auto native = entry->artifacts.find("native");
  const bool from_directory = found != nullptr && native != entry->artifacts.end() &&
                              native->second.value("path", "") == found->file.string();
  return placeEntry(*entry, ref.deployer, ref.options, from_directory ? &found->manifest : nullptr,
                    false, ref.options_from_workflow);
}

std::shared_ptr<Launcher::Slot> Launcher::slotFor(const LaunchTarget& target) {
  const std::string as_written = target.deployer->label + "\n" + target.artifact.dump() + "\n" +
                                 target.options.dump() + "\n" + target.revision;
  {
    std::lock_guard lock(mu_);
    if (auto it = by_target_.find(as_written); it != by_target_.end()) {
      if (auto slot = it->second.lock()) return slot;
    }
  }
  const std::string key = target.deployer->label + "\n" + artifactDigest(target.artifact) + "\n" +
                          target.options.dump() + "\n" + target.revision;
  std::lock_guard lock(mu_);
  // Forget the slots nobody owns any more (serve: their plugins ended).
  std::erase_if(by_target_, [](const auto& kv) { return kv.second.expired(); });
  std::erase_if(slots_, [](const auto& kv) { return kv.second.expired(); });
  std::shared_ptr<Slot> slot = slots_[key].lock();
  if (!slot) {
    slot = std::make_shared<Slot>();
    slots_[key] = slot;
    if (options_.keep_started) kept_.push_back(slot);  // one-shot commands keep every start
  }
  by_target_[as_written] = slot;
  return slot;
}

Expected<std::shared_ptr<StartedPlugin>> Launcher::start(const LaunchTarget& target,
                                                         StartControl* control) {
  const std::shared_ptr<Slot> slot = slotFor(target);
  std::lock_guard lock(slot->mu);
  if (slot->tried) return slot->kept;
  if (auto live = slot->live.lock()) return live;
  if (control != nullptr && control->cancelled())
    return Error(target.describe() + ": cancelled before it started");

  Expected<std::shared_ptr<StartedPlugin>> result = Error("");
  // A native plugin not loaded from a private copy is loaded from its checked descriptor.
  LaunchTarget loading = target;
  Status checked = Status::Ok();
  if (target.kind == "native" && !target.copy && target.artifact.contains("path")) {
    auto opened = openNative(target, options_.trust);
    if (opened) {
      loading.artifact = std::move(opened->artifact);
      loading.copy = std::move(opened->file);
    } else {
      checked = Error(target.describe() + ": " + opened.error().message(), opened.error().code());
    }
  }
  auto module = deployers_->module(*target.deployer);
  if (!checked) {
    result = checked.error();
  } else if (!module) {
    result = module.error();
  } else if (auto handle = (*module)->open(withPlugin(loading, options_.containment),
                                           target.options, options_.trust.rules(), control);
             !handle) {
    result = Error(target.describe() + ": " + handle.error().message(), handle.error().code());
  } else if (target.expected && !sameManifest((*handle)->manifest(), *target.expected)) {
    result = Error(target.describe() + ": the manifest it reports differs from the one in its " +
                   PLUGBOARD_MANIFEST_SECTION + " section");
  } else {
    auto started = std::make_shared<StartedPlugin>();
    started->copy = loading.copy;
    if (!options_.keep_started) started->slot = slot;  // the plugin owns its slot
    started->handle = std::move(*handle);
    spdlog::info("started {}", target.describe());
    result = std::move(started);
  }
  // A start that failed because it was cancelled says nothing about the next one.
  const bool cancelled = !result && control != nullptr && control->cancelled();
  if (options_.keep_started && !cancelled) {
    slot->tried = true;
    slot->kept = result;
  } else if (result) {
    slot->live = *result;
  }
  return result;
}

bool Launcher::settled(const LaunchTarget& target) {
  const std::shared_ptr<Slot> slot = slotFor(target);
  std::lock_guard lock(slot->mu);
  return slot->tried || !slot->live.expired();
}

Expected<std::optional<Manifest>> Launcher::describe(const LaunchTarget& target,
                                                     StartControl* control,
                                                     std::optional<Millis> within,
                                                     AlarmClock* clock) {
  const Json deployer = Json::parse(target.deployer->manifest.text, nullptr, false);
  if (!deployer.is_object() || deployer.value("describes", false) != true)
    return std::optional<Manifest>();
  Expected<std::shared_ptr<StartedPlugin>> started = Error("");
  if ((control == nullptr && !within) || settled(target)) {
    started = start(target);
  } else {
    StartControl bounded;  // this start's: cancelled by `control` or at `within`
    if (control != nullptr) control->attach([&bounded] { bounded.cancel(); });
    {
      std::optional<StartDeadline> deadline;
      if (within) deadline.emplace(*clock, bounded, *within);
      started = start(target, &bounded);
    }
    if (control != nullptr) control->release();
  }
  if (!started) return started.error();
  return std::optional<Manifest>((*started)->handle->manifest());
}

CatalogEntry Launcher::pollEntryFor(const RegistryEntry& entry, std::filesystem::path file) {
  CatalogEntry e;
  e.manifest.kind = "executor";
  e.manifest.name = entry.name;
  e.manifest.version = entry.version;
  e.file = std::move(file);
  e.manifest.polled = true;  // made only for artifacts that say `polled = true`
  e.label = entry.name + "@" + entry.version.text();
  return e;
}

std::string Launcher::deployerOf(const CatalogEntry& entry, const PluginSource& source) const {
  if (source.kind == PluginSource::Kind::kStarted) return source.deployer;
  if (source.kind == PluginSource::Kind::kRegistry) {
    auto target = place(PluginRef{entry.manifest.name, entry.manifest.version.text(), "",
                                  Json::object()},
                        nullptr);
    return target ? target->deployer->manifest.name : std::string();
  }
  auto target = place(entry, source);
  return target ? target->deployer->manifest.name : std::string();
}

Expected<std::shared_ptr<StartedPlugin>> Launcher::open(const CatalogEntry& entry,
                                                        const PluginSource& source, bool polled) {
  // A poll in a server starts a plugin only with a deployer that runs it apart.
  const bool apart = polled && options_.isolate_polls;
  Expected<LaunchTarget> target = Error("");
  switch (source.kind) {
    case PluginSource::Kind::kStarted:
      return source.started;
    case PluginSource::Kind::kRegistry: {
      if (registry_ == nullptr) return Error("plugin " + entry.label + ": no registry");
      auto known = registry_->resolve(entry.manifest.name, entry.manifest.version.text());
      if (!known) return known.error();
      target = placeEntry(*known, "", Json::object(), nullptr, apart);
      break;
    }
    case PluginSource::Kind::kFile:
      target = holdingCopy(
          placeEntry(asEntry(entry, source), "", Json::object(), &entry.manifest, apart), source);
      break;
  }
  if (!target) return target.error();
  return start(*target);
}

}  // namespace plugboard::core
