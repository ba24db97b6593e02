#include "core/workflows/step_machine.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>

namespace plugboard::core {

struct StepMachine::Step {
  const WorkflowStep* def = nullptr;
  std::shared_ptr<CallControl> control;  // of the call in flight
  TimePoint deadline{};                  // of the current attempt
  TimePoint next_call{};                 // when has_next
  std::uint64_t token = 0;               // of the current call; results with another are stale
  std::uint32_t waiting_on = 0;          // dependencies that have not succeeded
  std::uint32_t readers = 0;             // steps that use its outputs and have not ended
  bool in_flight = false;
  bool has_next = false;       // a requeue or retry is due at next_call
  bool next_is_retry = false;  // the next call starts a new attempt
};

StepMachine::StepMachine(const Workflow& workflow, const Json& inputs, const RunOptions& options,
                         StepCalls& calls, RunObserver* observer)
    : workflow_(workflow),
      options_(options),
      calls_(calls),
      observer_(observer),
      steps_(workflow.steps.size()),
      statuses_(workflow.steps.size()),
      context_{workflow.name, inputs, {}, options.args_limit} {
  const std::size_t n = steps_.size();
  std::unordered_map<std::string_view, std::uint32_t> index;
  index.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    steps_[i].def = &workflow.steps[i];
    statuses_[i].id = workflow.steps[i].id;
    index.emplace(workflow.steps[i].id, static_cast<std::uint32_t>(i));
  }
  // Dependents: each step's dependencies resolved once, then turned around.
  IndexLists depends;
  dependents_.begin.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    depends.begin.push_back(static_cast<std::uint32_t>(depends.items.size()));
    for (const auto& d : workflow.steps[i].depends) {
      const std::uint32_t from = index.at(d);
      depends.items.push_back(from);
      ++dependents_.begin[from + 1];
    }
    steps_[i].waiting_on = static_cast<std::uint32_t>(depends.items.size() - depends.begin[i]);
  }
  depends.begin.push_back(static_cast<std::uint32_t>(depends.items.size()));
  for (std::size_t i = 0; i < n; ++i) dependents_.begin[i + 1] += dependents_.begin[i];
  dependents_.items.resize(depends.items.size());
  std::vector<std::uint32_t> next(dependents_.begin.begin(), dependents_.begin.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::uint32_t from : depends.of(i))
      dependents_.items[next[from]++] = static_cast<std::uint32_t>(i);
  }
  // Outputs are kept for substitution only while a step that uses them may still run.
  for (std::size_t i = 0; i < n; ++i) {
    reads_.begin.push_back(static_cast<std::uint32_t>(reads_.items.size()));
    if (auto refs = stepReferences(workflow.steps[i])) {
      for (const auto& r : *refs) {
        auto it = r.kind == Reference::Kind::kStepOutput ? index.find(r.step) : index.end();
        if (it == index.end()) continue;
        auto mine = reads_.items.begin() + reads_.begin.back();
        if (std::find(mine, reads_.items.end(), it->second) != reads_.items.end()) continue;
        reads_.items.push_back(it->second);
        ++steps_[it->second].readers;
      }
    }
    if (steps_[i].waiting_on == 0) ready_.push(static_cast<std::uint32_t>(i));
  }
  reads_.begin.push_back(static_cast<std::uint32_t>(reads_.items.size()));
}

StepMachine::~StepMachine() = default;

std::optional<StepMachine::Call> StepMachine::startNext(TimePoint now) {
  while (!cancelling_ && in_flight_ < options_.parallel) {
    std::optional<Call> call;
    if (!due_.empty()) {
      const std::size_t i = due_.top();
      due_.pop();
      const Step& s = steps_[i];
      if (statuses_[i].phase != StepPhase::kRunning || s.in_flight || !s.has_next ||
          s.next_call > now)
        continue;
      call = s.next_is_retry ? startAttempt(i, now) : callAgain(i, now);
    } else if (!ready_.empty()) {
      const std::size_t i = ready_.top();
      ready_.pop();
      if (statuses_[i].phase != StepPhase::kPending) continue;
      call = startAttempt(i, now);
    } else {
      break;
    }
    if (call) return call;
  }
  return std::nullopt;
}

std::optional<StepMachine::Call> StepMachine::startAttempt(std::size_t i, TimePoint now) {
  return makeCall(i, now, true);
}

std::optional<StepMachine::Call> StepMachine::callAgain(std::size_t i, TimePoint now) {
  return makeCall(i, now, false);
}

std::optional<StepMachine::Call> StepMachine::makeCall(std::size_t i, TimePoint now,
                                                       bool new_attempt) {
  Step& s = steps_[i];
  if (new_attempt) {
    ++statuses_[i].attempts;
    s.deadline = now + s.def->timeout.value_or(options_.default_timeout);
    addTimer(s.deadline, i, true);
  }
  if (!statuses_[i].started) {
    statuses_[i].started = now;
    ++running_;
  }
  s.has_next = false;
  statuses_[i].phase = StepPhase::kRunning;

  auto args = substitute(s.def->args, context_);
  auto parameters = args ? substitute(s.def->parameters, context_) : Expected<Json>(Json());
  if (!args || !parameters) {
    end(i, StepPhase::kError,
        !args ? "args: " + args.error().message() : "parameters: " + parameters.error().message(),
        now);
    skipDependents(i, now);
    return std::nullopt;
  }
  if (auto refused = calls_.check(*s.def, *args)) {
    end(i, refused->phase == Phase::kError ? StepPhase::kError : StepPhase::kFailed,
        std::move(refused->message), now);
    skipDependents(i, now);
    return std::nullopt;
  }
  if (new_attempt) {
    statuses_[i].message =
        statuses_[i].attempts > 1 ? "attempt " + std::to_string(statuses_[i].attempts) : "";
  }
  notify(i);

  s.control = std::make_shared<CallControl>();
  s.in_flight = true;
  ++statuses_[i].calls;
  ++in_flight_;
  return Call{i, ++s.token, s.control, StepCall{s.def, workflow_.name, std::move(*args), std::move(*parameters)}};
}

void StepMachine::callReturned(std::size_t i, std::uint64_t token, Dispatch dispatch,
                               TimePoint now) {
  Step& s = steps_[i];
  if (token != s.token || !s.in_flight) {
    --unanswered_;  // a call given up on came back; its result no longer counts
    return;
  }
  s.in_flight = false;
  s.control.reset();
  --in_flight_;
  statuses_[i].plugin = std::move(dispatch.plugin);
  if (cancelling_) return;  // already ended Cancelled
  Outcome& o = dispatch.outcome;
  switch (o.phase) {
    case Phase::kSucceeded:
      succeeded(i, o, now);
      break;
    case Phase::kRunning:
    case Phase::kPending:  // not started yet: polled like Running
      running(i, o, now);
      break;
    case Phase::kFailed:
    case Phase::kNotHandled:
      attemptFailed(i, StepPhase::kFailed, o.message, now);
      break;
    case Phase::kError:
      attemptFailed(i, StepPhase::kError, o.message, now);
      break;
  }
}

void StepMachine::succeeded(std::size_t i, Outcome& o, TimePoint now) {
  Step& s = steps_[i];
  StepStatus& status = statuses_[i];
  status.outputs = std::move(o.outputs);
  if (s.readers > 0) {
    auto p = status.outputs.find("parameters");
    context_.step_parameters[status.id] = p != status.outputs.end() ? *p : Json::object();
  }
  end(i, StepPhase::kSucceeded, std::move(o.message), now);
  for (std::uint32_t d : dependents_.of(i)) {
    Step& dep = steps_[d];
    if (--dep.waiting_on == 0 && statuses_[d].phase == StepPhase::kPending) ready_.push(d);
  }
}

void StepMachine::running(std::size_t i, const Outcome& o, TimePoint now) {
  const Millis delay = o.requeue.value_or(options_.poll_interval);
  callAt(i, now + delay, false);
  statuses_[i].message =
      (o.message.empty() ? "running" : o.message) + "; next call in " + formatElapsed(delay);
  notify(i);
}

// Ends the current attempt with a failure: retried if the policy allows.
void StepMachine::attemptFailed(std::size_t i, StepPhase phase, const std::string& message,
                                TimePoint now) {
  Step& s = steps_[i];
  const RetryPolicy& retry = s.def->retry;
  if (!cancelling_ && statuses_[i].attempts <= retry.limit) {
    // backoff x factor^(attempts - 1), at most kMaxDuration: the product overflows a
    // duration (or is infinite) long before a thousand attempts at factor 10.
    double ms = static_cast<double>(retry.backoff.count()) *
                std::pow(retry.factor, statuses_[i].attempts - 1);
    if (std::isnan(ms)) ms = 0;  // no backoff times an infinite factor
    const Millis delay(
        static_cast<long long>(std::min(ms, static_cast<double>(kMaxDuration.count()))));
    callAt(i, now + delay, true);
    statuses_[i].message = "attempt " + std::to_string(statuses_[i].attempts) + " " +
                           std::string(stepPhaseName(phase)) + ": " + message + "; retrying in " +
                           formatElapsed(delay);
    notify(i);
    return;
  }
  end(i, phase, message, now);
  skipDependents(i, now);
}

int StepMachine::deadlinePassed(std::size_t i, TimePoint now) {
  Step& s = steps_[i];
  const std::string message = "deadline of " +
                              formatElapsed(s.def->timeout.value_or(options_.default_timeout)) +
                              " passed; the call was cancelled";
  int abandoned = 0;
  if (s.in_flight) {
    s.control->cancel();
    s.control.reset();
    s.in_flight = false;
    ++s.token;
    --in_flight_;
    ++unanswered_;
    abandoned = 1;
  }
  s.has_next = false;
  attemptFailed(i, StepPhase::kFailed, message, now);
  return abandoned;
}

// Whether timer `t` still means something: the deadline of a step's current attempt, or
// the time of its next call. Others are dropped when they come up, or by addTimer().
bool StepMachine::timerLive(const Timer& t) const {
  const Step& s = steps_[t.step];
  if (statuses_[t.step].phase != StepPhase::kRunning) return false;  // ended since
  if (t.deadline) {
    // An attempt's deadline covers its calls and the waits between them, not the wait
    // before a retry (which starts a new attempt with a deadline of its own).
    return s.deadline == t.when && (s.in_flight || (s.has_next && !s.next_is_retry));
  }
  return s.has_next && !s.in_flight && s.next_call == t.when;
}

void StepMachine::addTimer(TimePoint when, std::size_t i, bool deadline) {
  timers_.push_back({when, static_cast<std::uint32_t>(i), deadline});
  std::push_heap(timers_.begin(), timers_.end(), std::greater<>());
  // Each running step has at most two live timers; drop the dead ones (e.g. the deadlines
  // of steps that ended long before them) once they outnumber the live ones.
  if (timers_.size() > 4 * running_ + 1024) {
    std::erase_if(timers_, [&](const Timer& t) { return !timerLive(t); });
    std::make_heap(timers_.begin(), timers_.end(), std::greater<>());
  }
}

int StepMachine::timersDue(TimePoint now) {
  int abandoned = 0;
  while (!timers_.empty() && timers_.front().when <= now) {
    std::pop_heap(timers_.begin(), timers_.end(), std::greater<>());
    const Timer t = timers_.back();
    timers_.pop_back();
    if (!timerLive(t)) continue;
    if (t.deadline) {
      if (!cancelling_) abandoned += deadlinePassed(t.step, now);
    } else {
      due_.push(t.step);
    }
  }
  return abandoned;
}

void StepMachine::cancel(TimePoint now) {
  cancelling_ = true;
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    Step& s = steps_[i];
    if (isTerminal(statuses_[i].phase)) continue;
    if (s.in_flight) {
      s.control->cancel();
      end(i, StepPhase::kCancelled,
          "cancelled while running (after " + formatElapsed(statuses_[i].elapsed(now)) + ")", now);
    } else if (statuses_[i].phase == StepPhase::kRunning) {
      end(i, StepPhase::kCancelled, "cancelled between calls", now);
    } else {
      end(i, StepPhase::kSkipped, "skipped: the run was cancelled", now);
    }
  }
}

void StepMachine::end(std::size_t i, StepPhase phase, std::string message, TimePoint now) {
  Step& s = steps_[i];
  if (statuses_[i].phase == StepPhase::kRunning) --running_;
  statuses_[i].phase = phase;
  statuses_[i].message = std::move(message);
  statuses_[i].finished = now;
  s.has_next = false;
  ++ended_;
  for (std::uint32_t r : reads_.of(i)) {
    if (--steps_[r].readers == 0) context_.step_parameters.erase(statuses_[r].id);
  }
  notify(i);
}

// Depth first, in the order of each step's dependents: a step is skipped naming the
// dependency through which it was first reached. An explicit stack, so that a chain of any
// length is fine.
void StepMachine::skipDependents(std::size_t i, TimePoint now) {
  std::vector<std::pair<std::size_t, std::size_t>> stack{{i, 0}};  // step, next dependent
  while (!stack.empty()) {
    const std::size_t parent = stack.back().first;
    const auto dependents = dependents_.of(parent);
    if (stack.back().second == dependents.size()) {
      stack.pop_back();
      continue;
    }
    const std::size_t d = dependents[stack.back().second++];
    if (isTerminal(statuses_[d].phase)) continue;
    const StepStatus& why = statuses_[parent];
    end(d, StepPhase::kSkipped,
        "skipped: dependency '" + why.id + "' " + std::string(stepPhaseName(why.phase)), now);
    stack.emplace_back(d, 0);
  }
}

void StepMachine::callAt(std::size_t i, TimePoint when, bool retry) {
  Step& s = steps_[i];
  s.has_next = true;
  s.next_call = when;
  s.next_is_retry = retry;
  addTimer(when, i, false);
}

void StepMachine::notify(std::size_t i) {
  if (observer_ != nullptr) observer_->stepChanged(statuses_[i]);
}

bool StepMachine::allEnded() const { return ended_ == steps_.size(); }

std::optional<StepMachine::TimePoint> StepMachine::nextTimer() const {
  if (timers_.empty()) return std::nullopt;
  return timers_.front().when;
}

std::vector<StepStatus> StepMachine::takeStatuses() { return std::move(statuses_); }

}  // namespace plugboard::core
