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

// The commands of the first ```sh block of `readme`, as written.
std::string readmeCommands(const fs::path& readme) {
  const std::string text = readFile(readme);
  const auto start = text.find("```sh\n");
  if (start == std::string::npos) return "";
  const auto end = text.find("\n```", start);
  return text.substr(start + 6, end - start - 6);
}

// The environment of someone who has nothing of plugboard installed or set: no plugboard
// on the PATH, no CMake prefix, none of plugboard's variables.
RunOptions bareEnvironment() {
  RunOptions bare;
  bare.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "CMAKE_PREFIX_PATH=", "PLUGBOARD=",
              "PLUGBOARD_PLUGINS=", "PLUGBOARD_DEPLOYERS=", "CMAKE_BUILD_TYPE="};
  return bare;
}

// Runs the README's commands of the project in `dir` as written, one after the other in
// `dir`, stopping at the first that fails (sh -e), in bareEnvironment(). A C++ project is
// compiled with warnings as errors (CXXFLAGS, which CMake reads; it turns on -Wall
// -Wextra itself).
RunResult runReadme(const fs::path& dir) {
  const std::string commands = readmeCommands(dir / "README.md");
  EXPECT_FALSE(commands.empty()) << readFile(dir / "README.md");
  RunOptions options = bareEnvironment();
  options.env.push_back("CXXFLAGS=-Werror");
  RunResult done = run({"sh", "-exc", "cd \"$1\"\n" + commands, "sh", dir.string()}, options);
  EXPECT_EQ(done.out.find("warning"), std::string::npos) << done.out;
  return done;
}

// The value of `key` (NAME:TYPE) in the CMakeCache.txt of `build`.
std::string cacheValue(const fs::path& build, const std::string& key) {
  const std::string cache = readFile(build / "CMakeCache.txt");
  const auto at = cache.find("\n" + key + "=");
  if (at == std::string::npos) return "<no " + key + ">";
  const auto start = at + key.size() + 2;
  return cache.substr(start, cache.find('\n', start) - start);
}

// A C++ project's build in `build` is optimised: Release in the cache, and -O3 given to the
// compiler.
void expectRelease(const fs::path& build) {
  EXPECT_EQ(cacheValue(build, "CMAKE_BUILD_TYPE:STRING"), "Release");
  std::string flags;
  for (const auto& entry : fs::recursive_directory_iterator(build)) {
    const std::string name = entry.path().filename().string();
    if (name == "flags.make" || name == "build.ninja") flags += readFile(entry.path());
  }
  EXPECT_NE(flags.find("-O3"), std::string::npos) << flags;
}

TEST(NewReadmeTest, BareEnvironmentHasNoPlugboardOnThePath) {
  // What the tests below rely on: the PATH they run with finds no plugboard.
  const RunResult found = run({"sh", "-c", "command -v plugboard"}, bareEnvironment());
  EXPECT_NE(found.exit_code, 0) << found.out;
}

// A project made by the build tree's plugboard builds against the build tree's SDK and
// tests with its binary, its README's commands run as written with nothing installed.
TEST(NewReadmeTest, ACppPluginFromTheBuildTreeWorksAsItsReadmeSays) {
  TempDir tmp;
  const fs::path dir = tmp / "greeter";
  const RunResult made = plugboard({"new", "plugin", "greeter", "--dir", dir.string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_EQ(made.err, "");  // no note: the build tree's SDK is found
  EXPECT_EQ(readFile(dir / "README.md").find("CMAKE_PREFIX_PATH"), std::string::npos);
  const RunResult done = runReadme(dir);
  ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
  EXPECT_NE(done.out.find("100% tests passed, 0 tests failed out of 1"), std::string::npos)
      << done.out;
  EXPECT_NE(done.out.find("Succeeded\n  greeting = Hello, Ada!\n"), std::string::npos) << done.out;
  EXPECT_EQ(cacheValue(dir / "build", "plugboard_DIR:PATH"),
            (buildDir() / "cmake" / "plugboard").string());
  EXPECT_EQ(cacheValue(dir / "build", "PLUGBOARD_EXECUTABLE:FILEPATH"), binary().string());
  expectRelease(dir / "build");
}

TEST(NewReadmeTest, ADeployerFromTheBuildTreeWorksAsItsReadmeSays) {
  TempDir tmp;
  const fs::path dir = tmp / "greet";
  const RunResult made = plugboard({"new", "deployer", "greet", "--dir", dir.string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const RunResult done = runReadme(dir);
  ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
  EXPECT_NE(done.out.find("100% tests passed, 0 tests failed out of 1"), std::string::npos)
      << done.out;
  EXPECT_NE(done.out.find("Succeeded\n  greeting = Hello, Ada!\n"), std::string::npos) << done.out;
  EXPECT_EQ(cacheValue(dir / "build", "plugboard_DIR:PATH"),
            (buildDir() / "cmake" / "plugboard").string());
  expectRelease(dir / "build");
}

TEST(NewReadmeTest, APythonPluginFromTheBuildTreeWorksAsItsReadmeSays) {
  TempDir tmp;
  const fs::path dir = tmp / "pygreeter";
  const RunResult made =
      plugboard({"new", "plugin", "pygreeter", "--lang", "python", "--dir", dir.string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const RunResult done = runReadme(dir);
  ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
  EXPECT_NE(done.err.find("Ran 2 tests"), std::string::npos) << done.err;
  EXPECT_NE(done.out.find("Succeeded\n  greeting = Hello, Ada!\n"), std::string::npos) << done.out;
  // Nothing refused on the way: the plugin is the registry's, no plugin directory is named.
  EXPECT_EQ(done.err.find("refused"), std::string::npos) << done.err;
}

TEST(NewReadmeTest, TheReadmeNamesThePlugboardOfThePathAsPlugboard) {
  // With the same plugboard first on the PATH, the README says `plugboard`, as a user
  // who installed it types it.
  TempDir tmp;
  RunOptions on_path;
  on_path.env = {"PATH=" + binary().parent_path().string() + ":/usr/bin:/bin"};
  const RunResult made =
      plugboard({"new", "plugin", "demo", "--dir", (tmp / "demo").string()}, on_path);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_NE(readmeCommands(tmp / "demo/README.md").find("\nplugboard call demo --plugins build"),
            std::string::npos)
      << readFile(tmp / "demo/README.md");
  const RunResult elsewhere = plugboard({"new", "plugin", "demo", "--dir", (tmp / "other").string()},
                                        bareEnvironment());
  ASSERT_EQ(elsewhere.exit_code, 0) << elsewhere.err;
  EXPECT_NE(readmeCommands(tmp / "other/README.md")
                .find("\n" + binary().string() + " call demo --plugins build"),
            std::string::npos)
      << readFile(tmp / "other/README.md");
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

// A project made by an installed plugboard builds against that installation's SDK, as
// its README says, with nothing on the PATH.
TEST_F(NewProjectTest, ACppPluginFromAnInstallationWorksAsItsReadmeSays) {
  const fs::path dir = tmp_ / "greeter";
  const RunResult made = run({(prefix() / "bin" / "plugboard").string(), "new", "plugin",
                              "greeter", "--dir", dir.string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_EQ(made.err, "");
  EXPECT_EQ(filesBelow(dir), (std::vector<std::string>{".gitignore", "CMakeLists.txt", "README.md",
                                                       "greeter.cc", "test/call_test.cmake"}));
  EXPECT_NE(readFile(dir / "CMakeLists.txt").find("find_package(plugboard REQUIRED HINTS"),
            std::string::npos);
  expectClangFormatted(dir / "greeter.cc");
  const RunResult done = runReadme(dir);
  ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
  EXPECT_NE(done.out.find("Succeeded\n  greeting = Hello, Ada!\n"), std::string::npos) << done.out;
  const std::string package = cacheValue(dir / "build", "plugboard_DIR:PATH");
  EXPECT_EQ(package.rfind(prefix().string() + "/lib", 0), 0u) << package;
  EXPECT_EQ(cacheValue(dir / "build", "PLUGBOARD_EXECUTABLE:FILEPATH"),
            (prefix() / "bin" / "plugboard").string());
  expectRelease(dir / "build");
}

// An installation without the SDK: the project is written, and `new` says what is missing.
TEST_F(NewProjectTest, WithoutAnSdkNewSaysWhatToInstall) {
  TempDir bare;
  fs::create_directories(bare / "bin");
  fs::copy_file(prefix() / "bin" / "plugboard", bare / "bin" / "plugboard");
  const RunResult made = run({(bare / "bin" / "plugboard").string(), "new", "plugin", "greeter",
                              "--dir", (tmp_ / "greeter").string()});
  EXPECT_EQ(made.exit_code, 0) << made.err;
  EXPECT_NE(made.err.find("the plugboard SDK is not installed beside " +
                          (bare / "bin" / "plugboard").string()),
            std::string::npos)
      << made.err;
  EXPECT_NE(made.err.find("plugboard-dev"), std::string::npos) << made.err;
  EXPECT_TRUE(fs::exists(tmp_ / "greeter" / "CMakeLists.txt"));
}

TEST_F(NewProjectTest, APythonPluginPassesItsTestThroughTheInstalledCli) {
  const fs::path dir = create({"plugin", "demo", "--lang", "python"});
  EXPECT_EQ(filesBelow(dir), (std::vector<std::string>{".gitignore", "README.md", "demo.py",
                                                       "registry.toml", "test_demo.py"}));
  RunOptions with_cli;  // the installed plugboard, named by $PLUGBOARD over the one that made it
  with_cli.env = {"PLUGBOARD=" + (prefix() / "bin" / "plugboard").string()};
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
