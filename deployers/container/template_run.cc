// deployers/container/template_run.cc: see template_run.h.
#include "deployers/container/template_run.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include <plugboard/host/spawn.h>

#include "deployers/common/child_text.h"
#include "deployers/common/podman.h"

namespace plugboard::container_deployer {
namespace {

using deployer_common::ContainerRunSettings;

struct OutputParameter {
  std::string name;
  std::string path;
  std::optional<std::string> default_value;
};

// What one call runs, read from the request's "template".
struct Step {
  std::string name;
  std::string image;
  std::vector<std::string> command, args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string working_dir;
  std::optional<std::string> source;
  std::string pull;  // podman's --pull from imagePullPolicy; empty: the option's
  std::vector<OutputParameter> outputs;
};

std::string text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::vector<std::string> strings(const Json& spec, const char* member, const std::string& who) {
  std::vector<std::string> out;
  auto it = spec.find(member);
  if (it == spec.end() || it->is_null()) return out;
  if (!it->is_array()) throw std::invalid_argument(who + ": '" + member + "' must be a list");
  for (const auto& v : *it) out.push_back(text(v));
  return out;
}

// Throws std::invalid_argument naming the template and the member at fault.
Step parseStep(std::string_view request_text) {
  const Json request = Json::parse(request_text, nullptr, false);
  if (!request.is_object() || !request.contains("template") || !request["template"].is_object())
    throw std::invalid_argument("the request has no template to run");
  const Json& t = request["template"];
  Step step;
  step.name = t.value("name", std::string("(unnamed)"));
  const std::string who = "template '" + step.name + "'";
  const bool script = t.contains("script");
  const Json* spec = script ? &t["script"] : t.contains("container") ? &t["container"] : nullptr;
  if (spec == nullptr || !spec->is_object())
    throw std::invalid_argument(who + " has neither 'container' nor 'script'");
  if (!spec->contains("image") || !(*spec)["image"].is_string() || (*spec)["image"] == "")
    throw std::invalid_argument(who + " has no image");
  step.image = (*spec)["image"].get<std::string>();
  step.command = strings(*spec, "command", who);
  step.args = strings(*spec, "args", who);
  if (auto env = spec->find("env"); env != spec->end() && !env->is_null()) {
    if (!env->is_array()) throw std::invalid_argument(who + ": 'env' must be a list");
    for (const auto& e : *env) {
      const std::string name = e.is_object() ? e.value("name", std::string()) : std::string();
      if (name.empty() || name.find('=') != std::string::npos)
        throw std::invalid_argument(who + ": an env entry has no valid name: " + e.dump());
      if (e.contains("valueFrom"))
        throw std::invalid_argument(
            who + ": env '" + name +
            "' takes its value from Kubernetes (valueFrom): give it a value");
      step.env.emplace_back(name, e.contains("value") ? text(e["value"]) : std::string());
    }
  }
  step.working_dir = spec->value("workingDir", std::string());
  if (script) step.source = spec->contains("source") ? text((*spec)["source"]) : std::string();
  const std::string policy = spec->value("imagePullPolicy", std::string());
  step.pull = policy == "Always"         ? "always"
              : policy == "Never"        ? "never"
              : policy == "IfNotPresent" ? "missing"
                                         : "";
  if (auto p = t.find("outputs"); p != t.end() && p->is_object() && p->contains("parameters")) {
    for (const auto& o : (*p)["parameters"]) {
      if (!o.is_object() || !o.contains("valueFrom") || !o["valueFrom"].is_object()) continue;
      const Json& from = o["valueFrom"];
      if (!from.contains("path")) continue;
      OutputParameter out{o.value("name", std::string()), text(from["path"]), std::nullopt};
      if (out.name.empty() || out.path.empty() || out.path.front() != '/')
        throw std::invalid_argument(who + ": output parameter '" + out.name +
                                    "' needs an absolute valueFrom.path");
      if (from.contains("default")) out.default_value = text(from["default"]);
      step.outputs.push_back(std::move(out));
    }
  }
  return step;
}

// Reads the child's stdout and stderr until both close, keeping at most the last
// `out_keep` bytes of stdout and `err_keep` of stderr; `err_cut` tells whether stderr was
// cut.
void collect(host::Spawned& child, std::string& out, std::size_t out_keep, std::string& err,
             std::size_t err_keep, bool& err_cut) {
  pollfd fds[2] = {{child.out.get(), POLLIN, 0}, {child.err.get(), POLLIN, 0}};
  std::string* into[2] = {&out, &err};
  const std::size_t keep[2] = {out_keep, err_keep};
  int open = 2;
  char buffer[16384];
  while (open > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        into[i]->append(buffer, static_cast<std::size_t>(n));
        if (into[i]->size() > 2 * keep[i]) {
          into[i]->erase(0, into[i]->size() - keep[i]);
          if (i == 1) err_cut = true;
        }
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        fds[i].fd = -1;
        --open;
      }
    }
  }
  for (int i = 0; i < 2; ++i) {
    if (into[i]->size() > keep[i]) {
      into[i]->erase(0, into[i]->size() - keep[i]);
      if (i == 1) err_cut = true;
    }
  }
}

int exitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

struct Ran {
  int code = -1;
  std::string out;  // its stdout (the first 4 KiB)
  std::string err;  // the end of its stderr, on one line
};

// Runs a short podman command to its end.
Ran runQuiet(const std::vector<std::string>& argv) {
  host::SpawnOptions so;
  so.program = argv.front();
  so.argv = argv;
  so.env = host::environmentWith({});
  auto child = host::spawn(so);
  if (!child) return {-1, {}, child.error().message()};
  child->in.reset();
  std::string out, err;
  bool cut = false;
  collect(*child, out, 4096, err, 4096, cut);
  int status = 0;
  while (::waitpid(child->pid, &status, 0) < 0 && errno == EINTR) {
  }
  return {exitCodeOf(status), std::move(out), deployer_common::stderrTail(err, cut)};
}

// The content of the open file `fd` when it is a regular file of at most `limit` bytes;
// else the reason.
std::pair<std::optional<std::string>, std::string> readParameter(int fd, std::size_t limit) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return {std::nullopt, std::strerror(errno)};
  if (!S_ISREG(st.st_mode)) return {std::nullopt, "it is not a regular file"};
  if (static_cast<std::size_t>(st.st_size) > limit)
    return {std::nullopt, "it holds more than " + std::to_string(limit) + " bytes"};
  std::string data(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < data.size()) {
    const ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  data.resize(got);
  return {std::move(data), {}};
}

// Opens `path` in the file system whose root is the directory `root`, every link resolved
// inside it as the container resolves it (none leads out), without blocking on a FIFO.
// -1 with errno set when it cannot (ENOSYS: a kernel before 5.6).
int openInRoot(int root, const std::string& path) {
  open_how how{};
  how.flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, root, path.c_str(), &how, sizeof how));
}

// Argo's trimming: one trailing newline off (workflow/executor/executor.go).
void trimNewline(std::string& s) {
  if (!s.empty() && s.back() == '\n') s.pop_back();
}

// Each of `step`'s output parameters, read from the stopped container `name` into
// `parameters`; `missing` says why the first that could not be read, and had no default,
// is missing. `scratch` is a directory of this process for copies.
void readOutputs(const ContainerRunSettings& settings, const std::string& name, const Step& step,
                 const std::string& scratch, Json& parameters, std::string& missing) {
  // The stopped container's file system, mounted (rootful podman), is read in place;
  // else each file is copied out with `podman cp`.
  std::vector<std::string> mount = settings.podman.global();
  mount.insert(mount.end(), {"mount", name});
  const Ran mounted = runQuiet(mount);
  host::Fd root;
  if (mounted.code == 0) {
    std::string dir = mounted.out;
    while (!dir.empty() && (dir.back() == '\n' || dir.back() == ' ')) dir.pop_back();
    root = host::Fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  }
  for (std::size_t i = 0; i < step.outputs.size(); ++i) {
    const OutputParameter& o = step.outputs[i];
    std::optional<std::string> value;
    std::string why;
    int fd = root.get() >= 0 ? openInRoot(root.get(), o.path) : -1;
    if (fd < 0 && (root.get() < 0 || errno == ENOSYS)) {  // copied out instead
      const std::string copy = scratch + "/output-" + std::to_string(i);
      std::vector<std::string> cp = settings.podman.global();
      cp.insert(cp.end(), {"cp", name + ":" + o.path, copy});
      const Ran copied = runQuiet(cp);
      why = copied.err;
      if (copied.code == 0)
        fd = ::open(copy.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    } else if (fd < 0) {
      why = std::strerror(errno);
    }
    if (fd >= 0) {
      host::Fd file(fd);
      std::tie(value, why) = readParameter(file.get(), kParameterLimit);
    }
    if (!value && o.default_value) value = o.default_value;
    if (value) {
      trimNewline(*value);
      parameters[o.name] = std::move(*value);
    } else if (missing.empty()) {
      missing = "output parameter '" + o.name + "': cannot read " + o.path +
                " from the container: " + (why.empty() ? "podman cp failed" : why);
    }
  }
}

}  // namespace

struct TemplateRunHandle::Call {
  std::mutex mu;  // guards the members below
  pid_t pid = -1;
  bool exited = false;  // podman run has exited: its pid may be reaped, never signal it
  bool cancelled = false;
};

TemplateRunHandle::TemplateRunHandle(ContainerRunSettings s, std::string name_prefix,
                                     host::TrustRules rules, plugboard::Logger log)
    : settings_(std::move(s)),
      name_prefix_(std::move(name_prefix)),
      rules_(std::move(rules)),
      log_(std::move(log)) {}

TemplateRunHandle::~TemplateRunHandle() = default;

Json TemplateRunHandle::manifest() {
  return {{"kind", "executor"},
          {"name", std::string(kRunKind)},
          {"version", "1.0.0"},
          {"abi", 1},
          {"provides", {"template.execute"}},
          {"concurrency", "parallel"},
          {"description", "Runs the container and script templates of a workflow to their end"}};
}

std::shared_ptr<TemplateRunHandle::Call> TemplateRunHandle::begin(std::uint64_t call_id) {
  auto call = std::make_shared<Call>();
  std::lock_guard lock(mu_);
  calls_[call_id] = call;
  return call;
}

void TemplateRunHandle::end(std::uint64_t call_id) {
  std::lock_guard lock(mu_);
  calls_.erase(call_id);
}

void TemplateRunHandle::cancel(std::uint64_t call_id) {
  std::shared_ptr<Call> call;
  {
    std::lock_guard lock(mu_);
    auto it = calls_.find(call_id);
    if (it == calls_.end()) return;
    call = it->second;
  }
  std::lock_guard lock(call->mu);
  call->cancelled = true;
  if (call->pid > 0 && !call->exited) ::kill(-call->pid, SIGKILL);
}

std::string TemplateRunHandle::execute(std::uint64_t call_id, std::string_view request) {
  const std::shared_ptr<Call> call = begin(call_id);
  struct Ended {
    TemplateRunHandle* self;
    std::uint64_t id;
    ~Ended() { self->end(id); }
  } ended{this, call_id};

  Step step;
  try {
    step = parseStep(request);
  } catch (const std::invalid_argument& e) {
    return Result::Error(e.what()).toText();
  }
  const std::string who = "template '" + step.name + "' (image " + step.image + ")";
  try {
    deployer_common::checkImageFiles(step.image, rules_);
  } catch (const std::runtime_error& e) {
    return Result::Error(who + ": " + e.what()).toText();
  }

  const std::string name = name_prefix_ + std::to_string(++sequence_);
  // Declared before the directories: abandon() finds the entry until they are gone.
  deployer_common::LiveContainer live;
  std::optional<deployer_common::TemporaryDirectory> staging;
  try {
    staging.emplace("plugboard-step-");
  } catch (const std::runtime_error& e) {
    return Result::Error(who + ": " + e.what()).toText();
  }
  live.add(name, settings_.podman, staging->path());
  // The container's user, whoever it is, reads the script: the directory is mounted.
  ::chmod(staging->path().c_str(), 0755);
  const std::string script_dir = staging->path() + "/staging";
  if (step.source) {
    ::mkdir(script_dir.c_str(), 0755);
    const std::string file = script_dir + "/script";
    std::ofstream(file, std::ios::binary) << *step.source;
    // Executable, as Argo's executor writes it (StageFiles): `command: [sh, -c]` runs it.
    ::chmod(file.c_str(), 0755);
  }

  // Outputs are read from the stopped container: it is removed after, not by podman run.
  const bool keep = !step.outputs.empty();
  std::vector<std::string> argv = settings_.podman.global();
  argv.push_back("run");
  if (!keep) argv.push_back("--rm");
  argv.insert(argv.end(), {"--name", name, "--network", settings_.network, "--pull",
                           step.pull.empty() ? settings_.pull : step.pull, "--log-driver", "none"});
  deployer_common::appendContainerLimits(argv, settings_);
  if (!step.working_dir.empty()) argv.insert(argv.end(), {"--workdir", step.working_dir});
  for (const auto& [k, v] : step.env) argv.insert(argv.end(), {"--env", k + "=" + v});
  if (step.source) {
    argv.insert(
        argv.end(),
        {"--volume",
         script_dir + ":" + std::string(kScriptPath.substr(0, kScriptPath.rfind('/'))) + ":ro"});
  }
  // Kubernetes: `command` replaces the image's entrypoint, and its CMD is not used then.
  if (!step.command.empty()) argv.insert(argv.end(), {"--entrypoint", Json(step.command).dump()});
  argv.insert(argv.end(), settings_.args.begin(), settings_.args.end());
  argv.push_back(step.image);
  argv.insert(argv.end(), step.args.begin(), step.args.end());
  if (step.source) argv.emplace_back(kScriptPath);

  host::SpawnOptions so;
  so.program = argv.front();
  so.argv = argv;
  so.env = host::environmentWith({});
  std::optional<host::Spawned> child;
  {
    std::lock_guard lock(call->mu);
    if (call->cancelled)
      return Result::Error(who + ": cancelled before its container started").toText();
    auto spawned = host::spawn(so);
    if (!spawned)
      return Result::Error(who + ": podman did not start: " + spawned.error().message()).toText();
    call->pid = spawned->pid;
    child.emplace(std::move(*spawned));
  }
  deployer_common::LiveContainers::instance().setClient(name, child->pid);
  child->in.reset();
  log_.debug("container " + name + " runs " + who);

  std::string out, err;
  bool err_cut = false;
  collect(*child, out, kResultLimit + 1, err, 8192, err_cut);
  // Exited, not yet reaped: cancel() signals its group only while `exited` is false.
  siginfo_t info{};
  while (::waitid(P_PID, child->pid, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  int status = 0;
  bool cancelled = false;
  {
    std::lock_guard lock(call->mu);
    call->exited = true;
    while (::waitpid(child->pid, &status, 0) < 0 && errno == EINTR) {
    }
    cancelled = call->cancelled;
  }
  deployer_common::LiveContainers::instance().setClient(name, -1);
  const int code = exitCodeOf(status);
  const std::string tail = deployer_common::stderrTail(err, err_cut);
  if (cancelled) {
    deployer_common::removeContainer(settings_.podman, name, log_);
    return Result::Error(who + ": cancelled; its container was killed and removed").toText();
  }
  // `podman run` itself killed by someone else: its container may run on without it.
  if (WIFSIGNALED(status)) {
    deployer_common::removeContainer(settings_.podman, name, log_);
    return Result::Error(who + ": podman was killed by signal " +
                         deployer_common::signalName(WTERMSIG(status)) +
                         "; its container was removed")
        .toText();
  }
  // Podman's own failure (no such image, a bad option, the runtime refused): exit code
  // 125 and its "Error: ..." on stderr.
  if (code == 125 && err.find("Error: ") != std::string::npos) {
    deployer_common::removeContainer(settings_.podman, name, log_);
    return Result::Error(deployer_common::explainMissingImage(
                             who + ": podman could not run it: " + tail, settings_))
        .toText();
  }

  Json parameters = Json::object();
  std::string missing;
  if (keep) {
    readOutputs(settings_, name, step, staging->path(), parameters, missing);
    // Removed by podman alone when it can say so; else with the checks of removeContainer.
    std::vector<std::string> rm = settings_.podman.global();
    rm.insert(rm.end(), {"rm", "--force", name});
    if (runQuiet(rm).code != 0) deployer_common::removeContainer(settings_.podman, name, log_);
  }

  trimNewline(out);
  if (out.size() > kResultLimit) out.erase(0, out.size() - kResultLimit);
  if (!tail.empty()) log_.debug("container " + name + " wrote on stderr: " + tail);
  Json outputs = {{"parameters", std::move(parameters)},
                  {"result", std::move(out)},
                  {"exitCode", std::to_string(code)}};
  if (code != 0) {
    return Result::Failed("main: Error (exit code " + std::to_string(code) + ")")
        .withOutputs(std::move(outputs))
        .toText();
  }
  if (!missing.empty()) return Result::Error(missing).withOutputs(std::move(outputs)).toText();
  return Result::Succeeded().withOutputs(std::move(outputs)).toText();
}

}  // namespace plugboard::container_deployer
