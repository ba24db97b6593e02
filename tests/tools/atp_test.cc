// The atp deployer through the real binary and the real atp.so: Arcaflow plugins speaking
// the Arcaflow Transport Protocol (tests/fixtures/atp/atp_fixture.py, on
// plugins/arcaflow/atpkit.py) as workflow steps, `validate` against their converted
// schemas, results and logs, misbehaving plugins, cancel at a deadline, a missing image,
// and serve routing an Argo template to one.
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/argo.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/plugin_dir.h"
#include "tests/support/run_report.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

std::string fixtureDir() { return (sourceDir() / "tests" / "fixtures" / "atp").string(); }
std::string fixtureFile() { return fixtureDir() + "/atp_fixture.py"; }

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class AtpTest : public ::testing::Test {
 protected:
  // Registry entries: "fix" the fixture as a module; "<mode>" the fixture as a command in
  // that mode, tagged with this test's directory so that its processes can be found.
  std::string registry() {
    std::string text = "[plugins.fix.\"1.0.0\"]\natp = { module = \"atp_fixture\", path = \"" +
                       fixtureDir() + "\" }\n";
    for (const char* mode :
         {"normal", "text_before_hello", "bad_version", "unknown_run", "exit_mid_call"}) {
      std::string name = mode;
      for (char& c : name) c = c == '_' ? '-' : c;
      text += "[plugins." + name + ".\"1.0.0\"]\natp = { command = [\"/usr/bin/python3\", \"" +
              fixtureFile() + "\", \"--atp\", \"--mode=" + mode + "\", \"--tag=" + tag() +
              "\"] }\n";
    }
    // A command that counts its starts in a file.
    text +=
        "[plugins.counted.\"1.0.0\"]\natp = { command = [\"/bin/sh\", \"-c\", \"echo start >> " +
        (dir_ / "starts").string() + "; exec /usr/bin/python3 " + fixtureFile() + " --atp\"] }\n";
    return dir_.write("registry.toml", text);
  }
  std::string tag() const { return dir_.path().filename().string(); }
  RunResult plugboardWithCache(std::vector<std::string> args) {
    RunOptions options;
    options.env = {"XDG_CACHE_HOME=" + (dir_ / "cache").string()};
    return plugboard(std::move(args), options);
  }
  RunResult runWorkflow(const std::string& steps, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"run",        dir_.write("wf.toml", "name = \"wf\"\n" + steps),
                                     "--plugins",  pluginDir().string(),
                                     "--registry", registry(),
                                     "--output",   "json",
                                     "--parallel", "8"};
    args.insert(args.end(), more.begin(), more.end());
    return plugboardWithCache(args);
  }
  TempDir dir_;
};

std::string step(const std::string& id, const std::string& plugin, const std::string& rpc,
                 const std::string& args, const std::string& more = "") {
  return "[[steps]]\nid = \"" + id + "\"\nplugin = \"" + plugin + "\"\nrpc = \"" + rpc +
         "\"\nargs = " + args + "\n" + more;
}

TEST_F(AtpTest, AModuleRunsSeveralCallsInFlightInOneProcessBesideANativeStep) {
  std::string steps = step("native", "hello", "template.execute", "{ name = \"Ada\" }");
  for (const char* id : {"m1", "m2", "m3"}) steps += step(id, "fix", "arcaflow.meet", "{ n = 3 }");
  steps += step("echo", "fix", "arcaflow.echo",
                "{ text = \"${steps.native.outputs.parameters.greeting}\", count = 2 }",
                "depends = [\"native\"]\n");
  auto r = runWorkflow(steps);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json report = Json::parse(r.out);
  const Json m1 = reportStep(report, "m1")["outputs"]["parameters"];
  EXPECT_EQ(m1["met"], "3");
  EXPECT_EQ(m1["output_id"], "success");
  EXPECT_EQ(reportStep(report, "m2")["outputs"]["parameters"]["pid"], m1["pid"]);
  EXPECT_EQ(reportStep(report, "m3")["outputs"]["parameters"]["pid"], m1["pid"]);
  const Json echo = reportStep(report, "echo")["outputs"]["parameters"];
  EXPECT_EQ(echo["text"], "Hello, Ada!");
  EXPECT_EQ(echo["count"], "2");            // a non-string, as JSON text
  EXPECT_EQ(echo["tags"], R"(["a","b"])");  // likewise
  EXPECT_EQ(reportStep(report, "echo")["plugin"], "fix@1.0.0");
}

TEST_F(AtpTest, OutputsErrorsWarningsAndLogsMapToPhasesAndLogLines) {
  auto r = runWorkflow(
      step("ok", "fix", "arcaflow.echo", "{ text = \"first\" }") +
          step("ok2", "fix", "arcaflow.echo", "{ text = \"second\" }", "depends = [\"ok\"]\n") +
          step("failed", "fix", "arcaflow.echo", "{ text = \"fail\" }") +
          step("raised", "fix", "arcaflow.echo", "{ text = \"raise\" }") +
          step("warned", "fix", "arcaflow.echo", "{ text = \"warn\" }"),
      {"--log-level", "info"});
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  const Json report = Json::parse(r.out);
  EXPECT_EQ(reportStep(report, "ok")["phase"], "Succeeded");
  EXPECT_EQ(reportStep(report, "failed")["phase"], "Failed");
  EXPECT_NE(reportStep(report, "failed")["message"].get<std::string>().find(
                "output 'error': asked to fail"),
            std::string::npos)
      << reportStep(report, "failed");
  // The plugin's traceback (worded as the Arcaflow SDK words it): the message is the
  // exception's line, the traceback goes to the log.
  const std::string raised = reportStep(report, "raised")["message"];
  EXPECT_EQ(reportStep(report, "raised")["phase"], "Error");
  EXPECT_NE(raised.find("plugin 'fix' (atp): step 'echo' failed: text 'raise' is not allowed "
                        "(the traceback is in the log)"),
            std::string::npos)
      << raised;
  EXPECT_EQ(raised.find('\n'), std::string::npos) << raised;
  EXPECT_EQ(raised.find("Traceback"), std::string::npos) << raised;
  EXPECT_NE(r.err.find("Traceback (most recent call last):"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ValueError: text 'raise' is not allowed"), std::string::npos) << r.err;
  // ... and with the step whose run it ended, for `run` to show under the failed step.
  EXPECT_NE(reportStep(report, "raised")["logs"].dump().find("Traceback (most recent call last):"),
            std::string::npos)
      << reportStep(report, "raised");
  EXPECT_EQ(reportStep(report, "ok")["deployer"], "atp");

  EXPECT_EQ(reportStep(report, "warned")["phase"], "Succeeded");
  EXPECT_NE(r.err.find("a warning about warn"), std::string::npos) << r.err;
  // debug_logs is cumulative in the plugin: each line is logged once.
  EXPECT_EQ(count(r.err, "] echo first"), 1u) << r.err;
  EXPECT_EQ(count(r.err, "] echo second"), 1u) << r.err;
}

TEST_F(AtpTest, ValidateChecksArgsAgainstTheConvertedSchemaReadOncePerDigest) {
  const std::string reg = registry();
  const std::string bad = dir_.write(
      "bad.toml",
      "name = \"bad\"\n" +
          step("loud", "counted", "arcaflow.echo", "{ text = \"x\", count = 50 }") +
          step("extra", "counted", "arcaflow.echo", "{ text = \"x\", colour = 1 }") +
          step("level", "counted", "arcaflow.complex", "{ level = 3, who = { kind = \"pet\" } }"));
  for (int i = 0; i < 2; ++i) {
    auto v =
        plugboardWithCache({"validate", bad, "--plugins", pluginDir().string(), "--registry", reg});
    EXPECT_NE(v.exit_code, 0) << v.err << v.out;
    const std::string all = v.out + v.err;
    EXPECT_NE(all.find("loud"), std::string::npos) << all;
    EXPECT_NE(all.find("args.count"), std::string::npos) << all;
    EXPECT_NE(all.find("must be at most 10"), std::string::npos) << all;
    EXPECT_NE(all.find("args: unknown member 'colour'"), std::string::npos) << all;
    EXPECT_NE(all.find("args.level"), std::string::npos) << all;
    EXPECT_NE(all.find("args.who.kind"), std::string::npos) << all;
  }
  const std::string good = dir_.write(
      "good.toml", "name = \"good\"\n" + step("s", "counted", "arcaflow.echo", "{ text = \"x\" }"));
  auto v =
      plugboardWithCache({"validate", good, "--plugins", pluginDir().string(), "--registry", reg});
  EXPECT_EQ(v.exit_code, 0) << v.err << v.out;
  // Three validations, one start: the schema came from the cache after the first.
  EXPECT_EQ(count(readFile(dir_ / "starts"), "start"), 1u);
  auto run = runWorkflow(step("s", "counted", "arcaflow.echo", "{ text = \"x\" }"));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(count(readFile(dir_ / "starts"), "start"), 2u);  // the run's own process
}

TEST_F(AtpTest, IntegerKeyedMapsAndOneOfTypesAndThePluginsOwnValidation) {
  auto r = runWorkflow(
      step("ok", "fix", "arcaflow.complex",
           "{ level = 2, who = { kind = \"nick\", nick = \"x\" }, weights = { \"1\" = 0.5 } }"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json report = Json::parse(r.out);
  ASSERT_EQ(reportStep(report, "ok")["phase"], "Succeeded") << reportStep(report, "ok");
  EXPECT_EQ(reportStep(report, "ok")["outputs"]["parameters"]["by_level"],
            R"({"1":"low","2":"high"})");
  // The chosen one_of branch's fields are checked before anything runs, as the engine
  // checks a step's input before it starts it.
  auto bad = runWorkflow(step("invalid", "fix", "arcaflow.complex",
                              "{ level = 1, who = { kind = \"full\", first = 1, last = \"x\" } }"));
  EXPECT_EQ(bad.exit_code, 2) << bad.err << bad.out;
  EXPECT_NE(bad.err.find("step 'invalid': args.who.first: expected string, got integer"),
            std::string::npos)
      << bad.err;
}

TEST_F(AtpTest, ValidateAndRunCheckTheFieldsOfTheChosenOneOfBranch) {
  const std::string bad = dir_.write(
      "bad.toml",
      "name = \"bad\"\n" +
          step("digits", "fix", "arcaflow.complex",
               "{ level = 1, who = { kind = \"nick\", nick = \"123\" } }") +
          step("half", "fix", "arcaflow.complex",
               "{ level = 1, who = { kind = \"full\", first = \"Arca\" } }") +
          step("none", "fix", "arcaflow.complex", "{ level = 1, who = { first = \"Arca\" } }"));
  auto v = plugboardWithCache(
      {"validate", bad, "--plugins", pluginDir().string(), "--registry", registry()});
  EXPECT_NE(v.exit_code, 0) << v.err << v.out;
  const std::string all = v.out + v.err;
  EXPECT_NE(all.find("step 'digits'"), std::string::npos) << all;
  EXPECT_NE(all.find("args.who.nick: does not match the pattern \"^[a-zA-Z]+$\""),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("args.who: missing required member 'last'"), std::string::npos) << all;
  EXPECT_NE(all.find("args.who: missing required member 'kind'"), std::string::npos) << all;
  // A nick known only when the run reaches the step (another step's output) is checked
  // then, before the plugin is called: the step fails, naming the field.
  auto r = runWorkflow(
      step("source", "fix", "arcaflow.echo", "{ text = \"123\" }") +
      step("digits", "fix", "arcaflow.complex",
           "{ level = 1, who = { kind = \"nick\", nick = \"${steps.source.outputs.parameters.text}\" } }",
           "depends = [\"source\"]\n") +
      step("fine", "fix", "arcaflow.complex",
           "{ level = 1, who = { kind = \"nick\", nick = \"Arcalot\" } }"));
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  const Json report = Json::parse(r.out);
  EXPECT_EQ(reportStep(report, "fine")["phase"], "Succeeded") << reportStep(report, "fine");
  EXPECT_EQ(reportStep(report, "digits")["phase"], "Failed") << reportStep(report, "digits");
  EXPECT_NE(reportStep(report, "digits")["message"].get<std::string>().find(
                "args.who.nick: does not match the pattern"),
            std::string::npos)
      << reportStep(report, "digits");
}

TEST_F(AtpTest, ValidateSaysWhatItCouldNotCheckWhenThePluginCannotStart) {
  const std::string reg = dir_.write(
      "broken.toml", "[plugins.broken.\"1.0.0\"]\natp = { module = \"no_such_plugin\", path = \"" +
                         fixtureDir() + "\" }\n");
  const std::string wf = dir_.write(
      "wf.toml", "name = \"wf\"\n" + step("s", "broken", "arcaflow.echo", "{ text = \"x\" }"));
  auto v = plugboardWithCache({"validate", wf, "--plugins", pluginDir().string(), "--registry", reg});
  EXPECT_NE(v.exit_code, 0) << v.err << v.out;
  const std::string all = v.out + v.err;
  EXPECT_EQ(all.find(": ok"), std::string::npos) << all;
  EXPECT_NE(all.find("step 's'"), std::string::npos) << all;
  EXPECT_NE(all.find("its args were not checked"), std::string::npos) << all;
  EXPECT_NE(all.find("No module named no_such_plugin"), std::string::npos) << all;
}

TEST_F(AtpTest, APackageWithoutMainRunsItsPluginModuleAndEnvExtendsItsPythonPath) {
  const std::string packaged = (sourceDir() / "tests" / "fixtures" / "atp" / "packaged").string();
  const std::string kit = (sourceDir() / "plugins" / "arcaflow").string();
  const std::string reg = dir_.write(
      "packaged.toml",
      "[plugins.packaged-greeter.\"1.0.0\"]\natp = { module = \"greeter\", path = \"" + packaged +
          "\" }\n[plugins.packaged-named.\"1.0.0\"]\natp = { module = \"greeter.plugin\", path = \"" +
          packaged + "\" }\n[plugins.packaged-none.\"1.0.0\"]\natp = { module = \"lonely\", path = \"" +
          (dir_ / "pkg").string() + "\" }\n");
  std::filesystem::create_directories(dir_ / "pkg" / "lonely");
  dir_.write("pkg/lonely/__init__.py", "");
  dir_.write("pkg/lonely/helpers.py", "print('not a program')\n");
  const std::string env = "deploy = { deployer = \"atp\" }\n";
  // The child's environment is the configuration's to set, never a step's.
  const std::string config =
      dir_.write("plugboard.toml", "[deployers.atp]\nenv = { PYTHONPATH = \"" + kit + "\" }\n");
  const std::string wf = dir_.write(
      "wf.toml", "name = \"wf\"\n" +
                     step("found", "packaged-greeter", "arcaflow.greet", "{ name = \"Ada\" }", env) +
                     step("named", "packaged-named", "arcaflow.greet", "{ name = \"Bo\" }", env) +
                     step("none", "packaged-none", "arcaflow.greet", "{ name = \"Cy\" }", env));
  auto r = plugboardWithCache({"run", wf, "--plugins", pluginDir().string(), "--registry", reg,
                               "--output", "json", "--config", config});
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  const Json report = Json::parse(r.out);
  EXPECT_EQ(reportStep(report, "found")["phase"], "Succeeded") << reportStep(report, "found");
  EXPECT_EQ(reportStep(report, "found")["outputs"]["parameters"]["message"], "Hello, Ada!");
  EXPECT_EQ(reportStep(report, "named")["phase"], "Succeeded") << reportStep(report, "named");
  // A package with no __main__ and no module that runs as a program: the artifact must
  // name the module.
  const std::string none = reportStep(report, "none")["message"];
  EXPECT_NE(none.find("has no __main__.py"), std::string::npos) << none;
  EXPECT_NE(none.find("name the plugin's module"), std::string::npos) << none;
}

TEST_F(AtpTest, TypedOutputsStayTypedBesideTheirTextParameters) {
  auto r = plugboardWithCache({"call", "fix", "--rpc", "arcaflow.echo", "--args",
                               R"({"text": "x", "count": 2})", "--json", "--plugins",
                               pluginDir().string(), "--registry", registry()});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json outputs = Json::parse(r.out)["outputs"];
  EXPECT_EQ(outputs["values"]["count"], 2) << outputs;
  EXPECT_EQ(outputs["values"]["tags"], Json::parse(R"(["a","b"])")) << outputs;
  EXPECT_EQ(outputs["values"]["output_id"], "success") << outputs;
  EXPECT_EQ(outputs["parameters"]["count"], "2") << outputs;  // Argo's rendering
  // A failed output keeps the plugin's answer as the call's outputs.
  auto failed = plugboardWithCache({"call", "fix", "--rpc", "arcaflow.echo", "--args",
                                    R"({"text": "fail"})", "--json", "--plugins",
                                    pluginDir().string(), "--registry", registry()});
  EXPECT_NE(failed.exit_code, 0) << failed.err << failed.out;
  const Json answer = Json::parse(failed.out);
  EXPECT_EQ(answer["phase"], "Failed") << answer;
  EXPECT_EQ(answer["outputs"]["values"]["output_id"], "error") << answer;
  EXPECT_EQ(answer["outputs"]["values"]["error"], "asked to fail") << answer;
}

TEST_F(AtpTest, AMisbehavingPluginFailsItsOwnStepAndTheOthersGoOn) {
  auto r = runWorkflow(step("native", "hello", "template.execute", "{ name = \"Ada\" }") +
                       step("text", "text-before-hello", "arcaflow.echo", "{ text = \"x\" }") +
                       step("version", "bad-version", "arcaflow.echo", "{ text = \"x\" }") +
                       step("unknown", "unknown-run", "arcaflow.echo", "{ text = \"x\" }") +
                       step("exits", "exit-mid-call", "arcaflow.echo", "{ text = \"x\" }") +
                       step("fine", "normal", "arcaflow.echo", "{ text = \"x\" }"));
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  const Json report = Json::parse(r.out);
  EXPECT_EQ(reportStep(report, "native")["phase"], "Succeeded");
  EXPECT_EQ(reportStep(report, "fine")["phase"], "Succeeded");
  const auto expectError = [&](const char* id, const std::vector<std::string>& parts) {
    const Json s = reportStep(report, id);
    EXPECT_EQ(s["phase"], "Error") << s;
    const std::string message = s.value("message", "");
    for (const auto& p : parts)
      EXPECT_NE(message.find(p), std::string::npos) << id << ": " << message;
  };
  expectError("text", {"text-before-hello", "not an ATP message", "loading the fixture..."});
  expectError("version", {"bad-version", "hello says version 2", "speaks version 3"});
  expectError("unknown", {"unknown-run", "run id 'nope'"});
  expectError("exits", {"exit-mid-call", "exited with code 3"});
}

TEST_F(AtpTest, ADeadlineCancelsAStepWithACancelHandlerAndKillsOneWithout) {
  auto r = runWorkflow(
      step("handled", "normal", "arcaflow.wait", "{ ms = 30000 }", "timeout = \"1s\"\n") +
          step("killed", "fix", "arcaflow.sleep", "{ ms = 30000 }", "timeout = \"1s\"\n"),
      {"--log-level", "info"});
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  const Json report = Json::parse(r.out);
  for (const char* id : {"handled", "killed"}) {
    EXPECT_NE(reportStep(report, id)["message"].get<std::string>().find("deadline"),
              std::string::npos)
        << reportStep(report, id);
  }
  // The step with a handler answered the cancel signal; the one without could only be
  // stopped by killing its process, which was done at once, not after a grace.
  EXPECT_NE(r.err.find("[normal] wait cancelled"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("did not answer a cancel"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("plugin 'fix' (atp) was killed to stop a cancelled call that it has no "
                       "way to be asked to stop"),
            std::string::npos)
      << r.err;
  // Nothing is left running.
  EXPECT_NE(run({"pgrep", "-f", "--tag=" + tag()}).exit_code, 0);
}

TEST_F(AtpTest, AStepWithoutACancelHandlerIsGivenUpOnAndTheCallsBesideItGoOn) {
  // "stopped" cannot be asked to stop; "beside" runs in the same process and was never
  // cancelled: it finishes, and nothing says it did not answer a cancel.
  auto r = runWorkflow(
      step("stopped", "fix", "arcaflow.sleep", "{ ms = 30000 }", "timeout = \"1s\"\n") +
          step("beside", "fix", "arcaflow.wait", "{ ms = 3000 }"),
      {"--log-level", "info"});
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  const Json report = Json::parse(r.out);
  EXPECT_EQ(reportStep(report, "beside")["phase"], "Succeeded") << reportStep(report, "beside");
  EXPECT_EQ(reportStep(report, "beside")["outputs"]["parameters"]["waited"], "3000");
  EXPECT_NE(reportStep(report, "stopped")["message"].get<std::string>().find("deadline"),
            std::string::npos)
      << reportStep(report, "stopped");
  EXPECT_EQ(r.err.find("did not answer a cancel"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gave up on a cancelled call it could not be asked to stop"),
            std::string::npos)
      << r.err;
  EXPECT_NE(run({"pgrep", "-f", "--tag=" + tag()}).exit_code, 0);
}

TEST_F(AtpTest, ACancelledStepKeepsThePluginsAnswer) {
  // serve with a deadline: the step's cancel handler answers with its "cancelled" output,
  // which the reply keeps (the deadline still fails the call).
  PluginDir plugins({"echo"}, {});
  const std::string config =
      dir_.write("plugboard.toml",
                 "registry = \"" + registry() +
                     "\"\ndefault_timeout = \"1s\"\n[deploy]\nfix = { deployer = \"atp\", step = "
                     "\"wait\", cache_dir = \"" + (dir_ / "cache").string() + "\" }\n");
  ServeProcess serve({"--plugins", plugins.plugins(), "--config", config});
  HttpClient client(serve.port());
  auto r = client.request("POST", "/api/v1/template.execute", argoBody("fix", {{"ms", 30000}}));
  ASSERT_EQ(r.status, 200) << r.body << serve.output();
  const Json node = Json::parse(r.body)["node"];
  EXPECT_EQ(node["phase"], "Failed") << r.body;
  const std::string message = node["message"];
  EXPECT_NE(message.find("deadline"), std::string::npos) << message;
  EXPECT_NE(message.find("it answered: output 'cancelled'"), std::string::npos) << message;
  Json parameters = Json::object();
  for (const auto& p : node["outputs"]["parameters"]) parameters[p["name"].get<std::string>()] = p["value"];
  EXPECT_EQ(parameters["output_id"], "cancelled") << r.body;
  EXPECT_TRUE(parameters.contains("waited_ms")) << r.body;
  EXPECT_FALSE(node["outputs"].contains("values")) << r.body;  // not Argo's
  EXPECT_EQ(serve.stop(), 0);
}

TEST_F(AtpTest, TheImageScriptNamesAFileOrDirectoryThatIsNotThere) {
  const std::string script = (sourceDir() / "tools" / "python-plugin-image.sh").string();
  auto r = run({script, "arcaflow", fixtureFile(), "localhost/plugboard-test/never-made:1",
                "--with", (dir_ / "no-such-package").string()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find((dir_ / "no-such-package").string() + ": no such file or directory"),
            std::string::npos)
      << r.err;
}

TEST_F(AtpTest, AMissingImageIsAStepErrorNamingIt) {
  if (access("/usr/bin/podman", X_OK) != 0) GTEST_SKIP() << "podman is not installed";
  dir_.write(
      "image.toml",
      "[plugins.ghost.\"1.0.0\"]\natp = { image = \"localhost/plugboard/no-such-atp:0\" }\n");
  auto r = plugboardWithCache(
      {"run",
       dir_.write("wf.toml", "name = \"wf\"\n" +
                                 step("ghost", "ghost", "arcaflow.echo", "{ text = \"x\" }",
                                      "deploy = { deployer = \"atp\", pull = \"never\" }\n") +
                                 step("native", "hello", "template.execute", "{ name = \"Ada\" }")),
       "--plugins", pluginDir().string(), "--registry", (dir_ / "image.toml").string(), "--output",
       "json"});
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  const Json report = Json::parse(r.out);
  EXPECT_EQ(reportStep(report, "native")["phase"], "Succeeded");
  const std::string message = reportStep(report, "ghost")["message"];
  EXPECT_NE(message.find("no-such-atp"), std::string::npos) << message;
  EXPECT_NE(message.find("option 'pull' is 'never'"), std::string::npos) << message;
}

TEST_F(AtpTest, ServeRoutesAnArgoTemplateToAnAtpPlugin) {
  PluginDir plugins({"echo"}, {});
  const std::string config =
      dir_.write("plugboard.toml",
                 "registry = \"" + registry() +
                     "\"\n[deploy]\nfix = { deployer = \"atp\", step = \"echo\", cache_dir = \"" +
                     (dir_ / "cache").string() + "\" }\n");
  ServeProcess serve({"--plugins", plugins.plugins(), "--config", config});
  HttpClient client(serve.port());
  auto r = client.request("POST", "/api/v1/template.execute", argoBody("fix", {{"text", "Argo"}}));
  ASSERT_EQ(r.status, 200) << r.body << serve.output();
  const Json node = Json::parse(r.body)["node"];
  EXPECT_EQ(node["phase"], "Succeeded") << r.body << serve.output();
  EXPECT_NE(r.body.find("\"Argo\""), std::string::npos) << r.body;
  EXPECT_EQ(serve.stop(), 0);
}

}  // namespace
}  // namespace plugboard::testing
