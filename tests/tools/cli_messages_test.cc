// What the CLI says when a user mistypes, through the real binary: the nearest command,
// subcommand, option, choice or plugin name ("did you mean"); what is missing in the
// usage line's words, never an internal option's name; why a workflow file cannot be read
// (as a user who may not read it: nobody, when the tests run as root);
// a plugin directory that cannot be read, said once. And `plugboard --version`.
#include <unistd.h>

#include <fstream>
#include <regex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// The lines of `text` that contain `what`.
int linesWith(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(CliSuggestTest, AMisspelledCommandGetsTheNearestOne) {
  for (const auto& [given, meant] :
       std::vector<std::pair<std::string, std::string>>{{"rnu", "run"},
                                                        {"valdate", "validate"},
                                                        {"serv", "serve"},
                                                        {"Inspect", "inspect"},
                                                        {"verison", "version"}}) {
    auto r = plugboard({given});
    EXPECT_EQ(r.exit_code, 2) << given;
    EXPECT_THAT(r.err, HasSubstr("unknown command '" + given + "'; did you mean '" + meant + "'?"))
        << r.err;
  }
  // Nothing near: no guess, the list of commands instead.
  auto far = plugboard({"xyzzy"});
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_THAT(far.err, Not(HasSubstr("did you mean")));
  EXPECT_THAT(far.err, HasSubstr("Commands:"));
}

TEST(CliSuggestTest, AMisspelledSubcommandOrFirstWordGetsTheWholeCommand) {
  auto lst = plugboard({"plugins", "lst"});
  EXPECT_EQ(lst.exit_code, 2);
  EXPECT_THAT(lst.err, HasSubstr("unknown command 'plugins lst'; did you mean 'plugins list'?"));
  auto plugin = plugboard({"plugin", "list"});
  EXPECT_EQ(plugin.exit_code, 2);
  EXPECT_THAT(plugin.err, HasSubstr("unknown command 'plugin list'; did you mean 'plugins list'?"));
  auto alone = plugboard({"plugins"});
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_THAT(alone.err, HasSubstr("'plugins' needs a subcommand: list"));
}

TEST(CliSuggestTest, AMisspelledOptionOrChoiceGetsTheNearestOne) {
  auto option = plugboard({"validate", "x.toml", "--paramm", "a=b"});
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_THAT(option.err, HasSubstr("unknown option '--paramm'; did you mean '--param'?"));
  TempDir dir;
  auto kind = plugboard({"new", "plugn", "x", "--dir", (dir / "x").string()});
  EXPECT_EQ(kind.exit_code, 2);
  EXPECT_THAT(kind.err,
              HasSubstr("KIND must be plugin or deployer, got 'plugn'; did you mean 'plugin'?"));
  auto output = plugboard({"run", "x.toml", "--output", "jsn"});
  EXPECT_EQ(output.exit_code, 2);
  EXPECT_THAT(output.err, HasSubstr("did you mean 'json'?"));
}

TEST(CliSuggestTest, AMisspelledPluginGetsTheNearestInstalledOne) {
  TempDir dir;
  const std::string workflow = dir.write("typo.toml", R"(name = "typo"

[[steps]]
id = "greet"
plugin = "helo"
args = { name = "Ada" }
)");
  for (const char* command : {"validate", "run"}) {
    auto r = plugboard({command, workflow, "--plugins", pluginDir().string()});
    EXPECT_NE(r.exit_code, 0) << command;
    EXPECT_THAT(r.err, HasSubstr("no plugin 'helo' is installed; did you mean 'hello'?"))
        << command << ": " << r.err << r.out;
  }
  auto call = plugboard({"call", "mutli", "--plugins", pluginDir().string()});
  EXPECT_EQ(call.exit_code, 1);
  EXPECT_THAT(call.err,
              HasSubstr("no plugin 'mutli' in the plugin directories; did you mean 'multi'?"));
}

TEST(CliMessageTest, AMissingOperandIsNamedAsTheUsageLineNamesIt) {
  for (const auto& [args, missing] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"run"}, "WORKFLOW"},
           {{"validate", "--plugins", "d"}, "WORKFLOW"},
           {{"graph"}, "WORKFLOW"},
           {{"inspect"}, "FILE"},
           {{"call"}, "NAME"},
           {{"new"}, "KIND"},
           {{"new", "plugin"}, "NAME"}}) {
    auto r = plugboard(args);
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_THAT(r.err, HasSubstr("plugboard: missing " + missing + "\n")) << r.err;
    // No internal option name: the usage line says how to give it.
    EXPECT_THAT(r.err, Not(HasSubstr("'--"))) << r.err;
    EXPECT_THAT(r.err, Not(HasSubstr("--what"))) << r.err;
    EXPECT_THAT(r.err, HasSubstr("usage: plugboard " + args[0])) << r.err;
  }
}

TEST(CliMessageTest, AWorkflowFileThatCannotBeReadSaysWhy) {
  TempDir dir;
  for (const char* name : {"missing.toml", "missing.yaml"}) {
    const std::string file = (dir / name).string();
    auto r = plugboard({"validate", file, "--plugins", pluginDir().string()});
    EXPECT_EQ(r.exit_code, 2) << name;
    // One line naming the file once, whichever front end would have read it.
    EXPECT_EQ(r.err, file + ": cannot read the workflow file: no such file\n") << name;
  }
  // A file its reader may not read. Root reads any file, so as root the binary runs as
  // nobody (setpriv), from a copy in a directory nobody may enter.
  fs::permissions(dir.path(), fs::perms(0755));
  fs::create_directory(dir / "plugins");
  fs::permissions(dir / "plugins", fs::perms(0755));
  fs::copy_file(binary(), dir / "plugboard");
  const std::string locked = dir.write("locked.toml", "name = \"x\"\n");
  fs::permissions(locked, fs::perms::none);
  std::vector<std::string> argv = {(dir / "plugboard").string(), "validate", locked, "--plugins",
                                   (dir / "plugins").string()};
  if (geteuid() == 0) {
    argv.insert(argv.begin(), {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  }
  auto r = run(argv);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(locked + ": cannot read the workflow file: Permission denied"))
      << r.err;
}

TEST(CliMessageTest, AMissingPluginDirectoryIsSaidOnce) {
  const std::string missing = "/nonexistent/plugboard-plugins";
  auto validate = plugboard(
      {"validate", (sourceDir() / "examples" / "hello.toml").string(), "--plugins", missing});
  EXPECT_EQ(validate.exit_code, 2);
  EXPECT_EQ(linesWith(validate.err, missing), 1) << validate.err;
  EXPECT_THAT(validate.err, Not(HasSubstr("poll = true"))) << validate.err;
  auto run =
      plugboard({"run", (sourceDir() / "examples" / "hello.toml").string(), "--plugins", missing});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(linesWith(run.err, missing), 1) << run.err;
  // plugins list shows what the other directories hold, and fails.
  auto list =
      plugboard({"plugins", "list", "--plugins", missing, "--plugins", pluginDir().string()});
  EXPECT_EQ(list.exit_code, 1);
  EXPECT_THAT(list.out, HasSubstr(missing + ": refused: cannot read plugin directory"));
  EXPECT_THAT(run.err,
              HasSubstr("plugboard: " + missing + ": refused: cannot read plugin directory: "));
  EXPECT_THAT(list.out, HasSubstr("hello"));
  auto json = plugboard({"plugins", "list", "--plugins", missing, "--json"});
  EXPECT_EQ(json.exit_code, 1);
}

// The version CMake's project() states, read from the source tree.
std::string projectVersion() {
  std::ifstream in(sourceDir() / "CMakeLists.txt");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::smatch m;
  EXPECT_TRUE(std::regex_search(text, m, std::regex(R"(project\(plugboard VERSION ([0-9.]+))")));
  return m[1].str();
}

TEST(CliVersionTest, VersionDashVAndDashDashVersionSayTheVersionAndBuild) {
  auto version = plugboard({"version"});
  ASSERT_EQ(version.exit_code, 0) << version.err;
  // "plugboard 0.1.0 (commit 0123456789ab, GNU 12.2.0, RelWithDebInfo)"; no commit
  // outside a git checkout.
  const std::regex line(
      R"(plugboard ([0-9.]+) \((commit [0-9a-f]{12}, )?(GNU|Clang) [0-9.]+, \w+\)\n)");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(version.out, m, line)) << version.out;
  EXPECT_EQ(m[1].str(), projectVersion());
  for (const char* flag : {"--version", "-V"}) {
    auto r = plugboard({flag});
    EXPECT_EQ(r.exit_code, 0) << flag;
    EXPECT_EQ(r.out, version.out) << flag;
  }
  auto extra = plugboard({"version", "now"});
  EXPECT_EQ(extra.exit_code, 2);
  EXPECT_THAT(plugboard({"--help"}).out, HasSubstr("plugboard --version"));
}

}  // namespace
}  // namespace plugboard::testing
