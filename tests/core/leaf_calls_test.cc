// The engine's leaves run for real (core/workflows/leaf_calls.h): container and script
// templates through this tree's container deployer and podman, on the stand-in images of
// tests/support/make_argo_example_images.sh; plugin templates through the dispatcher.
#include "core/workflows/leaf_calls.h"

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <deque>
#include <thread>

#include "core/runtime/config.h"
#include "core/runtime/runtime.h"
#include "tests/support/eventually.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/podman.h"

namespace plugboard::core {
namespace {

namespace fs = std::filesystem;
using plugboard::testing::containersLeft;
using plugboard::testing::deployerDir;
using plugboard::testing::eventually;
using plugboard::testing::fixture;
using plugboard::testing::plugin;
using plugboard::testing::TempDir;

// Every container these tests run is named so (template_run.h).
const char* const kOurs = "name=plugboard-step-";

OutputParameterDecl fromPath(std::string name, std::string path,
                             std::optional<Json> default_value = std::nullopt) {
  OutputParameterDecl o;
  o.name = std::move(name);
  o.from = OutputParameterDecl::From::kPath;
  o.source = std::move(path);
  o.default_value = std::move(default_value);
  return o;
}

class LeafCallsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0)
      GTEST_SKIP() << "the container templates run with rootful podman: needs root";
  }
  void TearDown() override {
    if (geteuid() == 0) {
      EXPECT_EQ(containersLeft(kOurs), "");
    }
  }

  // Calls over this tree's deployers (the container deployer's options `options`), and
  // the echo plugin in a plugin directory.
  DispatchedLeafCalls& calls(const Json& options = Json::object(),
                             std::vector<fs::path> deployer_dirs = {deployerDir()}) {
    Config config;
    config.deployer_dirs = std::move(deployer_dirs);
    if (!options.empty()) config.deployer_options["container"] = options;
    auto launcher = makeLauncher(config);
    EXPECT_TRUE(launcher.ok()) << launcher.error().message();
    fs::create_directories(dir_ / "plugins");
    fs::copy_file(plugin("echo"), dir_ / "plugins/echo.so", fs::copy_options::overwrite_existing);
    fs::copy_file(fixture("scripted"), dir_ / "plugins/scripted.so",
                  fs::copy_options::overwrite_existing);
    catalog_ = std::make_unique<Catalog>(Catalog::scan({dir_ / "plugins"}));
    dispatcher_ = std::make_unique<Dispatcher>(*catalog_, DispatcherOptions{{}, *launcher});
    calls_ = std::make_unique<DispatchedLeafCalls>(*dispatcher_);
    return *calls_;
  }

  // A container template (`script`: a script template whose source is `source`).
  Template& container(const std::string& image, std::vector<std::string> command,
                      std::vector<std::string> args = {},
                      std::optional<std::string> source = std::nullopt) {
    auto& t = templates_.emplace_back();
    t.name = "main";
    t.kind = source ? Template::Kind::kScript : Template::Kind::kContainer;
    t.container->image = image;
    t.container->command = std::move(command);
    t.container->args = std::move(args);
    t.container->source = std::move(source);
    return t;
  }

  Dispatch run(const Template& t, CallControl* control = nullptr, Json filled = Json()) {
    LeafCall call;
    call.tmpl = &t;
    if (!filled.is_null()) call.template_text = filled.dump();
    call.container = *t.container;
    call.plugin = t.plugin;
    call.workflow_name = "wf";
    call.workflow_uid = "uid-1";
    if (auto refused = calls_->check(call)) {
      Dispatch d;
      d.outcome = *refused;
      return d;
    }
    CallControl own;
    return calls_->call(call, control != nullptr ? *control : own);
  }

  TempDir dir_;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::unique_ptr<DispatchedLeafCalls> calls_;
  std::deque<Template> templates_;
};

TEST_F(LeafCallsTest, AContainerRunsToItsEndAndItsStdoutIsTheResult) {
  calls();
  auto d = run(container("busybox", {"sh", "-c"}, {"echo hello; echo to stderr >&2"}));
  EXPECT_EQ(d.outcome.phase, Phase::kSucceeded) << d.outcome.message;
  EXPECT_EQ(d.outcome.outputs["result"], "hello");  // one trailing newline off, as Argo
  EXPECT_EQ(d.outcome.outputs["exitCode"], "0");
}

TEST_F(LeafCallsTest, ALongStdoutKeepsItsLast256KiBAsArgoDoesAndAHugeParameterIsRefused) {
  calls();
  auto& t = container("busybox", {"sh", "-c"},
                      {"head -c 300000 /dev/zero | tr '\\0' a; echo; echo end; "
                       "head -c 2000000 /dev/zero > /tmp/big"});
  t.outputs.push_back(fromPath("big", "/tmp/big"));
  auto d = run(t);
  const std::string result = d.outcome.outputs["result"].get<std::string>();
  EXPECT_EQ(result.size(), 256u * 1024);
  EXPECT_EQ(result.substr(result.size() - 6), "aa\nend");
  EXPECT_EQ(d.outcome.phase, Phase::kError);
  EXPECT_NE(d.outcome.message.find("output parameter 'big'"), std::string::npos)
      << d.outcome.message;
  EXPECT_NE(d.outcome.message.find("holds more than 1048576 bytes"), std::string::npos)
      << d.outcome.message;
}

TEST_F(LeafCallsTest, ANonZeroExitFailsWithArgosMessageAndKeepsItsOutputs) {
  calls();
  auto d = run(container("alpine:3.23", {"sh", "-c"}, {"echo partial; exit 3"}));
  EXPECT_EQ(d.outcome.phase, Phase::kFailed);
  EXPECT_EQ(d.outcome.message, "main: Error (exit code 3)");
  EXPECT_EQ(d.outcome.outputs["exitCode"], "3");
  EXPECT_EQ(d.outcome.outputs["result"], "partial");

  auto one = run(container("argoproj/argosay:v2", {}, {"exit", "1"}));  // its entrypoint
  EXPECT_EQ(one.outcome.phase, Phase::kFailed);
  EXPECT_EQ(one.outcome.message, "main: Error (exit code 1)");
}

TEST_F(LeafCallsTest, OutputParametersAreReadFromTheirPathsAfterTheContainerEnded) {
  calls();
  auto& t = container("argoproj/argosay:v2", {}, {"echo", "hello world", "/tmp/out/hello.txt"});
  t.outputs.push_back(fromPath("hello", "/tmp/out/hello.txt"));
  t.outputs.push_back(fromPath("absent", "/tmp/none", Json("fallback")));
  auto d = run(t);
  EXPECT_EQ(d.outcome.phase, Phase::kSucceeded) << d.outcome.message;
  EXPECT_EQ(d.outcome.outputs["parameters"]["hello"], "hello world");  // newline trimmed
  EXPECT_EQ(d.outcome.outputs["parameters"]["absent"], "fallback");

  // A file that is not there, without a default: an Error naming the parameter and path.
  auto& missing = container("busybox", {"true"});
  missing.outputs.push_back(fromPath("gone", "/tmp/gone.txt"));
  auto m = run(missing);
  EXPECT_EQ(m.outcome.phase, Phase::kError);
  EXPECT_NE(m.outcome.message.find("output parameter 'gone'"), std::string::npos)
      << m.outcome.message;
  EXPECT_NE(m.outcome.message.find("/tmp/gone.txt"), std::string::npos);

  // A link the container made is followed inside the container: never to this machine's
  // file of the same path.
  const std::string secret = dir_.write("secret.txt", "host secret");
  auto& link = container("busybox", {"ln", "-s", secret, "/tmp/link"});
  link.outputs.push_back(fromPath("link", "/tmp/link", Json("not followed")));
  auto l = run(link);
  EXPECT_EQ(l.outcome.phase, Phase::kSucceeded) << l.outcome.message;
  EXPECT_EQ(l.outcome.outputs["parameters"]["link"], "not followed");

  // A FIFO is not read (nor waited on).
  auto& fifo = container("busybox", {"mkfifo", "/tmp/fifo"});
  fifo.outputs.push_back(fromPath("fifo", "/tmp/fifo"));
  auto f = run(fifo);
  EXPECT_EQ(f.outcome.phase, Phase::kError);
  EXPECT_NE(f.outcome.message.find("not a regular file"), std::string::npos) << f.outcome.message;

  // A directory is not a parameter's file.
  auto& dir = container("busybox", {"mkdir", "-p", "/tmp/d/e"});
  dir.outputs.push_back(fromPath("d", "/tmp/d"));
  auto r = run(dir);
  EXPECT_EQ(r.outcome.phase, Phase::kError);
  EXPECT_NE(r.outcome.message.find("not a regular file"), std::string::npos) << r.outcome.message;
}

TEST_F(LeafCallsTest, ScriptsRunTheirSourceWithTheirCommandInBashAndPython) {
  calls();
  auto bash =
      run(container("argoproj/argosay:v2", {"bash"}, {}, "set -e\necho \"$((6 * 7)) from $0\"\n"));
  EXPECT_EQ(bash.outcome.phase, Phase::kSucceeded) << bash.outcome.message;
  EXPECT_EQ(bash.outcome.outputs["result"], "42 from /argo/staging/script");

  auto python = run(container("python:alpine3.23", {"python"}, {},
                              "import random, sys\nprint(sum(range(10)))\nsys.exit(0)\n"));
  EXPECT_EQ(python.outcome.phase, Phase::kSucceeded) << python.outcome.message;
  EXPECT_EQ(python.outcome.outputs["result"], "45");

  // `sh -c FILE` runs the file as a program: it is executable, as Argo writes it.
  auto sh = run(container("alpine:3.23", {"sh", "-c"}, {},
                          "cat /dev/urandom | od -N2 -An -i | awk -v f=1 -v r=100 "
                          "'{printf \"%i\\n\", f + r * $1 / 65536}'\n"));
  EXPECT_EQ(sh.outcome.phase, Phase::kSucceeded) << sh.outcome.message;
  // A number (busybox's od reads the two bytes signed, as on Alpine: it may be negative).
  const std::string number = sh.outcome.outputs["result"].get<std::string>();
  EXPECT_TRUE(!number.empty() && number.find_first_not_of("-0123456789") == std::string::npos)
      << number;

  auto failing = run(container("python:alpine3.23", {"python"}, {}, "raise SystemExit(4)\n"));
  EXPECT_EQ(failing.outcome.phase, Phase::kFailed);
  EXPECT_EQ(failing.outcome.message, "main: Error (exit code 4)");
}

TEST_F(LeafCallsTest, ANonRootUserRunsScriptsAndWritesOutputs) {
  calls({{"user", "65534:65534"}});
  auto& t = container("python:alpine3.23", {"python"}, {},
                      "import os\nopen('/tmp/uid', 'w').write(str(os.getuid()))\nprint('ok')\n");
  t.outputs.push_back(fromPath("uid", "/tmp/uid"));
  auto d = run(t);
  EXPECT_EQ(d.outcome.phase, Phase::kSucceeded) << d.outcome.message;
  EXPECT_EQ(d.outcome.outputs["parameters"]["uid"], "65534");
  EXPECT_EQ(d.outcome.outputs["result"], "ok");
}

TEST_F(LeafCallsTest, AScriptRunsOnARealReadOnlyRoot) {
  calls({{"args", {"--read-only", "--read-only-tmpfs=false"}}});
  auto d = run(container("argoproj/argosay:v2", {"bash"}, {},
                         "touch /tmp/x 2>/dev/null && echo writable || echo read-only\n"));
  EXPECT_EQ(d.outcome.phase, Phase::kSucceeded) << d.outcome.message;
  EXPECT_EQ(d.outcome.outputs["result"], "read-only");
}

TEST_F(LeafCallsTest, OutputsComeOutOfReadOnlyRootsAndWithoutInit) {
  // The tmpfs podman puts on /tmp of a read-only root: read before the container ends.
  calls({{"args", {"--read-only"}}});
  auto& tmpfs = container("busybox", {"sh", "-c", "echo on tmpfs > /tmp/x"});
  tmpfs.outputs.push_back(fromPath("x", "/tmp/x"));
  auto t = run(tmpfs);
  EXPECT_EQ(t.outcome.phase, Phase::kSucceeded) << t.outcome.message;
  EXPECT_EQ(t.outcome.outputs["parameters"]["x"], "on tmpfs");

  // A real read-only root, no tmpfs anywhere: the wrapper's mount point is podman's.
  calls({{"args", {"--read-only", "--read-only-tmpfs=false"}}});
  auto& ro = container("busybox", {"sh", "-c", "touch /tmp/y 2>/dev/null || echo read-only"});
  ro.outputs.push_back(fromPath("passwd", "/etc/passwd"));
  auto r = run(ro);
  EXPECT_EQ(r.outcome.phase, Phase::kSucceeded) << r.outcome.message;
  EXPECT_EQ(r.outcome.outputs["result"], "read-only");
  EXPECT_EQ(r.outcome.outputs["parameters"]["passwd"].get<std::string>().substr(0, 5), "root:");

  // Without podman's init the wrapper is PID 1: the command's signal still gives 128 + N.
  calls({{"init", false}});
  auto& killed = container("busybox", {"sh", "-c", "echo saved > /tmp/x; kill -TERM $$"});
  killed.outputs.push_back(fromPath("x", "/tmp/x"));
  auto k = run(killed);
  EXPECT_EQ(k.outcome.phase, Phase::kFailed);
  EXPECT_EQ(k.outcome.message, "main: Error (exit code 143)");
  EXPECT_EQ(k.outcome.outputs["parameters"]["x"], "saved");
}

TEST_F(LeafCallsTest, WithoutItsWrapperOnlyTemplatesWithOutputsAreErrors) {
  // The container deployer alone, without the container/ directory it is installed with.
  TempDir install;
  fs::create_directories(install / "deployers");
  fs::copy_file(deployerDir() / "container.so", install / "deployers/container.so");
  calls(Json::object(), {install / "deployers"});
  auto plain = run(container("busybox", {"echo", "fine"}));
  EXPECT_EQ(plain.outcome.phase, Phase::kSucceeded) << plain.outcome.message;
  auto& t = container("busybox", {"true"});
  t.outputs.push_back(fromPath("x", "/tmp/x", Json("default")));
  auto d = run(t);
  EXPECT_EQ(d.outcome.phase, Phase::kError);
  EXPECT_NE(d.outcome.message.find("cannot save its output parameters: its wrapper " +
                                   (install / "container/plugboard-step-wrapper").string() +
                                   " is missing"),
            std::string::npos)
      << d.outcome.message;
}

TEST_F(LeafCallsTest, StepsAtOnceRunInContainersOfTheirOwn) {
  calls();
  std::vector<const Template*> steps;
  for (int i = 0; i < 4; ++i) {
    auto& t =
        container("busybox", {"sh", "-c"}, {"echo " + std::to_string(i) + " > /tmp/n; cat /tmp/n"});
    t.outputs.push_back(fromPath("n", "/tmp/n"));
    steps.push_back(&t);
  }
  std::vector<Dispatch> done(steps.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < steps.size(); ++i)
    threads.emplace_back([&, i] { done[i] = run(*steps[i]); });
  for (auto& t : threads) t.join();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(done[i].outcome.phase, Phase::kSucceeded) << done[i].outcome.message;
    EXPECT_EQ(done[i].outcome.outputs["result"], std::to_string(i));
    EXPECT_EQ(done[i].outcome.outputs["parameters"]["n"], std::to_string(i));
  }
}

TEST_F(LeafCallsTest, EnvAndWorkingDirReachTheContainer) {
  calls();
  auto& t = container("busybox", {"sh", "-c"}, {"pwd; echo \"$GREETING, $WHO\""});
  t.container->env = {{"GREETING", "hello"}, {"WHO", "a b"}};
  t.container->working_dir = "/tmp";
  auto d = run(t);
  EXPECT_EQ(d.outcome.phase, Phase::kSucceeded) << d.outcome.message;
  EXPECT_EQ(d.outcome.outputs["result"], "/tmp\nhello, a b");
}

TEST_F(LeafCallsTest, ACancelKillsAndRemovesTheContainer) {
  calls();
  const auto& t = container("busybox", {"sleep", "600"});
  CallControl control;
  std::thread canceller([&] {
    // Once the container runs, not before: the cancel must meet a live container.
    EXPECT_TRUE(eventually(
        [] {
          auto r = plugboard::testing::run({"podman", "ps", "--filter", kOurs, "--filter",
                                            "status=running", "--format", "{{.Names}}"});
          return !r.out.empty();
        },
        std::chrono::seconds(60), std::chrono::milliseconds(100)));
    control.cancel();
  });
  auto d = run(t, &control);
  canceller.join();
  EXPECT_EQ(d.outcome.phase, Phase::kError);
  EXPECT_NE(d.outcome.message.find("cancelled"), std::string::npos) << d.outcome.message;
  EXPECT_EQ(containersLeft(kOurs), "");
}

TEST_F(LeafCallsTest, APodmanRunKilledByAnotherLeavesNoContainerBehind) {
  calls();
  const auto& t = container("busybox", {"sleep", "600"});
  std::thread killer([] {
    std::string name;
    EXPECT_TRUE(eventually(
        [&name] {
          auto r = plugboard::testing::run({"podman", "ps", "--filter", kOurs, "--filter",
                                            "status=running", "--format", "{{.Names}}"});
          name = r.out.substr(0, r.out.find('\n'));
          return !name.empty();
        },
        std::chrono::seconds(60), std::chrono::milliseconds(100)));
    // The `podman run` of that container, and only it.
    auto r = plugboard::testing::run({"pgrep", "-f", "podman .* run .*--name=" + name + " "});
    const pid_t pid = static_cast<pid_t>(std::atoi(r.out.c_str()));
    ASSERT_GT(pid, 0) << r.out << r.err;
    ::kill(pid, SIGKILL);
  });
  auto d = run(t);
  killer.join();
  EXPECT_EQ(d.outcome.phase, Phase::kError);
  EXPECT_NE(d.outcome.message.find("podman was killed by signal SIGKILL"), std::string::npos)
      << d.outcome.message;
  EXPECT_EQ(containersLeft(kOurs), "");
}

TEST_F(LeafCallsTest, PodmanFailingToRunTheImageIsAClearError) {
  calls({{"pull", "never"}});
  auto d = run(container("localhost/plugboard-no-such-image:none", {"true"}));
  EXPECT_EQ(d.outcome.phase, Phase::kError);
  EXPECT_NE(
      d.outcome.message.find("template 'main' (image localhost/plugboard-no-such-image:none)"),
      std::string::npos)
      << d.outcome.message;
  EXPECT_NE(d.outcome.message.find("podman could not run it"), std::string::npos);

  // With outputs and no command, the image's own command is read first: that fails.
  auto& own = container("localhost/plugboard-no-such-image:none", {});
  own.outputs.push_back(fromPath("x", "/tmp/x", Json("default")));
  auto o = run(own);
  EXPECT_EQ(o.outcome.phase, Phase::kError);
  EXPECT_NE(o.outcome.message.find("template 'main' (image localhost/plugboard-no-such-image:none)"
                                   ": podman cannot inspect the image"),
            std::string::npos)
      << o.outcome.message;
}

TEST_F(LeafCallsTest, BadTemplatesAreErrorsBeforeAnyContainerRuns) {
  calls();
  auto no_image = run(container("", {"true"}));
  EXPECT_EQ(no_image.outcome.phase, Phase::kError);
  EXPECT_NE(no_image.outcome.message.find("template 'main' has no image"), std::string::npos)
      << no_image.outcome.message;

  auto& bad_env = container("busybox", {"true"});
  bad_env.container->env = {{"A=B", "x"}};
  auto e = run(bad_env);
  EXPECT_EQ(e.outcome.phase, Phase::kError);
  EXPECT_NE(e.outcome.message.find("is not an environment variable's name"), std::string::npos)
      << e.outcome.message;

  auto& relative = container("busybox", {"true"});
  relative.outputs.push_back(fromPath("out", "tmp/out.txt"));
  auto r = run(relative);
  EXPECT_EQ(r.outcome.phase, Phase::kError);
  EXPECT_NE(r.outcome.message.find("output parameter 'out' needs an absolute valueFrom.path"),
            std::string::npos)
      << r.outcome.message;
}

TEST_F(LeafCallsTest, WithoutADeployerOfContainerRunsTheLeafIsAnErrorBeforeAnythingRuns) {
  TempDir only_native;
  fs::copy_file(deployerDir() / "native.so", only_native / "native.so");
  calls(Json::object(), {only_native.path()});
  auto d = run(container("busybox", {"true"}));
  EXPECT_EQ(d.outcome.phase, Phase::kError);
  EXPECT_NE(d.outcome.message.find("artifact kind 'container-run'"), std::string::npos)
      << d.outcome.message;
  EXPECT_NE(d.outcome.message.find("installed: native"), std::string::npos) << d.outcome.message;
}

TEST_F(LeafCallsTest, PluginLeavesGoThroughTheDispatcherWithArgosRequest) {
  calls();
  auto& t = templates_.emplace_back();
  t.name = "say";
  t.kind = Template::Kind::kPlugin;
  t.plugin.key = "echo";
  t.plugin.args = {{"greeting", "hi"}};
  auto d = run(t);
  EXPECT_EQ(d.outcome.phase, Phase::kSucceeded) << d.outcome.message;
  EXPECT_EQ(d.outcome.outputs["parameters"]["greeting"], "hi");
  EXPECT_EQ(d.plugin, "echo@1.0.0");

  // The request is Argo's agent's: the workflow's metadata and the filled template.
  auto& shown = templates_.emplace_back(t);
  shown.plugin.key = "scripted";
  shown.plugin.args = {{"show_request", true}};
  const Json filled = {{"name", "say"}, {"plugin", {{"scripted", {{"show_request", true}}}}}};
  auto s = run(shown, nullptr, filled);
  ASSERT_EQ(s.outcome.phase, Phase::kSucceeded) << s.outcome.message;
  const Json request = Json::parse(s.outcome.outputs["parameters"]["request"].get<std::string>());
  EXPECT_EQ(request["workflow"],
            Json::parse(R"({"metadata":{"name":"wf","namespace":"default","uid":"uid-1"}})"));
  EXPECT_EQ(request["template"], filled);
  EXPECT_EQ(request["args"], shown.plugin.args);
  EXPECT_EQ(request["key"], "scripted");

  // A key no plugin has: polled only when the template says so.
  auto& unknown = templates_.emplace_back(t);
  unknown.plugin.key = "nobody-has-this";
  auto refused = run(unknown);
  EXPECT_EQ(refused.outcome.phase, Phase::kError);
  EXPECT_NE(refused.outcome.message.find("plugin 'nobody-has-this' is not installed"),
            std::string::npos)
      << refused.outcome.message;
  auto& polled = templates_.emplace_back(unknown);
  polled.plugin.poll = true;
  auto p = run(polled);
  EXPECT_EQ(p.outcome.phase, Phase::kSucceeded) << p.outcome.message;
  EXPECT_EQ(p.via, Via::kPolled);
  EXPECT_EQ(p.plugin, "scripted@1.0.0");  // the one that says "polled": true
}

}  // namespace
}  // namespace plugboard::core
