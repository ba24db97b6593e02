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
//   several threads at once.
// * Handle::execute() may run on several threads at once unless the plugin's manifest
//   says "concurrency":"serial"; it returns the result JSON text (see plugboard::Result).
//   An exception becomes an Error result that names the deployer. cancel() may be called
//   from any thread while the call runs, or after it returned (then it does nothing).
#ifndef PLUGBOARD_DEPLOYER_HPP_
#define PLUGBOARD_DEPLOYER_HPP_

#include <cstdint>
#include <exception>
#include <memory>
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

// Base class of every deployer. See the contract at the top of this file.
class Deployer {
 public:
  virtual ~Deployer() = default;
  virtual void setUp(const Json& /*config*/) {}
  virtual Deployed open(const Json& artifact, const Json& options) = 0;

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
    auto* instance = static_cast<Instance*>(raw);
    try {
      Deployed d = instance->deployer.open(objectFrom(artifact, artifact_len), objectFrom(options, options_len));
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
        &close,              &destroy};
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
