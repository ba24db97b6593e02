// plugboard/deployer.hpp: the C++ SDK for writing a plugboard deployer module.
//
// A deployer turns an artifact (a registry entry: a plugin .so, a Python module, a
// container image ...) into a running plugin, the "handle", that the runtime calls like
// an in-process plugin. It is a class derived from plugboard::Deployer that overrides
//     plugboard::Deployed open(const plugboard::Json& artifact,
//                              const plugboard::Json& options) override;
// and is registered once, at the bottom of its .cc, at global scope:
//     PLUGBOARD_DEPLOYER(MyDeployer, R"({"name":"my","version":"1.0.0",
//                                       "deploys":["native"],
//                                       "config":{"memory":{"type":"size",
//                                         "description":"address-space limit"}}})")
//
// The manifest lists the artifact kinds the deployer deploys and describes every key it
// accepts, in its configuration and in a step's `deploy = {...}` options, so that
// `plugboard validate` can check them without loading the module (docs/deployers.md).
//
// Contract:
// * setUp(config) gets the deployer's configuration; an exception refuses the deployer
//   with its message (say what is missing and how to fix it).
// * open() starts one plugin; it returns the plugin's manifest object and a handle, or
//   throws with a message that names the artifact and the cause. It may be called from
//   several threads at once. A deployer whose start takes long (a container, a server
//   that must open its port) overrides start() instead, which takes a Cancellation: when
//   the runtime cancels the start (a step's deadline, Ctrl-C), it stops waiting, removes
//   what it made and throws saying the start was cancelled.
// * abandon() is called when the runtime is about to exit without closing the handles
//   (calls that ignored their cancellation still run): remove at once what would outlive
//   the process (containers, child processes, files). Nothing is destroyed after it.
// * Handle::execute() may run on several threads at once unless the plugin's manifest
//   says "concurrency":"serial"; it returns the result JSON text (see plugboard::Result).
//   An exception becomes an Error result that names the deployer. cancel() may be called
//   from any thread while the call runs, or after it returned (then it does nothing).
#ifndef PLUGBOARD_DEPLOYER_HPP_
#define PLUGBOARD_DEPLOYER_HPP_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "plugboard/sdk.hpp"

namespace plugboard {

namespace detail {
template <class D>
struct DeployerGlue;
}  // namespace detail

// One deployed plugin.
class Handle {
 public:
  virtual ~Handle() = default;
  // Runs one call: `request` is the request JSON a native plugin receives; the answer is
  // the result JSON text (Result::toText() builds one).
  virtual std::string execute(std::uint64_t call_id, std::string_view request) = 0;
  virtual void cancel(std::uint64_t call_id) = 0;
};

struct Deployed {
  Json manifest;  // the plugin's manifest object
  std::unique_ptr<Handle> handle;
};

// Whether something under way (a start) has been cancelled. Thread-safe.
class Cancellation {
 public:
  Cancellation() = default;
  Cancellation(const Cancellation&) = delete;
  Cancellation& operator=(const Cancellation&) = delete;

  // Cancels: wakes waitFor() and runs every watch's function. Idempotent.
  void cancel() {
    std::lock_guard lock(mu_);
    if (cancelled_) return;
    cancelled_ = true;
    cv_.notify_all();
    for (auto& [id, f] : watches_) f();
  }
  bool cancelled() const {
    std::lock_guard lock(mu_);
    return cancelled_;
  }
  // Waits up to `d`; true (at once) when cancelled.
  bool waitFor(std::chrono::milliseconds d) const {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, d, [&] { return cancelled_; });
  }

  // While it lives, `f` runs on the cancelling thread when this is cancelled (at once, on
  // this thread, when it already is). `f` must be quick and must not use this object.
  class Watch {
   public:
    Watch(Watch&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)), id_(other.id_) {}
    Watch(const Watch&) = delete;
    Watch& operator=(const Watch&) = delete;
    Watch& operator=(Watch&&) = delete;
    ~Watch() {
      if (owner_ == nullptr) return;
      std::lock_guard lock(owner_->mu_);
      owner_->watches_.erase(id_);
    }

   private:
    friend class Cancellation;
    Watch(const Cancellation* owner, std::uint64_t id) : owner_(owner), id_(id) {}
    const Cancellation* owner_;
    std::uint64_t id_;
  };
  [[nodiscard]] Watch watch(std::function<void()> f) const {
    std::lock_guard lock(mu_);
    if (cancelled_) {
      f();
      return Watch(nullptr, 0);
    }
    const std::uint64_t id = ++last_watch_;
    watches_.emplace(id, std::move(f));
    return Watch(this, id);
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool cancelled_ = false;
  mutable std::uint64_t last_watch_ = 0;
  mutable std::map<std::uint64_t, std::function<void()>> watches_;
};

// Base class of every deployer. See the contract at the top of this file.
class Deployer {
 public:
  virtual ~Deployer() = default;
  virtual void setUp(const Json& /*config*/) {}
  // Override one of the two: start() when the start can be cancelled. The runtime calls
  // start(), which calls open() unless overridden.
  virtual Deployed open(const Json& /*artifact*/, const Json& /*options*/) {
    throw std::logic_error("the deployer overrides neither open() nor start()");
  }
  virtual Deployed start(const Json& artifact, const Json& options,
                         const Cancellation& /*cancel*/) {
    return open(artifact, options);
  }
  virtual void abandon() {}

 protected:
  const Logger& log() const { return logger_; }

 private:
  template <class D>
  friend struct detail::DeployerGlue;
  Logger logger_;
};

namespace detail {

template <class D>
struct DeployerGlue {
  struct Instance {
    std::string name;
    D deployer;
    std::mutex mu;  // guards starts and cancelled_early
    std::map<std::uint64_t, Cancellation*> starts;  // under way, by start id
    std::set<std::uint64_t> cancelled_early;         // cancelled before they began
  };
  struct OpenHandle {
    std::string deployer;  // for error messages
    std::unique_ptr<Handle> handle;
  };

  static std::string nameFrom(const char* manifest) {
    try {
      return Json::parse(manifest).value("name", std::string("?"));
    } catch (...) {
      return "?";
    }
  }

  static Json objectFrom(const char* text, size_t len) {
    Json j = len == 0 ? Json::object() : Json::parse(text, text + len);
    if (!j.is_object()) throw std::invalid_argument("expected a JSON object, got " + j.dump());
    return j;
  }

  static void* create(const plugboard_host* host, const char* config, size_t config_len,
                      plugboard_respond_fn on_error, void* error_ctx) {
    const std::string name = nameFrom(api().manifest);
    try {
      auto instance = std::make_unique<Instance>();
      instance->name = name;
      instance->deployer.logger_ = Logger(host);
      instance->deployer.setUp(objectFrom(config, config_len));
      return instance.release();
    } catch (const std::exception& e) {
      respondWith(on_error, error_ctx, Result::Error("deployer '" + name + "' failed to set up: " + e.what()));
    } catch (...) {
      respondWith(on_error, error_ctx, Result::Error("deployer '" + name + "' failed to set up: unknown exception"));
    }
    return nullptr;
  }

  static void* open(void* raw, const char* artifact, size_t artifact_len, const char* options,
                    size_t options_len, plugboard_respond_fn respond, void* respond_ctx) {
    const Cancellation never{};
    return openWith(static_cast<Instance*>(raw), never, artifact, artifact_len, options,
                    options_len, respond, respond_ctx);
  }

  static void* start(void* raw, std::uint64_t start_id, const char* artifact,
                     size_t artifact_len, const char* options, size_t options_len,
                     plugboard_respond_fn respond, void* respond_ctx) {
    auto* instance = static_cast<Instance*>(raw);
    Cancellation cancel;
    {
      std::lock_guard lock(instance->mu);
      instance->starts[start_id] = &cancel;
      if (instance->cancelled_early.erase(start_id) > 0) cancel.cancel();
    }
    void* handle = openWith(instance, cancel, artifact, artifact_len, options, options_len,
                            respond, respond_ctx);
    std::lock_guard lock(instance->mu);
    instance->starts.erase(start_id);
    return handle;
  }

  static void cancelStart(void* raw, std::uint64_t start_id) {
    auto* instance = static_cast<Instance*>(raw);
    std::lock_guard lock(instance->mu);
    if (auto it = instance->starts.find(start_id); it != instance->starts.end()) {
      it->second->cancel();
    } else {
      instance->cancelled_early.insert(start_id);
    }
  }

  static void abandon(void* raw) {
    try {
      static_cast<Instance*>(raw)->deployer.abandon();
    } catch (...) {
      // the runtime exits next; nothing can be reported
    }
  }

  static void* openWith(Instance* instance, const Cancellation& cancel, const char* artifact,
                        size_t artifact_len, const char* options, size_t options_len,
                        plugboard_respond_fn respond, void* respond_ctx) {
    try {
      Deployer& deployer = instance->deployer;
      Deployed d = deployer.start(objectFrom(artifact, artifact_len),
                                  objectFrom(options, options_len), cancel);
      if (!d.handle) throw std::logic_error("open() returned no handle");
      const std::string manifest = d.manifest.dump(-1, ' ', false, Json::error_handler_t::replace);
      auto handle = std::make_unique<OpenHandle>(OpenHandle{instance->name, std::move(d.handle)});
      respond(respond_ctx, manifest.data(), manifest.size());
      return handle.release();
    } catch (const std::exception& e) {
      respondWith(respond, respond_ctx, Result::Error(e.what()));
    } catch (...) {
      respondWith(respond, respond_ctx,
                  Result::Error("deployer '" + instance->name + "' failed: unknown exception"));
    }
    return nullptr;
  }

  static void execute(void* raw, std::uint64_t call_id, const char* request, size_t len,
                      plugboard_respond_fn respond, void* respond_ctx) {
    auto* h = static_cast<OpenHandle*>(raw);
    std::string result;
    try {
      result = h->handle->execute(call_id, std::string_view(request, len));
    } catch (const std::exception& e) {
      result = Result::Error("deployer '" + h->deployer + "' threw: " + e.what()).toText();
    } catch (...) {
      result = Result::Error("deployer '" + h->deployer + "' threw an unknown exception").toText();
    }
    respond(respond_ctx, result.data(), result.size());
  }

  static void cancel(void* raw, std::uint64_t call_id) {
    try {
      static_cast<OpenHandle*>(raw)->handle->cancel(call_id);
    } catch (...) {
      // cancel is best effort; the call still answers
    }
  }

  static void close(void* raw) { delete static_cast<OpenHandle*>(raw); }
  static void destroy(void* raw) { delete static_cast<Instance*>(raw); }

  static const plugboard_deployer_api& api(const char* manifest = nullptr, size_t len = 0) {
    static const plugboard_deployer_api table = {
        PLUGBOARD_ABI_MAJOR, PLUGBOARD_ABI_MINOR, sizeof(plugboard_deployer_api),
        manifest,            len,                 &create,
        &open,               &execute,            &cancel,
        &close,              &destroy,            &start,
        &cancelStart,        &abandon};
    return table;
  }
};

}  // namespace detail
}  // namespace plugboard

// Registers `DeployerClass` with the manifest `manifest_json` (a string literal holding one
// JSON object). Use once per deployer, at global scope, at the bottom of its .cc.
#define PLUGBOARD_DEPLOYER(DeployerClass, manifest_json)                                          \
  PLUGBOARD_DETAIL_REGISTER(::plugboard::detail::DeployerGlue<DeployerClass>, plugboard_deployer_api, \
                            PLUGBOARD_DEPLOYER_ALIAS, "deployer", manifest_json)

#endif  // PLUGBOARD_DEPLOYER_HPP_
