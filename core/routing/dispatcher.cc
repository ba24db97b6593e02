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
std::string requestText(const DispatchRequest& request, Route route) {
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
  out += route == Route::kNamed ? ",\"via\":\"name\",\"args\":" : ",\"via\":\"poll\",\"args\":";
  out += request.args.dump(-1, ' ', false, Json::error_handler_t::replace);
  out += '}';
  return out;
}

}  // namespace

Dispatcher::Dispatcher(const Catalog& catalog, DispatcherOptions options)
    : catalog_(catalog), options_(std::move(options)) {
  const std::size_t n = catalog_.entries().size() + catalog_.pollOnly().size();
  slots_.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    slots_.push_back(std::make_shared<Slot>());
  std::unordered_map<std::string, int> lowered;
  for (const auto& [name, priority] : options_.priority) lowered[toLower(name)] = priority;
  options_.priority = std::move(lowered);
}

Dispatcher::Dispatcher(std::shared_ptr<const Catalog> catalog, DispatcherOptions options,
                       const Dispatcher* previous)
    : Dispatcher(*catalog, std::move(options)) {
  owned_catalog_ = std::move(catalog);
  if (previous == nullptr) return;
  std::unordered_map<std::string, std::size_t> before;
  const auto& old_entries = previous->catalog_.entries();
  for (std::size_t i = 0; i < old_entries.size(); ++i)
    before[old_entries[i].loadPath().string()] = i;
  const auto& entries = catalog_.entries();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto it = before.find(entries[i].loadPath().string());
    if (it == before.end()) continue;
    // A plugin that failed to load is tried again by the next generation: what it needed
    // (a deployer, a library) may have been installed since.
    std::lock_guard lock(previous->mu_);
    const Slot& before = *previous->slots_[it->second];
    if (!before.tried || before.plugin.ok()) slots_[i] = previous->slots_[it->second];
  }
}

Dispatcher::~Dispatcher() = default;

const CatalogEntry* Dispatcher::resolve(const std::string& key, const std::string& version) const {
  return catalog_.find(key, version);
}

std::vector<const CatalogEntry*> Dispatcher::pollOrder(const std::string& rpc) const {
  std::lock_guard lock(mu_);
  if (auto it = poll_cache_.find(rpc); it != poll_cache_.end()) return it->second;
  std::vector<const CatalogEntry*> order = catalog_.providers(rpc);
  for (const auto* e : catalog_.legacy()) order.push_back(e);
  auto priority = [this](const CatalogEntry* e) {
    auto it = options_.priority.find(toLower(e->manifest.name));
    return it == options_.priority.end() ? 0 : it->second;
  };
  std::stable_sort(order.begin(), order.end(), [&](const CatalogEntry* a, const CatalogEntry* b) {
    if (priority(a) != priority(b)) return priority(a) > priority(b);
    return toLower(a->manifest.name) < toLower(b->manifest.name);
  });
  poll_cache_[rpc] = order;
  return order;
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
    auto opened = options_.open(entry, polled);
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

Outcome Dispatcher::call(const CatalogEntry& entry, const DispatchRequest& request, Route route,
                         CallControl& control) {
  if (control.cancelled())
    return Outcome::error("cancelled before plugin '" + entry.manifest.name + "' was called");
  Slot& slot = slotFor(entry, route == Route::kPolled);
  if (!slot.plugin) {
    return Outcome::error("plugin '" + entry.manifest.name +
                          "' could not be loaded: " + slot.plugin.error().message());
  }
  // A plugin polled before its manifest was known declines the RPCs it does not provide.
  const Manifest& m = (*slot.plugin)->handle->manifest();
  if (route == Route::kPolled && !m.legacy() && !m.providesRpc(request.rpc))
    return Outcome{Phase::kNotHandled, "", Json::object(), {}};
  return callOnce(**slot.plugin, requestText(request, route), control);
}

Outcome Dispatcher::callOnce(StartedPlugin& plugin, const std::string& body, CallControl& control) {
  PluginHandle& handle = *plugin.handle;
  std::unique_lock<std::mutex> serial;
  if (handle.manifest().concurrency == Concurrency::kSerial)
    serial = std::unique_lock(plugin.serial);
  const auto call_id = handle.newCallId();
  if (!control.begin(&handle, call_id)) {
    return Outcome::error("cancelled before plugin '" + handle.manifest().name + "' was called");
  }
  Outcome outcome = handle.callText(body, call_id);
  control.end();
  return outcome;
}

Outcome Dispatcher::callStarted(StartedPlugin& plugin, const DispatchRequest& request,
                                CallControl& control) {
  if (control.cancelled()) {
    return Outcome::error("cancelled before plugin '" + plugin.handle->manifest().name +
                          "' was called");
  }
  Outcome outcome = callOnce(plugin, requestText(request, Route::kNamed), control);
  if (outcome.phase == Phase::kNotHandled) {
    outcome = {Phase::kFailed,
               "plugin '" + request.key + "' could not execute the template",
               Json::object(),
               {}};
  }
  return outcome;
}

Dispatch Dispatcher::dispatch(const DispatchRequest& request, CallControl& control) {
  Dispatch result;
  if (const CatalogEntry* entry = resolve(request.key, request.version)) {
    result.route = Route::kNamed;
    result.plugin = entry->label;
    const Manifest& m = entry->manifest;
    if (!m.legacy() && !m.providesRpc(request.rpc)) {
      result.outcome = {Phase::kFailed,
                        "plugin '" + request.key + "' does not provide '" + request.rpc +
                            "'; it provides: " + join(m.provides),
                        Json::object(),
                        {}};
      return result;
    }
    result.outcome = call(*entry, request, Route::kNamed, control);
    if (result.outcome.phase == Phase::kNotHandled) {
      result.outcome = {Phase::kFailed,
                        "plugin '" + request.key + "' could not execute the template",
                        Json::object(),
                        {}};
    }
    return result;
  }

  // A key two plugins claim routes to neither, and is not polled for either: the
  // template's author named a plugin, only not one plugin.
  if (const CatalogConflict* conflict = catalog_.conflictFor(request.key)) {
    result.route = Route::kNamed;
    result.outcome =
        Outcome::error("plugin '" + request.key + "' is ambiguous: " + conflict->message);
    return result;
  }
  result.route = Route::kPolled;
  for (const CatalogEntry* entry : pollOrder(request.rpc)) {
    result.tried.push_back(entry->label);
    // A candidate that cannot be started is passed over (its reason was logged once).
    if (!slotFor(*entry, true).plugin) continue;
    Outcome outcome = call(*entry, request, Route::kPolled, control);
    if (outcome.phase == Phase::kNotHandled) continue;
    result.plugin = entry->label;
    result.outcome = std::move(outcome);
    return result;
  }
  result.handled = false;
  result.outcome = {Phase::kFailed,
                    "no plugin executed the template (plugin '" + request.key +
                        "' is not installed; polled for '" + request.rpc +
                        "': " + join(result.tried, ", ", "no candidates") + ")",
                    Json::object(),
                    {}};
  return result;
}

}  // namespace plugboard::core
