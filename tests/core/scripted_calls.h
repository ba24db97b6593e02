// tests/core/scripted_calls.h: StepCalls (core/workflows/step_calls.h) that answer as a test
// planned, taking virtual time on a VirtualRunEnv, and record every call.
//
// A step without a plan succeeds at once with its args (an object) as output parameters,
// like the echo plugin. Thread-safety: all members may be called from any thread.
#ifndef PLUGBOARD_TESTS_CORE_SCRIPTED_CALLS_H_
#define PLUGBOARD_TESTS_CORE_SCRIPTED_CALLS_H_

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/workflows/step_calls.h"
#include "tests/core/virtual_run_env.h"

namespace plugboard::testing {

using Millis = std::chrono::milliseconds;

// One planned answer.
struct Answer {
  core::Outcome outcome{core::Phase::kSucceeded, "", core::Json::object(), {}};
  Millis takes{0};              // virtual time the call takes
  bool ignores_cancel = false;  // else it returns as soon as it is cancelled

  static Answer succeeded(std::string message = "") {
    return {{core::Phase::kSucceeded, std::move(message), core::Json::object(), {}}};
  }
  static Answer running(std::optional<Millis> requeue = std::nullopt) {
    return {{core::Phase::kRunning, "", core::Json::object(), requeue}};
  }
  static Answer failed(std::string message) {
    return {{core::Phase::kFailed, std::move(message), core::Json::object(), {}}};
  }
  static Answer error(std::string message) { return {core::Outcome::error(std::move(message))}; }
  static Answer sleeping(Millis takes, bool ignores_cancel = false) {
    Answer a = succeeded("woke up");
    a.takes = takes;
    a.ignores_cancel = ignores_cancel;
    return a;
  }
};

class ScriptedCalls final : public core::StepCalls {
 public:
  struct Record {
    std::string step;
    core::Json args;
    core::RunEnv::TimePoint at;
    bool cancelled = false;
  };

  explicit ScriptedCalls(VirtualRunEnv& env) : env_(env) {}

  // The answers to `step`'s calls, in order; the last one repeats.
  void plan(const std::string& step, std::vector<Answer> answers) {
    std::lock_guard lock(mu_);
    plans_[step] = std::move(answers);
  }
  // check() ends `step` with `outcome`.
  void refuse(const std::string& step, core::Outcome outcome) {
    std::lock_guard lock(mu_);
    refusals_[step] = std::move(outcome);
  }

  std::optional<core::Outcome> check(const core::WorkflowStep& step, const core::Json&) override {
    std::lock_guard lock(mu_);
    auto it = refusals_.find(step.id);
    if (it == refusals_.end()) return std::nullopt;
    return it->second;
  }

  core::Dispatch call(core::StepCall call, core::CallControl& control) override {
    const std::string id = call.step->id;
    Answer answer;
    std::size_t record;
    {
      std::lock_guard lock(mu_);
      auto plan = plans_.find(id);
      const std::size_t n = calls_[id]++;
      if (plan != plans_.end() && !plan->second.empty()) {
        answer = plan->second[std::min(n, plan->second.size() - 1)];
      } else if (call.args.is_object()) {
        answer.outcome.outputs = {{"parameters", call.args}};
      }
      record = records_.size();
      records_.push_back({id, std::move(call.args), env_.now()});
      max_running_ = std::max(max_running_, ++running_);
    }
    bool cancelled = false;
    if (answer.takes.count() > 0)
      cancelled = env_.sleep(answer.takes, answer.ignores_cancel ? nullptr : &control);
    std::lock_guard lock(mu_);
    --running_;
    records_[record].cancelled = cancelled;
    core::Dispatch d;
    d.plugin = "scripted@1.0.0";
    d.outcome = cancelled ? core::Outcome::error("cancelled") : answer.outcome;
    return d;
  }

  std::vector<Record> records() {
    std::lock_guard lock(mu_);
    return records_;
  }
  std::vector<Record> recordsOf(const std::string& step) {
    std::vector<Record> out;
    for (auto& r : records()) {
      if (r.step == step) out.push_back(std::move(r));
    }
    return out;
  }
  // The virtual times of `step`'s calls, as offsets from the environment's start.
  std::vector<Millis> callTimes(const std::string& step) {
    std::vector<Millis> out;
    for (const auto& r : recordsOf(step))
      out.push_back(std::chrono::duration_cast<Millis>(r.at - env_.start()));
    return out;
  }
  int maxRunning() {
    std::lock_guard lock(mu_);
    return max_running_;
  }

 private:
  VirtualRunEnv& env_;
  std::mutex mu_;
  std::map<std::string, std::vector<Answer>> plans_;
  std::map<std::string, core::Outcome> refusals_;
  std::map<std::string, std::size_t> calls_;
  std::vector<Record> records_;
  int running_ = 0;
  int max_running_ = 0;
};

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_CORE_SCRIPTED_CALLS_H_
