#include "deployers/common/child.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include <plugboard/host/options.h>
#include <plugboard/host/protocol.h>

#include "deployers/common/child_text.h"

namespace plugboard::deployer_common {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kStderrTailBytes = 4096;
constexpr std::size_t kStderrLogLine = 4096;  // longer stderr lines are logged in pieces
constexpr Millis kShutdownGrace{2000};        // after `shutdown`, before SIGKILL
constexpr Millis kWriteStall{10000};          // a child that reads nothing for this long hangs
constexpr Millis kStderrDrain{200};           // for a dead child's last words on stderr
constexpr std::chrono::microseconds kYieldFor{200};  // a caller yields this long before sleeping

// A thread running `(child->*body)()`. Through a lambda local to this file, so that what
// std::thread instantiates (a vtable and typeinfo) stays out of the module's exports.
std::thread runThread(Child* child, void (Child::*body)()) {
  return std::thread([child, body] { (child->*body)(); });
}

}  // namespace

// ---------------------------------------------------------------------------------------
// One child process

Child::Child(std::shared_ptr<const Launch> launch, Spawned spawned, std::pair<Fd, Fd> wake)
    : launch_(std::move(launch)),
      pid_(spawned.pid),
      label_(launch_->log_name),
      in_(std::move(spawned.in)),
      out_(std::move(spawned.out)),
      err_(std::move(spawned.err)),
      wake_read_(std::move(wake.first)),
      wake_write_(std::move(wake.second)),
      wire_(launch_->make_wire ? launch_->make_wire() : makeV1Wire(launch_->settings.frame_limit)) {
}

std::shared_ptr<Child> Child::start(std::shared_ptr<const Launch> launch,
                                    const plugboard::Cancellation* cancel) {
  const auto failed = [&](const std::string& why) {
    return std::runtime_error("plugin " + launch->label + " did not start: " + why);
  };
  std::shared_ptr<Child> child;
  try {
    auto wake = host::makePipe();
    if (!wake) throw std::runtime_error(wake.error().message());
    const unsigned start = ++*launch->starts;
    const std::vector<std::string> argv =
        launch->argv_for_start ? launch->argv_for_start(start) : launch->argv;
    child.reset(new Child(launch, spawnChild(*launch, argv), std::move(*wake)));
    child->start_ = start;
    if (launch->after_spawn) launch->after_spawn(start, child->pid_);
    child->reader_ = runThread(child.get(), &Child::readFrames);
    child->stderr_reader_ = runThread(child.get(), &Child::readStderr);
  } catch (const std::exception& e) {
    throw failed(e.what());
  }
  child->send(child->wire_->greeting());

  // A cancel kills the child; its reader then sees it end and removes what it left.
  constexpr const char* kCancelled = "was cancelled while it started";
  std::optional<plugboard::Cancellation::Watch> watch;
  if (cancel != nullptr) watch.emplace(cancel->watch([c = child.get()] { c->killFor(kCancelled); }));
  const Millis timeout = launch->settings.start_timeout;
  launch->log.debug("plugin " + launch->label + " is starting: waiting for its hello (pid " +
                    std::to_string(child->pid_) + ")");
  std::unique_lock lock(child->mu_);
  if (!child->cv_.wait_for(lock, timeout, [&] { return child->greeted_ || child->ended_; })) {
    lock.unlock();
    child->killFor("did not answer 'hello' within " + host::formatGoDuration(timeout));
    lock.lock();
    child->cv_.wait(lock, [&] { return child->ended_; });
  }
  const bool cancelled = child->kill_cause_ == kCancelled;
  if (cancelled && !child->ended_) {  // greeted as it was killed
    child->cv_.wait(lock, [&] { return child->ended_; });
  }
  if (cancelled) {
    lock.unlock();
    watch.reset();
    throw std::runtime_error("plugin " + launch->label + ": the start was cancelled");
  }
  if (child->ended_) {
    std::string why = fs::path(launch->program).filename().string() + " " + child->end_cause_;
    if (child->kill_cause_.empty() && launch->settings.memory) {
      why += " (option 'memory' limits it to " + launch->settings.memory_text +
             "; is that too small?)";
    }
    if (!child->end_tail_.empty()) why += ": " + child->end_tail_;
    lock.unlock();
    throw failed(why);
  }
  return child;
}

Child::~Child() {
  if (!reader_.joinable()) {  // start() failed before the reader ran: reap here
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    return;
  }
  bool ended;
  {
    std::lock_guard lock(mu_);
    closing_ = true;
    ended = ended_;
  }
  if (!ended) send(wire_->shutdown());
  closeInput();
  {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, kShutdownGrace, [&] { return ended_; })) {
      lock.unlock();
      killFor("");
    }
  }
  wake();
  reader_.join();
  if (stderr_reader_.joinable()) stderr_reader_.join();
}

bool Child::alive() const {
  std::lock_guard lock(mu_);
  return !ended_ && kill_cause_.empty();
}

std::string Child::who() const {
  return "plugin " + (name_.empty() ? launch_->label : "'" + name_ + "'") + " (" +
         launch_->deployer + ")";
}

host::Status Child::begin(std::uint64_t id) {
  std::lock_guard lock(mu_);
  if (ended_) {
    return host::Error(who() + " " + end_cause_ +
                       (end_tail_.empty() ? "" : "; stderr: " + end_tail_));
  }
  if (!calls_.try_emplace(id).second) {
    return host::Error(who() + ": call " + std::to_string(id) + " is already in flight");
  }
  const auto& most = launch_->settings.restart_after_calls;
  if (++calls_begun_ == most.value_or(0)) {
    retireLocked(
        "has been given " + std::to_string(calls_begun_) + " calls (option 'restart_after_calls')",
        false);
  }
  return host::Status::Ok();
}

void Child::sendExecute(std::uint64_t id, std::string_view request) {
  auto bytes = wire_->execute(id, request);
  if (!bytes) {
    std::lock_guard lock(mu_);
    Call& call = calls_.at(id);
    call.done = true;
    call.result = Result::Error(who() + ": " + bytes.error().message()).toText();
    cv_.notify_all();
    return;
  }
  send(*bytes);  // if the child is gone, the reader ends the call with the reason
}

void Child::cancel(std::uint64_t id) {
  // The bytes that ask the call to stop; none when its plugin has no way to be asked.
  const std::string bytes = wire_->cancel(id);
  {
    std::unique_lock lock(mu_);
    auto it = calls_.find(id);
    if (it == calls_.end() || it->second.done) return;
    if (bytes.empty()) {
      // Nothing can ask it to stop, so nothing is waited for. Alone in its child, the call
      // ends with the child, killed at once; beside other calls, it is given up on (its
      // answer, if one comes, is ignored) and the child retires: new calls go to a new
      // child, and this one ends once its other calls have answered.
      bool alone = true;
      for (const auto& [other, call] : calls_) alone = alone && (other == id || call.done);
      if (alone) {
        kill_for_call_ = id;
        lock.unlock();
        killFor("was killed to stop a cancelled call that it has no way to be asked to stop");
        return;
      }
      it->second.done = true;
      it->second.result =
          Result::Error(who() +
                        ": the call was cancelled; the plugin has no way to be asked to stop it, "
                        "so it was given up on, and the calls beside it go on")
              .toText();
      retireLocked("gave up on a cancelled call it could not be asked to stop", false);
      cv_.notify_all();
      return;
    }
    if (!it->second.kill_at) {
      it->second.kill_at = Clock::now() + launch_->settings.cancel_grace;
      cv_.notify_all();
    }
  }
  send(bytes);
}

Child::Answer Child::wait(std::uint64_t id) {
  std::unique_lock lock(mu_);
  Call& call = calls_.at(id);  // map nodes stay put; only this thread erases it
  // Most calls answer within a few tens of microseconds. Yielding the processor for that
  // long, instead of sleeping at once, lets the reader thread run here when the result
  // comes and spares this thread a wake-up from sleep: a third of a short call's time.
  for (const auto until = Clock::now() + kYieldFor; !call.done && Clock::now() < until;) {
    lock.unlock();
    sched_yield();
    lock.lock();
  }
  while (!call.done) {
    if (!call.kill_at) {
      cv_.wait(lock);
      continue;
    }
    if (cv_.wait_until(lock, *call.kill_at, [&] { return call.done; })) break;
    if (!kill_for_call_) kill_for_call_ = id;
    lock.unlock();
    killFor("did not answer a cancel within " +
            host::formatGoDuration(launch_->settings.cancel_grace) + " and was killed");
    lock.lock();
    cv_.wait(lock, [&] { return call.done; });
  }
  Answer answer{std::move(call.result), call.answered};
  calls_.erase(id);
  return answer;
}

void Child::killFor(const std::string& cause) {
  std::lock_guard lock(mu_);
  if (kill_cause_.empty() && !ended_) kill_cause_ = cause;
  if (!reaped_) {
    ::kill(-pid_, SIGKILL);  // its process group: the host and what the plugin started
    ::kill(pid_, SIGKILL);
  }
}

bool Child::send(const std::string& f) {
  std::lock_guard lock(write_mu_);
  std::size_t done = 0;
  while (done < f.size() && in_.get() >= 0) {
    const ssize_t n = ::write(in_.get(), f.data() + done, f.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p{in_.get(), POLLOUT, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(kWriteStall.count()));
      if (ready == 0) {
        killFor("read none of its input for " + host::formatGoDuration(kWriteStall) +
                " and was killed");
        return false;
      }
    } else if (n < 0 && errno != EINTR) {
      return false;  // EPIPE: the child is gone; the reader says why
    }
  }
  return done == f.size();
}

void Child::closeInput() {
  std::lock_guard lock(write_mu_);
  in_.reset();
}

void Child::wake() {
  [[maybe_unused]] ssize_t ignored =
      ::write(wake_write_.get(), "x", 1);  // never read: stays readable
}

// Waits until `fd` has data or is at its end (kData, first, so that what the child wrote
// before exiting is read), the child has exited (kExited; only with an `exit_fd`, a pidfd),
// or the destructor asks to stop (kStop).
Child::Ready Child::waitReadable(int fd, int exit_fd) {
  pollfd fds[3] = {{fd, POLLIN, 0}, {wake_read_.get(), POLLIN, 0}, {exit_fd, POLLIN, 0}};
  for (;;) {
    const int ready = ::poll(fds, exit_fd >= 0 ? 3 : 2, -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0 || fds[1].revents != 0) return Ready::kStop;
    if (fds[0].revents != 0) return Ready::kData;
    if (fds[2].revents != 0) return Ready::kExited;
  }
}

void Child::readFrames() {
  std::vector<WireEvent> events;
  std::string problem;
  char buf[65536];
  // The end of output is not enough to see the child die: a process the plugin started
  // may hold the pipe. A pidfd (Linux 5.3) says when it exits; without one, EOF does.
  const Fd exit_fd(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));
  while (problem.empty() && waitReadable(out_.get(), exit_fd.get()) == Ready::kData) {
    const ssize_t n = ::read(out_.get(), buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;  // end of output: the child has exited (or closed it)
    events.clear();
    try {
      if (auto st = wire_->feed(std::string_view(buf, static_cast<std::size_t>(n)), events); !st)
        problem = st.error().message();
    } catch (const std::exception& e) {  // a Wire's bug must not end the runtime
      problem = std::string("broke the protocol: ") + e.what();
    }
    bool results = false;
    for (auto& event : events) {
      handleEvent(event);
      results = results || event.kind == WireEvent::Kind::kResult;
    }
    if (problem.empty() && results) checkUsage();
  }
  if (!problem.empty()) killFor(problem);
  reap();
  finish();
  if (launch_->after_end) {
    bool clean;
    {
      std::lock_guard lock(mu_);
      clean = kill_cause_.empty() && status_ && WIFEXITED(*status_) && WEXITSTATUS(*status_) == 0;
    }
    launch_->after_end(start_, clean);
  }
}

void Child::handleEvent(WireEvent& event) {
  if (event.kind == WireEvent::Kind::kHello) {
    std::lock_guard lock(mu_);
    manifest_ = std::move(event.manifest);
    const auto name = manifest_.find("name");
    name_ = name != manifest_.end() && name->is_string() ? name->get<std::string>() : "";
    greeted_ = true;
    cv_.notify_all();
    return;
  }
  if (event.kind == WireEvent::Kind::kResult) {
    std::string cause;
    if (event.out_of_memory) {
      const Settings& s = launch_->settings;
      cause = "ran out of memory" +
              (s.memory ? " (option 'memory' limits it to " + s.memory_text + ")" : std::string());
      Json& result = event.result;
      const auto phase = result.find("phase"), message = result.find("message");
      if (phase != result.end() && *phase == "Error") {
        result["message"] =
            who() + " " + cause +
            (message != result.end() && message->is_string() ? ": " + message->get<std::string>()
                                                             : std::string());
      }
    }
    std::string text = event.result.dump(-1, ' ', false, Json::error_handler_t::replace);
    std::lock_guard lock(mu_);
    auto it = calls_.find(event.id);
    if (it != calls_.end() && !it->second.done) {  // an unknown id is ignored (docs/protocol.md)
      it->second.done = it->second.answered = true;
      it->second.result = std::move(text);
      cv_.notify_all();
    }
    if (event.out_of_memory) retireLocked(cause, true);
    return;
  }
  const std::string text = "[" + (greeted_ ? name_ : label_) + "] " + event.text;
  if (event.for_call) {
    // The runtime keeps it with the call (the id is the one it gave execute).
    const int level = event.level == "debug"  ? PLUGBOARD_LOG_DEBUG
                      : event.level == "warn"  ? PLUGBOARD_LOG_WARN
                      : event.level == "error" ? PLUGBOARD_LOG_ERROR
                                               : PLUGBOARD_LOG_INFO;
    launch_->log.forCall(event.id, level, text);
  } else if (event.level == "debug") {
    launch_->log.debug(text);
  } else if (event.level == "warn") {
    launch_->log.warn(text);
  } else if (event.level == "error") {
    launch_->log.error(text);
  } else {
    launch_->log.info(text);
  }
}

void Child::readStderr() {
  char buf[4096];
  std::string line;  // an incomplete line, for the log
  const auto logLine = [&] {
    launch_->log.info("[" + label_ + "] stderr: " + line);
    line.clear();
  };
  while (waitReadable(err_.get()) == Ready::kData) {
    const ssize_t n = ::read(err_.get(), buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;
    const std::string_view bytes(buf, static_cast<std::size_t>(n));
    {
      std::lock_guard lock(mu_);
      stderr_tail_.append(bytes);
      if (stderr_tail_.size() > kStderrTailBytes) {
        stderr_tail_.erase(0, stderr_tail_.size() - kStderrTailBytes);
        stderr_cut_ = true;
      }
    }
    for (char c : bytes) {
      if (c == '\n') {
        logLine();
      } else {
        line += c;
        if (line.size() >= kStderrLogLine) logLine();
      }
    }
  }
  if (!line.empty()) logLine();
  std::lock_guard lock(mu_);
  stderr_eof_ = true;
  cv_.notify_all();
}

// Waits for the child to exit without reaping it, so that killFor() can never signal a
// recycled pid; kills it if it lingers after closing its output. Then kills what is left
// of its process group (whatever the plugin started) and reaps it.
void Child::reap() {
  const auto deadline = Clock::now() + kShutdownGrace;
  Millis pause{1};
  bool killed = false;
  for (;;) {
    siginfo_t info{};
    const int rc = ::waitid(P_PID, pid_, &info, WEXITED | WNOWAIT | (killed ? 0 : WNOHANG));
    if (rc == 0 && info.si_pid == pid_) break;
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) break;  // ECHILD: reaped elsewhere (SIGCHLD ignored); the status is unknown
    if (Clock::now() >= deadline) {
      killFor("closed its output but did not exit");
      killed = true;
      continue;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, Millis(50));
  }
  std::lock_guard lock(mu_);
  ::kill(-pid_, SIGKILL);  // the exited leader, unreaped, keeps the group id ours
  int status = 0;
  pid_t reaped;
  do {
    reaped = ::waitpid(pid_, &status, 0);
  } while (reaped < 0 && errno == EINTR);
  if (reaped == pid_) status_ = status;
  reaped_ = true;
}

// Ends every call in flight with an Error that says why the child ended.
void Child::finish() {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, kStderrDrain, [&] { return stderr_eof_; });
  end_cause_ = !kill_cause_.empty() ? kill_cause_
               : closing_           ? "was shut down"
               : status_ ? describeStatus(*status_, launch_->settings, launch_->exit_code_is_signal)
                         : "ended (its exit status is unknown)";
  end_tail_ = stderrTail(stderr_tail_, stderr_cut_);
  const std::string message =
      who() + " " + end_cause_ + (end_tail_.empty() ? "" : "; stderr: " + end_tail_);
  // A child killed to stop one call ends the others too; their message says whose cancel
  // it was, so that no call is blamed for a cancel it was never sent.
  const std::string beside =
      kill_for_call_ && !kill_cause_.empty()
          ? who() + " was killed to stop call " + std::to_string(*kill_for_call_) +
                ", which was cancelled and did not stop; this call, beside it in the same "
                "process, ended with it"
          : message;
  for (auto& [id, call] : calls_) {
    if (call.done) continue;
    call.done = true;
    call.result = Result::Error(kill_for_call_ == id ? message : beside).toText();
  }
  ended_ = true;
  const bool report = greeted_ && !closing_;
  cv_.notify_all();
  lock.unlock();
  if (report) launch_->log.warn(message + "; the next call starts it again");
}

}  // namespace plugboard::deployer_common
