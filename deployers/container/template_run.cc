// deployers/container/template_run.cc: see template_run.h.
#include "deployers/container/template_run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
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
  host::ContainerSecurity security;
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

// Throws std::invalid_argument naming the template and the member at fault, or what its
// securityContext asks for beyond `ceiling`.
Step parseStep(std::string_view request_text, host::PodSecurity ceiling) {
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
  if (host::Status st = host::checkImageReference(step.image); !st)
    throw std::invalid_argument(who + ": image: " + st.error().message());
  const auto member = [](const Json& j, const char* key) -> const Json* {
    const auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
  };
  auto security = host::readSecurityContext(
      member(*spec, "securityContext"), member(t, "securityContext"), ceiling,
      script ? "script" : "container", "the configuration's [containment] templates allows more");
  if (!security) throw std::invalid_argument(who + ": " + security.error().message());
  step.security = std::move(*security);
  step.command = strings(*spec, "command", who);
  step.args = strings(*spec, "args", who);
  if (auto env = spec->find("env"); env != spec->end() && !env->is_null()) {
    if (!env->is_array()) throw std::invalid_argument(who + ": 'env' must be a list");
    for (const auto& e : *env) {
      const std::string name = e.is_object() ? e.value("name", std::string()) : std::string();
      if (host::Status st = host::checkEnvName(name); !st)
        throw std::invalid_argument(who + ": env: " + st.error().message());
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

// Where collect() puts what one descriptor gives: at most the last `keep` bytes (`cut`
// tells whether some were dropped), or with `head`, the first `keep` and nothing after.
struct Sink {
  int fd = -1;
  std::string* into = nullptr;
  std::size_t keep = 0;
  bool head = false;
  bool* cut = nullptr;
};

void take(Sink& s, const char* data, std::size_t n) {
  if (s.head) {
    const std::size_t room = s.keep - std::min(s.keep, s.into->size());
    if (n > room && s.cut != nullptr) *s.cut = true;
    s.into->append(data, std::min(n, room));
    return;
  }
  s.into->append(data, n);
  if (s.into->size() > 2 * s.keep) {
    s.into->erase(0, s.into->size() - s.keep);
    if (s.cut != nullptr) *s.cut = true;
  }
}

// Reads the child's stdout and stderr (sinks 0 and 1) until both close, and any other
// sink's descriptor (non-blocking) while they are open and then to what it holds: the
// child has ended by then, and what it passed on with it.
void collect(std::vector<Sink> sinks) {
  std::vector<pollfd> fds;
  for (const Sink& s : sinks) fds.push_back({s.fd, POLLIN, 0});
  int open = 2;
  char buffer[16384];
  // Whether there may be more to read on sink `i` at once.
  const auto readOne = [&](std::size_t i) {
    for (;;) {
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        take(sinks[i], buffer, static_cast<std::size_t>(n));
        return true;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return false;
      fds[i].fd = -1;
      if (i < 2) --open;
      return false;
    }
  };
  while (open > 0) {
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd >= 0 && fds[i].revents != 0) readOne(i);
    }
  }
  for (std::size_t i = 2; i < fds.size(); ++i) {
    while (fds[i].fd >= 0 && readOne(i)) {
    }
  }
  for (Sink& s : sinks) {
    if (!s.head && s.into->size() > s.keep) {
      s.into->erase(0, s.into->size() - s.keep);
      if (s.cut != nullptr) *s.cut = true;
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
  collect({{child->out.get(), &out, 4096}, {child->err.get(), &err, 4096, false, &cut}});
  int status = 0;
  while (::waitpid(child->pid, &status, 0) < 0 && errno == EINTR) {
  }
  return {exitCodeOf(status), std::move(out), deployer_common::stderrTail(err, cut)};
}

// Argo's trimming: one trailing newline off (workflow/executor/executor.go).
void trimNewline(std::string& s) {
  if (!s.empty() && s.back() == '\n') s.pop_back();
}

// The most the wrapper's records of `outputs` parameters take.
std::size_t channelLimit(std::size_t outputs) { return outputs * (kParameterLimit + 64) + 64; }

// A record of the wrapper's (step_wrapper.cc): a file's content, or why there is none.
struct Record {
  bool file = false;
  std::string data;
};

// The record at `at` of `channel`, `at` moved past it; nullopt when none is there as the
// wrapper writes it. What comes through the channel comes from inside the container: each
// record is checked.
std::optional<Record> nextRecord(const std::string& channel, std::size_t& at) {
  const std::size_t eol = channel.find('\n', at);
  if (eol == std::string::npos || eol - at > 40) return std::nullopt;
  const std::string head = channel.substr(at, eol - at);
  const std::size_t space = head.find(' ');
  if (space == std::string::npos) return std::nullopt;
  const std::string kind = head.substr(0, space), digits = head.substr(space + 1);
  if ((kind != "file" && kind != "error") || digits.empty() || digits.size() > 10 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const std::size_t size = std::stoull(digits);
  if (size > (kind == "file" ? kParameterLimit : 4096) || channel.size() - (eol + 1) < size)
    return std::nullopt;
  at = eol + 1 + size;
  return Record{kind == "file", channel.substr(eol + 1, size)};
}

// Each of `step`'s output parameters from `channel`, the wrapper's records, into
// `parameters`; `missing` says why the first that could not be read, and had no default,
// is missing.
void readOutputs(const Step& step, const std::string& channel, bool channel_cut,
                 Json& parameters, std::string& missing) {
  std::size_t at = 0;
  bool broken = false;
  for (const OutputParameter& o : step.outputs) {
    std::optional<std::string> value;
    std::string why;
    std::optional<Record> r;
    if (!broken) r = nextRecord(channel, at);
    if (!r) {
      broken = true;
      why = at >= channel.size() && !channel_cut
                ? "the container ended before its outputs were saved"
                : "what came through the outputs' channel is not the wrapper's records";
    } else if (r->file) {
      value = std::move(r->data);
    } else {
      why = std::move(r->data);
    }
    if (!value && o.default_value) value = o.default_value;
    if (value) {
      trimNewline(*value);
      parameters[o.name] = std::move(*value);
    } else if (missing.empty()) {
      missing = "output parameter '" + o.name + "': cannot read " + o.path +
                " from the container: " + why;
    }
  }
}

// The image's entrypoint and command (podman image inspect), or why they cannot be known.
host::Expected<ImageCommand> inspectCommand(
    const ContainerRunSettings& settings, const std::string& image) {
  auto argv = deployer_common::podmanImageCommand(
      settings.podman,
      {"image", "inspect", "--format={{json .Config.Entrypoint}}\n{{json .Config.Cmd}}"}, image);
  if (!argv) return argv.error();
  const Ran ran = runQuiet(*argv);
  if (ran.code != 0) return host::Error("podman cannot inspect the image: " + ran.err);
  const std::size_t eol = ran.out.find('\n');
  const Json entrypoint = Json::parse(ran.out.substr(0, eol), nullptr, false);
  const Json cmd = Json::parse(eol == std::string::npos ? "" : ran.out.substr(eol + 1), nullptr,
                               false);
  const auto list = [](const Json& j, std::vector<std::string>& into) {
    if (j.is_null()) return true;
    if (!j.is_array()) return false;
    for (const auto& v : j) {
      if (!v.is_string()) return false;
      into.push_back(v.get<std::string>());
    }
    return true;
  };
  ImageCommand both;
  if (!list(entrypoint, both.first) || !list(cmd, both.second))
    return host::Error("podman's inspection of the image is not its entrypoint and command: " +
                 ran.out);
  return both;
}

}  // namespace

struct TemplateRunHandle::Call {
  std::mutex mu;  // guards the members below
  pid_t pid = -1;
  bool exited = false;  // podman run has exited: its pid may be reaped, never signal it
  bool cancelled = false;
};

TemplateRunHandle::TemplateRunHandle(ContainerRunSettings s, std::string name_prefix,
                                     host::TrustRules rules, plugboard::Logger log,
                                     host::Expected<std::string> wrapper)
    : settings_(std::move(s)),
      name_prefix_(std::move(name_prefix)),
      rules_(std::move(rules)),
      log_(std::move(log)),
      wrapper_(wrapper ? *wrapper : std::string()),
      wrapper_problem_(wrapper ? std::string() : wrapper.error().message()) {}

host::Expected<ImageCommand> TemplateRunHandle::imageCommand(const std::string& image,
                                                             const std::string& pull) {
  {
    std::lock_guard lock(mu_);
    if (auto it = images_.find(image); it != images_.end()) return it->second;
  }
  auto got = inspectCommand(settings_, image);
  if (!got && pull != "never") {  // not here yet: pulled as `podman run` would
    auto argv = deployer_common::podmanImageCommand(settings_.podman, {"pull"}, image);
    if (!argv) return argv.error();
    const Ran pulled = runQuiet(*argv);
    if (pulled.code != 0)
      return host::Error(deployer_common::explainMissingImage(
          "podman could not pull it to read its command: " + pulled.err, settings_));
    got = inspectCommand(settings_, image);
  }
  if (!got) return host::Error(deployer_common::explainMissingImage(got.error().message(), settings_));
  std::lock_guard lock(mu_);
  images_.emplace(image, *got);
  return got;
}

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
    step = parseStep(request, settings_.containment.pod_security);
  } catch (const std::invalid_argument& e) {
    return Result::Error(e.what()).toText();
  }
  const std::string who = "template '" + step.name + "' (image " + step.image + ")";
  try {
    deployer_common::checkImageFiles(step.image, rules_);
  } catch (const std::runtime_error& e) {
    return Result::Error(who + ": " + e.what()).toText();
  }

  // With output parameters, the wrapper runs the command and passes their files on
  // (step_wrapper.cc); it needs the whole command, the image's when the template has none.
  const bool wrapped = !step.outputs.empty();
  std::vector<std::string> command = step.command, args = step.args;
  if (wrapped) {
    if (wrapper_.empty())
      return Result::Error(who + ": cannot save its output parameters: " + wrapper_problem_)
          .toText();
    if (command.empty()) {
      auto image = imageCommand(step.image, step.pull.empty() ? settings_.pull : step.pull);
      if (!image) return Result::Error(who + ": " + image.error().message()).toText();
      command = image->first;
      if (args.empty()) args = image->second;
    }
    if (command.empty() && args.empty())
      return Result::Error(who + ": neither the template nor its image names a command")
          .toText();
  }

  const std::string name = name_prefix_ + std::to_string(++sequence_);
  // Declared before the directory: abandon() finds the entry until it is gone.
  deployer_common::LiveContainer live;
  std::optional<deployer_common::TemporaryDirectory> staging;
  std::string script_dir;
  if (step.source) {
    try {
      staging.emplace("plugboard-step-");
    } catch (const std::runtime_error& e) {
      return Result::Error(who + ": " + e.what()).toText();
    }
    // The container's user, whoever it is, reads the script: the directory is mounted.
    ::chmod(staging->path().c_str(), 0755);
    script_dir = staging->path() + "/staging";
    ::mkdir(script_dir.c_str(), 0755);
    const std::string file = script_dir + "/script";
    std::ofstream(file, std::ios::binary) << *step.source;
    // Executable, as Argo's executor writes it (StageFiles): `command: [sh, -c]` runs it.
    ::chmod(file.c_str(), 0755);
  }
  live.add(name, settings_.podman, staging ? staging->path() : std::string());

  // The outputs come out through a pipe on the container's descriptor 3, so that podman
  // removes the container as it ends.
  host::Fd channel_read, channel_write;
  if (wrapped) {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0)
      return Result::Error(who + ": cannot make a pipe: " + std::strerror(errno)).toText();
    channel_read = host::Fd(ends[0]);
    channel_write = host::Fd(ends[1]);
    ::fcntl(channel_read.get(), F_SETFL, O_NONBLOCK);
  }
  deployer_common::PodmanRun run(settings_.podman);
  run.flag("--rm")
      .option("--name", name)
      .option("--network", settings_.network)
      .option("--pull", step.pull.empty() ? settings_.pull : step.pull)
      .option("--log-driver", "none");
  deployer_common::addContainerLimits(run, settings_);
  if (!step.working_dir.empty()) run.option("--workdir", step.working_dir);
  for (const auto& [k, v] : step.env) run.env(k, v);
  if (step.source) {
    run.option("--volume", script_dir + ":" +
                               std::string(kScriptPath.substr(0, kScriptPath.rfind('/'))) + ":ro");
  }
  if (wrapped) {
    run.option("--preserve-fds", "1")
        .option("--volume", wrapper_ + ":" + std::string(kWrapperPath) + ":ro")
        .option("--entrypoint", Json::array({std::string(kWrapperPath)}).dump());
  } else if (!command.empty()) {
    // Kubernetes: `command` replaces the image's entrypoint, and its CMD is not used then.
    run.option("--entrypoint", Json(command).dump());
  }
  run.contain(step.security, settings_.containment).operatorArgs(settings_.args);
  std::vector<std::string> after_image;
  if (wrapped) {
    after_image.push_back(std::to_string(kParameterLimit));
    for (const OutputParameter& o : step.outputs) after_image.push_back(o.path);
    after_image.emplace_back("--");
    after_image.insert(after_image.end(), command.begin(), command.end());
  }
  after_image.insert(after_image.end(), args.begin(), args.end());
  if (step.source) after_image.emplace_back(kScriptPath);
  auto made = run.command(step.image, after_image);
  if (!made) return Result::Error(who + ": " + made.error().message()).toText();
  const std::vector<std::string>& argv = *made;

  host::SpawnOptions so;
  so.program = argv.front();
  so.argv = argv;
  so.env = host::environmentWith({});
  if (wrapped) {
    so.pass_fd = channel_write.get();
    so.pass_fd_as = 3;
  }
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
  channel_write.reset();
  log_.debug("container " + name + " runs " + who);

  std::string out, err, channel;
  bool err_cut = false, channel_cut = false;
  std::vector<Sink> sinks = {{child->out.get(), &out, kResultLimit + 1},
                             {child->err.get(), &err, 8192, false, &err_cut}};
  if (wrapped) {
    sinks.push_back(
        {channel_read.get(), &channel, channelLimit(step.outputs.size()), true, &channel_cut});
  }
  collect(std::move(sinks));
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
  if (wrapped) readOutputs(step, channel, channel_cut, parameters, missing);

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
