#include "core/launch/deployer.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <set>

#include <spdlog/spdlog.h>

#include "core/base/duration.h"
#include "core/launch/module.h"
#include "plugboard/host/artifact.h"
#include "plugboard/host/options.h"
#include "core/base/text.h"

namespace plugboard::core {
namespace {

bool allOf(const Json& v, bool object, auto pred) {
  if (object ? !v.is_object() : !v.is_array()) return false;
  return std::all_of(v.begin(), v.end(), pred);
}

}  // namespace

Status checkDeployerOptions(const Manifest& deployer, const Json& options, bool from_workflow) {
  if (!options.is_object()) return Error("deployer options must be a table");
  for (const auto& [key, value] : options.items()) {
    auto spec = deployer.config.find(key);
    if (spec == deployer.config.end()) {
      std::vector<std::string> known;
      for (const auto& [k, _] : deployer.config.items()) known.push_back(k);
      return Error("deployer '" + deployer.name + "' has no option '" + key + "' (it takes: " + join(known) + ")");
    }
    if (from_workflow && !(spec->contains("step") && (*spec)["step"] == true)) {
      return Error("deployer '" + deployer.name + "' option '" + key +
                   "' may be set only in the configuration file ([deployers." + deployer.name +
                   "] or [deploy]), not by a workflow step: a workflow gets no more than a "
                   "container does");
    }
    const std::string type = spec->value("type", "");
    const auto isString = [](const Json& j) { return j.is_string(); };
    bool ok = false;
    if (type == "string") ok = value.is_string();
    if (type == "integer") ok = value.is_number_integer();
    if (type == "boolean") ok = value.is_boolean();
    if (type == "size") ok = host::parseSizeValue(value).ok();
    if (type == "duration") ok = value.is_string() && parseDuration(value.get<std::string>()).ok();
    if (type == "string-list") ok = allOf(value, false, isString);
    if (type == "string-map") ok = allOf(value, true, isString);
    if (type == "object") ok = value.is_object();
    if (!ok) {
      const std::string expected = type == "size"       ? "a size such as 256M or a number of bytes"
                                   : type == "duration" ? "a duration such as 30s"
                                   : type == "string-list" ? "a list of strings"
                                   : type == "string-map"  ? "a table of strings"
                                                           : "a " + type;
      return Error("deployer '" + deployer.name + "' option '" + key + "' must be " + expected + ", got " +
                   value.dump());
    }
  }
  return Status::Ok();
}

struct DeployerModule::Impl {
  detail::LoadedModule<plugboard_deployer_api> module;
  std::unique_ptr<host::HostServices> host;
  void* deployer = nullptr;
  std::string who;
  std::atomic<std::uint64_t> starts{0};  // ids of start()
  std::once_flag abandoned;

  // Whether the table holds ABI 1.1's members, and `member` among them is set.
  template <class Member>
  bool has(Member plugboard_deployer_api::*member) const {
    const plugboard_deployer_api* api = module.api;
    const auto end = reinterpret_cast<const char*>(&(api->*member)) + sizeof(Member);
    return end <= reinterpret_cast<const char*>(api) + api->struct_size && api->*member != nullptr;
  }
  bool cancellable() const {
    return has(&plugboard_deployer_api::start) && has(&plugboard_deployer_api::cancel_start);
  }
};

// A plugin started by a deployer. Keeps its module alive; closes its handle when dropped.
class DeployedPlugin : public PluginHandle {
 public:
  DeployedPlugin(std::shared_ptr<DeployerModule> module, const plugboard_deployer_api* api, void* handle,
                 Manifest manifest)
      : module_(std::move(module)), api_(api), handle_(handle), manifest_(std::move(manifest)) {}
  ~DeployedPlugin() override { api_->close(handle_); }

  const Manifest& manifest() const override { return manifest_; }
  const std::string& deployer() const override { return module_->name(); }

  Outcome callText(std::string_view request, std::uint64_t call_id) override {
    struct Response {
      std::optional<Outcome> outcome;
      const std::string* plugin;
    } response{std::nullopt, &manifest_.name};
    auto parse = [](void* ctx, const char* json, size_t len) {
      auto* r = static_cast<Response*>(ctx);
      r->outcome = parseOutcome(std::string_view(json, len), *r->plugin);
    };
    api_->execute(handle_, call_id, request.data(), request.size(), parse, &response);
    if (!response.outcome) {
      return Outcome::error("deployer '" + module_->name() + "' returned without a result for plugin '" +
                            manifest_.name + "'");
    }
    return std::move(*response.outcome);
  }

  void cancel(std::uint64_t call_id) override { api_->cancel(handle_, call_id); }

 private:
  std::shared_ptr<DeployerModule> module_;  // released last
  const plugboard_deployer_api* api_;
  void* handle_;
  Manifest manifest_;
};

DeployerModule::DeployerModule(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

DeployerModule::~DeployerModule() {
  if (impl_->deployer != nullptr) impl_->module.api->destroy(impl_->deployer);
}

const Manifest& DeployerModule::manifest() const { return impl_->module.manifest; }

Expected<std::shared_ptr<DeployerModule>> DeployerModule::load(const CatalogEntry& entry, const Json& config,
                                                               const TrustPolicy& trust) {
  auto impl = std::make_unique<Impl>();
  impl->who = "deployer '" + entry.manifest.name + "' (" + entry.file.string() + ")";
  auto opened = host::openTrusted(entry.file, trust.rules());
  if (!opened) return Error(impl->who + ": " + host::refusal(entry.file, opened.error()).error().message());
  auto read = readPluginManifest(opened->fd.get(), entry.file, trust, "deployer");
  if (!read) return Error(impl->who + ": " + read.error().message(), read.error().code());
  if (!sameManifest(read->manifest, entry.manifest)) {
    return Error(impl->who + ": the file changed since it was read; run again", Error::Code::kUntrusted);
  }
  // By its resolved path, not its descriptor: a deployer finds the files it ships with
  // (plugboard-host, the Python SDK) next to its own path. No link is left in that path and
  // every directory on it passed the checks, so only a trusted user can change what it names.
  auto module = detail::loadModule<plugboard_deployer_api>(opened->resolved, entry.manifest, impl->who,
                                                           host::kDeployerModule);
  if (!module) return module.error();
  const plugboard_deployer_api* api = module->api;
  if (api->create == nullptr || api->open == nullptr || api->execute == nullptr || api->cancel == nullptr ||
      api->close == nullptr || api->destroy == nullptr) {
    return Error(impl->who + ": API table has a null entry");
  }
  impl->module = std::move(*module);
  impl->host = detail::hostServices(entry.manifest.name);
  if (Status st = checkDeployerOptions(entry.manifest, config); !st) return st.error();
  const std::string text = config.dump();
  std::optional<std::string> error;
  impl->deployer = api->create(impl->host->abi(), text.data(), text.size(), &host::collectText, &error);
  if (impl->deployer == nullptr) {
    const std::string why = error ? parseOutcome(*error, entry.manifest.name).message : "no reason given";
    return Error("deployer '" + entry.manifest.name + "' is unavailable: " + why);
  }
  return std::shared_ptr<DeployerModule>(new DeployerModule(std::move(impl)));
}

Expected<std::unique_ptr<PluginHandle>> DeployerModule::open(const Json& artifact,
                                                             const Json& options,
                                                             const host::TrustRules& trust,
                                                             StartControl* control) {
  if (Status st = checkDeployerOptions(manifest(), options); !st) return st.error();
  Json as_given = artifact;  // in messages: as the registry gave it
  if (as_given.is_object()) as_given.erase(host::kPluginMember);
  const std::string artifact_text = as_given.dump();
  Json with_trust = artifact;
  if (with_trust.is_object()) with_trust[host::kTrustMember] = trust.toJson();
  const std::string sent_text = with_trust.dump();
  const std::string options_text = options.dump();
  std::optional<std::string> answer;
  const plugboard_deployer_api* api = impl_->module.api;
  void* handle = nullptr;
  if (control != nullptr && impl_->cancellable()) {
    const std::uint64_t id = ++impl_->starts;
    control->attach([api, deployer = impl_->deployer, id] { api->cancel_start(deployer, id); });
    handle = api->start(impl_->deployer, id, sent_text.data(), sent_text.size(), options_text.data(),
                        options_text.size(), &host::collectText, &answer);
    control->release();
  } else {
    handle = api->open(impl_->deployer, sent_text.data(), sent_text.size(), options_text.data(),
                       options_text.size(), &host::collectText, &answer);
  }
  if (handle == nullptr) {
    const std::string why = answer ? parseOutcome(*answer, name()).message : "no reason given";
    return Error("deployer '" + name() + "' could not start " + artifact_text + ": " + why);
  }
  auto manifest = parseManifest(answer ? *answer : "");
  std::string problem;
  if (!manifest) {
    problem = manifest.error().message();
  } else if (manifest->kind != "executor") {
    problem = "it is not a plugin (kind '" + manifest->kind + "')";
  }
  if (!problem.empty()) {
    api->close(handle);
    return Error("deployer '" + name() + "' started " + artifact_text + " but its manifest is invalid: " + problem);
  }
  return std::unique_ptr<PluginHandle>(
      std::make_unique<DeployedPlugin>(shared_from_this(), api, handle, std::move(*manifest)));
}

void DeployerModule::abandon() {
  if (!impl_->has(&plugboard_deployer_api::abandon)) return;
  std::call_once(impl_->abandoned, [&] { impl_->module.api->abandon(impl_->deployer); });
}

DeployerSet::DeployerSet(Catalog catalog, std::map<std::string, Json> configs) : configs_(std::move(configs)) {
  catalogs_.push_back(std::make_unique<Catalog>(std::move(catalog)));
}

DeployerSet::DeployerSet(std::vector<std::filesystem::path> dirs, TrustPolicy trust,
                         std::map<std::string, Json> configs)
    : DeployerSet(Catalog::scan(dirs, trust, "deployer"), std::move(configs)) {
  dirs_ = std::move(dirs);
  trust_ = std::move(trust);
  for (const auto& p : catalog().problems()) spdlog::warn("{}", p.oneLine());
}

const Catalog& DeployerSet::catalog() const {
  std::lock_guard lock(mu_);
  return *catalogs_.back();
}

std::string DeployerSet::identity(const CatalogEntry& entry) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(entry.file, ec);
  const auto mtime = std::filesystem::last_write_time(entry.file, ec).time_since_epoch().count();
  return entry.file.string() + "|" + std::to_string(size) + "|" + std::to_string(mtime) + "|" + entry.label;
}

bool DeployerSet::refresh() {
  if (dirs_.empty()) return false;
  auto next = std::make_unique<Catalog>(Catalog::scan(dirs_, trust_, "deployer"));
  std::lock_guard lock(mu_);
  const Catalog& before = *catalogs_.back();
  std::set<std::string> old_ids, new_ids;
  for (const auto& e : before.entries()) old_ids.insert(identity(e));
  for (const auto& e : next->entries()) new_ids.insert(identity(e));
  std::set<std::string> old_problems, new_problems;
  for (const auto& p : before.problems()) old_problems.insert(p.oneLine());
  for (const auto& p : next->problems()) new_problems.insert(p.oneLine());
  if (old_ids == new_ids && old_problems == new_problems) return false;
  for (const auto& e : next->entries()) {
    if (!old_ids.count(identity(e))) spdlog::info("{}: deployer {} is available", e.file.string(), e.label);
  }
  for (const auto& e : before.entries()) {
    if (!new_ids.count(identity(e))) spdlog::info("{}: deployer {} is gone", e.file.string(), e.label);
  }
  for (const auto& p : new_problems) {
    if (!old_problems.count(p)) spdlog::warn("{}", p);
  }
  catalogs_.push_back(std::move(next));
  return true;
}

const CatalogEntry* DeployerSet::find(const std::string& name) const { return catalog().find(name); }

std::vector<const CatalogEntry*> DeployerSet::inOrder() const {
  const Catalog& current = catalog();
  std::vector<const CatalogEntry*> out;
  for (const auto& e : current.entries()) {
    if (current.find(e.manifest.name) == &e) out.push_back(&e);  // the highest version only
  }
  std::stable_sort(out.begin(), out.end(), [](const CatalogEntry* a, const CatalogEntry* b) {
    if (a->manifest.priority != b->manifest.priority) return a->manifest.priority > b->manifest.priority;
    return a->manifest.name < b->manifest.name;
  });
  return out;
}

std::vector<const CatalogEntry*> DeployerSet::forKind(const std::string& kind) const {
  std::vector<const CatalogEntry*> out = inOrder();
  std::erase_if(out, [&](const CatalogEntry* e) {
    return std::find(e->manifest.deploys.begin(), e->manifest.deploys.end(), kind) == e->manifest.deploys.end();
  });
  return out;
}

Expected<std::shared_ptr<DeployerModule>> DeployerSet::module(const CatalogEntry& entry) {
  const std::string id = identity(entry);
  std::lock_guard lock(mu_);
  if (auto it = loaded_.find(id); it != loaded_.end()) return it->second;
  auto config = configs_.find(entry.manifest.name);
  auto loaded = DeployerModule::load(entry, config == configs_.end() ? Json::object() : config->second, trust_);
  if (loaded) {
    spdlog::info("loaded deployer {} from {}", entry.label, entry.file.string());
  } else {
    spdlog::error("{}", loaded.error().message());
  }
  loaded_.emplace(id, loaded);
  return loaded;
}

void DeployerSet::abandon() {
  std::vector<std::shared_ptr<DeployerModule>> modules;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, loaded] : loaded_) {
      if (loaded) modules.push_back(*loaded);
    }
  }
  for (const auto& m : modules) m->abandon();
}

}  // namespace plugboard::core
