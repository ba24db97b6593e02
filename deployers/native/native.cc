// native: runs a plugin .so inside the runtime's process.
//
// The fastest way to call a plugin, and the one with no protection: a plugin that crashes
// takes the runtime down with it, and one that leaks or corrupts memory does so in the
// runtime. Use the `process` deployer for plugins you do not trust that far.
//
// Artifact: {"path": "/abs/plugin.so"}, and "file", the file as named when "path" is the
// descriptor the runtime checked it on (/proc/self/fd/N). Options: "config", handed to the
// plugin's setUp().
// The plugin is loaded through the host kit (plugboard/host/native.h); its log lines go to
// the runtime's log through this deployer's, tagged with the plugin's name.
//
// Since a crash here ends the runtime, the deployer leaves a last line naming the culprit:
// each thread notes which plugin it runs (loading, or a call and its id) and a handler of
// the fatal signals writes that note to stderr before the signal takes its course (the
// previous handler, or the default: a core dump). Without it an operator sees the log
// stop with no hint of which plugin to move to the `process` deployer.
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include <plugboard/host/native.h>
#include <plugboard/deployer.hpp>

namespace {

// What this thread runs of a plugin's code: `who` names it (a string that outlives the
// note), `call` is the call's id, 0 while loading. Initial-exec, so that the handler's
// read of it is a plain load and never allocates.
struct CrashNote {
  const char* who = nullptr;
  std::uint64_t call = 0;
};
__attribute__((tls_model("initial-exec"))) thread_local CrashNote t_note;

// Sets this thread's note for the life of the scope, restoring the one before.
class Noting {
 public:
  Noting(const std::string& who, std::uint64_t call) : saved_(t_note) { t_note = {who.c_str(), call}; }
  ~Noting() { t_note = saved_; }
  Noting(const Noting&) = delete;
  Noting& operator=(const Noting&) = delete;

 private:
  CrashNote saved_;
};

constexpr int kFatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
struct sigaction g_previous[NSIG];

void put(const char* text) {
  for (std::size_t left = std::strlen(text); left > 0;) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

void putNumber(std::uint64_t n) {
  char digits[24];
  char* p = digits + sizeof digits;
  *--p = '\0';
  do {
    *--p = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n != 0);
  put(p);
}

// Async-signal-safe: writes the note, puts the previous handler back and lets the signal
// take its course (a fault repeats on return; a sent or raised signal is raised again).
void onFatal(int sig, siginfo_t* info, void* context) {
  const CrashNote note = t_note;
  if (note.who != nullptr) {
    put("plugboard: fatal signal ");
    putNumber(static_cast<std::uint64_t>(sig));
    put(" (");
    put(sigabbrev_np(sig) != nullptr ? sigabbrev_np(sig) : "?");
    put(") in ");
    put(note.who);
    if (note.call != 0) {
      put(", in call ");
      putNumber(note.call);
    } else {
      put(", while it was loaded");
    }
    put("; it runs in the runtime's process (deployer native): place it with the `process` "
        "deployer so that a crash fails only its own calls\n");
  }
  const struct sigaction& previous = g_previous[sig];
  ::sigaction(sig, &previous, nullptr);
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(sig, info, context);
    return;
  }
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
    return;
  }
  if (info == nullptr || info->si_code <= 0) ::raise(sig);  // sent, not a fault
}

// Once per process, when the deployer is first used. This module stays loaded from then
// on (RTLD_NODELETE), so the handler never points at unmapped code.
void installCrashNote() {
  static std::once_flag once;
  std::call_once(once, [] {
    Dl_info self{};
    if (::dladdr(reinterpret_cast<void*>(&onFatal), &self) == 0 ||
        ::dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE) == nullptr) {
      return;
    }
    struct sigaction action {};
    action.sa_sigaction = &onFatal;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (int sig : kFatal) ::sigaction(sig, &action, &g_previous[sig]);
  });
}

class NativeHandle : public plugboard::Handle {
 public:
  NativeHandle(std::unique_ptr<plugboard::host::NativeInstance> instance, std::string who)
      : instance_(std::move(instance)), who_(std::move(who)) {}
  std::string execute(std::uint64_t call_id, std::string_view request) override {
    Noting note(who_, call_id);
    return instance_->execute(call_id, request);
  }
  void cancel(std::uint64_t call_id) override {
    Noting note(who_, call_id);
    instance_->cancel(call_id);
  }

 private:
  std::unique_ptr<plugboard::host::NativeInstance> instance_;
  const std::string who_;  // "plugin 'NAME' (FILE)", for the crash note
};

class NativeDeployer : public plugboard::Deployer {
 public:
  plugboard::Deployed open(const plugboard::Json& artifact,
                           const plugboard::Json& options) override {
    const std::string path = artifact.value("path", "");
    if (path.empty()) throw std::invalid_argument("the artifact has no 'path' to a plugin .so");
    installCrashNote();
    // The file as named when `path` is the descriptor it was checked on (/proc/self/fd/N).
    const std::string file = artifact.value("file", path);
    const std::string loading = "the plugin file " + file;
    Noting note(loading, 0);  // its initializers run in load()
    auto library = plugboard::host::NativeLibrary::load(path);
    if (!library) throw std::runtime_error(library.error().message());
    const std::string config = options.value("config", plugboard::Json::object()).dump();
    auto instance = (*library)->createInstance(
        config, [log = log(), name = (*library)->name()](int level, std::string_view message) {
          const std::string line = "[" + name + "] " + std::string(message);
          if (level <= PLUGBOARD_LOG_DEBUG) {
            log.debug(line);
          } else if (level == PLUGBOARD_LOG_INFO) {
            log.info(line);
          } else if (level == PLUGBOARD_LOG_WARN) {
            log.warn(line);
          } else {
            log.error(line);
          }
        });
    if (!instance) throw std::runtime_error(instance.error().message());
    return {plugboard::Json::parse((*library)->manifestText()),
            std::make_unique<NativeHandle>(std::move(*instance),
                                           "plugin '" + (*library)->name() + "' (" + file + ")")};
  }
};

}  // namespace

PLUGBOARD_DEPLOYER(NativeDeployer, R"({
  "name": "native", "version": "1.0.0", "deploys": ["native"], "priority": 100, "in_process": true,
  "description": "Loads a plugin .so into the runtime's own process: fastest, and no protection from a plugin that crashes",
  "config": {"config": {"type": "object", "step": true, "description": "configuration handed to the plugin's setUp"}}
})")
