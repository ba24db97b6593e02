// The engine's scheduling thread: it hands leaves to the
// RunEnv's workers, sleeps until a call returns, a timer is due or cancel() is called,
// and gives a call that ignores its cancellation cancel_grace before the run ends without
// it (counted as abandoned).
#include <algorithm>
#include <mutex>
#include <vector>

#include "core/workflows/engine.h"
#include "core/workflows/engine_state.h"

namespace plugboard::core {

struct Engine::Impl {
  struct Completion {
    std::uint32_t node;
    std::uint64_t token;
    Dispatch dispatch;
  };
  // What the calls and cancel() tell the scheduling thread; shared with abandoned calls.
  struct Events {
    std::mutex mu;
    std::vector<Completion> done;
    bool cancel_requested = false;
    bool resume_requested = false;  // cleared when taken
    bool take(std::vector<Completion>& out, bool& resume) {
      std::lock_guard lock(mu);
      out.swap(done);
      resume = resume_requested;
      resume_requested = false;
      return cancel_requested;
    }
  };

  Impl(LeafCalls& c, EngineOptions o, EngineObserver* obs, RunEnv* e)
      : calls(c),
        options(o),
        observer(obs),
        owned_env(e != nullptr ? nullptr : std::make_unique<WorkerPoolEnv>(std::max(1, o.parallel))),
        env(e != nullptr ? *e : *owned_env) {
    options.parallel = std::max(1, options.parallel);
  }

  LeafCalls& calls;
  EngineOptions options;
  EngineObserver* observer;
  std::unique_ptr<WorkerPoolEnv> owned_env;
  RunEnv& env;
  std::shared_ptr<Events> events = std::make_shared<Events>();
};

Engine::Engine(LeafCalls& calls, EngineOptions options, EngineObserver* observer, RunEnv* env)
    : impl_(std::make_unique<Impl>(calls, options, observer, env)) {}

Engine::~Engine() = default;

void Engine::cancel() {
  {
    std::lock_guard lock(impl_->events->mu);
    impl_->events->cancel_requested = true;
  }
  impl_->env.wake();
}

void Engine::resume() {
  {
    std::lock_guard lock(impl_->events->mu);
    impl_->events->resume_requested = true;
  }
  impl_->env.wake();
}

RunResult Engine::run(const WorkflowModel& model, const Json& parameters) {
  Impl& m = *impl_;
  RunEnv& env = m.env;
  const RunEnv::TimePoint run_start = env.now();
  EngineRun run(model, parameters, m.calls, m.options, m.observer, env);
  std::optional<RunEnv::TimePoint> grace_end;
  std::vector<Impl::Completion> completions;

  auto handleEvents = [&](RunEnv::TimePoint now) {
    bool resume = false;
    const bool cancel_requested = m.events->take(completions, resume);
    for (auto& c : completions) run.leafReturned(c.node, c.token, std::move(c.dispatch), now);
    completions.clear();
    if (resume) run.resume(now);
    return cancel_requested;
  };

  run.start(run_start);
  for (;;) {
    RunEnv::TimePoint now = env.now();
    if (handleEvents(now) && !run.cancelling()) {
      run.cancel(now, "Stopped with strategy 'Terminate'");
      grace_end = now + m.options.cancel_grace;
    }
    for (int abandoned = run.timersDue(now); abandoned > 0; --abandoned) env.abandon();
    if (run.cancelling() && !grace_end) grace_end = now + m.options.cancel_grace;
    while (auto launch = run.nextLaunch(now)) {
      env.execute([events = m.events, &calls = m.calls, l = std::move(*launch)]() mutable {
        Dispatch d = calls.call(l.call, *l.control);
        std::lock_guard lock(events->mu);
        events->done.push_back({l.node, l.token, std::move(d)});
      });
    }
    if (run.finished() && run.inFlight() == 0) {
      if (run.unanswered() <= 0) break;
      if (!grace_end) grace_end = now + m.options.cancel_grace;  // for calls given up on
    }
    if (grace_end && now >= *grace_end) break;

    RunEnv::TimePoint wake = RunEnv::TimePoint::max();
    if (m.observer != nullptr) {
      m.observer->tick();
      wake = now + std::chrono::milliseconds(250);
    }
    if (auto timer = run.nextTimer()) wake = std::min(wake, *timer);
    if (grace_end) wake = std::min(wake, *grace_end);
    env.waitUntil(wake);
  }
  handleEvents(env.now());  // calls that returned at the last moment are not abandoned
  return run.result(std::chrono::duration_cast<Millis>(env.now() - run_start));
}

}  // namespace plugboard::core
