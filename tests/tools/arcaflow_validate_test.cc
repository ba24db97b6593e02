// `plugboard validate` of an Arcaflow workflow.yaml checks each step's input against its
// plugin's schema, read from the atp deployer's schema cache: with the schema cached, no
// plugin is started and podman is not run at all (the image's ID is read from podman's
// image store), for root and for a user with a rootless store. The image is
// tests/support/make_atp_images.sh's ATP test plugin. podman is reached through a
// wrapper first in PATH that logs every call, so that "nothing started" is seen.
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

constexpr const char* kFixtureImage = "localhost/plugboard-test/atp-fixture:latest";
constexpr const char* kPackedImage = "localhost/plugboard-test/atp-packed:latest";

// Steps of the test plugin: `meet` (n: an integer of at least 1) from $.input, `echo`
// (count: at most 10) with constants, and `meet` again from a's output, known only at
// run time.
std::string validatedWorkflow(const std::string& image, int count) {
  return R"(version: v0.2.0
input:
  root: In
  objects:
    In:
      id: In
      properties:
        n:
          type:
            type_id: integer
steps:
  a:
    plugin:
      src: )" + image + R"(
      deployment_type: image
    step: meet
    input:
      n: !expr $.input.n
  b:
    plugin:
      src: )" + image + R"(
      deployment_type: image
    step: echo
    input:
      text: hi
      count: )" + std::to_string(count) + R"(
  c:
    plugin:
      src: )" + image + R"(
      deployment_type: image
    step: meet
    input:
      n: !expr $.steps.a.outputs.success.met
outputs:
  success:
    met: !expr $.steps.c.outputs.success.met
)";
}

// A directory with `podman`, which appends its arguments to `log` and runs the real one.
std::string podmanWrapper(const TempDir& dir, const std::string& log) {
  const std::string bin = (dir.path() / "bin").string();
  std::filesystem::create_directories(bin);
  writeFile(bin + "/podman",
            "#!/bin/sh\necho \"$*\" >> " + log + "\nexec /usr/bin/podman \"$@\"\n");
  ::chmod((bin + "/podman").c_str(), 0755);
  return bin;
}

class ArcaflowValidateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = (dir_.path() / "podman.log").string();
    const char* path = std::getenv("PATH");
    options_.env = {"XDG_CACHE_HOME=" + (dir_.path() / "cache").string(),
                    "PATH=" + podmanWrapper(dir_, log_) + ":" + (path ? path : "/usr/bin:/bin")};
  }
  RunResult validate(const std::string& file, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"validate", file};
    args.insert(args.end(), more.begin(), more.end());
    return plugboard(args, options_);
  }
  // The podman calls since the last time, and forgets them.
  std::string podmanCalls() {
    std::error_code ec;
    if (!std::filesystem::exists(log_, ec)) return "";
    std::string calls = readFile(log_);
    std::filesystem::remove(log_, ec);
    return calls;
  }

  TempDir dir_;
  std::string log_;
  RunOptions options_;
};

TEST_F(ArcaflowValidateTest, ACachedSchemaChecksTheInputsWithoutStartingAPluginOrRunningPodman) {
  const std::string good = dir_.write("workflow.yaml", validatedWorkflow(kFixtureImage, 3));
  const std::string input = dir_.write("input.yaml", "n: 2\n");
  // First: the schema is not cached, the plugin is started once to read it.
  auto r = validate(good, {"--input", input});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(podmanCalls().find(" run "), std::string::npos);
  // Then: read from the cache; not one podman call (no container, no image inspect).
  r = validate(good, {"--input", input});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("ok: Arcaflow workflow, 3 steps, outputs success; the steps' inputs fit "
                       "their plugins' schemas\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(podmanCalls(), "");

  // A constant that does not fit: the step, where it is written, and the field's path.
  const std::string bad = dir_.write("bad.yaml", validatedWorkflow(kFixtureImage, 50));
  r = validate(bad, {"--input", input});
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_NE(r.err.find(bad + ":20:5: "), std::string::npos) << r.err;  // step b's mapping
  EXPECT_NE(r.err.find("step 'b': input.count: must be at most 10, got 50"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(podmanCalls(), "");

  // $.input's values are checked when --input gives them: n must be at least 1.
  r = validate(good, {"--input", dir_.write("zero.yaml", "n: 0\n")});
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_NE(r.err.find("step 'a': input.n: must be at least 1"), std::string::npos) << r.err;
  // Step c's n (a's output) is known only at run time: not checked, not reported.
  EXPECT_EQ(r.err.find("step 'c'"), std::string::npos) << r.err;
  // Without --input they are not known: not checked, and validate says so.
  r = validate(good);
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(r.out.find("(values from $.input not checked: no --input)"), std::string::npos)
      << r.out;
  EXPECT_EQ(podmanCalls(), "");
}

TEST_F(ArcaflowValidateTest, AStepsDeployReachesPodmanForThatStepOnly) {
  // `plain` has podman's default here (no network). docker and kubernetes run with podman
  // here, a line says so, and their options that do not apply are named; with no option
  // that applies, they share `plain`'s container. A step's own NetworkMode would reach the
  // host's network namespace: only the engine's --config may set it (a workflow gets no
  // more than a container does).
  const std::string image = kFixtureImage;
  const std::string step = "    plugin: {src: " + image + ", deployment_type: image}\n    step: echo\n";
  const std::string workflow = dir_.write("workflow.yaml", R"(version: v0.2.0
input: {root: In, objects: {In: {id: In, properties: {}}}}
steps:
  plain:
)" + step + R"(    input: {text: plain}
  docked:
)" + step + R"(    input: {text: docked}
    deploy: {deployer_name: docker}
  kube:
)" + step + R"(    input: {text: kube}
    deploy:
      deployer_name: kubernetes
      connection: !expr $.steps.plain.outputs.success.text
      pod: {metadata: {namespace: default}}
outputs:
  success:
    texts:
      - !expr $.steps.plain.outputs.success.text
      - !expr $.steps.docked.outputs.success.text
      - !expr $.steps.kube.outputs.success.text
)");
  podmanCalls();
  const auto r = plugboard({"run", workflow, "--parallel", "4"}, options_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out,
            "output_data:\n    texts:\n        - plain\n        - docked\n"
            "        - kube\noutput_id: success\n")
      << r.err;
  EXPECT_NE(r.err.find(workflow + ":12:14: step 'docked': deploy: deployer_name 'docker' runs "
                                  "with podman here (plugboard's atp deployer)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("step 'kube': deploy: deployer_name 'kubernetes' runs with podman here"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("step 'kube': deploy: not used here (plugboard's atp deployer): "
                       "connection, pod"),
            std::string::npos)
      << r.err;
  // The containers podman ran: one, with no network.
  const std::string calls = podmanCalls();
  std::vector<std::string> runs;
  for (std::size_t at = 0, end; (end = calls.find('\n', at)) != std::string::npos; at = end + 1) {
    const std::string line = calls.substr(at, end - at);
    if (line.find(" run ") != std::string::npos && line.find(image) != std::string::npos)
      runs.push_back(line);
  }
  ASSERT_EQ(runs.size(), 1u) << calls;
  EXPECT_NE(runs[0].find("--network=none "), std::string::npos) << calls;

  const std::string hosted = dir_.write("hosted.yaml", R"(version: v0.2.0
input: {root: In, objects: {In: {id: In, properties: {}}}}
steps:
  hosted:
)" + step + R"(    input: {text: hosted}
    deploy:
      deployer_name: podman
      deployment:
        host:
          NetworkMode: host
outputs:
  success:
    text: !expr $.steps.hosted.outputs.success.text
)");
  const auto refused = plugboard({"run", hosted}, options_);
  EXPECT_NE(refused.exit_code, 0) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("option 'network' may be set only in the configuration file"),
            std::string::npos)
      << refused.err;
}

TEST_F(ArcaflowValidateTest, AnUnknownDeployKeyIsNamedWhereItIsWritten) {
  std::string text = validatedWorkflow(kFixtureImage, 3);
  text.replace(text.find("    step: echo\n"), 15,
               "    step: echo\n    deploy:\n      deployer_name: podman\n      deployment:\n"
               "        host:\n          NetworkMod: host\n");
  const std::string file = dir_.write("workflow.yaml", text);
  auto r = validate(file);
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_NE(r.err.find(file + ":28:11: step 'b': deploy.deployment.host.NetworkMod is not a key "
                              "of the podman deployer's configuration at deployment.host (Binds, "
                              "NetworkMode, "),
            std::string::npos)
      << r.err;
  EXPECT_EQ(podmanCalls(), "");
}

TEST_F(ArcaflowValidateTest, AStepThePluginDoesNotHaveIsNamed) {
  std::string text = validatedWorkflow(kFixtureImage, 3);
  text.replace(text.find("step: echo"), 10, "step: shout");
  auto r = validate(dir_.write("workflow.yaml", text));
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_NE(r.err.find("step 'b': plugin 'atp-fixture' does not provide 'arcaflow.shout'"),
            std::string::npos)
      << r.err;
}

TEST_F(ArcaflowValidateTest, AnImageRetaggedToAnotherImageIsReadAgain) {
  // A name of this test's own, first on one image, then on another: the schema cached for
  // the first must not answer for the second.
  std::string name = "localhost/plugboard-test/atp-retag-" + dir_.path().filename().string() +
                     ":latest";
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::vector<std::string> podman = {"podman", "--runtime", "runc", "--cgroup-manager",
                                           "cgroupfs"};
  auto tag = [&](const char* image) {
    auto args = podman;
    args.insert(args.end(), {"tag", image, name});
    ASSERT_EQ(run(args).exit_code, 0);
  };
  tag(kPackedImage);  // atp-packed: a plugin with a step `greet`, no `echo`
  const std::string file = dir_.write("workflow.yaml", validatedWorkflow(name, 3));
  auto r = validate(file);
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_NE(r.err.find("does not provide 'arcaflow.meet'"), std::string::npos) << r.err;
  tag(kFixtureImage);  // the name now stands for the test plugin
  podmanCalls();
  r = validate(file);
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_NE(podmanCalls().find(" run "), std::string::npos);  // its schema read anew
  auto args = podman;
  args.insert(args.end(), {"untag", name, name});  // this name only (alone, untag takes all)
  EXPECT_EQ(run(args).exit_code, 0);
}

TEST_F(ArcaflowValidateTest, AnImageNotOnThisMachineSaysWhatWasNotChecked) {
  const std::string missing = "localhost/plugboard-test/atp-no-such-image:1.0.0";
  auto r = validate(dir_.write("workflow.yaml", validatedWorkflow(missing, 3)));
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_NE(r.err.find("step 'b': its input was not checked: its plugin could not be started to "
                       "read its schema"),
            std::string::npos)
      << r.err;
}

// A user's own rootless store (~/.local/share/containers/storage, the vfs driver here):
// the image loaded into it, its schema read once, then validate runs no podman.
TEST_F(ArcaflowValidateTest, AUsersRootlessStoreIsReadToo) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run as another user";
  const std::string home = (dir_.path() / "home").string();
  std::filesystem::create_directories(home);
  const std::string archive = (dir_.path() / "image.tar").string();
  const auto saved = run({"podman", "--runtime", "runc", "--cgroup-manager", "cgroupfs", "save",
                          "-q", "-o", archive, kFixtureImage});
  ASSERT_EQ(saved.exit_code, 0) << saved.err;
  const std::string file = dir_.write("workflow.yaml", validatedWorkflow(kFixtureImage, 50));
  for (const auto& p : {dir_.path().string(), home, archive, file, (dir_.path() / "bin").string(),
                        (dir_.path() / "bin" / "podman").string()}) {
    ASSERT_EQ(::chown(p.c_str(), 65534, 65534), 0) << p;
  }
  const char* path = std::getenv("PATH");
  const std::vector<std::string> as_user = {
      "runuser", "-u", "nobody", "--", "env", "HOME=" + home, "XDG_RUNTIME_DIR=",
      "XDG_CACHE_HOME=" + home + "/.cache", "XDG_CONFIG_HOME=", "XDG_DATA_HOME=",
      "PATH=" + (dir_.path() / "bin").string() + ":" + (path ? path : "/usr/bin:/bin")};
  auto load = as_user;
  load.insert(load.end(), {"podman", "load", "-q", "-i", archive});
  const auto loaded = run(load);
  ASSERT_EQ(loaded.exit_code, 0) << loaded.err;
  auto check = as_user;
  check.insert(check.end(), {binary().string(), "validate", file});
  auto r = run(check);
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_NE(r.err.find("step 'b': input.count: must be at most 10, got 50"), std::string::npos)
      << r.err;
  EXPECT_NE(podmanCalls().find(" run "), std::string::npos);  // started once, rootless
  r = run(check);
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_NE(r.err.find("step 'b': input.count: must be at most 10, got 50"), std::string::npos)
      << r.err;
  EXPECT_EQ(podmanCalls(), "");
  // The user's store goes with the test's directory (its files are the user's).
  auto reset = as_user;
  reset.insert(reset.end(), {"podman", "system", "reset", "-f"});
  run(reset);
}

}  // namespace
}  // namespace plugboard::testing
