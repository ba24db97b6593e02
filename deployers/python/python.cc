// python: runs a Python plugin (a module or a script using plugboard_sdk) in a child
// process of its own, over protocol v1 on its stdin and stdout (mode "process", the
// default), or inside the runtime's process (mode "embedded", embedded.cc).
//
// Artifacts: {"module": "pyhello", "path": "/abs/dir"} runs
// `<python> -m plugboard_sdk --module pyhello` with PYTHONPATH=/abs/dir:<sdk_path>[:the
// runtime's]; {"path": "/abs/file.py"} runs `<python> -m plugboard_sdk --path /abs/file.py`
// with PYTHONPATH=/abs:<sdk_path>[:the runtime's] (the SDK's launcher, __main__.py). The child code
// (spawning, the protocol, crash/hang/garbage handling, restart with backoff) is the
// process deployer's (library plugboard_child_process). Embedded mode lives in a library of
// its own, loaded on first use (embedded.h).
// Options are described in the manifest at the bottom and in docs/deployers.md.
#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <plugboard/deployer.hpp>
#include <plugboard/host/spawn.h>
#include <plugboard/host/trust.h>

#include "deployers/common/handle.h"
#include "deployers/common/settings.h"
#include "deployers/common/launch.h"
#include "deployers/python/embedded.h"
#include "deployers/python/files.h"

namespace plugboard::python_deployer {
namespace {

namespace fs = std::filesystem;
using deployer_common::Settings;

constexpr const char* kDefaultPython = "/usr/bin/python3";

// The python deployer's own options, over the process deployer's Settings.
struct PythonSettings {
  std::string python = kDefaultPython;
  std::string venv;
  std::string mode = "process";
  std::string sdk_path;  // empty: <module dir>/../python
  Settings child;
  std::set<std::string> process_only;  // options given that embedded mode cannot honour
};

// Options of the process deployer that need a process of the plugin's own.
bool processOnly(const std::string& key) { return key != "cancel_grace"; }

// Reads `options` over `s`; throws std::invalid_argument naming the option.
void applyPythonOptions(PythonSettings& s, const Json& options) {
  if (!options.is_object()) throw std::invalid_argument("the options must be a JSON object");
  Json rest = Json::object();
  for (const auto& [key, value] : options.items()) {
    if (key == "python" || key == "venv" || key == "mode" || key == "sdk_path") {
      if (!value.is_string() || value.get_ref<const std::string&>().empty()) {
        throw std::invalid_argument("option '" + key + "' must be a non-empty string, got " +
                                    value.dump());
      }
      const std::string text = value.get<std::string>();
      if (key == "mode") {
        if (text != "process" && text != "embedded") {
          throw std::invalid_argument("option 'mode' must be 'process' or 'embedded', got '" +
                                      text + "'");
        }
        s.mode = text;
      } else {
        (key == "python" ? s.python : key == "venv" ? s.venv : s.sdk_path) = text;
      }
    } else if (key == "host" || key == "config") {
      throw std::invalid_argument("unknown option '" + key + "'");
    } else {
      rest[key] = value;
      if (processOnly(key)) s.process_only.insert(key);
    }
  }
  deployer_common::applyOptions(s.child, rest);
}

std::string defaultSdkPath();

// The embedded mode's library, loaded once with global symbols so that the C extension
// modules the interpreter imports find libpython's (they are not linked with it), and never
// unloaded (an interpreter cannot be). dlopen rather than Boost.DLL for RTLD_NODELETE.
// The library is checked with the trust rules of the first open that needs it.
OpenEmbeddedFn embeddedOpener(const host::TrustRules& rules) {
  static std::once_flag once;
  static OpenEmbeddedFn open = nullptr;
  static std::string failure;
  std::call_once(once, [&rules] {
    const std::string dir = host::moduleDirectory();
    const std::string path =
        (fs::path(dir).parent_path() / "python" / kEmbeddedLibrary).lexically_normal().string();
    if (host::Status st = host::checkFile(path, rules);
        !st && st.error().code() == host::Error::Code::kUntrusted) {
      failure = "mode 'embedded' is not available: " + host::refusal(path, st).error().message();
      return;
    }
    void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
    if (lib == nullptr) {
      const char* why = ::dlerror();
      failure = "mode 'embedded' is not available: cannot load " + path + ": " +
                (why != nullptr ? why : "unknown error") +
                " (plugboard builds it when libpython3-dev is installed; use mode 'process')";
      return;
    }
    open = reinterpret_cast<OpenEmbeddedFn>(::dlsym(lib, kOpenEmbeddedSymbol));
    if (open == nullptr) failure = "mode 'embedded' is not available: " + path + " has no " +
                                   kOpenEmbeddedSymbol;
  });
  if (open == nullptr) throw std::runtime_error(failure);
  return open;
}

std::string defaultSdkPath() {
  const std::string dir = host::moduleDirectory();
  if (dir.empty()) return {};
  return (fs::path(dir).parent_path() / "python").lexically_normal().string();
}

class PythonDeployer : public plugboard::Deployer {
 public:
  void setUp(const Json& config) override {
    host::ignoreSigpipe();
    applyPythonOptions(defaults_, config);
  }

  // A child that hangs before its hello is killed when the start is cancelled.
  plugboard::Deployed start(const Json& artifact, const Json& options,
                            const plugboard::Cancellation& cancel) override {
    if (!artifact.is_object()) throw std::invalid_argument("the artifact must be a table");
    const auto text = [&](const char* key) -> std::string {
      const auto it = artifact.find(key);
      if (it == artifact.end()) return {};
      if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
        throw std::invalid_argument(std::string("the artifact's '") + key +
                                    "' must be a non-empty string");
      }
      return it->get<std::string>();
    };
    const std::string module = text("module");
    // The artifact's file or directory as the interpreter is given it: links resolved and
    // checked here, so that no link a user could change is followed again.
    const std::string path = resolvedPlugin(text("path"), host::rulesOf(artifact));
    if (module.empty() && path.empty()) {
      throw std::invalid_argument(
          "the artifact has neither a 'module' (with a 'path' to its directory) nor a 'path' "
          "to a .py file");
    }

    PythonSettings s = defaults_;
    applyPythonOptions(s, options);
    const host::TrustRules rules = host::rulesOf(artifact);
    if (s.mode == "embedded") return openEmbedded(s, module, path, rules);

    std::map<std::string, std::string> env = {{"PYTHONDONTWRITEBYTECODE", "1"},
                                              {"PYTHONUNBUFFERED", "1"}};
    std::string python = fs::absolute(s.python).lexically_normal().string();
    if (!s.venv.empty()) {
      const fs::path venv = fs::absolute(s.venv).lexically_normal();
      python = (venv / "bin" / "python").string();
      env["VIRTUAL_ENV"] = venv.string();
    }
    const std::string sdk = sdkPath(s);
    checkPythonFiles(filesOf(python, s, sdk, module, path), rules);

    std::string label, log_name, first_dir;
    std::vector<std::string> args;
    if (!module.empty()) {
      label = "'" + module + "'";
      log_name = module;
      if (!path.empty()) first_dir = fs::absolute(path).lexically_normal().string();
      args = {"-m", "plugboard_sdk", "--module", module};
    } else {
      const fs::path file = fs::absolute(path).lexically_normal();
      label = file.string();
      log_name = file.stem().string();
      first_dir = file.parent_path().string();
      args = {"-m", "plugboard_sdk", "--path", file.string()};
    }

    // PYTHONPATH: the plugin's directory, the SDK, then what option 'env' or the runtime set.
    std::string pythonpath = first_dir.empty() ? sdk : first_dir + ":" + sdk;
    std::string existing;
    if (auto it = s.child.env.find("PYTHONPATH"); it != s.child.env.end()) {
      existing = it->second;
      s.child.env.erase(it);
    } else if (const char* e = std::getenv("PYTHONPATH"); e != nullptr) {
      existing = e;
    }
    if (!existing.empty()) pythonpath += ":" + existing;
    env["PYTHONPATH"] = pythonpath;

    auto launch = deployer_common::makeLaunch(std::move(label), std::move(log_name), "python",
                                               std::move(python), std::move(args), env,
                                               std::move(s.child), log());
    return deployer_common::startDeployed(std::move(launch), &cancel);
  }

 private:
  plugboard::Deployed openEmbedded(const PythonSettings& s, const std::string& module,
                                   const std::string& path, const host::TrustRules& rules) {
    if (!s.process_only.empty()) {
      throw std::invalid_argument(
          "option '" + *s.process_only.begin() +
          "' applies to mode 'process' only: an embedded plugin runs inside the runtime's "
          "process (set in the step's deploy options or the deployer's config)");
    }
    EmbeddedSpec spec;
    spec.module = module;
    if (!module.empty()) {
      if (!path.empty()) spec.directory = fs::absolute(path).lexically_normal().string();
      spec.label = "'" + module + "'";
    } else {
      spec.file = fs::absolute(path).lexically_normal().string();
      spec.label = spec.file;
      std::error_code ec;
      if (!fs::is_regular_file(spec.file, ec))
        throw std::runtime_error("cannot load " + spec.file + ": no such file");
    }
    spec.sdk = sdkPath(s);
    if (s.venv.empty()) spec.python = fs::absolute(s.python).lexically_normal().string();
    if (!s.venv.empty()) spec.venv = fs::absolute(s.venv).lexically_normal().string();
    spec.cancel_grace_s = static_cast<double>(s.child.cancel_grace.count()) / 1000.0;
    spec.log = log();
    // No interpreter is run: the one in this process imports the plugin.
    checkPythonFiles(filesOf("", s, spec.sdk, module, path), rules);
    plugboard::Deployed out;
    embeddedOpener(rules)(spec, out);
    return out;
  }

  // What checkPythonFiles() checks for a start with interpreter `python` (empty: none run).
  static PythonFiles filesOf(const std::string& python, const PythonSettings& s,
                             const std::string& sdk, const std::string& module,
                             const std::string& path) {
    PythonFiles files;
    files.python = python;
    if (!s.venv.empty()) files.venv = fs::absolute(s.venv).lexically_normal().string();
    files.sdk = sdk;
    files.module = module;
    if (module.empty()) {
      files.file = fs::absolute(path).lexically_normal().string();
    } else if (!path.empty()) {
      files.directory = fs::absolute(path).lexically_normal().string();
    }
    return files;
  }

  static std::string sdkPath(const PythonSettings& s) {
    const std::string sdk = s.sdk_path.empty()
                                ? defaultSdkPath()
                                : fs::absolute(s.sdk_path).lexically_normal().string();
    std::error_code ec;
    if (sdk.empty() || !fs::is_directory(fs::path(sdk) / "plugboard_sdk", ec)) {
      throw std::runtime_error("cannot find the Python SDK (plugboard_sdk) in '" + sdk +
                               "'; set the deployer's option 'sdk_path'");
    }
    return sdk;
  }

  PythonSettings defaults_;
};

}  // namespace
}  // namespace plugboard::python_deployer

PLUGBOARD_DEPLOYER(plugboard::python_deployer::PythonDeployer, R"({
  "name": "python", "version": "1.0.0", "deploys": ["python"], "priority": 40,
  "description": "Runs a Python plugin (a module or a .py file using plugboard_sdk): in a child process of its own (mode 'process': a crash, hang or protocol error ends that child only, and the next call starts a new one) or inside the runtime's process (mode 'embedded': fastest, no isolation) and without a child",
  "config": {
    )" PLUGBOARD_CHILD_PROCESS_OPTIONS R"(,
    "python": {"type": "string", "description": "path to the Python interpreter; default /usr/bin/python3; PATH is not searched"},
    "venv": {"type": "string", "description": "a virtualenv directory: its bin/python is run, with VIRTUAL_ENV set"},
    "mode": {"type": "string", "step": true, "description": "'process' (default): a child process per plugin; 'embedded': in the runtime's own interpreter (libpython), without isolation; process-only options are refused there"},
    "sdk_path": {"type": "string", "description": "directory holding plugboard_sdk, put on PYTHONPATH; default: <module dir>/../python, where the build and install put it"},
    "env": {"type": "string-map", "description": "environment variables for the child, added to the runtime's own; a PYTHONPATH here comes after the plugin's directory and the SDK"},
    "start_timeout": {"type": "duration", "step": true, "description": "how long the child may take to import the plugin and answer hello; default 10s"}
  }
})")
