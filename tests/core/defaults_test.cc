// docs/configuration.md against the configuration reader and core/base/defaults.h: every key
// the reader knows has a row in the docs' table, and the defaults the table states are
// the ones the code uses.
#include "core/base/defaults.h"

#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "core/runtime/config.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"

namespace plugboard::core {
namespace {

// The rows of the "| key | type | default | meaning |" table, by key.
std::map<std::string, std::vector<std::string>> keyTable() {
  std::istringstream doc(
      plugboard::testing::readFile(plugboard::testing::sourceDir() / "docs/configuration.md"));
  std::map<std::string, std::vector<std::string>> rows;
  for (std::string line; std::getline(doc, line);) {
    if (!line.starts_with("| `")) continue;
    std::vector<std::string> cells;
    std::istringstream cols(line.substr(1));
    for (std::string cell; std::getline(cols, cell, '|');) {
      cell.erase(0, cell.find_first_not_of(' '));
      cell.erase(cell.find_last_not_of(' ') + 1);
      cells.push_back(cell);
    }
    std::string key = cells.at(0).substr(1, cells.at(0).find('`', 1) - 1);
    rows[key.substr(0, key.find(".NAME"))] = cells;
  }
  return rows;
}

std::string quotedCode(std::string_view s) { return "`\"" + std::string(s) + "\"`"; }
std::string code(const std::string& s) { return "`" + s + "`"; }

TEST(DefaultsTest, TheConfigurationDocsListEveryKey) {
  const auto rows = keyTable();
  for (const auto& key : configKeys())
    EXPECT_EQ(rows.count(key), 1u) << key << " has no row in docs/configuration.md";
  EXPECT_EQ(rows.size(), configKeys().size())
      << "docs/configuration.md has a row for a key the reader does not know";
}

TEST(DefaultsTest, TheConfigurationDocsStateTheDefaultsInUse) {
  const auto rows = keyTable();
  const std::map<std::string, std::string> expected = {
      {"watch", code(defaults::kWatch ? "true" : "false")},
      {"poll_unknown", code(defaults::kPollUnknown ? "true" : "false")},
      {"listen", quotedCode(defaults::kListen)},
      {"workers", code(std::to_string(defaults::kWorkers))},
      {"default_timeout", quotedCode(formatDuration(defaults::kTimeout))},
      {"poll_interval", quotedCode(formatDuration(defaults::kPollInterval))},
      {"grace_period", quotedCode(formatDuration(defaults::kGracePeriod))},
      {"body_limit", code(std::to_string(defaults::kBodyLimit))},
      {"args_limit", code(std::to_string(defaults::kArgsLimit))},
      {"max_nodes", code(std::to_string(defaults::kMaxNodes))},
      {"plugin_calls", code(std::to_string(defaults::kPluginCalls))},
      {"plugin_queue", code(std::to_string(defaults::kPluginQueue))},
      {"log.level", quotedCode(defaults::kLogLevel)},
      {"log.format", quotedCode(defaults::kLogFormat)},
  };
  for (const auto& [key, value] : expected) {
    ASSERT_EQ(rows.count(key), 1u) << key;
    EXPECT_EQ(rows.at(key).at(2), value) << key;
  }
  // And the reader starts from them.
  auto empty = parseConfig("", "cfg.toml");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->server.default_timeout, defaults::kTimeout);
  EXPECT_EQ(empty->server.listen, defaults::kListen);
  EXPECT_EQ(empty->log_level, defaults::kLogLevel);
}

}  // namespace
}  // namespace plugboard::core
