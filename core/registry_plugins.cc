#include "core/registry_plugins.h"

#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <set>
#include <utility>

#include <spdlog/spdlog.h>

#include "core/step_plugins.h"
#include "core/text.h"

namespace plugboard::core {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kLoadPathPrefix = "registry:";
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

// A started plugin shared by the catalog entries of several generations. Call ids are the
// shared handle's, so that two wrappers never use one id at once.
class SharedHandle : public PluginHandle {
 public:
  explicit SharedHandle(std::shared_ptr<PluginHandle> inner) : inner_(std::move(inner)) {}
  const Manifest& manifest() const override { return inner_->manifest(); }
  Outcome callText(std::string_view request, std::uint64_t call_id) override {
    const std::uint64_t id = inner_->newCallId();
    {
      std::lock_guard lock(mu_);
      ids_[call_id] = id;
    }
    Outcome outcome = inner_->callText(request, id);
    std::lock_guard lock(mu_);
    ids_.erase(call_id);
    return outcome;
  }
  void cancel(std::uint64_t call_id) override {
    std::uint64_t id = 0;
    {
      std::lock_guard lock(mu_);
      auto it = ids_.find(call_id);
      if (it == ids_.end()) return;
      id = it->second;
    }
    inner_->cancel(id);
  }

 private:
  const std::shared_ptr<PluginHandle> inner_;
  std::mutex mu_;
  std::map<std::uint64_t, std::uint64_t> ids_;  // our call id -> the shared handle's
};

}  // namespace

RegistryPlugins::RegistryPlugins(DeployerSet& deployers, fs::path file, Registry registry,
                                 std::map<std::string, Config::Deploy> chosen)
    : deployers_(deployers),
      file_(std::move(file)),
      registry_(std::move(registry)),
      registry_state_(registryState()),
      chosen_(std::move(chosen)) {}

std::string RegistryPlugins::registryState() const { return fileState(file_); }

void RegistryPlugins::reloadRegistry() {
  registry_state_ = registryState();
  auto next = Registry::load(file_);
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
  Expected<StepTarget> target = Error("");
  std::string key;
};

// The plugins of `registry` to serve: the highest version of each name that `present`
// does not hold, with their deployer and a key that changes with their files.
std::vector<Wanted> wanted(const Registry& registry, const DeployerSet& deployers,
                           const std::map<std::string, Config::Deploy>& chosen,
                           const std::set<std::string>* present) {
  std::vector<Wanted> out;
  std::set<std::string> seen;
  for (const auto& entry : registry.entries()) {  // by name, highest version first
    const std::string name = toLower(entry.name);
    if (!seen.insert(name).second || (present != nullptr && present->count(name))) continue;
    const auto it = chosen.find(name);
    Wanted w{name, entry.name + "@" + entry.version.text(),
             chooseTarget(deployers, entry, it == chosen.end() ? "" : it->second.deployer,
                          it == chosen.end() ? Json::object() : it->second.options),
             ""};
    if (w.target) {
      w.key = w.target->deployer->label + "\n" + w.target->kind + "\n" + w.target->artifact.dump() +
              "\n" + w.target->options.dump();
      for (const auto& f : artifactFiles(w.target->artifact)) w.key += "\n" + fileState(f);
    } else {
      w.key = "error: " + w.target.error().message();
    }
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace

bool RegistryPlugins::changed() {
  if (registryState() != registry_state_) return true;
  std::map<std::string, std::string> keys;
  for (auto& w : wanted(registry_, deployers_, chosen_, nullptr)) keys[w.name] = w.key;
  for (const auto& [name, key] : keys_) {
    if (auto it = keys.find(name); it != keys.end() && it->second != key) return true;
  }
  return false;
}

void RegistryPlugins::addEntries(std::vector<CatalogEntry>& entries,
                                 std::vector<CatalogProblem>& problems) {
  if (registryState() != registry_state_) reloadRegistry();
  if (!registry_error_.empty()) problems.push_back({file_, registry_error_});
  std::set<std::string> present;
  for (const auto& e : entries) present.insert(toLower(e.manifest.name));

  std::map<std::string, Started> now;
  std::map<std::string, std::string> keys;
  for (auto& w : wanted(registry_, deployers_, chosen_, &present)) {
    keys[w.name] = w.key;
    if (!w.target) {
      problems.push_back({file_, "plugin " + w.label + ": " + w.target.error().message()});
      continue;
    }
    Started previous;
    {
      std::lock_guard lock(mu_);
      if (auto it = started_.find(w.name); it != started_.end()) previous = it->second;
    }
    Started s = previous;
    if (previous.key != w.key) {  // new or changed: start it
      s = Started{w.key, nullptr, ""};
      auto module = deployers_.module(*w.target->deployer);
      auto handle = module ? (*module)->open(w.target->artifact, w.target->options)
                           : Expected<std::unique_ptr<PluginHandle>>(module.error());
      if (!handle) {
        s.error = handle.error().message();
      } else if (toLower((*handle)->manifest().name) != w.name) {
        s.error = "its manifest names it '" + (*handle)->manifest().name + "'";
      } else {
        s.handle = std::shared_ptr<PluginHandle>(std::move(*handle));
        spdlog::info("started {} for serving", w.target->describe());
      }
      if (!s.error.empty()) spdlog::error("cannot start {}: {}", w.target->describe(), s.error);
    }
    const auto files = artifactFiles(w.target->artifact);
    const fs::path where = files.empty() ? file_ : files.front();
    if (!s.error.empty()) {
      problems.push_back(
          {where, "cannot start " + w.target->describe() + ": " + s.error +
                      (previous.handle ? " (the version started before keeps serving)" : "")});
      if (previous.handle) s = previous;  // tried again when something changes
    }
    if (s.handle) {
      CatalogEntry e;
      e.manifest = s.handle->manifest();
      e.file = where;
      e.label = e.manifest.name + "@" + e.manifest.version.text();
      e.load_path = std::string(kLoadPathPrefix) + w.name + "/" +
                    std::to_string(std::hash<std::string>{}(s.key));
      e.keep = s.handle;
      entries.push_back(std::move(e));
    }
    now.emplace(w.name, std::move(s));
  }
  keys_ = std::move(keys);
  std::map<std::string, Started> old;
  {
    std::lock_guard lock(mu_);
    old.swap(started_);
    started_ = std::move(now);
  }
  // `old` ends here: plugins no generation holds any more stop now, the others when the
  // generations that hold them are gone.
}

std::optional<std::unique_ptr<PluginHandle>> RegistryPlugins::open(
    const CatalogEntry& entry) const {
  if (!entry.load_path.string().starts_with(kLoadPathPrefix) || !entry.keep) return std::nullopt;
  auto shared = std::static_pointer_cast<PluginHandle>(std::const_pointer_cast<void>(entry.keep));
  return std::unique_ptr<PluginHandle>(std::make_unique<SharedHandle>(std::move(shared)));
}

}  // namespace plugboard::core
