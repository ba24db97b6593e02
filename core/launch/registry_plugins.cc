#include "core/launch/registry_plugins.h"

#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <set>
#include <utility>

#include <spdlog/spdlog.h>

#include "core/base/text.h"

namespace plugboard::core {
namespace fs = std::filesystem;
namespace {

constexpr int kMaxPackageFiles = 1000;

std::string fileState(const fs::path& p) {
  struct stat st {};
  if (::stat(p.c_str(), &st) != 0) return p.string() + " missing";
  return p.string() + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) +
         "." + std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_ino);
}

// The files an artifact's content is in: its "path", or for {"module", "path"} the module's
// file under path (a package: its .py files). Empty for artifacts without files (images).
std::vector<fs::path> artifactFiles(const Json& artifact) {
  if (!artifact.is_object()) return {};
  const auto path = artifact.find("path");
  if (path == artifact.end() || !path->is_string()) return {};
  const fs::path base = path->get<std::string>();
  const auto module = artifact.find("module");
  if (module == artifact.end() || !module->is_string()) return {base};
  std::string relative = module->get<std::string>();
  std::replace(relative.begin(), relative.end(), '.', '/');
  const fs::path file = base / (relative + ".py");
  std::error_code ec;
  if (!fs::is_directory(base / relative, ec)) return {file};
  std::vector<fs::path> files;
  for (fs::recursive_directory_iterator it(base / relative, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().extension() == ".py" && it->is_regular_file(ec)) files.push_back(it->path());
    if (files.size() >= kMaxPackageFiles) break;
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

RegistryPlugins::RegistryPlugins(Launcher& launcher, fs::path file, Registry registry)
    : launcher_(launcher),
      file_(std::move(file)),
      registry_(std::move(registry)),
      registry_state_(registryState()) {}

std::string RegistryPlugins::registryState() const { return fileState(file_); }

void RegistryPlugins::reloadRegistry() {
  registry_state_ = registryState();
  auto next = Registry::load(file_, launcher_.options().trust);
  if (!next) {
    registry_error_ = next.error().message() + " (the registry as read before stays in use)";
    spdlog::error("{}", registry_error_);
    return;
  }
  registry_ = std::move(*next);
  registry_error_.clear();
  spdlog::info("{}: registry read again", file_.string());
}

std::vector<fs::path> RegistryPlugins::watchedDirs() const {
  std::set<fs::path> dirs = {fs::absolute(file_).parent_path()};
  for (const auto& entry : registry_.entries()) {
    for (const auto& [kind, artifact] : entry.artifacts) {
      for (const auto& f : artifactFiles(artifact)) dirs.insert(fs::absolute(f).parent_path());
    }
  }
  return {dirs.begin(), dirs.end()};
}

namespace {

struct Wanted {
  std::string name;  // lower case
  std::string label;
  Expected<LaunchTarget> target = Error("");
  std::string key;
};

// The plugins of `registry` to serve: the highest version of each name that `present`
// does not hold, with their deployer and a key that changes with their files.
std::vector<Wanted> wanted(const Registry& registry, const Launcher& launcher,
                           const std::set<std::string>* present) {
  std::vector<Wanted> out;
  std::set<std::string> seen;
  for (const auto& entry : registry.entries()) {  // by name, highest version first
    const std::string name = toLower(entry.name);
    if (!seen.insert(name).second || (present != nullptr && present->count(name))) continue;
    Wanted w{name, entry.name + "@" + entry.version.text(),
             launcher.place(entry, "", Json::object()), ""};
    if (w.target) {
      w.key = w.target->deployer->label + "\n" + w.target->kind + "\n" + w.target->artifact.dump() +
              "\n" + w.target->options.dump();
      for (const auto& f : artifactFiles(w.target->artifact)) w.key += "\n" + fileState(f);
      w.target->revision = w.key;
    } else {
      w.key = "error: " + w.target.error().message();
    }
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace

bool polledByRegistry(const LaunchTarget& target) {
  auto polled = target.artifact.find("polled");
  return polled != target.artifact.end() && polled->is_boolean() && polled->get<bool>();
}

std::vector<CatalogEntry> pollOnlyEntries(const Registry& registry, const Launcher& launcher,
                                          const Catalog& catalog) {
  std::set<std::string> present;
  for (const auto& e : catalog.entries()) present.insert(toLower(e.manifest.name));
  std::vector<CatalogEntry> out;
  for (auto& w : wanted(registry, launcher, &present)) {
    if (!w.target || !polledByRegistry(*w.target)) continue;
    const auto files = artifactFiles(w.target->artifact);
    for (const auto& entry : registry.entries()) {
      if (entry.name + "@" + entry.version.text() != w.label) continue;
      out.push_back(Launcher::pollEntryFor(entry, files.empty() ? fs::path() : files.front()));
      break;
    }
  }
  return out;
}

bool RegistryPlugins::changed() {
  if (registryState() != registry_state_) return true;
  std::map<std::string, std::string> keys;
  for (auto& w : wanted(registry_, launcher_, nullptr)) keys[w.name] = w.key;
  for (const auto& [name, key] : keys_) {
    if (auto it = keys.find(name); it != keys.end() && it->second != key) return true;
  }
  return false;
}

void RegistryPlugins::addEntries(std::vector<CatalogEntry>& entries, PluginSources& sources,
                                 std::vector<CatalogProblem>& problems) {
  if (registryState() != registry_state_) reloadRegistry();
  if (!registry_error_.empty()) problems.push_back({file_, registry_error_, true});
  std::set<std::string> present;
  for (const auto& e : entries) present.insert(toLower(e.manifest.name));

  std::map<std::string, Started> now;
  std::map<std::string, std::string> keys;
  for (auto& w : wanted(registry_, launcher_, &present)) {
    keys[w.name] = w.key;
    Started previous;
    if (auto it = started_.find(w.name); it != started_.end()) previous = it->second;
    Started s = previous;
    if (previous.key != w.key) {  // new or changed: start it
      s.key = w.key;
      s.deployer = w.target ? w.target->deployer->manifest.name : std::string();
      s.polled = w.target && polledByRegistry(*w.target);
      s.plugin = w.target ? launcher_.start(*w.target)
                          : Error("plugin " + w.label + ": " + w.target.error().message());
      if (s.plugin && toLower((*s.plugin)->handle->manifest().name) != w.name) {
        s.plugin = Error(w.target->describe() + ": its manifest names it '" +
                         (*s.plugin)->handle->manifest().name + "'");
      }
      if (s.plugin) {
        spdlog::info("started {} for serving", w.target->describe());
      } else {
        spdlog::error("{}", s.plugin.error().message());
      }
    }
    const auto files = w.target ? artifactFiles(w.target->artifact) : std::vector<fs::path>();
    const fs::path where = files.empty() ? file_ : files.front();
    if (!s.plugin) {
      problems.push_back(
          {where,
           s.plugin.error().message() +
               (previous.plugin ? " (the version started before keeps serving)" : ""),
           /*from_registry=*/true});
      if (previous.plugin) s = previous;  // tried again when something changes
    }
    if (s.plugin) {
      CatalogEntry entry;
      entry.manifest = (*s.plugin)->handle->manifest();
      // Polled only when its artifact says so; then as its own manifest says.
      if (!s.polled) entry.manifest.polled = false;
      entry.file = where;
      entry.label = entry.manifest.name + "@" + entry.manifest.version.text();
      sources.add(entry, PluginSource::startedBy(*s.plugin, s.deployer));
      entries.push_back(std::move(entry));
    }
    now.emplace(w.name, std::move(s));
  }
  keys_ = std::move(keys);
  std::map<std::string, Started> old;
  old.swap(started_);
  started_ = std::move(now);
  // `old` ends here: plugins no generation holds any more stop now, the others when the
  // generations that hold them are gone.
}

}  // namespace plugboard::core
