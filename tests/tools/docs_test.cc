// The man pages and the completion scripts `plugboard __docs` writes at build time
// (<build>/generated): bash, zsh and fish parse their scripts, and each completes
// commands, flags, their values, plugin names, a plugin's RPCs, a workflow's inputs and
// files; groff renders every page without a warning, and each
// page lists every option the command's --help lists.
#include <algorithm>
#include <regex>
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
using ::testing::IsEmpty;
using ::testing::Not;

fs::path generated() { return buildDir() / "generated"; }
fs::path script() { return generated() / "completions" / "plugboard"; }

std::vector<std::string> offered(const std::vector<std::string>& words) {
  auto r = complete(script(), binary().parent_path(), words);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return lines(r.out);
}

// The options `text` (a --help output or a rendered page) names: "--plugins", "-p", ...
std::set<std::string> optionsIn(const std::string& text, const std::regex& pattern) {
  std::set<std::string> out;
  for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it) {
    out.insert((*it)[1].str());
  }
  return out;
}

// The command of man page `page`: plugboard-plugins-list.1 -> {"plugins", "list"}.
std::vector<std::string> commandOf(const fs::path& page) {
  std::vector<std::string> words;
  std::string rest = page.stem().string().substr(std::string("plugboard-").size());
  for (std::size_t dash; (dash = rest.find('-')) != std::string::npos; rest.erase(0, dash + 1)) {
    words.push_back(rest.substr(0, dash));
  }
  words.push_back(rest);
  return words;
}

std::vector<fs::path> commandPages() {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(generated() / "man1")) {
    const auto name = entry.path().filename().string();
    // plugboard-host.1 is the page of the other program, made from its --help.
    if (name.starts_with("plugboard-") && name.ends_with(".1") && name != "plugboard-host.1") {
      out.push_back(entry.path());
    }
  }
  return out;
}

// `text` with each run of white space made one space.
std::string squashed(const std::string& text) {
  return std::regex_replace(text, std::regex(R"(\s+)"), " ");
}

// The page rendered as plain text (groff's warnings on stderr).
RunResult render(const fs::path& page) {
  return run({"groff", "-man", "-Tascii", "-ww", "-P-cbou", page.string()});
}

TEST(CompletionTest, BashParsesTheScript) {
  auto r = run({"bash", "-n", script().string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(CompletionTest, CompletesCommandsAndSubcommands) {
  EXPECT_THAT(offered({"plugboard", "ru"}), ElementsAre("run"));
  EXPECT_THAT(offered({"plugboard", "plug"}), ElementsAre("plugins"));
  EXPECT_THAT(offered({"plugboard", "plugins", ""}), ElementsAre("list"));
  EXPECT_THAT(offered({"plugboard", ""}), Contains("serve"));
}

TEST(CompletionTest, CompletesFlagsAndTheirValues) {
  EXPECT_THAT(offered({"plugboard", "run", "--pl"}), ElementsAre("--plugins"));
  EXPECT_THAT(offered({"plugboard", "plugins", "list", "--j"}), ElementsAre("--json"));
  EXPECT_THAT(offered({"plugboard", "run", "x.toml", "--output", ""}), ElementsAre("text", "json"));
  EXPECT_THAT(offered({"plugboard", "graph", "-f", "m"}), ElementsAre("mermaid"));
  EXPECT_THAT(offered({"plugboard", "serve", "--log-level", "w"}), ElementsAre("warn"));
  // Flags of one command are not offered for another.
  EXPECT_THAT(offered({"plugboard", "inspect", "--pl"}), IsEmpty());
}

TEST(CompletionTest, CompletesDirectoriesAndFiles) {
  TempDir dir;
  fs::create_directory(dir / "plugdir");
  dir.write("flow.toml", "name = \"x\"\n");
  const std::string prefix = (dir / "").string();
  EXPECT_THAT(offered({"plugboard", "run", "--plugins", prefix + "p"}),
              ElementsAre(prefix + "plugdir"));
  EXPECT_THAT(offered({"plugboard", "run", "--plugins", prefix}),
              Not(Contains(prefix + "flow.toml")));
  EXPECT_THAT(offered({"plugboard", "run", prefix + "f"}), ElementsAre(prefix + "flow.toml"));
  EXPECT_THAT(offered({"plugboard", "serve", "--token-file", prefix + "f"}),
              ElementsAre(prefix + "flow.toml"));
}

TEST(CompletionTest, CompletesPluginNamesFromTheGivenPluginDirectories) {
  EXPECT_THAT(offered({"plugboard", "call", "-p", pluginDir().string(), "he"}),
              ElementsAre("hello"));
  EXPECT_THAT(offered({"plugboard", "call", "--plugins", pluginDir().string(), "mu"}),
              ElementsAre("multi"));
  // No plugin directory on the line or in the environment: nothing (and no error text).
  EXPECT_THAT(offered({"plugboard", "call", "he"}), IsEmpty());
}

TEST(CompletionTest, CompletesTheRpcsOfTheNamedPlugin) {
  const std::string dir = pluginDir().string();
  EXPECT_THAT(offered({"plugboard", "call", "multi", "-p", dir, "--rpc", ""}),
              ElementsAre("text.count", "text.upper"));
  EXPECT_THAT(offered({"plugboard", "call", "--plugins", dir, "multi", "--rpc", "text.u"}),
              ElementsAre("text.upper"));
  // No plugin named yet: every plugin's.
  EXPECT_THAT(offered({"plugboard", "call", "-p", dir, "--rpc", ""}), Contains("text.count"));
}

TEST(CompletionTest, CompletesTheInputsOfTheWorkflow) {
  const std::string hello = (sourceDir() / "examples" / "hello.toml").string();
  EXPECT_THAT(offered({"plugboard", "run", hello, "--param", ""}), ElementsAre("who="));
  EXPECT_THAT(offered({"plugboard", "validate", hello, "--param", "w"}), ElementsAre("who="));
  TempDir dir;
  const std::string argo = dir.write("wf.yaml", R"(apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: params
spec:
  entrypoint: main
  arguments:
    parameters:
      - name: message
        value: hi
      - name: count
        value: "2"
  templates:
    - name: main
      container:
        image: busybox
)");
  EXPECT_THAT(offered({"plugboard", "run", argo, "--param", ""}), ElementsAre("count=", "message="));
  // A workflow that does not exist or parse: nothing, no error text.
  EXPECT_THAT(offered({"plugboard", "run", (dir / "none.toml").string(), "--param", ""}), IsEmpty());
}

fs::path zshScript() { return generated() / "completions" / "_plugboard"; }
fs::path fishScript() { return generated() / "completions" / "plugboard.fish"; }

std::vector<std::string> offeredByZsh(const std::vector<std::string>& words) {
  auto r = completeZsh(zshScript(), binary().parent_path(), words);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  return lines(r.out);
}

std::vector<std::string> offeredByFish(const std::vector<std::string>& words) {
  auto r = completeFish(fishScript(), binary().parent_path(), words);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  return lines(r.out);
}

TEST(CompletionTest, ZshParsesTheScript) {
  auto r = run({"zsh", "-n", zshScript().string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(readFile(zshScript()).rfind("#compdef plugboard\n", 0), 0u);
}

TEST(CompletionTest, ZshCompletesCommandsFlagsValuesPluginsRpcsAndInputs) {
  const std::string dir = pluginDir().string();
  EXPECT_THAT(offeredByZsh({"plugboard", "ru"}), ElementsAre("run"));
  EXPECT_THAT(offeredByZsh({"plugboard", "ver"}), ElementsAre("version"));
  EXPECT_THAT(offeredByZsh({"plugboard", "plugins", ""}), ElementsAre("list"));
  EXPECT_THAT(offeredByZsh({"plugboard", "run", "--pl"}), ElementsAre("--plugins"));
  EXPECT_THAT(offeredByZsh({"plugboard", "inspect", "--pl"}), IsEmpty());
  EXPECT_THAT(offeredByZsh({"plugboard", "run", "x.toml", "--output", ""}),
              ElementsAre("text", "json"));
  EXPECT_THAT(offeredByZsh({"plugboard", "run", "--plugins", ""}), ElementsAre("<directories>"));
  EXPECT_THAT(offeredByZsh({"plugboard", "run", ""}), ElementsAre("<files>"));
  EXPECT_THAT(offeredByZsh({"plugboard", "call", "-p", dir, "he"}), ElementsAre("hello"));
  EXPECT_THAT(offeredByZsh({"plugboard", "call", "multi", "-p", dir, "--rpc", ""}),
              ElementsAre("text.count", "text.upper"));
  EXPECT_THAT(offeredByZsh({"plugboard", "run", (sourceDir() / "examples" / "hello.toml").string(),
                            "--param", ""}),
              ElementsAre("who="));
  EXPECT_THAT(offeredByZsh({"plugboard", "new", ""}), ElementsAre("plugin", "deployer"));
}

TEST(CompletionTest, FishCompletesCommandsFlagsValuesPluginsRpcsAndInputs) {
  const std::string dir = pluginDir().string();
  EXPECT_THAT(offeredByFish({"plugboard", "ru"}), ElementsAre("run"));
  EXPECT_THAT(offeredByFish({"plugboard", "ver"}), ElementsAre("version"));
  EXPECT_THAT(offeredByFish({"plugboard", "plugins", ""}), ElementsAre("list"));
  EXPECT_THAT(offeredByFish({"plugboard", "run", "--pl"}), ElementsAre("--plugins"));
  EXPECT_THAT(offeredByFish({"plugboard", "inspect", "--pl"}), IsEmpty());
  EXPECT_THAT(offeredByFish({"plugboard", "run", "x.toml", "--output", ""}),
              ElementsAre("json", "text"));
  EXPECT_THAT(offeredByFish({"plugboard", "call", "-p", dir, "he"}), ElementsAre("hello"));
  EXPECT_THAT(offeredByFish({"plugboard", "call", "multi", "-p", dir, "--rpc", ""}),
              ElementsAre("text.count", "text.upper"));
  EXPECT_THAT(offeredByFish({"plugboard", "run", (sourceDir() / "examples" / "hello.toml").string(),
                             "--param", ""}),
              ElementsAre("who="));
  EXPECT_THAT(offeredByFish({"plugboard", "new", ""}), ElementsAre("deployer", "plugin"));
  TempDir files;
  fs::create_directory(files / "plugdir");
  files.write("flow.toml", "name = \"x\"\n");
  const std::string prefix = (files / "").string();
  EXPECT_THAT(offeredByFish({"plugboard", "run", prefix + "f"}), ElementsAre(prefix + "flow.toml"));
  EXPECT_THAT(offeredByFish({"plugboard", "run", "--plugins", prefix + "p"}),
              ElementsAre(prefix + "plugdir/"));
}

TEST(ManPageTest, EveryPageRendersWithoutWarnings) {
  auto pages = commandPages();
  pages.push_back(generated() / "man1" / "plugboard.1");
  pages.push_back(generated() / "man1" / "plugboard-host.1");
  ASSERT_GT(pages.size(), 5u);
  for (const auto& page : pages) {
    auto r = render(page);
    EXPECT_EQ(r.exit_code, 0) << page;
    EXPECT_EQ(r.err, "") << page;
    EXPECT_NE(r.out.find("NAME"), std::string::npos) << page;
    auto gz = run({"gzip", "-dc", page.string() + ".gz"});
    EXPECT_EQ(gz.out, readFile(page)) << page << ".gz is not the page";
  }
}

TEST(ManPageTest, EachPageListsEveryOptionOfItsHelp) {
  const std::regex in_help(R"((?:^|\n)\s+(?:-\w \[ )?(--[a-z][a-z-]*))");
  const std::regex in_page(R"((--[a-z][a-z-]*))");
  auto pages = commandPages();
  auto overview = plugboard({"--help"});
  auto overview_page = render(generated() / "man1" / "plugboard.1").out;
  for (const auto& page : pages) {
    auto args = commandOf(page);
    SCOPED_TRACE(page.filename().string());
    // The overview page and `plugboard --help` both list the command.
    EXPECT_NE(overview.out.find("  " + args[0]), std::string::npos);
    EXPECT_NE(overview_page.find(page.stem().string()), std::string::npos);
    args.push_back("--help");
    auto help = plugboard(args);
    ASSERT_EQ(help.exit_code, 0) << help.err;
    const auto wanted = optionsIn(help.out, in_help);
    ASSERT_GT(wanted.size(), 1u) << help.out;
    const auto listed = optionsIn(render(page).out, in_page);
    for (const auto& option : wanted) EXPECT_THAT(listed, Contains(option));
    // Its synopsis is the usage line --help prints.
    const std::string usage = help.out.substr(0, help.out.find('\n'));
    ASSERT_TRUE(usage.starts_with("usage: ")) << usage;
    EXPECT_NE(squashed(render(page).out).find(usage.substr(7)), std::string::npos) << usage;
  }
  // One page per command: as many as `plugboard --help` lists.
  const auto commands = overview.out.substr(overview.out.find("Commands:"));
  EXPECT_EQ(std::count(commands.begin(), commands.end(), '\n') - 3, static_cast<long>(pages.size()))
      << commands;
}

}  // namespace
}  // namespace plugboard::testing
