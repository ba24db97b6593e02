#include "core/runner.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "core/schema.h"
#include "core/substitution.h"

namespace plugboard::core {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

std::string_view stepPhaseName(StepPhase phase) {
  switch (phase) {
    case StepPhase::kPending: return "Pending";
    case StepPhase::kRunning: return "Running";
    case StepPhase::kSucceeded: return "Succeeded";
    case StepPhase::kFailed: return "Failed";
    case StepPhase::kError: return "Error";
    case StepPhase::kSkipped: return "Skipped";
    case StepPhase::kCancelled: return "Cancelled";
  }
  return "Error";
}

bool isTerminal(StepPhase phase) {
  return phase != StepPhase::kPending && phase != StepPhase::kRunning;
}

Millis StepStatus::elapsed(TimePoint now) const {
  if (!started) return Millis(0);
  return std::chrono::duration_cast<Millis>((finished ? *finished : now) - *started);
}

Json StepStatus::toJson() const {
  return {{"id", id},          {"phase", stepPhaseName(phase)}, {"message", message},
          {"outputs", outputs}, {"attempts", attempts},         {"calls", calls},
          {"plugin", plugin},  {"duration_ms", elapsed().count()}};
}

bool RunReport::succeeded() const {
  return !cancelled && std::all_of(steps.begin(), steps.end(), [](const StepStatus& s) {
           return s.phase == StepPhase::kSucceeded;
         });
}

Json RunReport::toJson() const {
  Json steps_json = Json::array();
  for (const auto& s : steps) steps_json.push_back(s.toJson());
  return {{"workflow", workflow},   {"succeeded", succeeded()}, {"cancelled", cancelled},
          {"duration_ms", duration.count()}, {"abandoned_calls", abandoned}, {"steps", steps_json}};
}

// State shared with the call threads, which may outlive run() when a plugin ignores
// cancellation.
struct Runner::Shared {
  struct Completion {
    std::size_t step;
    std::uint64_t token;
    Dispatch dispatch;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Completion> done;
  bool cancel_requested = false;
  int running_threads = 0;
};

namespace {

// The first problem of `args` against the input schema `manifest` declares for `rpc`.
std::optional<std::string> schemaProblem(const Manifest& manifest, const std::string& rpc, const Json& args) {
  auto s = manifest.schemas.find(rpc);
  if (s == manifest.schemas.end() || !s->contains("input")) return std::nullopt;
  auto problems = checkSchema(args, (*s)["input"], "args");
  if (problems.empty()) return std::nullopt;
  return problems.front() + " (schema of " + manifest.name + ")";
}

Dispatch callThroughDeployer(Launcher& launcher, const LaunchTarget& target, const DispatchRequest& request,
                             CallControl& control) {
  Dispatch d;
  d.plugin = target.plugin;
  auto started = launcher.start(target);
  if (!started) {
    d.outcome = Outcome::error(started.error().message());
    return d;
  }
  StartedPlugin& plugin = **started;
  if (auto problem = schemaProblem(plugin.handle->manifest(), request.rpc, request.args)) {
    d.outcome = {Phase::kFailed, *problem, Json::object(), {}};
    return d;
  }
  d.outcome = Dispatcher::callStarted(plugin, request, control);
  return d;
}

struct Live {
  const WorkflowStep* step = nullptr;
  StepStatus status;
  std::uint64_t token = 0;  // the current call; completions with another token are stale
  bool in_flight = false;
  std::shared_ptr<CallControl> control;
  TimePoint deadline{};                 // of the current attempt
  std::optional<TimePoint> next_call;   // a requeue or retry is due then
  bool next_is_retry = false;           // the next call starts a new attempt
  std::size_t waiting_on = 0;           // dependencies not yet succeeded
  std::vector<std::size_t> dependents;
};

}  // namespace

Runner::Runner(Dispatcher& dispatcher, RunOptions options, RunObserver* observer)
    : dispatcher_(dispatcher),
      options_(options),
      observer_(observer),
      shared_(std::make_shared<Shared>()) {
  options_.parallel = std::max(1, options_.parallel);
}

Runner::~Runner() = default;

void Runner::cancel() {
  std::lock_guard lock(shared_->mu);
  shared_->cancel_requested = true;
  shared_->cv.notify_all();
}

RunReport Runner::run(const Workflow& wf, const Json& inputs) {
  const TimePoint run_start = Clock::now();
  std::vector<Live> live(wf.steps.size());
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < wf.steps.size(); ++i) {
    live[i].step = &wf.steps[i];
    live[i].status.id = wf.steps[i].id;
    index[wf.steps[i].id] = i;
  }
  for (std::size_t i = 0; i < wf.steps.size(); ++i) {
    for (const auto& d : wf.steps[i].depends) {
      live[index.at(d)].dependents.push_back(i);
      ++live[i].waiting_on;
    }
  }
  SubstitutionContext ctx{wf.name, inputs, {}};
  std::vector<std::thread> threads;
  int in_flight = 0;
  int stale_in_flight = 0;  // abandoned calls still running
  bool cancelling = false;
  std::optional<TimePoint> grace_end;

  auto notify = [&](Live& l) {
    if (observer_ != nullptr) observer_->stepChanged(l.status);
  };
  auto finish = [&](Live& l, StepPhase phase, std::string message) {
    l.status.phase = phase;
    l.status.message = std::move(message);
    l.status.finished = Clock::now();
    l.next_call.reset();
    notify(l);
  };
  std::function<void(Live&)> skipDependents = [&](Live& failed) {
    for (std::size_t d : failed.dependents) {
      Live& dep = live[d];
      if (isTerminal(dep.status.phase)) continue;
      finish(dep, StepPhase::kSkipped,
             "skipped: dependency '" + failed.status.id + "' " +
                 std::string(stepPhaseName(failed.status.phase)));
      skipDependents(dep);
    }
  };
  auto timeoutOf = [&](const Live& l) { return l.step->timeout.value_or(options_.default_timeout); };

  // Ends the current attempt with a failure: retried if the policy allows.
  auto attemptFailed = [&](Live& l, StepPhase phase, const std::string& message) {
    const RetryPolicy& retry = l.step->retry;
    if (!cancelling && l.status.attempts <= retry.limit) {
      const double factor = std::pow(retry.factor, l.status.attempts - 1);
      const Millis delay(static_cast<long long>(retry.backoff.count() * factor));
      l.next_call = Clock::now() + delay;
      l.next_is_retry = true;
      l.status.message = "attempt " + std::to_string(l.status.attempts) + " " +
                         std::string(stepPhaseName(phase)) + ": " + message + "; retrying in " +
                         formatElapsed(delay);
      notify(l);
      return;
    }
    finish(l, phase, message);
    skipDependents(l);
  };

  auto startCall = [&](std::size_t i, bool new_attempt) {
    Live& l = live[i];
    const TimePoint now = Clock::now();
    if (new_attempt) {
      ++l.status.attempts;
      l.deadline = now + timeoutOf(l);
    }
    if (!l.status.started) l.status.started = now;
    l.next_call.reset();
    l.status.phase = StepPhase::kRunning;

    auto args = substitute(l.step->args, ctx);
    if (!args) {
      finish(l, StepPhase::kError, "args: " + args.error().message());
      skipDependents(l);
      return;
    }
    std::optional<LaunchTarget> target;
    const PluginRef ref{l.step->plugin, l.step->version, l.step->deployer, l.step->deploy_options};
    if (options_.launcher != nullptr && !options_.launcher->dispatched(ref, dispatcher_.catalog())) {
      auto t = options_.launcher->place(ref, &dispatcher_.catalog());
      if (!t) {
        finish(l, StepPhase::kError, t.error().message());
        skipDependents(l);
        return;
      }
      target = std::move(*t);
    }
    if (const CatalogEntry* entry = target ? nullptr : dispatcher_.resolve(l.step->plugin, l.step->version)) {
      if (auto problem = schemaProblem(entry->manifest, l.step->rpc, *args)) {
        finish(l, StepPhase::kFailed, *problem);
        skipDependents(l);
        return;
      }
    }
    if (new_attempt) {
      l.status.message = l.status.attempts > 1 ? "attempt " + std::to_string(l.status.attempts) : "";
    }
    notify(l);

    DispatchRequest request;
    request.key = l.step->plugin;
    request.version = l.step->version;
    request.rpc = l.step->rpc;
    request.args = std::move(*args);
    request.context = {{"workflow", {{"metadata", {{"name", wf.name}}}}},
                       {"template", {{"name", l.step->id}}}};
    l.control = std::make_shared<CallControl>();
    l.in_flight = true;
    ++l.status.calls;
    ++in_flight;
    const std::uint64_t token = ++l.token;
    {
      std::lock_guard lock(shared_->mu);
      ++shared_->running_threads;
    }
    threads.emplace_back([shared = shared_, &dispatcher = dispatcher_, control = l.control, i, token,
                          request = std::move(request), target = std::move(target),
                          launcher = options_.launcher] {
      // A step with a deployer of its own starts its plugin here (once per run), off the
      // scheduling thread, and checks its args against the schema that plugin declares.
      Dispatch d = target ? callThroughDeployer(*launcher, *target, request, *control)
                          : dispatcher.dispatch(request, *control);
      std::lock_guard lock(shared->mu);
      shared->done.push_back({i, token, std::move(d)});
      --shared->running_threads;
      shared->cv.notify_all();
    });
  };

  auto handle = [&](Shared::Completion& c) {
    Live& l = live[c.step];
    if (c.token != l.token || !l.in_flight) {
      --stale_in_flight;  // an abandoned call came back; its result no longer counts
      return;
    }
    l.in_flight = false;
    --in_flight;
    Outcome& o = c.dispatch.outcome;
    l.status.plugin = c.dispatch.plugin;
    if (cancelling) return;  // already marked Cancelled
    switch (o.phase) {
      case Phase::kSucceeded:
        l.status.outputs = o.outputs;
        ctx.step_parameters[l.status.id] =
            o.outputs.contains("parameters") ? o.outputs["parameters"] : Json::object();
        finish(l, StepPhase::kSucceeded, o.message);
        for (std::size_t d : l.dependents) --live[d].waiting_on;
        break;
      case Phase::kRunning: {
        const Millis delay = o.requeue.value_or(options_.poll_interval);
        l.next_call = Clock::now() + delay;
        l.next_is_retry = false;
        l.status.message = (o.message.empty() ? "running" : o.message) + "; next call in " +
                           formatElapsed(delay);
        notify(l);
        break;
      }
      case Phase::kFailed:
      case Phase::kNotHandled:
        attemptFailed(l, StepPhase::kFailed, o.message);
        break;
      case Phase::kError:
        attemptFailed(l, StepPhase::kError, o.message);
        break;
    }
  };

  for (;;) {
    std::deque<Shared::Completion> completions;
    bool cancel_now = false;
    {
      std::unique_lock lock(shared_->mu);
      completions.swap(shared_->done);
      cancel_now = shared_->cancel_requested && !cancelling;
    }
    for (auto& c : completions) handle(c);

    const TimePoint now = Clock::now();
    if (cancel_now) {
      cancelling = true;
      grace_end = now + options_.cancel_grace;
      for (auto& l : live) {
        if (isTerminal(l.status.phase)) continue;
        if (l.in_flight) {
          l.control->cancel();
          finish(l, StepPhase::kCancelled, "cancelled while running (after " +
                                               formatElapsed(l.status.elapsed(now)) + ")");
        } else if (l.status.phase == StepPhase::kRunning) {
          finish(l, StepPhase::kCancelled, "cancelled between calls");
        } else {
          finish(l, StepPhase::kSkipped, "skipped: the run was cancelled");
        }
      }
    }

    // Deadlines of attempts in progress (in flight, or waiting for a requeue).
    for (auto& l : live) {
      if (cancelling || l.status.phase != StepPhase::kRunning || now < l.deadline) continue;
      if (!(l.in_flight || l.next_call)) continue;
      const std::string message = "deadline of " + formatElapsed(timeoutOf(l)) +
                                  " passed; the call was cancelled";
      if (l.in_flight) {
        l.control->cancel();
        l.in_flight = false;
        --in_flight;
        ++stale_in_flight;
        ++l.token;
      }
      l.next_call.reset();
      attemptFailed(l, StepPhase::kFailed, message);
    }

    // Start what is due: requeues and retries first, then newly ready steps.
    if (!cancelling) {
      for (std::size_t i = 0; i < live.size() && in_flight < options_.parallel; ++i) {
        Live& l = live[i];
        if (l.status.phase == StepPhase::kRunning && !l.in_flight && l.next_call &&
            *l.next_call <= now) {
          startCall(i, l.next_is_retry);
        }
      }
      for (std::size_t i = 0; i < live.size() && in_flight < options_.parallel; ++i) {
        Live& l = live[i];
        if (l.status.phase == StepPhase::kPending && l.waiting_on == 0) startCall(i, true);
      }
    }

    const bool all_done = std::all_of(live.begin(), live.end(),
                                      [](const Live& l) { return isTerminal(l.status.phase); });
    if (all_done && in_flight == 0) {
      if (stale_in_flight <= 0) break;
      if (!grace_end) grace_end = Clock::now() + options_.cancel_grace;
    }
    if (cancelling && in_flight == 0 && stale_in_flight <= 0) break;
    if (grace_end && Clock::now() >= *grace_end) break;

    // Sleep until something completes, is cancelled, or a timer is due.
    if (observer_ != nullptr) observer_->tick();
    TimePoint wake = Clock::now() + std::chrono::milliseconds(250);
    for (const auto& l : live) {
      if (l.next_call) wake = std::min(wake, *l.next_call);
      if (l.status.phase == StepPhase::kRunning) wake = std::min(wake, l.deadline);
    }
    if (grace_end) wake = std::min(wake, *grace_end);
    std::unique_lock lock(shared_->mu);
    shared_->cv.wait_until(lock, wake, [&] {
      return !shared_->done.empty() || (shared_->cancel_requested && !cancelling);
    });
  }

  // Join the calls that returned; leave the ones that ignore cancellation running.
  RunReport report;
  {
    std::lock_guard lock(shared_->mu);
    report.abandoned = shared_->running_threads;
  }
  for (auto& t : threads) {
    if (report.abandoned > 0) {
      t.detach();
    } else {
      t.join();
    }
  }
  report.workflow = wf.name;
  report.cancelled = cancelling;
  for (auto& l : live) report.steps.push_back(std::move(l.status));
  report.duration = std::chrono::duration_cast<Millis>(Clock::now() - run_start);
  return report;
}

}  // namespace plugboard::core
