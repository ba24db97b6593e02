// atp: runs Arcaflow plugins unchanged, speaking the Arcaflow Transport Protocol (ATP v3)
// with them over their stdin and stdout (atp_wire.h), one long-lived process (or
// container) per plugin with several calls in flight (docs/arcaflow.md).
//
// Artifacts:
//   {"module": "pkg", "path": "/dir"}  runs  <python> -m pkg --atp  (PYTHONPATH=/dir)
//   {"path": "/dir/plugin.py"}         runs  <python> /dir/plugin.py --atp
//   {"command": ["prog", "arg"...]}    runs  the command as it is
//   {"image": "localhost/x:1"}         runs  podman run -i ... IMAGE --atp, as Arcaflow's
//                                      podman deployer does (no TTY; the image's
//                                      entrypoint is the plugin), with the container
//                                      deployer's options (deployers/common/container_run.h)
// The name and version come from the registry entry (the artifact's "plugin" member): ATP
// carries neither. The schema comes with the plugin's hello and is cached by artifact
// digest (schema_cache.h): with a cached schema, open() starts nothing and the first call
// starts the plugin. The process, its crashes, cancel graces and restarts are the shared
// child code's (deployers/common/child.h).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <plugboard/host/artifact.h>
#include <plugboard/host/options.h>
#include <plugboard/host/spawn.h>
#include <plugboard/host/trust.h>
#include <plugboard/deployer.hpp>

#include "deployers/atp/atp_wire.h"
#include "deployers/atp/schema.h"
#include "deployers/atp/schema_cache.h"
#include "deployers/common/container_run.h"
#include "deployers/common/handle.h"
#include "deployers/common/image_store.h"
#include "deployers/common/launch.h"
#include "deployers/common/settings.h"

namespace plugboard::atp_deployer {
namespace {

namespace fs = std::filesystem;
using deployer_common::Millis;

constexpr const char* kDefaultPython = "/usr/bin/python3";
constexpr Millis kContainerStartTimeout{30000};
// How long a step asked to stop with its cancel handler may take to answer before it is
// killed: the engine's default closure_wait_timeout (internal/step/plugin/provider.go).
constexpr Millis kCancelGrace{5000};

// The Settings of the shared child code, with the atp deployer's default cancel grace.
deployer_common::Settings childSettings(const Json& options) {
  deployer_common::Settings child;
  child.cancel_grace = kCancelGrace;
  deployer_common::applyOptions(child, options);
  return child;
}

// For a package without a __main__ (as arcaflow-plugin-template-python ships it: the plugin
// is a module of the package that runs plugin.run() under `if __name__ == "__main__"`, and
// imports its sibling modules by their bare names, as its Dockerfile runs it: `python
// template_python_plugin.py`), the one module of the package that runs as a program, to be
// run as a script (its directory first on sys.path, the package's parent on PYTHONPATH).
// Empty when `package` is not such a package. Throws std::invalid_argument when none or
// several of its modules run as programs.
std::string scriptOfPackage(const std::string& module, const fs::path& package) {
  std::error_code ec;
  if (!fs::is_directory(package, ec) || fs::exists(package / "__main__.py", ec)) return {};
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(package, ec)) {
    if (entry.path().extension() != ".py" || !entry.is_regular_file(ec)) continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("__name__ == \"__main__\"") != std::string::npos ||
        text.find("__name__ == '__main__'") != std::string::npos)
      found.push_back(entry.path().filename().string());
  }
  std::sort(found.begin(), found.end());
  if (found.size() == 1) return (package / found[0]).string();
  std::string list;
  for (const auto& f : found) list += (list.empty() ? "" : ", ") + f;
  throw std::invalid_argument(
      "package '" + module + "' (" + package.string() + ") has no __main__.py, and " +
      (found.empty() ? std::string("none of its modules runs as a program")
                     : "several of its modules run as programs (" + list + ")") +
      "; name the plugin's module in the artifact, e.g. module = \"" + module + ".plugin\"");
}

struct AtpSettings {
  std::string python = kDefaultPython;
  std::string venv;
  std::string step;
  std::set<std::string> success = {"success"};
  std::string cache_dir = defaultCacheDir();
  Json child = Json::object();      // options of the shared child code
  Json container = Json::object();  // podman options, for image artifacts
};

// Reads `options` over `s`; throws std::invalid_argument naming the option.
void applyAtpOptions(AtpSettings& s, const Json& options) {
  if (!options.is_object()) throw std::invalid_argument("the options must be a JSON object");
  for (const auto& item : options.items()) {
    // Named references, not a structured binding: clang before 16 does not let lambdas
    // capture bindings.
    const std::string& key = item.key();
    const Json& value = item.value();
    const auto text = [&]() -> std::string {
      if (!value.is_string() || value.get_ref<const std::string&>().empty()) {
        throw std::invalid_argument("option '" + key + "' must be a non-empty string, got " +
                                    value.dump());
      }
      return value.get<std::string>();
    };
    if (key == "python") {
      s.python = text();
    } else if (key == "venv") {
      s.venv = text();
    } else if (key == "step") {
      s.step = text();
    } else if (key == "cache_dir") {
      s.cache_dir = value.is_string() ? value.get<std::string>() : text();
    } else if (key == "success_outputs") {
      const auto ids = deployer_common::stringList(key, value);
      if (ids.empty()) throw std::invalid_argument("option 'success_outputs' is empty");
      s.success = std::set<std::string>(ids.begin(), ids.end());
    } else if (key == "host" || key == "config" || key == "channel") {
      throw std::invalid_argument("unknown option '" + key + "'");
    } else {
      // Both kinds of child take memory and env (a process's limit, or the container's).
      const bool podman = deployer_common::isContainerRunOption(key);
      if (podman) s.container[key] = value;
      if (!podman || key == "memory" || key == "env") s.child[key] = value;
    }
  }
}

std::string nonEmptyText(const Json& artifact, const char* key) {
  const auto it = artifact.find(key);
  if (it == artifact.end()) return {};
  if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
    throw std::invalid_argument(std::string("the artifact's '") + key +
                                "' must be a non-empty string");
  }
  return it->get<std::string>();
}

class AtpDeployer : public plugboard::Deployer {
 public:
  void setUp(const Json& config) override {
    host::ignoreSigpipe();
    applyAtpOptions(defaults_, config);
    // Check both option sets now, so that a bad configuration is refused at once.
    childSettings(defaults_.child);
    deployer_common::ContainerRunSettings podman;
    for (const auto& [key, value] : defaults_.container.items())
      deployer_common::applyContainerRunOption(podman, key, value);
    deployer_common::removeLeftoversOf(podman.podman, log());
  }

  plugboard::Deployed start(const Json& artifact, const Json& options,
                            const plugboard::Cancellation& cancel) override {
    if (!artifact.is_object()) throw std::invalid_argument("the artifact must be a table");
    AtpSettings s = defaults_;
    applyAtpOptions(s, options);
    const std::string plugin = nonEmptyText(artifact, host::kPluginMember);
    const auto at = plugin.rfind('@');
    ManifestSpec spec;
    spec.name = at == std::string::npos ? plugin : plugin.substr(0, at);
    spec.version = at == std::string::npos ? "0.0.0" : plugin.substr(at + 1);
    if (spec.name.empty()) spec.name = "arcaflow";
    spec.default_step = s.step;
    spec.success_ids = s.success;
    const host::TrustRules rules = host::rulesOf(artifact);

    Digest digest;
    std::shared_ptr<deployer_common::Launch> launch;
    deployer_common::ContainerRunSettings podman_settings;
    podman_settings.containment = host::containmentOf(artifact, podman_settings.containment);
    bool container = false;
    if (const std::string image = nonEmptyText(artifact, "image"); !image.empty()) {
      container = true;
      launch = containerLaunch(image, s, spec.name, rules, digest, podman_settings);
    } else {
      launch = processLaunch(artifact, s, spec.name, rules, digest);
    }
    digest.addText(spec.default_step);
    const std::string key = digest.hex();

    WireSpec wire;
    wire.manifest = spec;
    wire.frame_limit = launch->settings.frame_limit;
    wire.who = "plugin '" + spec.name + "' (atp)";
    const std::string dir = s.cache_dir;
    const std::string label = launch->label;
    wire.on_schema = [dir, key, label, log = log()](const Json& schema) {
      if (!dir.empty() && !loadSchema(dir, key) && !storeSchema(dir, key, schema))
        log.warn("could not cache the schema of " + label + " in " + dir);
    };
    launch->make_wire = [wire] { return makeAtpWire(wire); };

    if (auto schema = loadSchema(dir, key)) {
      auto manifest = manifestOf(*schema, spec);
      if (manifest)
        return deployer_common::deferredDeployed(std::move(launch), std::move(*manifest));
    }
    try {
      return deployer_common::startDeployed(std::move(launch), &cancel);
    } catch (const std::runtime_error& e) {
      if (!container) throw;
      throw std::runtime_error(deployer_common::explainMissingImage(e.what(), podman_settings));
    }
  }

  void abandon() override { deployer_common::LiveContainers::instance().removeAll(); }

 private:
  std::shared_ptr<deployer_common::Launch> processLaunch(const Json& artifact, AtpSettings& s,
                                                         const std::string& name,
                                                         const host::TrustRules& rules,
                                                         Digest& digest) {
    deployer_common::Settings child = childSettings(s.child);
    const std::string module = nonEmptyText(artifact, "module");
    const std::string path = nonEmptyText(artifact, "path");
    std::map<std::string, std::string> env;
    std::string program, label;
    std::vector<std::string> args;
    if (auto c = artifact.find("command"); c != artifact.end()) {
      std::vector<std::string> command = deployer_common::stringList("command", *c);
      if (command.empty()) throw std::invalid_argument("the artifact's 'command' is empty");
      auto found = host::findExecutable(command[0]);
      if (!found)
        throw std::runtime_error("command '" + command[0] + "' is not an executable file");
      program = *found;
      deployer_common::requireTrusted(program, host::checkFile(program, rules));
      args.assign(command.begin() + 1, command.end());
      label = "'" + name + "' (command " + command[0] + ")";
      digest.addText("command");
      digest.addFile(program);
    } else if (!module.empty() || !path.empty()) {
      program = fs::absolute(s.python).lexically_normal().string();
      if (!s.venv.empty()) {
        const fs::path venv = fs::absolute(s.venv).lexically_normal();
        program = (venv / "bin" / "python").string();
        env["VIRTUAL_ENV"] = venv.string();
      }
      deployer_common::requireTrusted(program, host::checkFile(program, rules));
      env["PYTHONDONTWRITEBYTECODE"] = "1";
      digest.addText("python");
      digest.addText(program);
      if (!module.empty()) {
        std::string script;  // a package's module run as a script, instead of -m
        digest.addText(module);
        if (!path.empty()) {
          const std::string dir = fs::absolute(path).lexically_normal().string();
          deployer_common::requireTrusted(dir, host::checkTree(dir, rules, "module directory"));
          // The module's directory comes first; option env's PYTHONPATH (where the SDK may
          // be) extends it rather than replacing it.
          auto own = child.env.find("PYTHONPATH");
          env["PYTHONPATH"] =
              own == child.env.end() || own->second.empty() ? dir : dir + ":" + own->second;
          if (own != child.env.end()) child.env.erase(own);
          const std::string top = module.substr(0, module.find('.'));
          const fs::path package = fs::path(dir) / top;
          std::error_code ec;
          if (fs::is_directory(package, ec)) {
            digest.addTree(package.string());
            if (top == module) script = scriptOfPackage(module, package);
          } else {
            digest.addFile(package.string() + ".py");
          }
        }
        if (script.empty()) {
          args = {"-m", module, "--atp"};
          label = "'" + name + "' (module " + module + ")";
        } else {
          args = {script, "--atp"};
          label = "'" + name + "' (" + script + ")";
        }
      } else {
        const std::string file = fs::absolute(path).lexically_normal().string();
        deployer_common::requireTrusted(file, host::checkFile(file, rules));
        args = {file, "--atp"};
        label = "'" + name + "' (" + file + ")";
        digest.addFile(file);
      }
    } else {
      throw std::invalid_argument(
          "the artifact has none of 'module' (with a 'path' to its directory), 'path' (a .py "
          "file), 'command' or 'image'");
    }
    for (const auto& a : args) digest.addText(a);
    return deployer_common::makeLaunch(std::move(label), name, "atp", std::move(program),
                                       std::move(args), env, std::move(child), log());
  }

  std::shared_ptr<deployer_common::Launch> containerLaunch(
      const std::string& image, AtpSettings& s, const std::string& name,
      const host::TrustRules& rules, Digest& digest,
      deployer_common::ContainerRunSettings& podman) {
    Json child_options = {{"start_timeout", host::formatGoDuration(kContainerStartTimeout)}};
    for (const auto& [key, value] : s.child.items()) {
      if (key != "memory" && key != "env") child_options[key] = value;
    }
    deployer_common::Settings child = childSettings(child_options);
    for (const auto& [key, value] : s.container.items())
      deployer_common::applyContainerRunOption(podman, key, value);
    podman.channel = "stdio";  // -i, as Arcaflow runs its plugins; never a TTY
    const std::string program = deployer_common::findPodman(podman.podman.binary);
    podman.podman.binary = program;
    deployer_common::requireTrusted(program, host::checkFile(program, rules));
    deployer_common::checkImageFiles(image, rules);
    // The image's ID names its content. An image this machine does not have (yet) has no
    // identity: its schema is not cached (a pull could bring another image of that name).
    const std::optional<std::string> id = imageId(podman.podman, image, s.container);
    if (id) {
      digest.addText("image");
      digest.addText(*id);
    } else {
      s.cache_dir.clear();
    }
    const std::string base =
        "plugboard-atp-" + run_id_ + "-" + deployer_common::imageNamePart(image) + "-";
    auto launch = deployer_common::makeLaunch("'" + name + "' (image " + image + ")", name, "atp",
                                              program, {}, {}, std::move(child), log());
    deployer_common::configureContainerLaunch(*launch, podman, image, {"--atp"}, base, sequence_);
    return launch;
  }

  // The ID of `image` in podman's local store: read from the store's image list
  // (deployers/common/image_store.h), else asked of podman (`podman image inspect`) when
  // the files cannot tell; nullopt when the store has no such image.
  std::optional<std::string> imageId(const deployer_common::Podman& podman,
                                     const std::string& image, const Json& container_options) {
    const auto option = container_options.find("podman");
    const std::string podman_option =
        option != container_options.end() && option->is_string() ? option->get<std::string>()
                                                                 : std::string("podman");
    const deployer_common::StoredImage stored =
        deployer_common::findStoredImage(image, podman_option);
    using Answer = deployer_common::StoredImage::Answer;
    if (stored.answer == Answer::kFound) return stored.id;
    if (stored.answer == Answer::kAbsent) return std::nullopt;
    log().debug("image '" + image + "': asking podman for its ID: " + stored.why);
    auto argv = deployer_common::podmanImageCommand(
        podman, {"image", "inspect", "--format={{.Id}}"}, image);
    if (!argv) return std::nullopt;
    std::optional<std::string> out = deployer_common::commandOutput(*argv);
    if (!out) return std::nullopt;
    while (!out->empty() && (out->back() == '\n' || out->back() == ' ')) out->pop_back();
    if (out->empty()) return std::nullopt;
    return out;
  }

  AtpSettings defaults_;
  const std::string run_id_ = deployer_common::randomRunId();
  std::shared_ptr<std::atomic<unsigned>> sequence_ = std::make_shared<std::atomic<unsigned>>(0);
};

}  // namespace
}  // namespace plugboard::atp_deployer

PLUGBOARD_DEPLOYER(plugboard::atp_deployer::AtpDeployer, R"({
  "name": "atp", "version": "1.0.0", "deploys": ["atp"], "priority": 45, "describes": true,
  "description": "Runs Arcaflow plugins unchanged over the Arcaflow Transport Protocol (v3): a Python module or file, a command, or a container image with podman; one long-lived process per plugin with several calls in flight; cancel_grace defaults to 5s, the engine's closure_wait_timeout",
  "config": {
    )" PLUGBOARD_CHILD_PROCESS_OPTIONS R"(,
    )" PLUGBOARD_CONTAINER_RUN_OPTIONS R"(,
    "python": {"type": "string", "description": "the Python interpreter for module and file artifacts; default /usr/bin/python3"},
    "venv": {"type": "string", "description": "a virtualenv directory: its bin/python runs module and file artifacts, with VIRTUAL_ENV set"},
    "step": {"type": "string", "step": true, "description": "the Arcaflow step that template.execute runs; default: the only step, when the plugin has one"},
    "success_outputs": {"type": "string-list", "step": true, "description": "output ids that mean success; default [\"success\"]; any other output fails the step"},
    "cache_dir": {"type": "string", "description": "where schemas are cached by artifact digest; default $XDG_CACHE_HOME/plugboard/atp or ~/.cache/plugboard/atp; empty: no cache"},
    "start_timeout": {"type": "duration", "step": true, "description": "how long the plugin may take to answer the start output with its hello; default 10s, or 30s for an image"}
  }
})")
