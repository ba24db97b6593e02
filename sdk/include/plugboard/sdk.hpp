// plugboard/sdk.hpp: the C++ SDK for writing a plugboard executor plugin.
//
// A plugin is a class derived from plugboard::Plugin that overrides
//     plugboard::Result execute(const plugboard::Request& request) override;
// and is registered once, at the bottom of its .cc, at global scope:
//     PLUGBOARD_PLUGIN(MyPlugin, R"({"name":"my","version":"1.0.0",
//                                   "provides":["template.execute"]})")
//
// The manifest literal is one JSON object with the members described in
// docs/plugin-authoring.md; the macro appends "kind" and "abi", writes the result into
// the `.plugboard` ELF section and exports the C entry point of plugboard/abi.h.
//
// Contract:
// * Constructors must not fail. Put fallible set-up into setUp(config); an exception
//   thrown there refuses the instance with the exception's message.
// * execute() may run on several threads at once unless the manifest says
//   "concurrency":"serial". Any exception it throws becomes an Error result that names
//   the plugin; nothing escapes into the runtime.
// * Long calls should poll request.cancelled() or wait with request.waitCancelled(), so
//   that deadlines and Ctrl-C stop them.
#ifndef PLUGBOARD_SDK_HPP_
#define PLUGBOARD_SDK_HPP_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "plugboard/abi.h"
#include "plugboard/detail/manifest_text.hpp"

namespace plugboard {

using Json = nlohmann::json;

// Forwards log lines to the runtime, which tags them with the plugin's name.
// Thread-safe. A default-constructed Logger drops everything.
class Logger {
 public:
  Logger() = default;
  explicit Logger(const plugboard_host* host) : host_(host) {}

  void debug(std::string_view message) const { write(PLUGBOARD_LOG_DEBUG, message); }
  void info(std::string_view message) const { write(PLUGBOARD_LOG_INFO, message); }
  void warn(std::string_view message) const { write(PLUGBOARD_LOG_WARN, message); }
  void error(std::string_view message) const { write(PLUGBOARD_LOG_ERROR, message); }

  // A line written during call `call_id` (the id the runtime gave execute), from any
  // thread: the runtime keeps it with that call. A runtime too old to take it gets the
  // line as write() gives it.
  void forCall(std::uint64_t call_id, int level, std::string_view message) const {
    if (host_ == nullptr) return;
    const auto end = offsetof(plugboard_host, log_call) + sizeof(host_->log_call);
    if (host_->struct_size >= end && host_->log_call != nullptr) {
      host_->log_call(host_->ctx, call_id, level, message.data(), message.size());
      return;
    }
    write(level, message);
  }

 private:
  void write(int level, std::string_view message) const {
    if (host_ != nullptr && host_->log != nullptr) {
      host_->log(host_->ctx, level, message.data(), message.size());
    }
  }
  const plugboard_host* host_ = nullptr;  // the runtime's; outlives this instance
};

namespace detail {
template <class P>
struct Glue;

// Set by the runtime's cancel(); observed by the running call.
class CancelFlag {
 public:
  void raise() {
    std::lock_guard lock(mu_);
    raised_ = true;
    cv_.notify_all();
  }
  bool raised() const {
    std::lock_guard lock(mu_);
    return raised_;
  }
  template <class Rep, class Period>
  bool waitFor(std::chrono::duration<Rep, Period> d) const {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, d, [this] { return raised_; });
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool raised_ = false;
};
}  // namespace detail

// One call as the runtime sends it. Read-only; valid for the duration of execute().
class Request {
 public:
  // `cancel` belongs to the caller and outlives the request.
  Request(Json raw, const detail::CancelFlag* cancel) : raw_(std::move(raw)), cancel_(cancel) {}

  // The RPC being called, e.g. "template.execute".
  std::string rpc() const { return raw_.value("rpc", std::string("template.execute")); }
  // The plugin key as the template wrote it (e.g. "hello-executor-plugin").
  std::string key() const { return raw_.value("key", std::string()); }
  // "name" when the template named this plugin, "poll" when it is being polled,
  // "direct" for a direct call. A polled plugin should decline what is not its own.
  std::string via() const { return raw_.value("via", std::string("name")); }
  bool polled() const { return via() == "poll"; }
  // The template's arguments for this plugin (any JSON value; null when absent).
  const Json& args() const {
    static const Json kNull;
    auto it = raw_.find("args");
    return it == raw_.end() ? kNull : *it;
  }
  // The whole request, including "workflow" and "template" when the runtime has them.
  const Json& raw() const { return raw_; }

  bool cancelled() const { return cancel_ && cancel_->raised(); }
  // Sleeps up to `d`; returns true as soon as the call is cancelled.
  template <class Rep, class Period>
  bool waitCancelled(std::chrono::duration<Rep, Period> d) const {
    return cancel_ ? cancel_->waitFor(d) : false;
  }

 private:
  Json raw_;
  const detail::CancelFlag* cancel_;
};

// The outcome of one call. Build it with the named constructors.
class Result {
 public:
  // Terminal success. `parameters` maps output names to values; values that are not
  // strings are stored as their JSON text, as Argo's parameters are strings.
  static Result Succeeded(Json parameters = Json::object(), std::string message = {}) {
    Result r("Succeeded", std::move(message));
    if (!parameters.is_object()) parameters = Json::object();
    for (auto& [name, value] : parameters.items()) {
      if (!value.is_string()) value = value.dump();
    }
    r.outputs_ = Json::object();
    r.outputs_["parameters"] = std::move(parameters);
    return r;
  }
  // The step's own logic failed (bad input, a check that did not pass).
  static Result Failed(std::string message) { return Result("Failed", std::move(message)); }
  // The plugin or its environment broke; not the step's business logic.
  static Result Error(std::string message) { return Result("Error", std::move(message)); }
  // Still in progress: call again after `requeue` (or the runtime's poll interval).
  static Result Running(std::string message = {},
                        std::optional<std::chrono::milliseconds> requeue = std::nullopt) {
    Result r("Running", std::move(message));
    r.requeue_ = requeue;
    return r;
  }
  // Accepted but not started yet (e.g. waiting in a queue elsewhere): call again after
  // `requeue` (or the runtime's poll interval), as for Running.
  static Result Pending(std::string message = {},
                        std::optional<std::chrono::milliseconds> requeue = std::nullopt) {
    Result r("Pending", std::move(message));
    r.requeue_ = requeue;
    return r;
  }
  // This plugin declines the call; only meaningful while being polled.
  static Result NotHandled() { return Result("NotHandled", {}); }

  // Replaces the outputs object (for outputs beyond "parameters").
  Result& withOutputs(Json outputs) {
    outputs_ = std::move(outputs);
    return *this;
  }

  // Asks to be called again after `delay`. Only Running and Pending results are requeued; the runtime
  // ignores it on any other phase (Argo plugins sometimes set it on Succeeded).
  Result& withRequeue(std::chrono::milliseconds delay) {
    requeue_ = delay;
    return *this;
  }

  const std::string& phase() const { return phase_; }
  const std::string& message() const { return message_; }

  Json toJson() const { return Json::parse(toText()); }
  // The result JSON as the runtime receives it.
  std::string toText() const {
    // Written as text around the library's own serialisation of each value, without
    // building an intermediate JSON object: this runs once per call.
    constexpr auto kReplace = Json::error_handler_t::replace;
    std::string out = "{\"phase\":\"" + phase_ + "\"";  // phase_ is one of five fixed words
    if (!message_.empty()) out += ",\"message\":" + Json(message_).dump(-1, ' ', false, kReplace);
    if (outputs_.is_object() && !outputs_.empty()) {
      out += ",\"outputs\":" + outputs_.dump(-1, ' ', false, kReplace);
    }
    if (requeue_) out += ",\"requeue_ms\":" + std::to_string(requeue_->count());
    out += '}';
    return out;
  }

 private:
  Result(std::string phase, std::string message)
      : phase_(std::move(phase)), message_(std::move(message)) {}
  std::string phase_;
  std::string message_;
  Json outputs_;  // null until set: no allocation for results without outputs
  std::optional<std::chrono::milliseconds> requeue_;
};

// Base class of every plugin. See the contract at the top of this file.
class Plugin {
 public:
  virtual ~Plugin() = default;
  // Fallible set-up; `config` is a JSON object ({} when the runtime has none).
  virtual void setUp(const Json& /*config*/) {}
  virtual Result execute(const Request& request) = 0;

 protected:
  const Logger& log() const { return logger_; }

 private:
  template <class P>
  friend struct detail::Glue;
  Logger logger_;
};

}  // namespace plugboard

#include "plugboard/detail/glue.hpp"

// Registers `PluginClass` with the manifest `manifest_json` (a string literal holding one
// JSON object). Use once per plugin, at global scope, at the bottom of its .cc.
#define PLUGBOARD_PLUGIN(PluginClass, manifest_json) \
  PLUGBOARD_DETAIL_REGISTER(::plugboard::detail::Glue<PluginClass>, plugboard_plugin_api, \
                            PLUGBOARD_ENTRY_ALIAS, "executor", manifest_json)

#endif  // PLUGBOARD_SDK_HPP_
