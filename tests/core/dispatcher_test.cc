#include "core/routing/dispatcher.h"

#include <thread>

#include <gtest/gtest.h>

#include "tests/support/cancel.h"
#include "tests/support/files.h"
#include "tests/support/launch.h"
#include "tests/support/paths.h"

namespace plugboard::core {
namespace {

namespace fs = std::filesystem;
using plugboard::testing::fixture;
using plugboard::testing::isMapped;
using plugboard::testing::plugin;
using plugboard::testing::TempDir;

// A plugin directory holding copies of the named example plugins and fixtures, so that
// what gets mapped is attributable to this test.
class DispatcherTest : public ::testing::Test {
 protected:
  void install(const fs::path& file) { fs::copy_file(file, dir_.path() / file.filename()); }
  void installExamples() {
    for (const char* name : {"hello", "echo", "fail", "multi", "legacy", "sleep"})
      install(plugin(name));
  }
  const Catalog& catalog() {
    if (!catalog_) catalog_ = std::make_unique<Catalog>(Catalog::scan({dir_.path()}));
    return *catalog_;
  }
  Dispatch dispatch(Dispatcher& d, const std::string& key, Json args = Json::object(),
                    const std::string& rpc = "template.execute") {
    DispatchRequest request;
    request.key = key;
    request.rpc = rpc;
    request.args = std::move(args);
    CallControl control;
    return d.dispatch(request, control);
  }
  fs::path copyOf(const char* name) { return dir_ / (std::string(name) + ".so"); }

  TempDir dir_;
  std::unique_ptr<Catalog> catalog_;
};

TEST_F(DispatcherTest, NamedPluginIsTheOnlyOneCalledAndLoaded) {
  installExamples();
  Dispatcher d(catalog(), plugboard::testing::inProcess());
  auto r = dispatch(d, "hello", {{"name", "Ada"}});
  EXPECT_EQ(r.via, Via::kNamed);
  EXPECT_EQ(r.outcome.phase, Phase::kSucceeded);
  EXPECT_EQ(r.plugin, "hello@1.2.0");
  EXPECT_TRUE(r.tried.empty());  // nothing was polled
  EXPECT_TRUE(isMapped(copyOf("hello")));
  for (const char* other : {"echo", "fail", "multi", "legacy", "sleep"}) {
    EXPECT_FALSE(isMapped(copyOf(other))) << other;
  }
}

TEST_F(DispatcherTest, NamesAreMatchedByAliasCaseAndArgoSuffix) {
  installExamples();
  Dispatcher d(catalog(), plugboard::testing::inProcess());
  for (const char* key : {"HELLO", "greeter", "hello-executor-plugin"}) {
    auto r = dispatch(d, key);
    EXPECT_EQ(r.via, Via::kNamed) << key;
    EXPECT_EQ(r.plugin, "hello@1.2.0") << key;
  }
  for (const char* key : {"legacy", "legacy-executor-plugin"}) {
    auto r = dispatch(d, key, {{"legacy", true}});
    EXPECT_EQ(r.via, Via::kNamed) << key;
    EXPECT_EQ(r.outcome.phase, Phase::kSucceeded) << key;
    EXPECT_EQ(r.outcome.outputs["parameters"]["via"], "name");
    EXPECT_EQ(r.outcome.outputs["parameters"]["key"], key);
  }
}

TEST_F(DispatcherTest, ANamedPluginThatDeclinesFailsTheTemplate) {
  installExamples();
  Dispatcher d(catalog(), plugboard::testing::inProcess());
  auto r = dispatch(d, "legacy-executor-plugin", {{"unrelated", 1}});
  EXPECT_EQ(r.outcome.phase, Phase::kFailed);
  EXPECT_EQ(r.outcome.message, "plugin 'legacy-executor-plugin' could not execute the template");
}

TEST_F(DispatcherTest, APluginWithoutTheRpcFailsBeforeItIsLoaded) {
  installExamples();
  Dispatcher d(catalog(), plugboard::testing::inProcess());
  auto r = dispatch(d, "multi", {{"text", "x"}});
  EXPECT_EQ(r.outcome.phase, Phase::kFailed);
  EXPECT_EQ(
      r.outcome.message,
      "plugin 'multi' does not provide 'template.execute'; it provides: text.upper, text.count");
  EXPECT_TRUE(r.tried.empty());
  EXPECT_FALSE(isMapped(copyOf("multi")));
  // Polling for the same RPC never reaches it either.
  auto polled = dispatch(d, "unknown", {{"legacy", true}});
  EXPECT_EQ(polled.outcome.phase, Phase::kSucceeded);
  EXPECT_FALSE(isMapped(copyOf("multi")));
}

TEST_F(DispatcherTest, UnknownNamePollsProvidersAndLegacyPluginsInNameOrder) {
  install(plugin("legacy"));
  install(fixture("scripted"));
  install(plugin("fail"));
  Dispatcher d(catalog(), plugboard::testing::inProcess());
  // In name order: fail is not polled at all (an SDK plugin's manifest says "polled":
  // false unless it opts in), the legacy plugin declines (no marker in the args),
  // scripted handles it.
  auto r = dispatch(d, "someone-else");
  EXPECT_EQ(r.via, Via::kPolled);
  EXPECT_EQ(r.outcome.phase, Phase::kSucceeded);
  EXPECT_EQ(r.tried, (std::vector<std::string>{"legacy-executor-plugin@0.9.0", "scripted@1.0.0"}));
  EXPECT_EQ(d.pollOrder("template.execute").size(), 2u);
  EXPECT_EQ(d.pollOrder("template.execute")[1]->manifest.name, "scripted");
}

TEST_F(DispatcherTest, PriorityComesBeforeName) {
  install(plugin("legacy"));
  install(fixture("scripted"));
  install(plugin("fail"));
  Dispatcher d(catalog(),
               plugboard::testing::inProcess({{"Scripted", 10}, {"legacy-executor-plugin", 5}}));
  std::vector<std::string> order;
  for (const auto* e : d.pollOrder("template.execute")) order.push_back(e->manifest.name);
  EXPECT_EQ(order, (std::vector<std::string>{"scripted", "legacy-executor-plugin"}));
  auto r = dispatch(d, "someone-else", {{"id", "p"}});
  EXPECT_EQ(r.outcome.phase, Phase::kSucceeded);
  EXPECT_EQ(r.outcome.outputs["parameters"]["via"], "poll");
  EXPECT_EQ(r.outcome.outputs["parameters"]["key"], "someone-else");
}

TEST_F(DispatcherTest, DecliningPluginsArePassedAndNobodyHandlingSaysWhoWasTried) {
  install(plugin("legacy"));
  install(fixture("scripted"));
  Dispatcher d(catalog(), plugboard::testing::inProcess());
  auto r = dispatch(d, "nobody", {{"only_key", "somebody"}});
  EXPECT_FALSE(r.handled);
  EXPECT_EQ(r.outcome.phase, Phase::kFailed);
  EXPECT_EQ(r.outcome.message,
            "no plugin executed the template (plugin 'nobody' is not installed; polled for "
            "'template.execute': legacy-executor-plugin@0.9.0, scripted@1.0.0)");
  // A polled plugin that recognises its key handles it.
  auto mine = dispatch(d, "somebody", {{"only_key", "somebody"}});
  EXPECT_EQ(mine.outcome.phase, Phase::kSucceeded);
}

TEST_F(DispatcherTest, AnErrorStopsThePoll) {
  install(plugin("legacy"));
  install(fixture("scripted"));
  install(plugin("sleep"));
  Dispatcher d(catalog(), plugboard::testing::inProcess());
  // Order: legacy-executor-plugin (declines), scripted (errors), sleep (never called).
  auto r = dispatch(d, "nobody", {{"phase", "Error"}, {"message", "broken"}});
  EXPECT_EQ(r.outcome.phase, Phase::kError);
  EXPECT_EQ(r.outcome.message, "broken");
  EXPECT_EQ(r.tried, (std::vector<std::string>{"legacy-executor-plugin@0.9.0", "scripted@1.0.0"}));
  EXPECT_FALSE(isMapped(copyOf("sleep")));
}

// resolve(): each kind of answer, from the catalog and the registry alike.
TEST_F(DispatcherTest, ResolveNamesACatalogPluginByNameAliasOrLegacyKeyWithoutLoadingIt) {
  installExamples();
  Dispatcher d(catalog(), plugboard::testing::inProcess());
  for (const char* key : {"hello", "greeter", "hello-executor-plugin"}) {
    const Route r = d.resolve({.key = key});
    ASSERT_EQ(r.kind, Route::Kind::kPlugin) << key;
    EXPECT_EQ(r.plugin(), "hello@1.2.0");
    ASSERT_NE(r.manifest(), nullptr);
  }
  EXPECT_EQ(d.resolve({.key = "hello", .version = "1"}).plugin(), "hello@1.2.0");
  EXPECT_FALSE(isMapped(copyOf("hello")));
}

TEST_F(DispatcherTest, ResolveWithoutAPluginForTheKeyGivesThePollListWithThePolledRuleApplied) {
  installExamples();
  Dispatcher d(catalog(), plugboard::testing::inProcess());
  for (const char* key : {"nobody", ""}) {
    const Route r = d.resolve({.key = key, .rpc = "text.upper"});
    ASSERT_EQ(r.kind, Route::Kind::kPoll) << key;
    std::vector<std::string> names;
    for (const auto* e : *r.poll) names.push_back(e->manifest.name);
    // multi provides it and says "polled": true; the legacy plugin takes every RPC.
    EXPECT_EQ(names, (std::vector<std::string>{"legacy-executor-plugin", "multi"})) << key;
  }
}

TEST_F(DispatcherTest, APluginWhoseManifestRefusesPolledCallsIsNeverCalledByAPoll) {
  install(plugin("fail"));   // an SDK plugin that does not opt in: "polled": false
  install(plugin("hello"));  // the same
  install(plugin("legacy"));
  const Catalog& c = catalog();
  ASSERT_EQ(c.find("fail")->manifest.polled, std::optional<bool>(false));
  ASSERT_EQ(c.find("legacy")->manifest.polled, std::optional<bool>(true));
  Dispatcher d(c, plugboard::testing::inProcess());
  auto r = dispatch(d, "nobody", {{"unrelated", 1}});
  EXPECT_FALSE(r.handled);
  EXPECT_EQ(r.tried, (std::vector<std::string>{"legacy-executor-plugin@0.9.0"}));
  EXPECT_FALSE(isMapped(copyOf("fail")));  // never started, let alone called
  EXPECT_FALSE(isMapped(copyOf("hello")));
  // Named, the same plugin is called as always.
  EXPECT_EQ(dispatch(d, "fail").outcome.phase, Phase::kFailed);
  EXPECT_TRUE(isMapped(copyOf("fail")));
}

TEST_F(DispatcherTest, ThePolledRuleIsAManifestFact) {
  auto manifest = [](const std::string& members) {
    auto m = parseManifest(R"({"kind":"executor","abi":1,"name":"p","version":"1.0.0")" +
                           members + "}");
    EXPECT_TRUE(m.ok()) << members;
    return *m;
  };
  EXPECT_FALSE(takesPolls(manifest(R"(,"polled":false)"), "template.execute"));
  EXPECT_TRUE(takesPolls(manifest(R"(,"polled":true)"), "template.execute"));
  // Built before the member existed: polled, and it may decline itself.
  EXPECT_TRUE(takesPolls(manifest(""), "template.execute"));
  EXPECT_FALSE(takesPolls(manifest(R"(,"polled":true,"provides":["a.b"])"), "template.execute"));
  EXPECT_FALSE(parseManifest(R"({"kind":"executor","abi":1,"name":"p","version":"1.0.0",)"
                             R"("polled":"yes"})")
                   .ok());
}

TEST_F(DispatcherTest, ResolveGivesTheConflictOfAKeyTwoPluginsClaim) {
  auto hello = readPluginFile(plugin("hello"));
  ASSERT_TRUE(hello.ok());
  auto other = parseManifest(R"({"kind":"executor","abi":1,"name":"other","version":"1.0.0",)"
                             R"("aliases":["greeter"],"provides":["template.execute"]})");
  ASSERT_TRUE(other.ok());
  const Catalog c = Catalog::fromEntries(
      {*hello, CatalogEntry{*other, "/nowhere/other.so", "other@1.0.0"}}, {});
  Dispatcher d(c, plugboard::testing::inProcess());
  const Route r = d.resolve({.key = "greeter"});
  ASSERT_EQ(r.kind, Route::Kind::kConflict);
  EXPECT_NE(r.reason.find("plugin 'greeter' is ambiguous: "), std::string::npos) << r.reason;
  auto called = dispatch(d, "greeter");
  EXPECT_EQ(called.outcome.phase, Phase::kError);
  EXPECT_EQ(called.outcome.message, r.reason);
  EXPECT_FALSE(called.reached);
}

TEST_F(DispatcherTest, ResolvePlacesAStepsOwnDeployerAndRegistryPluginsAsNamedTargets) {
  installExamples();
  Config config;
  config.registry = (dir_ / "registry.toml").string();
  plugboard::testing::writeFile(config.registry,
                                "[plugins.pyonly.\"1.0.0\"]\npython = { module = \"m\", "
                                "path = \".\" }\n");
  auto launcher = plugboard::testing::launcher(config);
  Dispatcher d(catalog(), {.priority = {}, .launcher = launcher});

  // A step's own deployer: placed there even though the catalog has the plugin.
  const Json none = Json::object();
  const Route own = d.resolve({.key = "echo", .deployer = "process", .options = &none});
  ASSERT_EQ(own.kind, Route::Kind::kTarget) << own.reason;
  EXPECT_EQ(own.target->deployer->manifest.name, "process");
  EXPECT_EQ(own.plugin(), "echo@1.0.0");
  EXPECT_EQ(own.manifest(), nullptr);  // known once started

  // A plugin only the registry knows: by name for steps and `call`; templates poll.
  const Route py = d.resolve({.key = "pyonly", .registry = true});
  ASSERT_EQ(py.kind, Route::Kind::kTarget) << py.reason;
  EXPECT_EQ(py.target->deployer->manifest.name, "python");
  EXPECT_EQ(d.resolve({.key = "pyonly"}).kind, Route::Kind::kPoll);

  // Nothing, with the reason: a deployer that is not installed.
  const Route bad = d.resolve({.key = "echo", .deployer = "teleport", .options = &none});
  ASSERT_EQ(bad.kind, Route::Kind::kNone);
  EXPECT_NE(bad.reason.find("no deployer 'teleport' (installed deployers: "), std::string::npos);
  CallControl control;
  DispatchRequest request;
  request.key = "echo";
  auto called = d.call(bad, request, control);
  EXPECT_EQ(called.outcome.phase, Phase::kError);
  EXPECT_EQ(called.outcome.message, bad.reason);
  EXPECT_FALSE(called.reached);
}

TEST_F(DispatcherTest, ResolveRefusesANameWhoseVersionsAreDifferentPlugins) {
  install(plugin("hello"));
  Config config;
  config.registry = (dir_ / "registry.toml").string();
  plugboard::testing::writeFile(config.registry,
                                "[plugins.hello.\"0.0.1\"]\nargo = { path = \"x.yaml\" }\n");
  Dispatcher d(catalog(), {.priority = {}, .launcher = plugboard::testing::launcher(config)});
  const Route r = d.resolve({.key = "hello", .registry = true});
  ASSERT_EQ(r.kind, Route::Kind::kNone);
  EXPECT_NE(r.reason.find("plugin 'hello' is ambiguous: hello@1.2.0 (native), hello@0.0.1 (argo)"),
            std::string::npos)
      << r.reason;
  // A template names the plugin of the plugin directories, as serve and exec route it.
  EXPECT_EQ(d.resolve({.key = "hello"}).kind, Route::Kind::kPlugin);
}

TEST_F(DispatcherTest, ContextTextIsForwardedAndCannotOverrideTheRoutingMembers) {
  install(fixture("scripted"));
  Dispatcher d(catalog(), plugboard::testing::inProcess());
  DispatchRequest request;
  request.key = "scripted";
  request.args = {{"id", "ctx"}};
  request.context_text =
      R"( {"workflow":{"metadata":{"name":"wf"}}, "key":"forged", "via":"poll"} )";
  CallControl control;
  auto r = d.dispatch(request, control);
  ASSERT_EQ(r.outcome.phase, Phase::kSucceeded) << r.outcome.message;
  EXPECT_EQ(r.outcome.outputs["parameters"]["key"], "scripted");
  EXPECT_EQ(r.outcome.outputs["parameters"]["via"], "name");
  request.context_text = "{}";
  EXPECT_EQ(d.dispatch(request, control).outcome.phase, Phase::kSucceeded);
}

TEST_F(DispatcherTest, AThrowingPluginGivesAnErrorNamingIt) {
  install(fixture("scripted"));
  Dispatcher d(catalog(), plugboard::testing::inProcess());
  auto r = dispatch(d, "scripted", {{"throw", "boom"}});
  EXPECT_EQ(r.outcome.phase, Phase::kError);
  EXPECT_EQ(r.outcome.message, "plugin 'scripted' threw: boom");
}

TEST_F(DispatcherTest, APluginThatCannotLoadIsReportedOnEveryCall) {
  fs::copy_file(fixture("no_entry"), dir_ / "no_entry.so");
  Dispatcher d(catalog(), plugboard::testing::inProcess());
  for (int i = 0; i < 2; ++i) {
    auto r = dispatch(d, "noentry");
    EXPECT_EQ(r.outcome.phase, Phase::kError);
    EXPECT_NE(r.outcome.message.find("plugin 'noentry' could not be loaded"), std::string::npos)
        << r.outcome.message;
  }
}

TEST_F(DispatcherTest, ASerialPluginIsNeverEnteredTwice) {
  install(fixture("serial_probe"));
  install(fixture("parallel_probe"));
  Dispatcher d(catalog(), plugboard::testing::inProcess());
  auto hammer = [&](const char* key) {
    std::vector<Phase> phases(4);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
      threads.emplace_back([&, i] { phases[i] = dispatch(d, key, {{"ms", 50}}).outcome.phase; });
    }
    for (auto& t : threads) t.join();
    return std::count(phases.begin(), phases.end(), Phase::kFailed);
  };
  EXPECT_EQ(hammer("serial-probe"), 0);
  EXPECT_GT(hammer("parallel-probe"), 0);  // the probe does see overlapping calls
}

TEST_F(DispatcherTest, CancelStopsARunningCall) {
  install(plugin("sleep"));
  Dispatcher d(catalog(), plugboard::testing::inProcess());
  DispatchRequest request{"sleep", "", "template.execute", {{"seconds", 60}}, Json::object(), {}};
  CallControl control;
  auto r = plugboard::testing::cancelWhileRunning([&] { return d.dispatch(request, control); },
                                                  [&] {
                                                    if (control.calling()) control.cancel();
                                                  });
  EXPECT_EQ(r.outcome.phase, Phase::kError);
  EXPECT_EQ(r.outcome.message, "cancelled while sleeping");
}

}  // namespace
}  // namespace plugboard::core
