// plugboard new: the projects it writes build against the installed SDK and pass their own
// tests (which call the new plugin through `plugboard call`); it refuses bad names and
// never overwrites a file.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/sdk_project.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {
namespace fs = std::filesystem;

// The files below `dir`, relative to it, sorted.
std::vector<std::string> filesBelow(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) out.push_back(fs::relative(entry.path(), dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Projects made with `plugboard new`, built and tested against this build installed once
// for the test suite.
class NewProjectTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    install_ = std::make_unique<TempDir>();
    const RunResult installed = installBuild(prefix());
    ASSERT_EQ(installed.exit_code, 0) << installed.out << installed.err;
  }
  static void TearDownTestSuite() { install_.reset(); }
  static fs::path prefix() { return install_->path() / "prefix"; }

  // `plugboard new ARGS... --dir <tmp>/project`, asserting that it succeeded.
  fs::path create(std::vector<std::string> args) {
    const fs::path dir = tmp_ / "project";
    args.insert(args.begin(), "new");
    args.insert(args.end(), {"--dir", dir.string()});
    const RunResult created = plugboard(args);
    EXPECT_EQ(created.exit_code, 0) << created.out << created.err;
    EXPECT_NE(created.out.find("README.md"), std::string::npos) << created.out;
    return dir;
  }

  // Builds the C++ project in `dir` against the installed SDK, warnings as errors (it turns
  // on -Wall -Wextra itself), and runs its tests with ctest.
  void buildAndTest(const fs::path& dir) {
    const fs::path build = tmp_ / "build";
    const RunResult built = buildProject(dir, build, prefix(), "-Werror");
    ASSERT_EQ(built.exit_code, 0) << built.out << built.err;
    EXPECT_EQ(built.out.find("warning"), std::string::npos) << built.out;
    const RunResult tested = run({"ctest", "--test-dir", build.string(), "--output-on-failure"});
    EXPECT_EQ(tested.exit_code, 0) << tested.out << tested.err;
    EXPECT_NE(tested.out.find("100% tests passed, 0 tests failed out of 1"), std::string::npos)
        << tested.out;
  }

  // The C++ file `file` is formatted as the project's .clang-format says (skipped where
  // clang-format is not installed).
  void expectClangFormatted(const fs::path& file) {
    if (run({"sh", "-c", "command -v clang-format"}).exit_code != 0) return;
    const RunResult checked =
        run({"clang-format", "--style=file:" + (sourceDir() / ".clang-format").string(),
             "--dry-run", "-Werror", file.string()});
    EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err;
  }

  TempDir tmp_;

 private:
  static std::unique_ptr<TempDir> install_;
};

std::unique_ptr<TempDir> NewProjectTest::install_;

TEST_F(NewProjectTest, ACppPluginBuildsAgainstTheInstalledSdkAndPassesItsTest) {
  const fs::path dir = create({"plugin", "demo", "--lang", "cpp"});
  EXPECT_EQ(filesBelow(dir), (std::vector<std::string>{".gitignore", "CMakeLists.txt", "README.md",
                                                       "demo.cc", "test/call_test.cmake"}));
  EXPECT_NE(readFile(dir / "CMakeLists.txt").find("find_package(plugboard REQUIRED)"),
            std::string::npos);
  expectClangFormatted(dir / "demo.cc");
  buildAndTest(dir);
}

TEST_F(NewProjectTest, APythonPluginPassesItsTestThroughTheInstalledCli) {
  const fs::path dir = create({"plugin", "demo", "--lang", "python"});
  EXPECT_EQ(filesBelow(dir), (std::vector<std::string>{".gitignore", "README.md", "demo.py",
                                                       "registry.toml", "test_demo.py"}));
  RunOptions with_cli;  // as a user runs it: the installed plugboard on the PATH
  with_cli.env = {"PATH=" + (prefix() / "bin").string() + ":" + std::getenv("PATH")};
  const RunResult tested = run({"python3", (dir / "test_demo.py").string(), "-v"}, with_cli);
  EXPECT_EQ(tested.exit_code, 0) << tested.out << tested.err;
  EXPECT_NE(tested.err.find("Ran 2 tests"), std::string::npos) << tested.err;
  EXPECT_NE(tested.err.find("\nOK\n"), std::string::npos) << tested.err;
}

TEST_F(NewProjectTest, ADeployerBuildsAgainstTheInstalledHostKitAndPassesItsTest) {
  const fs::path dir = create({"deployer", "demo"});
  EXPECT_EQ(filesBelow(dir),
            (std::vector<std::string>{".gitignore", "CMakeLists.txt", "README.md", "demo.cc",
                                      "example/greeting.txt", "example/registry.toml",
                                      "test/call_test.cmake"}));
  EXPECT_NE(readFile(dir / "CMakeLists.txt").find("plugboard_add_deployer(demo"),
            std::string::npos);
  expectClangFormatted(dir / "demo.cc");
  buildAndTest(dir);
}

TEST(NewTest, NamesBecomeIdentifiersOfTheirLanguage) {
  TempDir tmp;
  ASSERT_EQ(plugboard({"new", "plugin", "my-demo.v2", "--dir", (tmp / "cpp").string()}).exit_code,
            0);
  EXPECT_NE(readFile(tmp / "cpp/my-demo.v2.cc").find("class MyDemoV2Plugin : public"),
            std::string::npos);
  EXPECT_NE(readFile(tmp / "cpp/my-demo.v2.cc").find("\"name\": \"my-demo.v2\""),
            std::string::npos);
  ASSERT_EQ(
      plugboard({"new", "plugin", "my-demo.v2", "--lang", "python", "--dir", (tmp / "py").string()})
          .exit_code,
      0);
  EXPECT_NE(readFile(tmp / "py/registry.toml").find("module = \"my_demo_v2\""), std::string::npos);
  EXPECT_TRUE(fs::exists(tmp / "py/my_demo_v2.py"));
  EXPECT_TRUE(fs::exists(tmp / "py/test_my_demo_v2.py"));
}

TEST(NewTest, APythonPluginNamedLikeAModulePythonHasGetsAModuleThatDoesNotHideIt) {
  TempDir tmp;
  for (const std::string name : {"json", "unittest"}) {
    const fs::path dir = tmp / name;
    const RunResult made = plugboard({"new", "plugin", name, "--lang", "python", "--dir", dir.string()});
    ASSERT_EQ(made.exit_code, 0) << made.err;
    EXPECT_NE(made.out.find(name + "_plugin.py"), std::string::npos) << made.out;
    EXPECT_NE(readFile(dir / "registry.toml").find("module = \"" + name + "_plugin\""),
              std::string::npos);
    EXPECT_FALSE(fs::exists(dir / (name + ".py"))) << name;
    EXPECT_TRUE(fs::exists(dir / ("test_" + name + "_plugin.py"))) << name;
  }
  // A C++ plugin keeps its name as it is.
  ASSERT_EQ(plugboard({"new", "plugin", "json", "--dir", (tmp / "cpp").string()}).exit_code, 0);
  EXPECT_TRUE(fs::exists(tmp / "cpp/json.cc"));
}

TEST(NewTest, TheGeneratedTestsFailOnAWrongAnswer) {
  // Each project's test run against a "plugboard" that only echoes its arguments (exit 0):
  // it must fail, not pass on the exit status alone.
  TempDir tmp;
  for (const char* what : {"plugin", "deployer"}) {
    const fs::path dir = tmp / what;
    ASSERT_EQ(plugboard({"new", what, "demo", "--dir", dir.string()}).exit_code, 0);
    const RunResult tested =
        run({PLUGBOARD_CMAKE, "-DPLUGBOARD=/bin/echo", "-DPLUGINS=" + dir.string(),
             "-DDEPLOYERS=" + dir.string(), "-DEXAMPLE=" + dir.string(), "-P",
             (dir / "test/call_test.cmake").string()});
    EXPECT_NE(tested.exit_code, 0) << what << tested.out << tested.err;
    EXPECT_NE(tested.err.find("expected output matching"), std::string::npos) << tested.err;
  }
  const fs::path dir = tmp / "python";
  ASSERT_EQ(
      plugboard({"new", "plugin", "demo", "--lang", "python", "--dir", dir.string()}).exit_code, 0);
  RunOptions echo;
  echo.env = {"PLUGBOARD=/bin/echo"};
  const RunResult tested = run({"python3", (dir / "test_demo.py").string()}, echo);
  EXPECT_NE(tested.exit_code, 0) << tested.err;
  EXPECT_NE(tested.err.find("FAILED (failures=2)"), std::string::npos) << tested.err;
}

TEST(NewTest, WritesIntoADirectoryNamedAfterThePluginByDefault) {
  // The default --dir is ./NAME; the child runs in a directory of its own.
  TempDir tmp;
  const RunResult created = run({"sh", "-c", "cd \"$1\" && exec \"$2\" new plugin demo", "sh",
                                 tmp.path().string(), binary().string()});
  ASSERT_EQ(created.exit_code, 0) << created.out << created.err;
  EXPECT_TRUE(fs::exists(tmp / "demo/demo.cc"));
}

TEST(NewTest, RefusesToOverwriteAnyFileAndWritesNothing) {
  TempDir tmp;
  const fs::path dir = tmp / "demo";
  fs::create_directories(dir / "test");
  writeFile(dir / "test/call_test.cmake", "mine\n");
  const RunResult refused = plugboard({"new", "plugin", "demo", "--dir", dir.string()});
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_NE(refused.err.find((dir / "test/call_test.cmake").string() + " exists already"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(filesBelow(dir), std::vector<std::string>{"test/call_test.cmake"});
  EXPECT_EQ(readFile(dir / "test/call_test.cmake"), "mine\n");

  // An empty directory is fine, and a second run refuses, naming every file.
  fs::remove(dir / "test/call_test.cmake");
  ASSERT_EQ(plugboard({"new", "deployer", "demo", "--dir", dir.string()}).exit_code, 0);
  const std::string before = readFile(dir / "demo.cc");
  const RunResult again = plugboard({"new", "deployer", "demo", "--dir", dir.string()});
  EXPECT_EQ(again.exit_code, 1);
  for (const char* file : {"CMakeLists.txt", "README.md", "demo.cc", "example/registry.toml"}) {
    EXPECT_NE(again.err.find((dir / file).string()), std::string::npos) << file << again.err;
  }
  EXPECT_EQ(readFile(dir / "demo.cc"), before);
}

TEST(NewTest, RefusesNamesAManifestCouldNotHave) {
  TempDir tmp;
  const std::vector<std::string> names = {"two words", ".hidden",     "a/b",
                                          "_x",        "caf\xc3\xa9", std::string(129, 'a')};
  for (const std::string& name : names) {
    for (const char* what : {"plugin", "deployer"}) {
      const RunResult refused = plugboard({"new", what, name, "--dir", (tmp / "project").string()});
      EXPECT_EQ(refused.exit_code, 2) << what << " '" << name << "': " << refused.err;
      EXPECT_NE(refused.err.find("manifest name '"), std::string::npos) << refused.err;
      EXPECT_NE(refused.err.find("use letters, digits, '.', '_' and '-', starting with a letter "
                                 "or digit"),
                std::string::npos)
          << refused.err;
      EXPECT_FALSE(fs::exists(tmp / "project")) << what << " '" << name << "'";
    }
  }
}

TEST(NewTest, RefusesWhatItCannotWrite) {
  TempDir tmp;
  const auto dir = (tmp / "project").string();
  EXPECT_EQ(plugboard({"new", "widget", "demo", "--dir", dir}).exit_code, 2);
  EXPECT_EQ(plugboard({"new", "plugin", "demo", "--lang", "rust", "--dir", dir}).exit_code, 2);
  const RunResult python_deployer =
      plugboard({"new", "deployer", "demo", "--lang", "python", "--dir", dir});
  EXPECT_EQ(python_deployer.exit_code, 2);
  EXPECT_NE(python_deployer.err.find("a deployer is written in C++"), std::string::npos)
      << python_deployer.err;
  EXPECT_EQ(plugboard({"new", "plugin", "--dir", dir}).exit_code, 2);  // no name
  EXPECT_FALSE(fs::exists(tmp / "project"));
  const RunResult help = plugboard({"new", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("plugboard new plugin NAME [--lang cpp|python] [--dir DIR]"),
            std::string::npos)
      << help.out;
}

}  // namespace
}  // namespace plugboard::testing
