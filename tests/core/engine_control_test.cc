// The engine's control rules on a virtual clock, with the exact virtual times of the calls:
// retries (limit, policy, backoff, maxDuration, expression), per-attempt timeout,
// activeDeadline, parallelism, exit handlers, suspend, cancel, polling.
#include "tests/core/engine_harness.h"

namespace plugboard::testing {
namespace {

using Policy = core::RetryStrategy::Policy;

core::Template retried(core::Template t, std::optional<std::string> limit, Policy policy,
                       std::optional<Millis> backoff = std::nullopt, double factor = 1.0) {
  core::RetryStrategy rs;
  rs.limit = std::move(limit);
  rs.policy = policy;
  rs.backoff = backoff;
  rs.factor = factor;
  t.retry = rs;
  return t;
}

TEST_F(EngineTest, RetriesBackOffByTheFactorUntilAnAttemptSucceeds) {
  leaves_.plan("flaky", {LeafAnswer::failed(), LeafAnswer::failed(), LeafAnswer::ok()});
  auto r = run(workflow("main", {steps("main", {{call("f", "flaky")}}),
                                 retried(leaf("flaky"), "3", Policy::kOnFailure, Millis(1000), 2)}));
  EXPECT_EQ(r.phase, NodePhase::kSucceeded) << r.message;
  EXPECT_EQ(leaves_.times("flaky"), (std::vector<Millis>{Millis(0), Millis(1000), Millis(3000)}));
  const auto& retry = node(r, "wf[0].f");
  EXPECT_EQ(retry.type, core::NodeType::kRetry);
  EXPECT_EQ(retry.children.size(), 3u);
  EXPECT_EQ(phase(r, "wf[0].f(0)"), "Failed");
  EXPECT_EQ(node(r, "wf[0].f(1)").display_name, "f(1)");
  EXPECT_EQ(phase(r, "wf[0].f(2)"), "Succeeded");
}

TEST_F(EngineTest, RetriesStopAtTheLimit) {
  leaves_.plan("bad", {LeafAnswer::failed()});
  auto r = run(workflow("bad", {retried(leaf("bad"), "2", Policy::kAlways)}));
  EXPECT_EQ(r.phase, NodePhase::kFailed);
  EXPECT_EQ(leaves_.records("bad").size(), 3u);  // the first attempt and two retries
  EXPECT_EQ(r.message, "No more retries left");
}

TEST_F(EngineTest, RetryPolicyChoosesWhichFailuresAreRetried) {
  leaves_.plan("fails", {LeafAnswer::failed("exit code 1")});
  leaves_.plan("errs", {LeafAnswer::error("pod deleted"), LeafAnswer::ok()});
  auto r = run(workflow("main", {dag("main", {task("a", "fails"), task("b", "errs")}),
                                 retried(leaf("fails"), "5", Policy::kOnError),
                                 retried(leaf("errs"), "5", Policy::kOnError)}));
  EXPECT_EQ(leaves_.records("fails").size(), 1u);  // Failed is not retried OnError
  EXPECT_EQ(node(r, "wf.a").message, "exit code 1");
  EXPECT_EQ(leaves_.records("errs").size(), 2u);
  EXPECT_EQ(phase(r, "wf.b"), "Succeeded");

  leaves_.plan("errs", {LeafAnswer::error("pod deleted"), LeafAnswer::ok()});
  auto r2 = run(workflow("errs", {retried(leaf("errs"), "5", Policy::kOnFailure)}));
  EXPECT_EQ(r2.phase, NodePhase::kError);  // an Error is not retried OnFailure
}

TEST_F(EngineTest, OnTransientErrorRetriesOnlyMessagesArgoCallsTransient) {
  // Argo's own transient texts (util/errors/errors.go), whether the node Failed or Errored.
  leaves_.plan("net", {LeafAnswer::error("dial tcp 10.0.0.1:80: connect: connection refused"),
                       LeafAnswer::failed("read: connection reset by peer"), LeafAnswer::ok()});
  leaves_.plan("bug", {LeafAnswer::failed("exit code 1")});
  auto r = run(workflow("main", {dag("main", {task("a", "net"), task("b", "bug")}),
                                 retried(leaf("net"), "5", Policy::kOnTransientError),
                                 retried(leaf("bug"), "5", Policy::kOnTransientError)}));
  EXPECT_EQ(leaves_.records("net").size(), 3u);
  EXPECT_EQ(phase(r, "wf.a"), "Succeeded");
  EXPECT_EQ(leaves_.records("bug").size(), 1u);  // not transient: not retried
  EXPECT_EQ(node(r, "wf.b").message, "exit code 1");

  // TRANSIENT_ERROR_PATTERN adds the messages it matches.
  options_.transient_error_pattern.emplace("quota|busy");
  leaves_.plan("busy", {LeafAnswer::failed("the server is busy"), LeafAnswer::ok()});
  auto r2 = run(workflow("busy", {retried(leaf("busy"), "5", Policy::kOnTransientError)}));
  EXPECT_EQ(r2.phase, NodePhase::kSucceeded) << r2.message;
  EXPECT_EQ(leaves_.records("busy").size(), 2u);
}

TEST_F(EngineTest, MaxDurationEndsRetriesWhoseBackoffWouldPassIt) {
  leaves_.plan("bad", {LeafAnswer::failed()});
  auto t = retried(leaf("bad"), "10", Policy::kOnFailure, Millis(1000), 2);
  t.retry->max_total = Millis(5000);
  auto r = run(workflow("bad", {t}));
  EXPECT_EQ(r.phase, NodePhase::kFailed);
  // 0, 1s, 3s; the next would wait 4s, to 7s, past the 5s limit.
  EXPECT_EQ(leaves_.times("bad"), (std::vector<Millis>{Millis(0), Millis(1000), Millis(3000)}));
  EXPECT_EQ(r.message, "Backoff would exceed max duration limit");
}

TEST_F(EngineTest, RetryExpressionSeesTheLastAttempt) {
  leaves_.plan("bad", {LeafAnswer::failed("transient"), LeafAnswer::failed("fatal")});
  auto t = retried(leaf("bad"), "10", Policy::kAlways);
  t.retry->expression = "lastRetry.message == 'transient'";
  auto r = run(workflow("bad", {t}));
  EXPECT_EQ(leaves_.records("bad").size(), 2u);
  EXPECT_EQ(r.message, "retryStrategy.expression evaluated to false");
}

TEST_F(EngineTest, RetriesVariableCountsTheAttempts) {
  leaves_.plan("bad", {LeafAnswer::failed(), LeafAnswer::ok()});
  auto t = retried(leaf("bad"), "1", Policy::kOnFailure);
  t.plugin.args = {{"attempt", "{{retries}}"}};
  t.original = {{"plugin", {{"test", t.plugin.args}}}};
  auto r = run(workflow("bad", {t}));
  auto calls = leaves_.records("bad");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].filled["plugin"]["test"]["attempt"], 0);
  EXPECT_EQ(calls[1].filled["plugin"]["test"]["attempt"], 1);
}

TEST_F(EngineTest, TimeoutEndsAnAttemptAndTheRetryStartsAnother) {
  leaves_.plan("slow", {LeafAnswer::sleeping(Millis(10000)), LeafAnswer::ok()});
  auto t = retried(leaf("slow"), "1", Policy::kOnFailure);
  t.timeout = "2s";
  auto r = run(workflow("slow", {t}));
  EXPECT_EQ(r.phase, NodePhase::kSucceeded) << r.message;
  EXPECT_EQ(leaves_.times("slow"), (std::vector<Millis>{Millis(0), Millis(2000)}));
  EXPECT_EQ(phase(r, "wf(0)"), "Failed");
  EXPECT_EQ(node(r, "wf(0)").message,
            "Pod was active on the node longer than the specified deadline");
}

TEST_F(EngineTest, ACallThatIgnoresItsCancellationIsAbandoned) {
  leaves_.plan("stuck", {LeafAnswer::sleeping(Millis(60000), /*ignores_cancel=*/true)});
  options_.cancel_grace = Millis(1000);
  auto t = leaf("stuck");
  t.timeout = "1s";
  auto r = run(workflow("stuck", {t}));
  EXPECT_EQ(r.phase, NodePhase::kFailed);
  EXPECT_EQ(r.abandoned, 1);
  EXPECT_EQ(env_.abandoned(), 1);
}

TEST_F(EngineTest, ActiveDeadlineOfTheWorkflowFailsWhatRuns) {
  leaves_.plan("slow", {LeafAnswer::sleeping(Millis(100000))});
  auto m = workflow("main", {steps("main", {{call("s", "slow")}}), leaf("slow")});
  m.active_deadline = Millis(3000);
  auto r = run(m);
  EXPECT_EQ(r.phase, NodePhase::kFailed);
  EXPECT_FALSE(r.cancelled);
  EXPECT_EQ(node(r, "wf[0].s").message, "Step exceeded its deadline");
  EXPECT_EQ(*node(r, "wf[0].s").finished - env_.start(), Millis(3000));
}

TEST_F(EngineTest, TheWorkflowsExitHandlerRunsAfterItsDeadline) {
  leaves_.plan("slow", {LeafAnswer::sleeping(Millis(100000))});
  auto m = workflow("slow", {leaf("slow"), leaf("say", {"message"}),
                             steps("exit", {{call("report", "say", {{"message", "{{workflow.status}}"}})}})});
  m.active_deadline = Millis(3000);
  m.on_exit = "exit";
  auto r = run(m);
  EXPECT_EQ(r.phase, NodePhase::kFailed);
  EXPECT_EQ(r.message, "Step exceeded its deadline");
  EXPECT_EQ(phase(r, "wf.onExit"), "Succeeded");
  ASSERT_EQ(leaves_.records("say").size(), 1u);
  EXPECT_EQ(leaves_.records("say")[0].inputs["message"], "Failed");
}

TEST_F(EngineTest, ActiveDeadlineOfATemplateCoversItsRetries) {
  leaves_.plan("bad", {LeafAnswer::failed()});
  auto t = retried(leaf("bad"), "100", Policy::kOnFailure, Millis(1000));
  t.active_deadline = Millis(2500);
  auto r = run(workflow("bad", {t}));
  EXPECT_EQ(r.phase, NodePhase::kFailed);
  EXPECT_EQ(leaves_.times("bad"), (std::vector<Millis>{Millis(0), Millis(1000), Millis(2000)}));
  EXPECT_EQ(r.message, "Step exceeded its deadline");
}

TEST_F(EngineTest, TemplateParallelismBoundsTheChildrenRunningAtOnce) {
  leaves_.plan("slow", {LeafAnswer::sleeping(Millis(1000))});
  auto c = call("s", "slow");
  c.loop->kind = core::Loop::Kind::kItems;
  c.loop->items = Json::array({1, 2, 3, 4, 5});
  auto main = steps("main", {{c}});
  main.parallelism = 2;
  auto r = run(workflow("main", {main, pod("slow")}));
  EXPECT_EQ(r.phase, NodePhase::kSucceeded);
  EXPECT_EQ(leaves_.maxRunning(), 2);
  EXPECT_EQ(leaves_.times("slow"), (std::vector<Millis>{Millis(0), Millis(0), Millis(1000),
                                                        Millis(1000), Millis(2000)}));

  // Argo counts Pod, Steps and DAG children only: plugin calls never wait for a place
  // (they share the run's own, here eight).
  options_.parallel = 8;
  auto plugins = run(workflow("main", {main, leaf("slow")}));
  EXPECT_EQ(plugins.phase, NodePhase::kSucceeded);
  const auto times = leaves_.times("slow");
  ASSERT_EQ(times.size(), 10u);
  EXPECT_EQ(std::vector<Millis>(times.begin() + 5, times.end()), std::vector<Millis>(5, times[5]));
}

TEST_F(EngineTest, AStepsTemplateWithFailFastStartsNoMoreChildrenAfterAFailure) {
  leaves_.plan("item", {LeafAnswer::failed("first"), LeafAnswer::ok()});
  auto c = call("s", "item");
  c.loop->kind = core::Loop::Kind::kItems;
  c.loop->items = Json::array({1, 2, 3, 4});
  auto main = steps("main", {{c}});
  main.parallelism = 1;
  // Argo's default: the others run, and the group fails for its failed child.
  auto r = run(workflow("main", {main, pod("item")}));
  EXPECT_EQ(r.phase, NodePhase::kFailed);
  EXPECT_EQ(leaves_.records("item").size(), 4u);
  EXPECT_EQ(r.message.rfind("child '", 0), 0u) << r.message;

  // failFast: the three waiting for a place never start, and get no node.
  main.fail_fast = true;
  leaves_.plan("item", {LeafAnswer::failed("first"), LeafAnswer::ok()});
  auto fast = run(workflow("main", {main, pod("item")}));
  EXPECT_EQ(fast.phase, NodePhase::kFailed);
  EXPECT_EQ(leaves_.records("item").size(), 5u);
  EXPECT_EQ(fast.message, "template has failed or errored children and failFast enabled");
  EXPECT_EQ(phase(fast, "wf[0]"), "Failed");
  EXPECT_FALSE(has(fast, "wf[0].s(1:2)"));
}

TEST_F(EngineTest, WorkflowParallelismBoundsTheLeavesRunningAtOnce) {
  leaves_.plan("slow", {LeafAnswer::sleeping(Millis(1000))});
  leaves_.plan("call", {LeafAnswer::sleeping(Millis(1000))});
  auto m = workflow("main", {dag("main", {task("a", "slow"), task("b", "slow"), task("c", "slow"),
                                          task("p", "call"), task("q", "call")}),
                             pod("slow"), leaf("call")});
  m.parallelism = 1;
  options_.parallel = 4;
  auto r = run(m);
  EXPECT_EQ(r.phase, NodePhase::kSucceeded);
  EXPECT_EQ(leaves_.times("slow"), (std::vector<Millis>{Millis(0), Millis(1000), Millis(2000)}));
  // spec.parallelism counts pods, as Argo's controller: the plugin calls run beside them,
  // within the run's own places.
  EXPECT_EQ(leaves_.times("call"), (std::vector<Millis>{Millis(0), Millis(0)}));
}

TEST_F(EngineTest, ACallsExitHandlerRunsAfterItWithItsStatus) {
  leaves_.plan("bad", {LeafAnswer::failed()});
  auto c = call("a", "bad");
  c.on_exit = "cleanup";
  c.continue_on_failed = true;
  auto r = run(workflow("main", {steps("main", {{c}, {call("b", "echo")}}), leaf("bad"),
                                 leaf("echo"), leaf("cleanup")}));
  EXPECT_EQ(r.phase, NodePhase::kSucceeded) << r.message;
  EXPECT_EQ(phase(r, "wf[0].a.onExit"), "Succeeded");
  EXPECT_EQ(node(r, "wf[0].a.onExit").display_name, "a.onExit");
  // The next group starts only after the exit handler ended.
  ASSERT_EQ(leaves_.records().size(), 3u);
  EXPECT_EQ(leaves_.records()[1].tmpl, "cleanup");
  EXPECT_EQ(leaves_.records()[2].tmpl, "echo");
}

TEST_F(EngineTest, AnExitHookGetsArgumentsFromTheCallsOutputs) {
  leaves_.plan("output", {LeafAnswer::ok({{"parameters", {{"result", "hello world"}}}})});
  auto c = call("step-1", "output");
  c.on_exit = "exit";
  c.on_exit_arguments = {{"message", "{{steps.step-1.outputs.parameters.result}}"}};
  auto r = run(workflow("main", {steps("main", {{c}}), leaf("output", {}, {output("result")}),
                                 leaf("exit", {"message"})}));
  EXPECT_EQ(r.phase, NodePhase::kSucceeded) << r.message;
  auto exits = leaves_.records("exit");
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].inputs, (Json{{"message", "hello world"}}));
  EXPECT_EQ(exits[0].node_id, node(r, "wf[0].step-1.onExit").id);
}

TEST_F(EngineTest, TheWorkflowsExitHandlerSeesItsStatusAndFailures) {
  leaves_.plan("bad", {LeafAnswer::failed("exit code 2")});
  auto m = workflow("main", {steps("main", {{call("a", "bad")}}), leaf("bad"),
                             steps("exit", {{call("report", "say",
                                                  {{"message", "{{workflow.status}} {{workflow.failures}}"}})}}),
                             leaf("say", {"message"})});
  m.on_exit = "exit";
  auto r = run(m);
  EXPECT_EQ(r.phase, NodePhase::kFailed);
  EXPECT_EQ(phase(r, "wf.onExit"), "Succeeded");
  auto says = leaves_.records("say");
  ASSERT_EQ(says.size(), 1u);
  const std::string text = says[0].inputs["message"];
  EXPECT_EQ(text.rfind("Failed [", 0), 0u) << text;
  EXPECT_NE(text.find("\"displayName\":\"a\""), std::string::npos) << text;
  EXPECT_NE(text.find("exit code 2"), std::string::npos) << text;
}

TEST_F(EngineTest, AFailedWorkflowExitHandlerFailsASucceededWorkflow) {
  leaves_.plan("bad", {LeafAnswer::failed("cleanup broke")});
  auto m = workflow("echo", {leaf("echo"), leaf("bad")});
  m.on_exit = "bad";
  auto r = run(m);
  EXPECT_EQ(r.phase, NodePhase::kFailed);
  EXPECT_EQ(r.message, "cleanup broke");
}

TEST_F(EngineTest, SuspendWithADurationWaitsThenSucceeds) {
  core::Template wait;
  wait.name = "wait";
  wait.kind = core::Template::Kind::kSuspend;
  wait.suspend_for = "{{workflow.parameters.d}}";
  auto m = workflow("main", {steps("main", {{call("w", "wait")}, {call("e", "echo")}}), wait,
                             leaf("echo")});
  m.parameters.push_back(param("d", "20s"));
  auto r = run(m);
  EXPECT_EQ(r.phase, NodePhase::kSucceeded);
  EXPECT_EQ(node(r, "wf[0].w").type, core::NodeType::kSuspend);
  EXPECT_EQ(leaves_.times("echo"), std::vector<Millis>{Millis(20000)});
}

TEST_F(EngineTest, CancelStopsTheRunAndFailsWhatRan) {
  leaves_.plan("slow", {LeafAnswer::sleeping(Millis(100000))});
  env_.at(env_.start() + Millis(5000), [this] { engine_->cancel(); });
  auto r = run(workflow("main", {dag("main", {task("a", "slow"), task("b", "echo", "a")}),
                                 leaf("slow"), leaf("echo")}));
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.phase, NodePhase::kFailed);
  EXPECT_EQ(r.message, "Stopped with strategy 'Terminate'");
  EXPECT_EQ(phase(r, "wf.a"), "Failed");
  EXPECT_FALSE(has(r, "wf.b"));
  EXPECT_EQ(r.abandoned, 0);  // it returned when cancelled
}

TEST_F(EngineTest, RunningIsPolledAgainAfterItsRequeue) {
  leaves_.plan("poll", {LeafAnswer::running(Millis(300)), LeafAnswer::running(Millis(300)),
                        LeafAnswer::ok()});
  auto r = run(workflow("poll", {leaf("poll")}));
  EXPECT_EQ(r.phase, NodePhase::kSucceeded);
  EXPECT_EQ(leaves_.times("poll"), (std::vector<Millis>{Millis(0), Millis(300), Millis(600)}));
}

// Bad values that only a run can see: each ends its node Error naming the field.
TEST_F(EngineTest, ABadRetryLimitTimeoutOrDurationErrorsTheNode) {
  auto limit = retried(leaf("a"), "{{workflow.parameters.n}}", Policy::kAlways);
  auto timeout = leaf("b");
  timeout.timeout = "{{workflow.parameters.n}}";
  core::Template wait;
  wait.name = "c";
  wait.kind = core::Template::Kind::kSuspend;
  wait.suspend_for = "{{workflow.parameters.n}}";
  auto m = workflow("main", {dag("main", {task("a", "a"), task("b", "b"), task("c", "c")}),
                             limit, timeout, wait});
  m.parameters.push_back(param("n", "often"));
  auto r = run(m);
  EXPECT_EQ(node(r, "wf.a").message, "retryStrategy.limit: 'often' is not a number");
  EXPECT_EQ(phase(r, "wf.b"), "Error");
  EXPECT_EQ(node(r, "wf.b").message.rfind("timeout: ", 0), 0u) << node(r, "wf.b").message;
  EXPECT_EQ(phase(r, "wf.c"), "Error");
  EXPECT_EQ(node(r, "wf.c").message.rfind("suspend.duration: ", 0), 0u);
  EXPECT_TRUE(leaves_.records().empty());
  EXPECT_EQ(r.phase, NodePhase::kError);
}

TEST_F(EngineTest, ABadSequenceErrorsTheCall) {
  auto both = call("both", "echo");
  both.loop->kind = core::Loop::Kind::kSequence;
  both.loop->count = "2";
  both.loop->end = "3";
  auto format = call("format", "echo");
  format.loop->kind = core::Loop::Kind::kSequence;
  format.loop->count = "2";
  format.loop->format = "%s";
  auto word = call("word", "echo");
  word.loop->kind = core::Loop::Kind::kSequence;
  word.loop->count = "two";
  auto r = run(workflow("main", {steps("main", {{both, format, word}}), leaf("echo")}), Json::object(),
               /*checked=*/false);
  EXPECT_EQ(node(r, "wf[0].both").message, "withSequence: only one of count or end can be defined");
  EXPECT_EQ(node(r, "wf[0].format").message,
            "withSequence.format: '%s' must hold one integer conversion");
  EXPECT_EQ(node(r, "wf[0].word").message, "withSequence.count: 'two' is not an integer");
  EXPECT_EQ(r.phase, NodePhase::kFailed);
}

TEST_F(EngineTest, AnUnknownTemplateOrBadDependsErrorsTheCallAtRunTime) {
  auto d = task("b", "echo", "a.Nonsense");
  auto main = dag("main", {task("a", "echo"), task("ghost", "nope"), d});
  main.fail_fast = false;  // the first error would stop b from starting
  auto r = run(workflow("main", {main, leaf("echo")}),
               Json::object(), /*checked=*/false);
  EXPECT_EQ(node(r, "wf.ghost").message, "template 'nope' not found");
  EXPECT_EQ(phase(r, "wf.b"), "Error");
  EXPECT_NE(node(r, "wf.b").message.find("unable to evaluate expression 'a.Nonsense'"),
            std::string::npos) << node(r, "wf.b").message;
  EXPECT_EQ(r.phase, NodePhase::kError);
}

}  // namespace
}  // namespace plugboard::testing
