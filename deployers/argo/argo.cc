// argo: runs an Argo Workflows executor plugin, an HTTP server in a container image
// described by a plugin.yaml (kind ExecutorPlugin), as a plugboard plugin: its sidecar is
// started with podman as Argo's controller starts it (deployers/argo/sidecar.h), one per
// plugin and start (a run, or a generation of `serve`), and called as Argo's agent calls
// it: POST /api/v1/template.execute with the bearer token and an ExecuteTemplateArgs
// (workflow/util/plugin/plugin.go). A sidecar already running elsewhere is reached by URL.
//
// Artifacts (docs/registry.md):
//   "plugins/hello/plugin.yaml"                 the manifest, or the ConfigMap `argo
//                                               executor-plugin build` writes
//   "plugins/hello"                             a directory holding plugin.yaml: with a
//                                               server.* beside it, that script becomes the
//                                               container's args, as `argo executor-plugin
//                                               build` makes them
//   { path = "...", version = "1.0.0", polled = true }   (polled: read by the runtime)
//   { url = "http://127.0.0.1:4355", name = "hello", token_file = "...", version = "..." }
// Replies: 200 with a node -> its phase, message, outputs and requeue; 200 with {} -> not
// handled; 404 -> the RPC is unavailable for the handle's life; 503 and connection errors
// -> sent again with backoff until the call is cancelled (its deadline) or the tries are
// used up; anything else -> an Error quoting the status and body.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <plugboard/host/argo.h>
#include <plugboard/host/options.h>
#include <plugboard/host/spawn.h>
#include <plugboard/host/trust.h>
#include <plugboard/deployer.hpp>

#include "deployers/argo/http_client.h"
#include "deployers/argo/plugin_spec.h"
#include "deployers/argo/sidecar.h"
#include "deployers/common/launch.h"
#include "deployers/common/podman.h"

namespace plugboard::argo_deployer {
namespace {

using Millis = std::chrono::milliseconds;

struct Settings {
  SidecarOptions sidecar;
  int tries = 5;         // Argo's agent: 5 steps of backoff
  Millis backoff{1000};  // the first wait; doubled each time
};

std::vector<std::string> stringList(const std::string& key, const Json& value) {
  std::vector<std::string> out;
  if (value.is_array()) {
    for (const auto& v : value) {
      if (!v.is_string()) break;
      out.push_back(v.get<std::string>());
    }
    if (out.size() == value.size()) return out;
  }
  throw std::invalid_argument("option '" + key + "' must be a list of strings, got " +
                              value.dump());
}

Millis durationOption(const std::string& key, const Json& value) {
  auto d = value.is_string()   ? host::parseDuration(value.get<std::string>())
           : value.is_number() ? host::durationFromSeconds(value.get<long long>())
                               : host::Expected<Millis>(host::Error("not a duration"));
  if (!d) throw std::invalid_argument("option '" + key + "': " + d.error().message());
  return *d;
}

void applySettings(Settings& s, const Json& options) {
  if (!options.is_object()) throw std::invalid_argument("the options must be a JSON object");
  for (const auto& item : options.items()) {
    const std::string& key = item.key();
    const Json& value = item.value();
    if (deployer_common::applyPodmanOption(s.sidecar.podman, key, value)) continue;
    if (key == "pull") {
      s.sidecar.pull = deployer_common::podmanPull(key, value);
    } else if (key == "reach") {
      if (value != "netns" && value != "publish")
        throw std::invalid_argument("option 'reach' must be 'netns' or 'publish', got " +
                                    value.dump());
      s.sidecar.reach = value.get<std::string>();
    } else if (key == "ulimits") {
      s.sidecar.ulimits = stringList(key, value);
    } else if (key == "args") {
      s.sidecar.args = stringList(key, value);
    } else if (key == "env") {
      if (!value.is_object())
        throw std::invalid_argument("option 'env' must be a table of strings");
      for (const auto& [name, v] : value.items()) {
        if (!v.is_string() || name.empty() || name.find('=') != std::string::npos)
          throw std::invalid_argument("option 'env' must be a table of strings");
        s.sidecar.env[name] = v.get<std::string>();
      }
    } else if (key == "start_timeout") {
      s.sidecar.start_timeout = durationOption(key, value);
    } else if (key == "backoff") {
      s.backoff = durationOption(key, value);
    } else if (key == "tries") {
      if (!value.is_number_integer() || value.get<long long>() < 1 || value.get<long long>() > 100)
        throw std::invalid_argument("option 'tries' must be an integer from 1 to 100, got " +
                                    value.dump());
      s.tries = value.get<int>();
    } else {
      throw std::invalid_argument("unknown option '" + key + "'");
    }
  }
}

std::string readText(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(what + " '" + path + "' cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The sidecar of the artifact's `path`: a plugin.yaml (or the ConfigMap Argo's build
// writes), or a directory holding plugin.yaml. As `argo executor-plugin build DIR` does
// (cmd/argo/commands/executorplugin/io.go, loadPluginManifest), the one file named
// server.* beside a plugin.yaml becomes the container's args; two such files are an
// error. Each file read is checked against `rules` first.
SidecarSpec specOfPath(const std::string& path, const host::TrustRules& rules) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool dir = fs::is_directory(path, ec);
  const fs::path manifest = dir ? fs::path(path) / "plugin.yaml" : fs::path(path);
  if (dir && !fs::exists(manifest, ec))
    throw std::runtime_error(path + ": the directory holds no plugin.yaml");
  deployer_common::requireTrusted(manifest.string(), host::checkFile(manifest, rules));
  auto read = readExecutorPlugin(readText(manifest.string(), "plugin manifest"));
  if (!read) throw std::runtime_error(manifest.string() + ": " + read.error().message());
  if (read->from_config_map) return std::move(*read);  // built already
  std::vector<fs::path> servers;
  for (const auto& e : fs::directory_iterator(manifest.parent_path(), ec)) {
    if (e.path().filename().string().starts_with("server.")) servers.push_back(e.path());
  }
  if (servers.size() > 1) {
    std::sort(servers.begin(), servers.end());
    std::string names;
    for (const auto& f : servers) names += (names.empty() ? "" : ", ") + f.filename().string();
    throw std::runtime_error(manifest.parent_path().string() + ": plugin '" + read->name +
                             "' has more than one server.* file (" + names +
                             "); Argo's build takes exactly one");
  }
  if (servers.size() == 1) {
    deployer_common::requireTrusted(servers[0].string(), host::checkFile(servers[0], rules));
    read->args = {readText(servers[0].string(), "plugin server")};
  }
  return std::move(*read);
}

// The plugin's version: the artifact's, else the manifest's annotation plugboard/version,
// else the image's tag when it is one ("v1.2.0" or "1.2.0"), else 0.0.0.
std::string versionOf(const Json& artifact, const SidecarSpec& spec) {
  if (auto v = artifact.find("version"); v != artifact.end() && v->is_string()) return *v;
  if (!spec.version.empty()) return spec.version;
  const auto colon = spec.image.rfind(':');
  if (colon != std::string::npos && spec.image.find('/', colon) == std::string::npos) {
    std::string tag = spec.image.substr(colon + 1);
    if (!tag.empty() && tag[0] == 'v') tag.erase(0, 1);
    int dots = 0;
    bool digits = !tag.empty();
    for (char c : tag) {
      if (c == '.')
        ++dots;
      else if (c < '0' || c > '9')
        digits = false;
    }
    if (digits && dots == 2) return tag;
  }
  return "0.0.0";
}

Json manifestOf(const std::string& name, const std::string& version,
                const std::string& description) {
  Json m = {{"kind", "executor"},
            {"name", name},
            {"version", version},
            {"abi", PLUGBOARD_ABI_MAJOR},
            {"provides", {"template.execute"}},
            {"aliases", {name + "-executor-plugin"}}};
  m["description"] = description.empty() ? "Argo executor plugin " + name : description;
  return m;
}

std::string errorResult(const std::string& message) {
  return plugboard::Result::Error(message).toText();
}

class ArgoHandle : public plugboard::Handle {
 public:
  ArgoHandle(std::string name, Settings settings, HttpTarget target, std::string token,
             std::unique_ptr<Sidecar> sidecar)
      : name_(std::move(name)),
        settings_(std::move(settings)),
        sidecar_(std::move(sidecar)),
        client_(std::move(target)),
        token_(std::move(token)) {}

  std::string execute(std::uint64_t id, std::string_view request_text) override {
    const Json request = Json::parse(request_text, nullptr, false);
    if (!request.is_object())
      return errorResult("plugin '" + name_ + "' (argo): the request is not a JSON object");
    const std::string rpc = request.value("rpc", std::string("template.execute"));
    // Whether it is polled at all is the runtime's decision (the registry's `polled`).
    const bool polled = request.value("via", std::string()) == "poll";
    if (rpc != "template.execute" || unavailable_) {
      return errorResult("plugin '" + name_ + "' (argo) does not provide " + rpc +
                         (unavailable_ ? " (its sidecar answered 404 before)" : ""));
    }
    // The sidecar knows itself by its name; a polled plugin sees the key as written.
    const std::string key = polled ? request.value("key", name_) : name_;
    std::string step;
    if (auto t = request.find("template"); t != request.end() && t->is_object())
      step = t->value("name", std::string());
    const std::string body = host::executeTemplateArgs(request, key, step.empty() ? name_ : step);
    client_.begin(id);
    std::string result = call(id, body);
    client_.end(id);
    return result;
  }

  void cancel(std::uint64_t id) override { client_.cancel(id); }

 private:
  std::string call(std::uint64_t id, const std::string& body) {
    const std::string who = "plugin '" + name_ + "' (argo)";
    const std::vector<std::pair<std::string, std::string>> headers = {
        {"Content-Type", "application/json"}, {"Authorization", "Bearer " + token_}};
    Millis wait = settings_.backoff;
    std::string last;
    for (int attempt = 1;; ++attempt) {
      auto response = client_.post(id, "/api/v1/template.execute", body, headers);
      if (!response && response.error().code() == host::Error::Code::kCancelled) {
        return errorResult(who + ": cancelled while waiting for its sidecar");
      }
      if (response && response->status == 200) {
        auto result = host::resultOfExecuteTemplateReply(response->body);
        if (result) return *result;
        return errorResult(who + " answered a reply Argo could not read: " +
                           result.error().message() + ": " + excerpt(response->body));
      }
      if (response && response->status == 404) {
        unavailable_ = true;
        return errorResult(who +
                           " does not provide template.execute (its sidecar answered 404); "
                           "it is not called again");
      }
      if (response && response->status != 503) {
        return errorResult(who + ": " + std::to_string(response->status) + " " + response->reason +
                           ": " + excerpt(response->body));
      }
      last = response ? "503 " + response->reason + ": " + excerpt(response->body)
                      : response.error().message();
      if (sidecar_) {
        if (auto end = sidecar_->ended()) return errorResult(who + ": its sidecar ended: " + *end);
      }
      if (attempt >= settings_.tries) {
        return errorResult(who + ": no answer after " + std::to_string(attempt) +
                           " tries; the last: " + last);
      }
      if (client_.waitCancelled(id, wait)) {
        return errorResult(who + ": cancelled while waiting for its sidecar (" + last + ")");
      }
      wait *= 2;
    }
  }

  static std::string excerpt(const std::string& body) {
    constexpr std::size_t kShown = 300;
    std::string s = body.size() > kShown ? body.substr(0, kShown) + "..." : body;
    return s.empty() ? "(no body)" : s;
  }

  const std::string name_;
  const Settings settings_;
  const std::unique_ptr<Sidecar> sidecar_;  // null for a sidecar reached by URL
  HttpClient client_;
  const std::string token_;
  std::atomic<bool> unavailable_{false};
};

// "http://host:port" -> target; throws std::invalid_argument.
HttpTarget targetOfUrl(const std::string& url) {
  const std::string prefix = "http://";
  if (!url.starts_with(prefix))
    throw std::invalid_argument("the artifact's 'url' must start with http://");
  std::string rest = url.substr(prefix.size());
  rest = rest.substr(0, rest.find('/'));
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos) throw std::invalid_argument("the artifact's 'url' has no port");
  HttpTarget t;
  t.address = rest.substr(0, colon);
  if (t.address == "localhost") t.address = "127.0.0.1";
  if (t.address.size() > 2 && t.address.front() == '[')
    t.address = t.address.substr(1, t.address.size() - 2);
  const int port = std::atoi(rest.substr(colon + 1).c_str());
  if (port < 1 || port > 65535) throw std::invalid_argument("the artifact's 'url' has a bad port");
  t.port = static_cast<unsigned short>(port);
  t.host_header = rest;
  return t;
}

class ArgoDeployer : public plugboard::Deployer {
 public:
  void setUp(const Json& config) override {
    host::ignoreSigpipe();
    applySettings(defaults_, config);
    deployer_common::removeLeftoversOf(defaults_.sidecar.podman, log());
  }

  plugboard::Deployed start(const Json& artifact, const Json& options,
                            const plugboard::Cancellation& cancel) override {
    if (!artifact.is_object()) throw std::invalid_argument("the artifact must be a table");
    Settings s = defaults_;
    applySettings(s, options);
    if (auto polled = artifact.find("polled"); polled != artifact.end() && !polled->is_boolean())
      throw std::invalid_argument("the artifact's 'polled' must be true or false");
    const host::TrustRules rules = host::rulesOf(artifact);
    std::optional<SidecarSpec> spec;
    if (auto path = artifact.find("path"); path != artifact.end() && path->is_string())
      spec = specOfPath(*path, rules);
    if (auto url = artifact.find("url"); url != artifact.end()) {
      if (!url->is_string()) throw std::invalid_argument("the artifact's 'url' must be a string");
      std::string name = artifact.value("name", spec ? spec->name : std::string());
      if (name.empty())
        throw std::invalid_argument("an artifact with a 'url' needs a 'name' (or a 'path')");
      std::string token = artifact.value("token", std::string());
      if (auto file = artifact.find("token_file"); file != artifact.end() && file->is_string())
        token = readText(*file, "token file");
      const SidecarSpec known = spec ? *spec : SidecarSpec{};
      auto handle =
          std::make_unique<ArgoHandle>(name, s, targetOfUrl(*url), token, nullptr);
      return {manifestOf(name, versionOf(artifact, known), known.description), std::move(handle)};
    }
    if (!spec)
      throw std::invalid_argument("the artifact has neither 'path' (a plugin.yaml) nor 'url'");
    s.sidecar.podman.binary = deployer_common::findPodman(s.sidecar.podman.binary);
    deployer_common::requireTrusted(s.sidecar.podman.binary,
                                    host::checkFile(s.sidecar.podman.binary, rules));
    deployer_common::checkImageFiles(spec->image, rules);
    s.sidecar.containment = host::containmentOf(artifact, s.sidecar.containment);
    const std::string container =
        "plugboard-argo-" + run_id_ + "-" + spec->name + "-" + std::to_string(++sequence_);
    auto sidecar = std::make_unique<Sidecar>(*spec, s.sidecar, container, log(), cancel);
    HttpTarget target = sidecar->target();
    std::string token = sidecar->token();
    const Json manifest = manifestOf(spec->name, versionOf(artifact, *spec), spec->description);
    auto handle = std::make_unique<ArgoHandle>(spec->name, s, std::move(target),
                                               std::move(token), std::move(sidecar));
    return {manifest, std::move(handle)};
  }

  void abandon() override { deployer_common::LiveContainers::instance().removeAll(); }

 private:
  Settings defaults_;
  const std::string run_id_ = deployer_common::randomRunId();
  std::atomic<unsigned> sequence_{0};
};

}  // namespace
}  // namespace plugboard::argo_deployer

PLUGBOARD_DEPLOYER(plugboard::argo_deployer::ArgoDeployer, R"({
  "name": "argo", "version": "1.0.0", "deploys": ["argo"], "priority": 25,
  "description": "Runs an Argo Workflows executor plugin (a plugin.yaml of kind ExecutorPlugin) from its sidecar image with podman, as Argo's agent pod would, and calls it over Argo's HTTP API; or calls a sidecar already running at a URL",
  "config": {
    )" PLUGBOARD_PODMAN_OPTIONS R"(,
    "pull": {"type": "string", "step": true, "description": "when to pull the image: never, if-not-present or always; default: the manifest's imagePullPolicy, else if-not-present"},
    "reach": {"type": "string", "description": "how the sidecar's port is reached: 'netns' (default), no network for the sidecar and sockets made in its network namespace (needs root); or 'publish', podman's default network with the port published on 127.0.0.1"},
    "ulimits": {"type": "string-list", "description": "podman --ulimit values; default nofile=1024:1024 and nproc=4096:4096"},
    "env": {"type": "string-map", "step": true, "description": "environment variables set in the sidecar, over the manifest's; required for those the manifest takes from valueFrom, such as secrets"},
    "args": {"type": "string-list", "description": "more podman run arguments, placed before the image"},
    "start_timeout": {"type": "duration", "step": true, "description": "how long the sidecar may take to open its port; default 30s"},
    "tries": {"type": "integer", "step": true, "description": "how often a call is sent while the sidecar answers 503 or cannot be reached; default 5, as Argo's agent"},
    "backoff": {"type": "duration", "step": true, "description": "the wait before the second try, doubled before each next one; default 1s"}
  }
})")
