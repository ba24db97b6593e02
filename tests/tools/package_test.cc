// The Debian packages tools/package.sh builds (the CTest fixture package_build makes them
// from this build tree into <build>/test-packages): unpacked into a temporary root, the
// CLI there finds its deployers and the system plugin directory without flags and runs the
// hello workflow; every file is in an FHS location; lintian reports no errors; the
// installed completion script completes commands and the bundled plugins' names.
#include <algorithm>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/completion.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

fs::path packageDir() { return buildDir() / "test-packages"; }

// The .deb files of the package named `name` in packageDir(): exactly one is expected.
fs::path deb(const std::string& name) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(packageDir())) {
    const auto file = entry.path().filename().string();
    if (file.starts_with(name + "_") && file.ends_with(".deb")) found.push_back(entry.path());
  }
  EXPECT_EQ(found.size(), 1u) << name;
  return found.empty() ? fs::path() : found.front();
}

// Both packages unpacked with dpkg-deb -x into one temporary root, as installing them
// would lay them out.
class PackageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"plugboard", "plugboard-dev"}) {
      auto r = run({"dpkg-deb", "-x", deb(name).string(), root_.path().string()});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  fs::path usr() const { return root_.path() / "usr"; }
  // The installed CLI with no plugin or deployer directory from the environment.
  RunResult installed(std::vector<std::string> args) const {
    args.insert(args.begin(), (usr() / "bin" / "plugboard").string());
    RunOptions options;
    options.env = {"PLUGBOARD_PLUGINS=", "PLUGBOARD_DEPLOYERS="};
    return run(args, options);
  }

  TempDir root_;
};

TEST_F(PackageTest, TheCliListsTheBundledDeployersAndPluginsWithoutFlags) {
  auto r = installed({"plugins", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Every deployer this tree builds, from the installed deployer directory.
  int deployers = 0;
  for (const auto& entry : fs::directory_iterator(deployerDir())) {
    if (entry.path().extension() != ".so") continue;
    ++deployers;
    const auto file = usr() / "lib" / "plugboard" / "deployers" / entry.path().filename();
    EXPECT_THAT(r.out, HasSubstr(file.string())) << "deployer " << entry.path().filename();
  }
  EXPECT_GE(deployers, 4);
  EXPECT_THAT(r.out, HasSubstr((usr() / "lib" / "plugboard" / "plugins" / "hello.so").string()));
}

TEST_F(PackageTest, TheCliRunsTheHelloWorkflowWithoutFlags) {
  auto r = installed({"run", (sourceDir() / "examples" / "hello.toml").string(), "--output", "json",
                      "--param", "who=Ada"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("Hello, Ada"));
}

TEST_F(PackageTest, TheManPagesAndTheCompletionAreInstalled) {
  EXPECT_TRUE(fs::exists(usr() / "share" / "man" / "man1" / "plugboard.1.gz"));
  EXPECT_TRUE(fs::exists(usr() / "share" / "man" / "man1" / "plugboard-run.1.gz"));
  const auto script = usr() / "share" / "bash-completion" / "completions" / "plugboard";
  auto r = complete(script, usr() / "bin", {"plugboard", "ru"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(lines(r.out), ElementsAre("run"));
  // The bundled plugins, found by the installed CLI in its system plugin directory.
  r = complete(script, usr() / "bin", {"plugboard", "call", "he"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(lines(r.out), ElementsAre("hello"));
  // The Python SDK where Debian's python3 imports from.
  EXPECT_TRUE(
      fs::exists(usr() / "lib" / "python3" / "dist-packages" / "plugboard_sdk" / "__init__.py"));
}

// The system plugin directory is a fallback of installed binaries only: the build tree's
// binary has no <prefix>/lib/plugboard/plugins above it, so it still asks for one.
TEST(SystemPluginDirTest, TheBuildTreeStillNeedsAPluginDirectory) {
  RunOptions options;
  options.env = {"PLUGBOARD_PLUGINS=", "PLUGBOARD_DEPLOYERS="};
  auto r = run({binary().string(), "plugins", "list"}, options);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no plugin directory"));
}

// Every path in both packages is one the FHS gives packages: /usr/bin, /usr/include,
// /usr/lib/<what the package owns>, /usr/lib/python3/dist-packages, /usr/share/{man,doc,
// bash-completion,lintian/overrides}; and each package has its copyright and changelog.
TEST(PackageContentsTest, EveryFileIsInAnFhsLocation) {
  const std::vector<std::string> allowed = {"./usr/bin/",
                                            "./usr/include/plugboard/",
                                            "./usr/lib/plugboard/",
                                            "./usr/lib/cmake/plugboard/",
                                            "./usr/lib/python3/dist-packages/plugboard_sdk/",
                                            "./usr/share/man/man1/",
                                            "./usr/share/bash-completion/completions/",
                                            "./usr/share/lintian/overrides/",
                                            "./usr/share/doc/plugboard/",
                                            "./usr/share/doc/plugboard-dev/"};
  std::set<std::string> docs;
  for (const char* name : {"plugboard", "plugboard-dev"}) {
    auto r = run({"dpkg-deb", "-c", deb(name).string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const auto& line : lines(r.out)) {
      const std::string path = line.substr(line.find("./"));
      bool ok =
          path.ends_with("/") && std::any_of(allowed.begin(), allowed.end(),
                                             [&](const auto& a) { return a.starts_with(path); });
      for (const auto& a : allowed) ok = ok || path.starts_with(a);
      // The host kit's static library: /usr/lib/libplugboard_host.a.
      ok = ok || path == "./usr/lib/libplugboard_host.a";
      EXPECT_TRUE(ok) << name << ": " << path;
      if (path.starts_with("./usr/share/doc/")) docs.insert(path);
    }
  }
  for (const char* name : {"plugboard", "plugboard-dev"}) {
    EXPECT_THAT(docs, Contains(std::string("./usr/share/doc/") + name + "/copyright"));
    EXPECT_THAT(docs, Contains(std::string("./usr/share/doc/") + name + "/changelog.gz"));
  }
}

TEST(PackageContentsTest, LintianReportsNoErrors) {
  auto r = run(
      {"lintian", "--fail-on", "error", deb("plugboard").string(), deb("plugboard-dev").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const auto& line : lines(r.out)) EXPECT_FALSE(line.starts_with("E: ")) << line;
}

}  // namespace
}  // namespace plugboard::testing
