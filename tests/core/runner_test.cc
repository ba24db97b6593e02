// The runner on a virtual clock: each test plays out seconds or hours of a run in
// milliseconds and checks the exact virtual times of the calls.
#include "core/workflows/runner.h"

#include <gtest/gtest.h>

#include "tests/core/scripted_calls.h"

namespace plugboard::testing {
namespace {

using core::formatElapsed;
using core::kMaxDuration;
using core::Json;
using core::StepPhase;
using std::chrono::hours;

// Every change the runner reports, as "id: Phase: message".
class Changes : public core::RunObserver {
 public:
  void stepChanged(const core::StepStatus& s) override {
    lines.push_back(s.id + ": " + std::string(core::stepPhaseName(s.phase)) + ": " + s.message);
  }
  bool saw(const std::string& line) const {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
  }
  std::vector<std::string> lines;
};

class RunnerTest : public ::testing::Test {
 protected:
  ~RunnerTest() override { env_.shutdown(); }  // before the calls' plans and the workflow go

  core::RunReport run(const std::string& toml, int parallel = 4) {
    auto loaded = core::parseWorkflow(toml, "wf.toml");
    for (const auto& p : loaded.problems) ADD_FAILURE() << p.oneLine();
    workflow_ = std::move(*loaded.workflow);
    options_.parallel = parallel;
    runner_ = std::make_unique<core::Runner>(calls_, options_, &changes_, &env_);
    return runner_->run(*workflow_, Json{{"who", "Ada"}});
  }
  const core::StepStatus& step(const core::RunReport& report, const std::string& id) {
    for (const auto& s : report.steps) {
      if (s.id == id) return s;
    }
    ADD_FAILURE() << "no step " << id;
    return report.steps.front();
  }
  core::RunEnv::TimePoint at(Millis offset) const { return env_.start() + offset; }

  VirtualRunEnv env_;
  ScriptedCalls calls_{env_};
  Changes changes_;
  core::RunOptions options_;
  std::optional<core::Workflow> workflow_;
  std::unique_ptr<core::Runner> runner_;
};

std::string steps(std::initializer_list<const char*> ids) {
  std::string out = "name = \"wf\"\n";
  for (const char* id : ids) out += "[[steps]]\nid = \"" + std::string(id) + "\"\nplugin = \"p\"\n";
  return out;
}

TEST_F(RunnerTest, RunningIsCalledAgainAfterItsRequeueElseThePollInterval) {
  options_.poll_interval = Millis(1000);
  calls_.plan("poll", {Answer::running(), Answer::running(), Answer::succeeded()});
  calls_.plan("own", {Answer::running(Millis(20)), Answer::running(Millis(20)),
                      Answer::running(Millis(20)), Answer::succeeded()});
  Answer done_with_requeue = Answer::succeeded();
  done_with_requeue.outcome.requeue = hours(1);
  calls_.plan("done", {done_with_requeue});
  auto report = run(steps({"poll", "own", "done"}));

  EXPECT_TRUE(report.succeeded());
  EXPECT_EQ(calls_.callTimes("poll"), (std::vector<Millis>{Millis(0), Millis(1000), Millis(2000)}));
  EXPECT_EQ(calls_.callTimes("own"),
            (std::vector<Millis>{Millis(0), Millis(20), Millis(40), Millis(60)}));
  EXPECT_EQ(calls_.callTimes("done"), std::vector<Millis>{Millis(0)});  // Succeeded is final
  EXPECT_EQ(step(report, "poll").calls, 3);
  EXPECT_EQ(step(report, "poll").attempts, 1);
  EXPECT_EQ(step(report, "own").calls, 4);
  EXPECT_TRUE(changes_.saw("poll: Running: running; next call in " + formatElapsed(Millis(1000))));
  EXPECT_TRUE(changes_.saw("own: Running: running; next call in 20ms"));
  EXPECT_EQ(report.duration, Millis(2000));
}

TEST_F(RunnerTest, FailedAttemptsAreRetriedAfterBackoffTimesFactor) {
  calls_.plan("flaky", {Answer::failed("nope"), Answer::error("broke"), Answer::failed("nope"),
                        Answer::succeeded()});
  calls_.plan("hopeless", {Answer::failed("never")});
  auto report = run(R"(name = "wf"
[[steps]]
id = "flaky"
plugin = "p"
retry = { limit = 3, backoff = "100ms", factor = 3 }
[[steps]]
id = "hopeless"
plugin = "p"
retry = { limit = 1, backoff = "50ms" }
[[steps]]
id = "after"
plugin = "p"
depends = ["hopeless"]
)");
  EXPECT_EQ(calls_.callTimes("flaky"),
            (std::vector<Millis>{Millis(0), Millis(100), Millis(400), Millis(1300)}));
  EXPECT_EQ(step(report, "flaky").phase, StepPhase::kSucceeded);
  EXPECT_EQ(step(report, "flaky").attempts, 4);
  EXPECT_TRUE(changes_.saw("flaky: Running: attempt 1 Failed: nope; retrying in 100ms"));
  EXPECT_TRUE(changes_.saw("flaky: Running: attempt 2 Error: broke; retrying in 300ms"));
  EXPECT_TRUE(changes_.saw("flaky: Running: attempt 4"));
  EXPECT_EQ(calls_.callTimes("hopeless"), (std::vector<Millis>{Millis(0), Millis(50)}));
  EXPECT_EQ(step(report, "hopeless").phase, StepPhase::kFailed);
  EXPECT_EQ(step(report, "hopeless").message, "never");
  EXPECT_EQ(step(report, "hopeless").attempts, 2);
  EXPECT_EQ(step(report, "after").message, "skipped: dependency 'hopeless' Failed");
}

// backoff x factor^n beyond a duration's range is the longest duration (converting it
// was undefined behaviour; the workflow file is anyone's).
TEST_F(RunnerTest, ABackoffBeyondAHundredYearsWaitsAHundredYears) {
  calls_.plan("huge", {Answer::failed("nope")});
  env_.at(at(Millis(5000)), [&] { runner_->cancel(); });  // rather than wait 100 years
  auto report = run(R"(name = "wf"
[[steps]]
id = "huge"
plugin = "p"
retry = { limit = 2, backoff = "1s", factor = 1e300 }
)");
  EXPECT_EQ(calls_.callTimes("huge"), (std::vector<Millis>{Millis(0), Millis(1000)}));
  EXPECT_TRUE(changes_.saw("huge: Running: attempt 2 Failed: nope; retrying in " +
                           formatElapsed(kMaxDuration)));
  EXPECT_EQ(step(report, "huge").phase, StepPhase::kCancelled);
}

TEST_F(RunnerTest, ADeadlineCancelsTheCallAndFailsTheAttemptWhichIsRetried) {
  calls_.plan("slow", {Answer::sleeping(Millis(10'000)), Answer::succeeded("second try")});
  calls_.plan("slower", {Answer::sleeping(hours(1))});
  auto report = run(R"(name = "wf"
[[steps]]
id = "slow"
plugin = "p"
timeout = "1s"
retry = { limit = 1, backoff = "50ms" }
[[steps]]
id = "slower"
plugin = "p"
timeout = "2s"
)");
  EXPECT_EQ(calls_.callTimes("slow"), (std::vector<Millis>{Millis(0), Millis(1050)}));
  EXPECT_TRUE(calls_.recordsOf("slow")[0].cancelled);
  EXPECT_TRUE(changes_.saw("slow: Running: attempt 1 Failed: deadline of " +
                           formatElapsed(Millis(1000)) +
                           " passed; the call was cancelled; retrying in 50ms"));
  EXPECT_EQ(step(report, "slow").phase, StepPhase::kSucceeded);
  EXPECT_EQ(step(report, "slow").attempts, 2);
  EXPECT_EQ(step(report, "slower").phase, StepPhase::kFailed);
  EXPECT_EQ(step(report, "slower").message,
            "deadline of " + formatElapsed(Millis(2000)) + " passed; the call was cancelled");
  EXPECT_EQ(report.abandoned, 0);  // both calls returned when cancelled
  EXPECT_EQ(report.duration, Millis(2000));
}

TEST_F(RunnerTest, ADeadlineAlsoCoversTheWaitForARequeue) {
  calls_.plan("poller", {Answer::running(Millis(400))});
  auto report = run(R"(name = "wf"
[[steps]]
id = "poller"
plugin = "p"
timeout = "1s"
)");
  EXPECT_EQ(calls_.callTimes("poller"), (std::vector<Millis>{Millis(0), Millis(400), Millis(800)}));
  EXPECT_EQ(step(report, "poller").phase, StepPhase::kFailed);
  EXPECT_EQ(report.duration, Millis(1000));
}

TEST_F(RunnerTest, ACallThatIgnoresCancellationIsAbandonedAndFreesItsSlot) {
  calls_.plan("stubborn", {Answer::sleeping(hours(1), /*ignores_cancel=*/true)});
  options_.cancel_grace = Millis(2000);
  auto report = run(R"(name = "wf"
[[steps]]
id = "stubborn"
plugin = "p"
timeout = "100ms"
[[steps]]
id = "other"
plugin = "p"
)",
                    /*parallel=*/1);
  EXPECT_EQ(step(report, "stubborn").phase, StepPhase::kFailed);
  EXPECT_EQ(step(report, "stubborn").message, "deadline of 100ms passed; the call was cancelled");
  // With one call at a time, "other" ran while the abandoned call still held its worker.
  EXPECT_EQ(calls_.callTimes("other"), std::vector<Millis>{Millis(100)});
  EXPECT_EQ(step(report, "other").phase, StepPhase::kSucceeded);
  EXPECT_EQ(env_.abandoned(), 1);  // the environment was told, to add a worker
  EXPECT_EQ(report.abandoned, 1);
  EXPECT_EQ(report.duration, Millis(2100));  // then the grace for it to return ran out
}

TEST_F(RunnerTest, DependentsOfAStepThatDidNotSucceedAreSkippedWithTheReason) {
  calls_.plan("a", {Answer::failed("no luck")});
  auto report = run(R"(name = "wf"
[[steps]]
id = "a"
plugin = "p"
[[steps]]
id = "b"
plugin = "p"
depends = ["a"]
[[steps]]
id = "c"
plugin = "p"
depends = ["b"]
[[steps]]
id = "e"
plugin = "p"
[[steps]]
id = "d"
plugin = "p"
depends = ["e", "c"]
)");
  EXPECT_FALSE(report.succeeded());
  EXPECT_EQ(step(report, "a").phase, StepPhase::kFailed);
  EXPECT_EQ(step(report, "b").message, "skipped: dependency 'a' Failed");
  EXPECT_EQ(step(report, "c").message, "skipped: dependency 'b' Skipped");
  EXPECT_EQ(step(report, "d").message, "skipped: dependency 'c' Skipped");
  EXPECT_EQ(step(report, "d").phase, StepPhase::kSkipped);
  EXPECT_EQ(step(report, "e").phase, StepPhase::kSucceeded);
  EXPECT_EQ(calls_.records().size(), 2u);  // a and e
}

TEST_F(RunnerTest, CancelEndsRunningWaitingAndPendingSteps) {
  calls_.plan("running", {Answer::sleeping(Millis(10'000))});
  calls_.plan("waiting", {Answer::running(Millis(5000))});
  calls_.plan("retrying", {Answer::failed("again")});
  env_.at(at(Millis(500)), [&] { runner_->cancel(); });
  auto report = run(R"(name = "wf"
[[steps]]
id = "running"
plugin = "p"
[[steps]]
id = "waiting"
plugin = "p"
[[steps]]
id = "retrying"
plugin = "p"
retry = { limit = 3, backoff = "10s" }
[[steps]]
id = "pending"
plugin = "p"
depends = ["running"]
)");
  EXPECT_TRUE(report.cancelled);
  EXPECT_FALSE(report.succeeded());
  EXPECT_EQ(step(report, "running").phase, StepPhase::kCancelled);
  EXPECT_EQ(step(report, "running").message, "cancelled while running (after 500ms)");
  EXPECT_TRUE(calls_.recordsOf("running")[0].cancelled);
  EXPECT_EQ(step(report, "waiting").message, "cancelled between calls");
  EXPECT_EQ(step(report, "retrying").phase, StepPhase::kCancelled);
  EXPECT_EQ(step(report, "pending").phase, StepPhase::kSkipped);
  EXPECT_EQ(step(report, "pending").message, "skipped: the run was cancelled");
  EXPECT_EQ(report.abandoned, 0);
  EXPECT_EQ(report.duration, Millis(500));
}

TEST_F(RunnerTest, CancelGivesUpOnACallThatIgnoresItAfterTheGrace) {
  calls_.plan("deaf", {Answer::sleeping(hours(1), /*ignores_cancel=*/true)});
  options_.cancel_grace = Millis(300);
  env_.at(at(Millis(200)), [&] { runner_->cancel(); });
  auto report = run(steps({"deaf"}));
  EXPECT_EQ(step(report, "deaf").phase, StepPhase::kCancelled);
  EXPECT_EQ(report.abandoned, 1);
  EXPECT_EQ(report.duration, Millis(500));
}

TEST_F(RunnerTest, NoMoreThanParallelCallsRunAtOnce) {
  std::string wf = "name = \"wf\"\n";
  for (int i = 0; i < 20; ++i) {
    wf += "[[steps]]\nid = \"s" + std::to_string(i) + "\"\nplugin = \"p\"\n";
    calls_.plan("s" + std::to_string(i), {Answer::sleeping(Millis(100))});
  }
  auto report = run(wf, /*parallel=*/3);
  EXPECT_TRUE(report.succeeded());
  EXPECT_EQ(calls_.maxRunning(), 3);
  EXPECT_EQ(report.duration, Millis(700));  // 20 calls, 3 at a time, 100ms each
  // Ready steps start in file order.
  EXPECT_EQ(calls_.callTimes("s2"), std::vector<Millis>{Millis(0)});
  EXPECT_EQ(calls_.callTimes("s3"), std::vector<Millis>{Millis(100)});
}

TEST_F(RunnerTest, OutputsAreSubstitutedIntoDependents) {
  auto report = run(R"(name = "wf"
[inputs]
who = "nobody"
[[steps]]
id = "a"
plugin = "p"
args = { x = "42" }
[[steps]]
id = "b"
plugin = "p"
depends = ["a"]
args = { v = "${steps.a.outputs.parameters.x}-ok", who = "${inputs.who}", wf = "${workflow.name}" }
)");
  ASSERT_TRUE(report.succeeded());
  auto records = calls_.records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].step, "b");
  EXPECT_EQ(records[1].args, (Json{{"v", "42-ok"}, {"who", "Ada"}, {"wf", "wf"}}));
  EXPECT_EQ(step(report, "b").outputs["parameters"]["v"], "42-ok");
  EXPECT_EQ(step(report, "b").plugin, "scripted@1.0.0");
}

TEST_F(RunnerTest, ACheckBeforeTheCallEndsTheStepWithoutRetry) {
  calls_.refuse("undeployable", core::Outcome::error("no deployer 'x'"));
  calls_.refuse("bad-args",
                {core::Phase::kFailed, "args.name: expected string", Json::object(), {}});
  auto report = run(R"(name = "wf"
[[steps]]
id = "undeployable"
plugin = "p"
retry = { limit = 3 }
[[steps]]
id = "bad-args"
plugin = "p"
retry = { limit = 3 }
[[steps]]
id = "after"
plugin = "p"
depends = ["undeployable"]
)");
  EXPECT_EQ(step(report, "undeployable").phase, StepPhase::kError);
  EXPECT_EQ(step(report, "undeployable").message, "no deployer 'x'");
  EXPECT_EQ(step(report, "undeployable").attempts, 1);
  EXPECT_EQ(step(report, "undeployable").calls, 0);
  EXPECT_EQ(step(report, "bad-args").phase, StepPhase::kFailed);
  EXPECT_EQ(step(report, "bad-args").attempts, 1);
  EXPECT_EQ(step(report, "after").message, "skipped: dependency 'undeployable' Error");
  EXPECT_TRUE(calls_.records().empty());
}

TEST_F(RunnerTest, TheObserverSeesEachChangeInOrder) {
  calls_.plan("a", {Answer::running(Millis(10)), Answer::succeeded("done")});
  run(steps({"a"}));
  EXPECT_EQ(changes_.lines, (std::vector<std::string>{
                                "a: Running: ", "a: Running: running; next call in 10ms",
                                "a: Running: running; next call in 10ms", "a: Succeeded: done"}));
}

// Inline calls: 100,000 steps in a line, run through and skipped through, without
// recursion as deep as the line is long.
TEST(RunnerLongTest, ALongChainRunsAndIsSkippedThrough) {
  VirtualRunEnv env(/*threads=*/false);
  ScriptedCalls calls(env);
  core::Workflow wf;
  wf.name = "line";
  const int n = 100'000;
  for (int i = 0; i < n; ++i) {
    core::WorkflowStep& s = wf.steps.emplace_back();
    s.id = "s" + std::to_string(i);
    s.plugin = "p";
    if (i > 0) s.depends = {"s" + std::to_string(i - 1)};
  }
  core::Runner ok(calls, {}, nullptr, &env);
  auto report = ok.run(wf, Json::object());
  EXPECT_TRUE(report.succeeded());
  EXPECT_EQ(calls.records().size(), static_cast<std::size_t>(n));

  calls.plan("s0", {Answer::failed("first")});
  core::Runner failing(calls, {}, nullptr, &env);
  report = failing.run(wf, Json::object());
  EXPECT_EQ(report.steps.back().phase, StepPhase::kSkipped);
  EXPECT_EQ(report.steps.back().message, "skipped: dependency 's99998' Skipped");
}

}  // namespace
}  // namespace plugboard::testing
