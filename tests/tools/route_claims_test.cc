// No silent takeover of a route: a key (alias or name) that two plugins claim is reported
// by `plugins list`, `validate` and serve's plugin list; outside serve it routes to neither,
// in serve the plugin that held it keeps it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/files.h"
#include "tests/support/live_plugins.h"
#include "tests/support/paths.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/text.h"

namespace plugboard::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class RouteClaimsTest : public ::testing::Test {
 protected:
  RouteClaimsTest() {
    fs::permissions(tmp_.path(), fs::perms(0755));
    fs::create_directory(dir());
    fs::permissions(dir(), fs::perms(0755));
  }
  fs::path dir() const { return tmp_ / "plugins"; }
  std::string file(const char* name) const { return (dir() / name).string(); }
  // hello as it is built (alias "greeter").
  void addHello() { fs::copy_file(plugin("hello"), dir() / "hello.so"); }
  // hello renamed "hallo", with the aliases `aliases` (as long as `["greeter"]`), written
  // beside and moved in.
  void addHallo(const std::string& aliases = R"(["greeter"])") {
    const std::string bytes =
        withEdit(withEdit(readFile(plugin("hello")), R"("name":"hello")", R"("name":"hallo")"),
                 R"(["greeter"])", aliases);
    writeFile(tmp_ / "staging", bytes);
    fs::rename(tmp_ / "staging", dir() / "hallo.so");
  }
  RunResult plugboard(std::vector<std::string> args) {
    args.insert(args.begin(), binary().string());
    args.insert(args.end(), {"--plugins", dir().string()});
    return run(args);
  }
  // validate of a one-step workflow that names `key`.
  RunResult validate(const std::string& key) {
    const std::string wf =
        tmp_.write("wf.toml", "name = \"w\"\n[[steps]]\nid = \"a\"\nplugin = \"" + key +
                                  "\"\nargs = { name = \"x\" }\n");
    return plugboard({"validate", wf});
  }

  TempDir tmp_;
};

TEST_F(RouteClaimsTest, AnAliasOfTwoPluginsIsReportedAndRoutesToNeither) {
  addHello();
  addHallo();
  const std::string conflict = "conflict: 'greeter' is an alias of plugin 'hallo' (" +
                               file("hallo.so") + ") and an alias of plugin 'hello' (" +
                               file("hello.so") + "); it routes to neither";
  auto list = plugboard({"plugins", "list"});
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_TRUE(has(list.out, conflict)) << list.out;

  list = plugboard({"plugins", "list", "--json"});
  const Json json = Json::parse(list.out);
  ASSERT_EQ(json["conflicts"].size(), 1u) << list.out;
  EXPECT_EQ(json["conflicts"][0]["key"], "greeter");
  EXPECT_EQ(json["conflicts"][0]["files"], Json({file("hallo.so"), file("hello.so")}));
  EXPECT_TRUE(json["conflicts"][0]["holder"].is_null());

  auto checked = validate("greeter");
  EXPECT_EQ(checked.exit_code, 2) << checked.out << checked.err;
  EXPECT_TRUE(
      has(checked.err, "plugin 'greeter' is ambiguous: 'greeter' is an alias of plugin 'hallo' (" +
                           file("hallo.so")))
      << checked.err;
  EXPECT_TRUE(has(checked.err, conflict)) << "validate reports the conflict too: " << checked.err;
  EXPECT_EQ(validate("hello").exit_code, 0);  // names still route

  auto called = plugboard({"call", "greeter", "--args", R"({"name":"x"})"});
  EXPECT_EQ(called.exit_code, 1);
  EXPECT_TRUE(has(called.out + called.err, "plugin 'greeter' is ambiguous"))
      << called.out << called.err;
}

TEST_F(RouteClaimsTest, AnAliasEqualToAnotherPluginsNameRoutesToNeither) {
  addHello();
  addHallo(R"(["HELLO"]  )");
  auto list = plugboard({"plugins", "list"});
  EXPECT_TRUE(has(list.out, "conflict: 'hello' is an alias of plugin 'hallo' (" + file("hallo.so") +
                                ") and the name of plugin 'hello' (" + file("hello.so") + ")"))
      << list.out;
  auto checked = validate("hello");
  EXPECT_EQ(checked.exit_code, 2);
  EXPECT_TRUE(has(checked.err, file("hallo.so")) && has(checked.err, file("hello.so")))
      << checked.err;
  EXPECT_EQ(validate("greeter").exit_code, 0);  // hello's own alias is nobody else's
}

TEST_F(RouteClaimsTest, InServeThePluginThatHeldAnAliasKeepsIt) {
  addHello();
  ServeProcess serve({"--plugins", dir().string()});
  HttpClient client(serve.port());
  ASSERT_EQ(answering(client, "greeter"), "hello@1.2.0");

  addHallo();  // sorts first: without the rule it would take "greeter" over
  ASSERT_TRUE(waitFor(client, "hallo", "hallo@1.2.0"));
  EXPECT_EQ(answering(client, "greeter"), "hello@1.2.0");
  const Json list = pluginList(client);
  ASSERT_EQ(list["conflicts"].size(), 1u) << list.dump();
  const std::string message = "'greeter' stays an alias of plugin 'hello' (" + file("hello.so") +
                              "); the claim as an alias of plugin 'hallo' (" + file("hallo.so") +
                              ") is refused";
  EXPECT_EQ(list["conflicts"][0]["message"], message);
  EXPECT_EQ(list["conflicts"][0]["holder"], "hello");

  // Upgrading the holder keeps its claim.
  writeFile(tmp_ / "staging",
            withEdit(readFile(plugin("hello")), R"("version":"1.2.0")", R"("version":"1.3.0")"));
  fs::rename(tmp_ / "staging", dir() / "hello.so");
  ASSERT_TRUE(waitFor(client, "hello", "hello@1.3.0"));
  EXPECT_EQ(answering(client, "greeter"), "hello@1.3.0");
  EXPECT_EQ(serve.stop(), 0);
  EXPECT_TRUE(has(serve.output(), "conflict: " + message)) << serve.output();
}

TEST_F(RouteClaimsTest, InServeAKeyNobodyHeldAnswersWhichFilesClaimIt) {
  addHello();
  addHallo();
  ServeProcess serve({"--plugins", dir().string()});
  HttpClient client(serve.port());
  auto r = client.request("POST", "/api/v1/plugins/greeter/template.execute", R"({"name":"x"})");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json reply = Json::parse(r.body);
  EXPECT_EQ(reply["phase"], "Error");
  EXPECT_TRUE(has(reply["message"], file("hallo.so")) && has(reply["message"], file("hello.so")))
      << r.body;
  EXPECT_EQ(answering(client, "hello"), "hello@1.2.0");
  EXPECT_EQ(answering(client, "hallo"), "hallo@1.2.0");
}

}  // namespace
}  // namespace plugboard::testing
