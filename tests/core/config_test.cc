#include "core/runtime/config.h"

#include <gtest/gtest.h>

namespace plugboard::core {
namespace {

using Json = nlohmann::json;

std::string errorOf(const char* text) {
  auto c = parseConfig(text, "/etc/plugboard/cfg.toml");
  return c.ok() ? "ok" : c.error().message();
}

TEST(ConfigTest, DefaultsWhenEmpty) {
  auto c = parseConfig("", "cfg.toml");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->plugin_dirs.empty());
  EXPECT_EQ(c->server.listen, "127.0.0.1:7878");
  EXPECT_TRUE(c->watch);
  EXPECT_FALSE(c->server.poll_unknown);
  EXPECT_EQ(c->server.default_timeout.count(), 300'000);
  EXPECT_EQ(c->server.poll_interval.count(), 1000);
  EXPECT_EQ(c->server.reply_deadline, defaults::kReplyDeadline);
  EXPECT_EQ(c->server.body_limit, 1u << 20);
  EXPECT_TRUE(c->trust.strict);
  EXPECT_EQ(c->log_format, "text");
}

TEST(ConfigTest, ReadsEveryKey) {
  auto c = parseConfig(R"(
plugin_dirs = ["plugins", "/opt/more"]
watch = false
poll_unknown = true
listen = "0.0.0.0:9000"
token_file = "/var/run/argo/token"
workers = 4
call_threads = 8
default_timeout = "90s"
poll_interval = "250ms"
reply_deadline = "5s"
grace_period = 10
body_limit = 65536
max_connections = 500
deployer_dirs = ["deployers"]
registry = "registry.toml"
[deployers.process]
memory = "256M"
env = { LANG = "C" }
[deploy]
Crashy = "process"
big = { deployer = "process", memory = "1G" }
[log]
level = "debug"
format = "json"
[trust]
strict = false
owners = ["nobody"]
[trust.pins]
"Hello@1.2.0" = "ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
[priority]
legacy-executor-plugin = -5
)", "/etc/plugboard/cfg.toml");
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->plugin_dirs, (std::vector<std::filesystem::path>{"/etc/plugboard/plugins", "/opt/more"}));
  EXPECT_FALSE(c->watch);
  EXPECT_TRUE(c->server.poll_unknown);
  EXPECT_EQ(c->server.listen, "0.0.0.0:9000");
  EXPECT_EQ(c->token_file, "/var/run/argo/token");
  EXPECT_EQ(c->server.threads, 4);
  EXPECT_EQ(c->server.call_threads, 8);
  EXPECT_EQ(c->deployer_dirs, (std::vector<std::filesystem::path>{"/etc/plugboard/deployers"}));
  EXPECT_EQ(c->registry, "/etc/plugboard/registry.toml");
  EXPECT_EQ(c->deployer_options.at("process"), Json::parse(R"({"memory":"256M","env":{"LANG":"C"}})"));
  EXPECT_EQ(c->plugin_deploy.at("crashy").deployer, "process");
  EXPECT_EQ(c->plugin_deploy.at("big").options, Json::parse(R"({"memory":"1G"})"));
  EXPECT_EQ(c->server.default_timeout.count(), 90'000);
  EXPECT_EQ(c->server.poll_interval.count(), 250);
  EXPECT_EQ(c->server.reply_deadline.count(), 5000);
  EXPECT_EQ(c->server.grace_period.count(), 10'000);
  EXPECT_EQ(c->server.body_limit, 65536u);
  EXPECT_EQ(c->server.max_connections, 500u);
  EXPECT_EQ(c->log_level, "debug");
  EXPECT_EQ(c->log_format, "json");
  EXPECT_FALSE(c->trust.strict);
  EXPECT_EQ(c->trust.extra_owners, std::vector<uid_t>{65534});
  EXPECT_EQ(c->trust.pins.at("hello@1.2.0"),
            "abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789");
  EXPECT_EQ(c->priority.at("legacy-executor-plugin"), -5);
}

TEST(ConfigTest, ContainmentIsTheOperatorsToWiden) {
  auto empty = parseConfig("", "cfg.toml");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->containment.templates, host::PodSecurity::kBaseline);
  EXPECT_EQ(empty->containment.plugins, host::PodSecurity::kRestricted);
  EXPECT_TRUE(empty->containment.user_namespaces);
  auto wide = parseConfig(
      "[containment]\ntemplates = \"privileged\"\nexecutor_plugins = \"baseline\"\nuser_namespaces "
      "= false\n",
      "cfg.toml");
  ASSERT_TRUE(wide.ok()) << wide.error().message();
  EXPECT_EQ(wide->containment.templates, host::PodSecurity::kPrivileged);
  EXPECT_EQ(wide->containment.plugins, host::PodSecurity::kBaseline);
  EXPECT_FALSE(wide->containment.user_namespaces);
  EXPECT_EQ(errorOf("[containment]\ntemplates = \"root\"\n"),
            "/etc/plugboard/cfg.toml:2:13: 'containment.templates' must be restricted, "
            "baseline or privileged");
}

TEST(ConfigTest, NamesTheKeyFileAndLineOfEachMistake) {
  EXPECT_EQ(
      errorOf("workers = 2\nlissten = \"x\"\n"),
      "/etc/plugboard/cfg.toml:2:1: 'lissten' is not a configuration key (expected plugin_dirs, "
      "watch, listen, token_file, workers, call_threads, plugin_calls, plugin_queue, "
      "plugin_limits, default_timeout, poll_interval, reply_deadline, grace_period, body_limit, "
      "args_limit, max_nodes, poll_unknown, max_connections, log, trust, priority, "
      "deployer_dirs, deployers, registry, deploy, containment, reload_debounce)");
  EXPECT_EQ(errorOf("[deployers]\nprocess = 3\n"),
            "/etc/plugboard/cfg.toml:2:11: 'deployers.process' must be a table of options");
  EXPECT_EQ(errorOf("\nworkers = \"two\"\n"),
            "/etc/plugboard/cfg.toml:2:11: 'workers' must be an integer from 0 to 1024");
  EXPECT_EQ(errorOf("watch = 1"), "/etc/plugboard/cfg.toml:1:9: 'watch' must be true or false");
  EXPECT_EQ(errorOf("[log]\ncolour = \"red\""),
            "/etc/plugboard/cfg.toml:2:1: 'log.colour' is not a configuration key (expected level, format)");
  EXPECT_EQ(errorOf("[log]\nlevel = \"loud\""),
            "/etc/plugboard/cfg.toml:2:9: 'log.level' must be trace, debug, info, warn, error or off");
  EXPECT_EQ(errorOf("default_timeout = \"soon\""),
            "/etc/plugboard/cfg.toml:1:19: 'default_timeout' invalid duration 'soon': use a number "
            "with ms, s, m or h, e.g. 500ms, 30s, 1m30s");
  // Seconds times 1000 used to overflow (found by fuzz/config.cc).
  EXPECT_EQ(errorOf("default_timeout = 9223372036854775807"),
            "/etc/plugboard/cfg.toml:1:19: 'default_timeout' invalid duration "
            "'9223372036854775807': longer than 100 years");
  EXPECT_EQ(errorOf("grace_period = \"99999999999h\""),
            "/etc/plugboard/cfg.toml:1:16: 'grace_period' invalid duration '99999999999h': longer "
            "than 100 years");
  EXPECT_EQ(errorOf("[trust.pins]\nhello = \"123\""),
            "/etc/plugboard/cfg.toml:2:9: 'trust.pins.hello' must be a SHA-256 digest: 64 hex digits");
  EXPECT_EQ(errorOf("[trust]\nowners = [\"no-such-user-here\"]"),
            "/etc/plugboard/cfg.toml:2:11: 'trust.owners' names no user on this machine: 'no-such-user-here'");
  EXPECT_NE(errorOf("plugin_dirs = [").find("/etc/plugboard/cfg.toml:1:"), std::string::npos);
  EXPECT_EQ(errorOf("plugin_calls = 0"),
            "/etc/plugboard/cfg.toml:1:16: 'plugin_calls' must be an integer from 1 to 4096");
  EXPECT_EQ(
      errorOf("[plugin_limits.slow]\ncalls = 0"),
      "/etc/plugboard/cfg.toml:2:9: 'plugin_limits.slow.calls' must be an integer from 1 to 4096");
  EXPECT_EQ(errorOf("[plugin_limits.slow]\nqueued = 3"),
            "/etc/plugboard/cfg.toml:2:1: 'plugin_limits.slow.queued' is not a key of a plugin's "
            "limits (expected calls or queue)");
  EXPECT_EQ(errorOf("plugin_limits = 3"),
            "/etc/plugboard/cfg.toml:1:17: 'plugin_limits' must be a table of [plugin_limits.NAME] "
            "tables of calls and queue");
}

TEST(ConfigTest, ReadsEachPluginsBulkheadOverAnyOrderOfKeys) {
  // Tables come after the keys in TOML, and the reader sees keys in name order: an
  // override's missing key must still take plugin_queue, read after it.
  auto c = parseConfig("plugin_calls = 8\nplugin_queue = 5\n[plugin_limits.Slow]\ncalls = 2\n",
                       "cfg.toml");
  ASSERT_TRUE(c.ok()) << c.error().message();
  EXPECT_EQ(c->server.plugin_limits.calls, 8);
  EXPECT_EQ(c->server.plugin_limits.queue, 5);
  ASSERT_EQ(c->server.plugin_limits_by_name.count("slow"), 1u);
  EXPECT_EQ(c->server.plugin_limits_by_name.at("slow").calls, 2);
  EXPECT_EQ(c->server.plugin_limits_by_name.at("slow").queue, -1);  // plugin_queue's
}

}  // namespace
}  // namespace plugboard::core
