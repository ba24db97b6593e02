// @NAME@: a plugboard deployer. It deploys artifacts of kind "@NAME@": a text file (a
// registry entry `@NAME@ = "greeting.txt"`) that becomes a plugin answering
// template.execute with the file's text, "{name}" replaced by args.name, as the output
// parameter "greeting", after the step's option `delay` (a duration) unless cancelled.
// The plugin's name and version are the registry's. Replace the handle with whatever runs
// your kind of artifact.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <plugboard/host/options.h>
#include <plugboard/deployer.hpp>

namespace {

// One deployed plugin: answers every call from the text it was opened with. Calls may run
// on several threads at once; cancel() may come from any thread.
class GreetingHandle : public plugboard::Handle {
 public:
  GreetingHandle(std::string text, std::chrono::milliseconds delay)
      : text_(std::move(text)), delay_(delay) {}

  std::string execute(std::uint64_t call_id, std::string_view request) override {
    const plugboard::Json args = plugboard::Json::parse(request).value("args", plugboard::Json());
    if (!args.is_object() || !args.contains("name") || !args["name"].is_string()) {
      return plugboard::Result::Failed("args.name must be a string").toText();
    }
    if (waitCancelled(call_id)) return plugboard::Result::Error("cancelled").toText();
    std::string greeting = text_;
    if (const auto at = greeting.find("{name}"); at != std::string::npos) {
      greeting.replace(at, 6, args["name"].get<std::string>());
    }
    return plugboard::Result::Succeeded({{"greeting", greeting}}).toText();
  }

  void cancel(std::uint64_t call_id) override {
    std::lock_guard lock(mu_);
    if (auto call = cancelled_.find(call_id); call != cancelled_.end()) call->second = true;
    cv_.notify_all();
  }

 private:
  // Waits out the delay; true as soon as the call `call_id` is cancelled.
  bool waitCancelled(std::uint64_t call_id) {
    std::unique_lock lock(mu_);
    auto call = cancelled_.emplace(call_id, false).first;
    const bool cancelled = cv_.wait_for(lock, delay_, [&] { return call->second; });
    cancelled_.erase(call);
    return cancelled;
  }

  const std::string text_;
  const std::chrono::milliseconds delay_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::uint64_t, bool> cancelled_;  // the calls in flight, by id
};

class @CLASS@ : public plugboard::Deployer {
 public:
  // `artifact` is the registry entry with its path made absolute (and already checked
  // against the runtime's trust rules), "plugin": the plugin's "name@version", and
  // "trust": those rules, for further files a deployer turns into code
  // (plugboard/host/trust.h). `options` are the step's `deploy = {...}` options, of the
  // types declared in "config" in the manifest below.
  plugboard::Deployed open(const plugboard::Json& artifact,
                           const plugboard::Json& options) override {
    const std::string path = artifact.value("path", "");
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (path.empty() || !in) throw std::runtime_error("'" + path + "': cannot read the artifact");
    std::string greeting = text.str();
    while (!greeting.empty() && greeting.back() == '\n') greeting.pop_back();

    // A duration as users write it ("1.5s", "2m"), or a number of seconds.
    const plugboard::Json delay_option = options.value("delay", plugboard::Json("0s"));
    auto delay = delay_option.is_number_integer()
                     ? plugboard::host::durationFromSeconds(delay_option.get<long long>())
                     : plugboard::host::parseDuration(delay_option.is_string()
                                                          ? delay_option.get<std::string>()
                                                          : delay_option.dump());
    if (!delay) throw std::invalid_argument("option 'delay': " + delay.error().message());

    const std::string plugin = artifact.value("plugin", "");
    const auto at = plugin.find('@');
    plugboard::Json manifest = {
        {"kind", "executor"},
        {"name", plugin.substr(0, at)},
        {"version", at == std::string::npos ? "0.0.0" : plugin.substr(at + 1)},
        {"abi", PLUGBOARD_ABI_MAJOR},
        {"provides", {"template.execute"}},
        {"description", "Greets args.name with the text of " + path}};
    manifest["schemas"]["template.execute"]["input"] = {
        {"type", "object"},
        {"properties", {{"name", {{"type", "string"}}}}},
        {"required", {"name"}}};
    log().debug("deployed " + plugin + " from " + path);
    return {std::move(manifest), std::make_unique<GreetingHandle>(std::move(greeting), *delay)};
  }
};

}  // namespace

PLUGBOARD_DEPLOYER(@CLASS@, R"({
  "name": "@NAME@",
  "version": "0.1.0",
  "deploys": ["@NAME@"],
  "description": "Runs a text file as a plugin that greets args.name",
  "config": {"delay": {"type": "duration", "description": "how long each call takes"}}
})")
