// plugboard/detail/glue.hpp: the C entry points that wrap a C++ plugin class.
//
// Part of the SDK's implementation, included by sdk.hpp. Every function here is called
// by the runtime through plugboard_plugin_api; none lets an exception escape.
#ifndef PLUGBOARD_DETAIL_GLUE_HPP_
#define PLUGBOARD_DETAIL_GLUE_HPP_

#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace plugboard::detail {

inline void respondWith(plugboard_respond_fn respond, void* ctx, const Result& result) {
  const std::string text = result.toText();
  respond(ctx, text.data(), text.size());
}

template <class P>
struct Glue {
  struct Instance {
    std::string name;
    P plugin;
    std::mutex mu;  // guards running
    std::vector<std::pair<std::uint64_t, CancelFlag*>> running;  // calls in execute()
  };

  // Registers a running call for cancel() for the scope of execute().
  class Registration {
   public:
    Registration(Instance* instance, std::uint64_t id, CancelFlag* flag) : instance_(instance) {
      std::lock_guard lock(instance_->mu);
      instance_->running.emplace_back(id, flag);
      flag_ = flag;
    }
    ~Registration() {
      std::lock_guard lock(instance_->mu);
      auto& r = instance_->running;
      r.erase(std::find_if(r.begin(), r.end(), [&](const auto& e) { return e.second == flag_; }));
    }
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;

   private:
    Instance* instance_;
    CancelFlag* flag_ = nullptr;
  };

  static std::string nameFrom(const char* manifest) {
    try {
      return Json::parse(manifest).value("name", std::string("?"));
    } catch (...) {
      return "?";
    }
  }

  static void* create(const plugboard_host* host, const char* config, size_t config_len,
                      plugboard_respond_fn on_error, void* error_ctx) {
    const std::string name = nameFrom(api().manifest);
    try {
      auto instance = std::make_unique<Instance>();
      instance->name = name;
      instance->plugin.logger_ = Logger(host);
      Json cfg = config_len == 0 ? Json::object() : Json::parse(config, config + config_len);
      instance->plugin.setUp(cfg);
      return instance.release();
    } catch (const std::exception& e) {
      respondWith(on_error, error_ctx,
                  Result::Error("plugin '" + name + "' failed to set up: " + e.what()));
    } catch (...) {
      respondWith(on_error, error_ctx,
                  Result::Error("plugin '" + name + "' failed to set up: unknown exception"));
    }
    return nullptr;
  }

  static void execute(void* raw, std::uint64_t call_id, const char* request, size_t len,
                      plugboard_respond_fn respond, void* respond_ctx) {
    auto* instance = static_cast<Instance*>(raw);
    respondWith(respond, respond_ctx, run(instance, call_id, request, len));
  }

  static Result run(Instance* instance, std::uint64_t call_id, const char* request, size_t len) {
    try {
      CancelFlag flag;
      Registration registration(instance, call_id, &flag);
      Request req(Json::parse(request, request + len), &flag);
      return instance->plugin.execute(req);
    } catch (const std::exception& e) {
      return Result::Error("plugin '" + instance->name + "' threw: " + e.what());
    } catch (...) {
      return Result::Error("plugin '" + instance->name + "' threw an unknown exception");
    }
  }

  static void cancel(void* raw, std::uint64_t call_id) {
    auto* instance = static_cast<Instance*>(raw);
    std::lock_guard lock(instance->mu);  // a registered flag lives until it is unregistered
    for (auto& [id, flag] : instance->running) {
      if (id == call_id) flag->raise();
    }
  }

  static void destroy(void* raw) { delete static_cast<Instance*>(raw); }

  static const plugboard_plugin_api& api(const char* manifest = nullptr, size_t len = 0) {
    static const plugboard_plugin_api table = {
        PLUGBOARD_ABI_MAJOR, PLUGBOARD_ABI_MINOR, sizeof(plugboard_plugin_api),
        manifest,            len,                 &create,
        &execute,            &cancel,             &destroy};
    return table;
  }
};

}  // namespace plugboard::detail

// Exports `function` under the unmangled name `alias`: a pointer-sized variable holding its
// address, exactly what Boost.DLL's BOOST_DLL_ALIAS writes on ELF platforms (a weak,
// default-visibility `extern "C" const void*` in the "boostdll" section) and what the
// host's import_alias / get_alias reads back. Written out here so that a plugin's
// translation unit does not pay for parsing Boost.DLL (and the filesystem headers it
// brings) for one variable.
#define PLUGBOARD_DETAIL_EXPORT_ALIAS(function, alias)                                     \
  namespace _autoaliases {                                                                 \
  extern "C" __attribute__((visibility("default"))) const void* alias;                     \
  __attribute__((section("boostdll"), weak)) const void* alias =                           \
      reinterpret_cast<const void*>(reinterpret_cast<std::intptr_t>(&function));           \
  }

// The macro behind PLUGBOARD_PLUGIN and PLUGBOARD_DEPLOYER: the manifest into its ELF
// section, and the entry point `api_type* entry()` (returning `glue::api(manifest)`)
// exported as `alias` (PLUGBOARD_DETAIL_EXPORT_ALIAS).
#define PLUGBOARD_DETAIL_REGISTER(glue, api_type, alias, kind, manifest_json)              \
  static_assert(::plugboard::detail::manifestShapeOk(manifest_json),                       \
                "plugboard: the manifest must be one JSON object; check its quotes, "      \
                "brackets and braces");                                                    \
  namespace {                                                                              \
  [[gnu::section(PLUGBOARD_MANIFEST_SECTION), gnu::used]] constexpr auto                   \
      plugboard_manifest_ = ::plugboard::detail::renderManifest<                           \
          ::plugboard::detail::renderedSize(manifest_json, kind)>(manifest_json, kind);    \
  const api_type* plugboard_entry_() {                                                     \
    return &glue::api(plugboard_manifest_.data(), plugboard_manifest_.size() - 1);         \
  }                                                                                        \
  }                                                                                        \
  PLUGBOARD_DETAIL_EXPORT_ALIAS(plugboard_entry_, alias)

#endif  // PLUGBOARD_DETAIL_GLUE_HPP_
