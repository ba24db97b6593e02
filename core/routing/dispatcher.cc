#include "core/routing/dispatcher.h"

#include <algorithm>
#include <cctype>

#include <spdlog/spdlog.h>

#include "core/base/text.h"

namespace plugboard::core {

struct Dispatcher::Slot {
  std::once_flag loaded;
  // Written once, under the dispatcher's lock, by the first call that needs the plugin.
  bool tried = false;
  Expected<std::shared_ptr<StartedPlugin>> plugin = Error("not loaded");
  std::chrono::system_clock::time_point loaded_at{};
};

void CallControl::cancel() {
  {
    std::lock_guard lock(mu_);
    cancelled_ = true;
    if (instance_ != nullptr) instance_->cancel(call_id_);
  }
  starting_.cancel();
}

bool CallControl::cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

bool CallControl::calling() const {
  std::lock_guard lock(mu_);
  return instance_ != nullptr;
}

bool CallControl::begin(PluginHandle* instance, std::uint64_t call_id) {
  std::lock_guard lock(mu_);
  if (cancelled_) return false;
  instance_ = instance;
  call_id_ = call_id;
  return true;
}

void CallControl::end() {
  std::lock_guard lock(mu_);
  instance_ = nullptr;
}

namespace {

// The request JSON a plugin receives: the context's members, then rpc, key, via and args.
// Written as text directly, not built as a JSON value first: this is the hot path.
std::string requestText(const DispatchRequest& request, Via via) {
  std::string out;
  if (!request.context_text.empty()) {
    // The object's text without its closing brace; rpc, key, via and args follow (a JSON
    // parser keeps the last of duplicate members, so these win over the context's).
    std::string_view text = request.context_text;
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
      text.remove_suffix(1);
    if (text.size() >= 2 && text.front() == '{' && text.back() == '}') {
      text.remove_suffix(1);
      out.reserve(text.size() + 96);
      out += text;
      const auto first = text.find_first_not_of(" \t\r\n", 1);
      if (first != std::string_view::npos) out += ',';
    }
  }
  if (out.empty()) {
    out.reserve(128);
    out += '{';
  }
  if (request.context_text.empty() && request.context.is_object()) {
    for (const auto& [name, value] : request.context.items()) {
      if (name == "rpc" || name == "key" || name == "via" || name == "args") continue;
      appendJsonString(out, name);
      out += ':';
      out += value.dump(-1, ' ', false, Json::error_handler_t::replace);
      out += ',';
    }
  }
  out += "\"rpc\":";
  appendJsonString(out, request.rpc);
  out += ",\"key\":";
  appendJsonString(out, request.key);
  out += via == Via::kNamed    ? ",\"via\":\"name\",\"args\":"
         : via == Via::kPolled ? ",\"via\":\"poll\",\"args\":"
                               : ",\"via\":\"direct\",\"args\":";
  out += request.args.dump(-1, ' ', false, Json::error_handler_t::replace);
  out += '}';
  return out;
}

}  // namespace

Dispatcher::Dispatcher(const Catalog& catalog, DispatcherOptions options,
                       std::shared_ptr<const PluginSources> sources)
    : catalog_(catalog), sources_(std::move(sources)), options_(std::move(options)) {
  const std::size_t n = catalog_.entries().size() + catalog_.pollOnly().size();
  slots_.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    slots_.push_back(std::make_shared<Slot>());
  std::unordered_map<std::string, int> lowered;
  for (const auto& [name, priority] : options_.priority) lowered[toLower(name)] = priority;
  options_.priority = std::move(lowered);
}

Dispatcher::Dispatcher(std::shared_ptr<const Catalog> catalog,
                       std::shared_ptr<const PluginSources> sources, DispatcherOptions options,
                       const Dispatcher* previous)
    : Dispatcher(*catalog, std::move(options), std::move(sources)) {
  owned_catalog_ = std::move(catalog);
  if (previous == nullptr) return;
  std::unordered_map<std::string, std::size_t> before;
  const auto& old_entries = previous->catalog_.entries();
  for (std::size_t i = 0; i < old_entries.size(); ++i)
    before[previous->sourceOf(old_entries[i]).identity(old_entries[i])] = i;
  const auto& entries = catalog_.entries();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto it = before.find(sourceOf(entries[i]).identity(entries[i]));
    if (it == before.end()) continue;
    // A plugin that failed to load is tried again by the next generation: what it needed
    // (a deployer, a library) may have been installed since.
    std::lock_guard lock(previous->mu_);
    const Slot& before = *previous->slots_[it->second];
    if (!before.tried || before.plugin.ok()) slots_[i] = previous->slots_[it->second];
  }
}

Dispatcher::~Dispatcher() = default;

const PluginSource& Dispatcher::sourceOf(const CatalogEntry& entry) const {
  static const PluginSources kNone;
  return (sources_ ? *sources_ : kNone).of(entry);
}

bool takesPolls(const Manifest& manifest, std::string_view rpc) {
  return manifest.polled != false && (manifest.legacy() || manifest.providesRpc(rpc));
}

std::string Route::plugin() const {
  if (entry != nullptr) return entry->label;
  if (target) return target->plugin;
  return {};
}

Route Dispatcher::resolve(const RouteQuery& query) const {
  Route route;
  Launcher& launcher = *options_.launcher;
  const auto ref = [&query] {
    return PluginRef{
        std::string(query.key), std::string(query.version), std::string(query.deployer),
        query.options != nullptr ? *query.options : Json::object(), query.options_from_workflow};
  };
  const auto placed = [&route](Expected<LaunchTarget> target) {
    if (target) {
      route.kind = Route::Kind::kTarget;
      route.target = std::make_shared<const LaunchTarget>(std::move(*target));
    } else {
      route.kind = Route::Kind::kNone;
      route.reason = target.error().message();
    }
    return route;
  };
  // A step's own deployer: the launcher places the plugin (registry first, else the
  // plugin file as a native artifact) where that deployer runs it.
  if (!query.deployer.empty()) return placed(launcher.place(ref(), &catalog_));
  if (query.registry && !query.key.empty()) {
    if (Status st = launcher.unambiguous(std::string(query.key), std::string(query.version),
                                         &catalog_);
        !st) {
      route.reason = st.error().message();
      return route;
    }
  }
  if (!query.key.empty()) {
    if (const CatalogEntry* entry = catalog_.find(query.key, query.version)) {
      route.kind = Route::Kind::kPlugin;
      route.entry = entry;
      return route;
    }
    const Registry* registry = launcher.registry();
    if (query.registry && registry != nullptr && registry->resolve(std::string(query.key), std::string(query.version)).ok())
      return placed(launcher.place(ref(), &catalog_));
    // A key two plugins claim routes to neither, and is not polled for either: the
    // template's author named a plugin, only not one plugin.
    if (const CatalogConflict* conflict = catalog_.conflictFor(query.key)) {
      route.kind = Route::Kind::kConflict;
      route.reason = "plugin '" + std::string(query.key) + "' is ambiguous: " + conflict->message;
      return route;
    }
  }
  route.kind = Route::Kind::kPoll;
  route.poll = &pollOrder(std::string(query.rpc));
  return route;
}

const std::vector<const CatalogEntry*>& Dispatcher::pollOrder(const std::string& rpc) const {
  std::lock_guard lock(mu_);
  if (auto it = poll_cache_.find(rpc); it != poll_cache_.end()) return it->second;
  std::vector<const CatalogEntry*> order = catalog_.providers(rpc);
  for (const auto* e : catalog_.legacy()) order.push_back(e);
  std::erase_if(order, [&rpc](const CatalogEntry* e) { return !takesPolls(e->manifest, rpc); });
  auto priority = [this](const CatalogEntry* e) {
    auto it = options_.priority.find(toLower(e->manifest.name));
    return it == options_.priority.end() ? 0 : it->second;
  };
  std::stable_sort(order.begin(), order.end(), [&](const CatalogEntry* a, const CatalogEntry* b) {
    if (priority(a) != priority(b)) return priority(a) > priority(b);
    return toLower(a->manifest.name) < toLower(b->manifest.name);
  });
  // Entries are never removed, and a node's address survives rehashing.
  return poll_cache_[rpc] = std::move(order);
}

std::size_t Dispatcher::slotIndex(const CatalogEntry& entry) const {
  const auto& entries = catalog_.entries();
  if (!entries.empty() && &entry >= entries.data() && &entry < entries.data() + entries.size())
    return static_cast<std::size_t>(&entry - entries.data());
  return entries.size() + static_cast<std::size_t>(&entry - catalog_.pollOnly().data());
}

bool Dispatcher::isLoaded(const CatalogEntry& entry) const { return state(entry).loaded; }

Dispatcher::PluginState Dispatcher::state(const CatalogEntry& entry) const {
  std::lock_guard lock(mu_);
  const Slot& slot = *slots_[slotIndex(entry)];
  return {slot.plugin.ok(), slot.loaded_at,
          slot.tried && !slot.plugin.ok() ? slot.plugin.error().message() : std::string()};
}

Dispatcher::Slot& Dispatcher::slotFor(const CatalogEntry& entry, bool polled) {
  Slot* slot = slots_[slotIndex(entry)].get();
  std::call_once(slot->loaded, [&] {
    auto opened = options_.launcher->open(entry, sourceOf(entry), polled);
    std::lock_guard lock(mu_);
    slot->tried = true;
    slot->plugin = std::move(opened);
    if (slot->plugin) {
      slot->loaded_at = std::chrono::system_clock::now();
      spdlog::info("loaded plugin {} from {}", entry.label, entry.file.string());
    } else {
      ++load_failures_;
      spdlog::error("{}", slot->plugin.error().message());
    }
  });
  return *slot;
}

namespace {

// A named plugin that does not provide the RPC fails before it is called.
std::optional<Outcome> notProvided(const Manifest& m, const DispatchRequest& request) {
  if (m.legacy() || m.providesRpc(request.rpc)) return std::nullopt;
  return Outcome{Phase::kFailed,
                 "plugin '" + request.key + "' does not provide '" + request.rpc +
                     "'; it provides: " + join(m.provides),
                 Json::object(),
                 {}};
}

Outcome cancelledBefore(const std::string& name) {
  return Outcome::error("cancelled before plugin '" + name + "' was called");
}

}  // namespace

Outcome Dispatcher::callNamed(StartedPlugin& plugin, const DispatchRequest& request,
                              CallControl& control, const CallOptions& how, Dispatch& d) {
  const Manifest& m = plugin.handle->manifest();
  if (auto refused = notProvided(m, request)) return *refused;
  if (how.admit) {
    if (auto refused = how.admit(m)) return *refused;
  }
  if (control.cancelled()) return cancelledBefore(m.name);
  d.reached = true;
  d.deployer = plugin.handle->deployer();
  Outcome outcome = callOnce(plugin, requestText(request, how.via), control);
  if (outcome.phase == Phase::kNotHandled && how.via != Via::kDirect) {
    outcome = {Phase::kFailed,
               "plugin '" + request.key + "' could not execute the template",
               Json::object(),
               {}};
  }
  return outcome;
}

Outcome Dispatcher::callOnce(StartedPlugin& plugin, const std::string& body, CallControl& control) {
  PluginHandle& handle = *plugin.handle;
  std::unique_lock<std::mutex> serial;
  if (handle.manifest().concurrency == Concurrency::kSerial)
    serial = std::unique_lock(plugin.serial);
  const auto call_id = handle.newCallId();
  if (!control.begin(&handle, call_id)) return cancelledBefore(handle.manifest().name);
  Outcome outcome;
  {
    const CallLogScope logging(call_id, control.log().wanted() ? &control.log() : nullptr);
    outcome = handle.callText(body, call_id);
  }
  control.end();
  return outcome;
}

Dispatch Dispatcher::call(const Route& route, const DispatchRequest& request, CallControl& control,
                          const CallOptions& how) {
  Dispatch d = callRoute(route, request, control, how);
  d.logs = control.log().take();
  return d;
}

Dispatch Dispatcher::callRoute(const Route& route, const DispatchRequest& request,
                               CallControl& control, const CallOptions& how) {
  Dispatch d;
  d.via = route.kind == Route::Kind::kPoll ? Via::kPolled : how.via;
  switch (route.kind) {
    case Route::Kind::kNone:
    case Route::Kind::kConflict:
      d.outcome = Outcome::error(route.reason);
      return d;
    case Route::Kind::kPlugin: {
      const CatalogEntry& entry = *route.entry;
      d.plugin = entry.label;
      if (auto refused = notProvided(entry.manifest, request)) {  // before it is loaded
        d.outcome = std::move(*refused);
        return d;
      }
      if (control.cancelled()) {
        d.outcome = cancelledBefore(entry.manifest.name);
        return d;
      }
      Slot& slot = slotFor(entry, false);
      if (!slot.plugin) {
        d.outcome = Outcome::error("plugin '" + entry.manifest.name +
                                   "' could not be loaded: " + slot.plugin.error().message());
        return d;
      }
      d.outcome = callNamed(**slot.plugin, request, control, how, d);
      return d;
    }
    case Route::Kind::kTarget: {
      d.plugin = route.target->plugin;
      auto started = options_.launcher->start(*route.target, &control.starting());
      if (!started) {
        d.outcome = Outcome::error(started.error().message());
        return d;
      }
      d.outcome = callNamed(**started, request, control, how, d);
      return d;
    }
    case Route::Kind::kPoll:
      break;
  }
  for (const CatalogEntry* entry : *route.poll) {
    d.tried.push_back(entry->label);
    // A candidate that cannot be started is passed over (its reason was logged once).
    Slot& slot = slotFor(*entry, true);
    if (!slot.plugin) continue;
    // A plugin polled before its manifest was known (the registry's poll-only entries)
    // meets the rule on the manifest it started with.
    if (!takesPolls((*slot.plugin)->handle->manifest(), request.rpc)) continue;
    if (control.cancelled()) {
      d.outcome = cancelledBefore(entry->manifest.name);
      return d;
    }
    d.reached = true;
    Outcome outcome = callOnce(**slot.plugin, requestText(request, Via::kPolled), control);
    if (outcome.phase == Phase::kNotHandled) continue;  // it declined itself
    d.plugin = entry->label;
    d.deployer = (*slot.plugin)->handle->deployer();
    d.outcome = std::move(outcome);
    return d;
  }
  d.handled = false;
  d.outcome = {Phase::kFailed,
               "no plugin executed the template (plugin '" + request.key +
                   "' is not installed; polled for '" + request.rpc +
                   "': " + join(d.tried, ", ", "no candidates") + ")",
               Json::object(),
               {}};
  return d;
}

Dispatch Dispatcher::dispatch(const DispatchRequest& request, CallControl& control) {
  return call(resolve({.key = request.key, .version = request.version, .rpc = request.rpc}),
              request, control);
}

}  // namespace plugboard::core
