// The plugboard binary, driven as a user drives it, on real plugin files.
#include <unistd.h>

#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

TEST(PluginsListTest, ListsTheExamplePluginsAsATable) {
  auto r = plugboard({"plugins", "list", "--plugins", pluginDir().string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("NAME"), std::string::npos);
  for (const char* name : {"hello", "echo", "fail", "multi", "legacy-executor-plugin", "sleep"}) {
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  }
  EXPECT_NE(r.out.find("template.execute,hello.greet"), std::string::npos);
  EXPECT_NE(r.out.find("(legacy: polled for every RPC)"), std::string::npos);
}

TEST(PluginsListTest, JsonListsNameVersionProvidesFileAndState) {
  auto r = plugboard({"plugins", "list", "--plugins", pluginDir().string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = Json::parse(r.out);
  bool seen = false;
  for (const auto& p : doc["plugins"]) {
    if (p["name"] != "hello") continue;
    seen = true;
    EXPECT_EQ(p["version"], "1.2.0");
    EXPECT_EQ(p["provides"], Json({"template.execute", "hello.greet"}));
    EXPECT_EQ(p["state"], "available");
    EXPECT_EQ(fs::path(p["file"].get<std::string>()), plugin("hello"));
  }
  EXPECT_TRUE(seen);
}

TEST(PluginsListTest, ListsBadFilesWithTheirReasonWithoutRunningPluginCode) {
  TempDir dir;
  fs::copy_file(plugin("hello"), dir / "hello.so");
  writeFile(dir / "notelf.so", "plain text");
  writeFile(dir / "truncated.so", readFile(plugin("hello")).substr(0, 3000));
  for (const char* name : {"no_manifest", "bad_json", "no_name", "abi_future", "crash_on_load"}) {
    fs::copy_file(fixture(name), dir / (std::string(name) + ".so"));
  }
  auto r = plugboard({"plugins", "list", "--plugins", dir.path().string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;  // a crash here would mean plugin code ran
  auto doc = Json::parse(r.out);
  std::map<std::string, Json> by_file;
  for (const auto& p : doc["plugins"]) by_file[fs::path(p["file"].get<std::string>()).filename().string()] = p;
  EXPECT_EQ(by_file["hello.so"]["state"], "available");
  EXPECT_EQ(by_file["crash_on_load.so"]["state"], "available");
  EXPECT_EQ(by_file["crash_on_load.so"]["name"], "crash-on-load");
  for (const auto& [file, reason] : std::map<std::string, std::string>{
           {"notelf.so", "not an ELF file"},
           {"truncated.so", "truncated"},
           {"no_manifest.so", "no plugboard manifest"},
           {"bad_json.so", "not valid JSON"},
           {"no_name.so", "no 'name'"},
           {"abi_future.so", "ABI 2"}}) {
    EXPECT_EQ(by_file[file]["state"], "error") << file;
    EXPECT_NE(by_file[file]["error"].get<std::string>().find(reason), std::string::npos) << file;
  }
  // The table names each refused file and its reason on one line.
  auto table = plugboard({"plugins", "list", "--plugins", dir.path().string()});
  EXPECT_NE(table.out.find((dir / "notelf.so").string() + ": refused: not an ELF file"),
            std::string::npos)
      << table.out;
}

TEST(PluginsListTest, AnUnreadableFileIsRefusedAndTheRestServed) {
  // Root reads any file, so as root the binary runs as nobody (setpriv) from a copy that
  // nobody may execute; the plugin directory and hello.so are world-readable, locked.so is
  // readable by no one.
  TempDir dir;
  fs::permissions(dir.path(), fs::perms(0755));
  fs::create_directory(dir / "plugins");
  fs::permissions(dir / "plugins", fs::perms(0755));
  fs::copy_file(binary(), dir / "plugboard");
  fs::copy_file(plugin("hello"), dir / "plugins/hello.so");
  fs::copy_file(plugin("echo"), dir / "plugins/locked.so");
  fs::permissions(dir / "plugins/hello.so", fs::perms(0644));
  fs::permissions(dir / "plugins/locked.so", fs::perms::none);
  std::vector<std::string> argv = {(dir / "plugboard").string(), "plugins", "list", "--plugins",
                                   (dir / "plugins").string(), "--json"};
  if (geteuid() == 0) {
    argv.insert(argv.begin(), {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"});
  }
  auto r = run(argv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, Json> by_file;
  const Json doc = Json::parse(r.out);
  for (const auto& p : doc["plugins"]) by_file[fs::path(p["file"].get<std::string>()).filename().string()] = p;
  EXPECT_EQ(by_file["hello.so"]["state"], "available") << r.out;
  EXPECT_EQ(by_file["locked.so"]["state"], "error");
  EXPECT_EQ(by_file["locked.so"]["error"], "cannot open: Permission denied");
}

TEST(PluginsListTest, AWorldWritableFileIsRefusedWithTheFix) {
  TempDir dir;
  fs::copy_file(plugin("hello"), dir / "hello.so");
  fs::copy_file(plugin("echo"), dir / "echo.so");
  fs::permissions(dir / "echo.so", fs::perms(0666));
  auto r = plugboard({"plugins", "list", "--plugins", dir.path().string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("hello"), std::string::npos);
  EXPECT_NE(r.out.find((dir / "echo.so").string() + ": refused: file is writable by others (mode "
                       "0666); run chmod o-w " + (dir / "echo.so").string()),
            std::string::npos)
      << r.out;
  auto load = plugboard({"inspect", (dir / "echo.so").string(), "--load"});
  EXPECT_EQ(load.exit_code, 1);
  EXPECT_NE(load.out.find("load:        not loaded: the file failed the trust checks"),
            std::string::npos)
      << load.out;
}

TEST(PluginsListTest, WithoutAPluginDirectorySaysWhatToDo) {
  auto r = run({"env", "-u", "PLUGBOARD_PLUGINS", binary().string(), "plugins", "list"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("pass --plugins DIR"), std::string::npos);
}

TEST(InspectTest, ShowsTheManifestReadWithoutLoading) {
  auto r = plugboard({"inspect", plugin("hello").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("name:        hello"), std::string::npos);
  EXPECT_NE(r.out.find("provides:    template.execute, hello.greet"), std::string::npos);
  EXPECT_EQ(r.out.find("load:"), std::string::npos);
}

TEST(InspectTest, ShowsAPluginWhoseInitializerWouldCrash) {
  auto r = plugboard({"inspect", fixture("crash_on_load").string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Json::parse(r.out)["manifest"]["name"], "crash-on-load");
}

TEST(InspectTest, LoadReportsTheAbiCheck) {
  auto r = plugboard({"inspect", plugin("hello").string(), "--load", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = Json::parse(r.out);
  EXPECT_EQ(doc["load"]["ok"], true);
  EXPECT_EQ(doc["load"]["abi"], "1.1");
}

TEST(InspectTest, LoadOfAnotherAbiNamesBothVersions) {
  auto r = plugboard({"inspect", fixture("abi_future").string(), "--load"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("name:        future"), std::string::npos);
  EXPECT_NE(r.out.find("refused:     plugin 'future' was built for plugboard ABI 2"), std::string::npos);
  EXPECT_NE(r.out.find("Got version 2.0, supported version is 1.1"), std::string::npos) << r.out;
}

TEST(InspectTest, BadFilesGetOneLineNamingFileAndReason) {
  TempDir dir;
  writeFile(dir / "notelf.so", "plain text");
  fs::create_symlink(dir / "gone.so", dir / "dangling.so");
  const std::vector<std::pair<fs::path, std::string>> cases = {
      {dir / "notelf.so", "not an ELF file"},
      {dir / "dangling.so", "cannot open: No such file or directory"},
      {fixture("no_manifest"), "no plugboard manifest"},
      {fixture("bad_json"), "manifest is not valid JSON"},
      {fixture("no_name"), "manifest has no 'name'"}};
  for (const auto& [file, reason] : cases) {
    auto r = plugboard({"inspect", file.string()});
    EXPECT_EQ(r.exit_code, 1) << file;
    EXPECT_TRUE(r.err.starts_with(file.string() + ": refused: " + reason)) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  }
}

TEST(CallTest, CallsAPluginByNameAndPrintsItsResult) {
  auto r = plugboard({"call", "hello", "--plugins", pluginDir().string(), "--args",
                      R"({"name":"Ada"})"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Succeeded: Hello, Ada!\n  greeting = Hello, Ada!\n");
}

TEST(CallTest, ReachesTheLegacyPluginByEitherName) {
  for (const char* key : {"legacy", "legacy-executor-plugin", "Legacy-Executor-Plugin"}) {
    auto r = plugboard({"call", key, "-p", pluginDir().string(), "--args", R"({"legacy":{}})",
                        "--json"});
    ASSERT_EQ(r.exit_code, 0) << key << r.err;
    EXPECT_EQ(Json::parse(r.out)["outputs"]["parameters"]["handled_by"], "legacy-executor-plugin");
  }
  auto declined = plugboard({"call", "legacy", "-p", pluginDir().string()});
  EXPECT_EQ(declined.exit_code, 1);
  EXPECT_EQ(declined.out, "NotHandled\n");
}

TEST(CallTest, CallsEachRpcOfAMultiRpcPlugin) {
  auto upper = plugboard({"call", "multi", "--rpc", "text.upper", "-p", pluginDir().string(),
                          "--args", R"({"text":"a b"})", "--json"});
  ASSERT_EQ(upper.exit_code, 0) << upper.err;
  EXPECT_EQ(Json::parse(upper.out)["outputs"]["parameters"]["text"], "A B");
  auto count = plugboard({"call", "multi", "--rpc", "text.count", "-p", pluginDir().string(),
                          "--args", R"({"text":"a b"})", "--json"});
  ASSERT_EQ(count.exit_code, 0) << count.err;
  EXPECT_EQ(Json::parse(count.out)["outputs"]["parameters"]["words"], "2");
}

TEST(CallTest, RefusesAnRpcThePluginDoesNotProvide) {
  auto r = plugboard({"call", "multi", "-p", pluginDir().string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("plugin 'multi' does not provide 'template.execute'; it provides: "
                       "text.upper, text.count"),
            std::string::npos)
      << r.err;
}

TEST(CallTest, ReachesAPluginOnlyTheRegistryKnowsThroughItsDeployer) {
  const std::string registry = (sourceDir() / "examples/registry.toml").string();
  auto r = plugboard({"call", "pyhello", "-p", pluginDir().string(), "--registry", registry,
                      "--args", R"({"name":"Ada"})"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Succeeded: Hello, Ada!\n  greeting = Hello, Ada!\n");
  auto wrong_rpc = plugboard({"call", "pyhello", "--rpc", "text.upper", "-p", pluginDir().string(),
                              "--registry", registry});
  EXPECT_EQ(wrong_rpc.exit_code, 1);
  EXPECT_NE(wrong_rpc.err.find("plugin 'pyhello' does not provide 'text.upper'"), std::string::npos)
      << wrong_rpc.err;
  // Without the registry it is not installed.
  auto unknown = plugboard({"call", "pyhello", "-p", pluginDir().string()});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no plugin 'pyhello'"), std::string::npos) << unknown.err;
}

TEST(CallTest, FailAndThrowGiveNonZeroExitAndTheReason) {
  auto fail = plugboard({"call", "fail", "-p", pluginDir().string(), "--args",
                         R"({"message":"no luck"})"});
  EXPECT_EQ(fail.exit_code, 1);
  EXPECT_EQ(fail.out, "Failed: no luck\n");
  auto thrown = plugboard({"call", "throws", "-p", fixtureDir().string()});
  EXPECT_EQ(thrown.exit_code, 1);
  EXPECT_EQ(thrown.out, "Error: plugin 'throws' threw: the disk is on fire\n");
}

TEST(CallTest, PicksVersionsAndNamesWhatIsInstalled) {
  TempDir dir;
  fs::copy_file(plugin("hello"), dir / "hello.so");
  copyWithEdit(plugin("hello"), dir / "hello-9.so", R"("version":"1.2.0")", R"("version":"9.0.0")");
  auto exact = plugboard({"call", "hello@1.2.0", "-p", dir.path().string(), "--log-level", "info"});
  EXPECT_EQ(exact.exit_code, 0) << exact.err;
  EXPECT_NE(exact.err.find("plugin 'hello' 1.2.0 from " + (dir / "hello.so").string()),
            std::string::npos)
      << exact.err;
  auto highest = plugboard({"call", "hello", "-p", dir.path().string(), "--log-level", "info"});
  EXPECT_EQ(highest.exit_code, 0) << highest.err;
  EXPECT_NE(highest.err.find("plugin 'hello' 9.0.0 from " + (dir / "hello-9.so").string()),
            std::string::npos)
      << highest.err;
  auto missing = plugboard({"call", "hello@3", "-p", dir.path().string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no plugin 'hello@3' in the plugin directories (installed: "
                             "hello@9.0.0, hello@1.2.0)"),
            std::string::npos)
      << missing.err;
}

TEST(CallTest, RejectsMalformedArgs) {
  auto r = plugboard({"call", "hello", "-p", pluginDir().string(), "--args", "{nope"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--args: invalid JSON"), std::string::npos) << r.err;
}

TEST(CliTest, EveryCommandHasHelp) {
  for (auto args : std::vector<std::vector<std::string>>{
           {"--help"}, {"plugins", "list", "--help"}, {"inspect", "--help"}, {"call", "--help"}}) {
    auto r = plugboard(args);
    EXPECT_EQ(r.exit_code, 0) << args[0];
    EXPECT_NE(r.out.find("usage: plugboard"), std::string::npos) << args[0];
  }
  auto unknown = plugboard({"frobnicate"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown command 'frobnicate'"), std::string::npos);
}

TEST(CliTest, ReadelfShowsTheManifestSection) {
  auto r = run({"readelf", "-p", ".plugboard", plugin("hello").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(R"({"name":"hello","version":"1.2.0")"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace plugboard::testing
