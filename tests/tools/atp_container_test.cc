// The atp deployer with a container image (tests/support/make_atp_images.sh makes it from
// the ATP test plugin): run as Arcaflow runs it (podman run -i IMAGE --atp), several
// calls in flight in one container, and no container left after a kill at a deadline; an
// Arcaflow workflow.yaml whose steps name the image (`deployment_type: image`), unchanged.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/run_report.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

constexpr const char* kImage = "localhost/plugboard-test/atp-fixture:latest";

std::string containersOf(const std::string& image) {
  return run({"podman", "--runtime", "runc", "--cgroup-manager", "cgroupfs", "ps", "-a", "--filter",
              std::string("ancestor=") + image, "--format", "{{.Names}}"})
      .out;
}

TEST(AtpContainerTest, AnImageRunsSeveralCallsInOneContainerAndLeavesNoneBehind) {
  TempDir dir;
  const std::string registry =
      dir.write("registry.toml",
                std::string("[plugins.fix.\"1.0.0\"]\natp = { image = \"") + kImage + "\" }\n");
  std::string steps = "name = \"wf\"\n";
  for (const char* id : {"m1", "m2", "m3"}) {
    steps += std::string("[[steps]]\nid = \"") + id +
             "\"\nplugin = \"fix\"\nrpc = \"arcaflow.meet\"\nargs = { n = 3 }\n";
  }
  steps +=
      "[[steps]]\nid = \"slow\"\nplugin = \"fix\"\nrpc = \"arcaflow.sleep\"\n"
      "args = { ms = 60000 }\ntimeout = \"3s\"\ndepends = [\"m1\"]\n";
  RunOptions options;
  options.env = {"XDG_CACHE_HOME=" + (dir.path() / "cache").string()};
  auto r = plugboard(
      {"run", dir.write("wf.toml", steps), "--plugins", pluginDir().string(), "--registry",
       registry, "--output", "json", "--log-level", "info", "--parallel", "8"},
      options);
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  const Json report = Json::parse(r.out);
  const Json m1 = reportStep(report, "m1");
  ASSERT_EQ(m1["phase"], "Succeeded") << m1 << r.err;
  EXPECT_EQ(m1["outputs"]["parameters"]["met"], "3");
  // One container: the same process ID inside it for every call.
  EXPECT_EQ(reportStep(report, "m2")["outputs"]["parameters"]["pid"],
            m1["outputs"]["parameters"]["pid"]);
  EXPECT_EQ(reportStep(report, "m3")["outputs"]["parameters"]["pid"],
            m1["outputs"]["parameters"]["pid"]);
  // sleep has no cancel handler: at its deadline the container is killed and removed.
  EXPECT_NE(reportStep(report, "slow")["message"].get<std::string>().find("deadline"),
            std::string::npos);
  EXPECT_NE(r.err.find("was killed to stop a cancelled call"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("did not answer a cancel"), std::string::npos) << r.err;
  EXPECT_EQ(containersOf(kImage), "");
}

TEST(AtpContainerTest, AnImagePackedWithAPackageDirectoryAndPyYamlRuns) {
  // tools/python-plugin-image.sh arcaflow with --with DIRECTORY: the plugin imports PyYAML
  // (as the Arcaflow SDK does) and its own package.
  constexpr const char* kPacked = "localhost/plugboard-test/atp-packed:latest";
  TempDir dir;
  const std::string registry = dir.write(
      "registry.toml", std::string("[plugins.packed-greeter.\"1.0.0\"]\natp = { image = \"") + kPacked +
                           "\" }\n");
  RunOptions options;
  options.env = {"XDG_CACHE_HOME=" + (dir.path() / "cache").string()};
  auto r = plugboard({"run",
                      dir.write("wf.toml",
                                "name = \"wf\"\n[[steps]]\nid = \"greet\"\nplugin = \"packed-greeter\"\n"
                                "rpc = \"arcaflow.greet\"\nargs = { name = \"Ada\" }\n"),
                      "--plugins", pluginDir().string(), "--registry", registry, "--output", "json"},
                     options);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(reportStep(Json::parse(r.out), "greet")["outputs"]["parameters"]["message"],
            "Hello, Ada!");
  EXPECT_EQ(containersOf(kPacked), "");
}

TEST(AtpContainerTest, AnArcaflowWorkflowRunsItsImageStepsInOneContainer) {
  TempDir dir;
  // Two steps of the image, the second reading the first's typed output; no registry:
  // the image named by `src` is the plugin.
  const std::string workflow = std::string(R"(version: v0.2.0
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
      src: )") + kImage + R"(
      deployment_type: image
    step: meet
    input:
      n: !expr $.input.n
  b:
    plugin:
      src: )" + kImage + R"(
      deployment_type: image
    step: meet
    input:
      n: !expr $.steps.a.outputs.success.met
outputs:
  success:
    same_container: !expr $.steps.a.outputs.success.pid == $.steps.b.outputs.success.pid
    met: !expr $.steps.b.outputs.success.met
)";
  RunOptions options;
  options.env = {"XDG_CACHE_HOME=" + (dir.path() / "cache").string()};
  const auto r = plugboard(
      {"run", dir.write("workflow.yaml", workflow), "--input", dir.write("input.yaml", "n: 1\n")},
      options);
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(r.out, "output_data:\n    met: 1\n    same_container: true\noutput_id: success\n")
      << r.err;
  EXPECT_EQ(containersOf(kImage), "");
}

}  // namespace
}  // namespace plugboard::testing
