// tests/support/run_report.h: reading the report of `plugboard run --output json`.
#ifndef PLUGBOARD_TESTS_SUPPORT_RUN_REPORT_H_
#define PLUGBOARD_TESTS_SUPPORT_RUN_REPORT_H_

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/plugin_dir.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {

// The status of step `id` in `report`; a missing step fails the test.
inline nlohmann::json reportStep(const nlohmann::json& report, const std::string& id) {
  for (const auto& s : report["steps"]) {
    if (s["id"] == id) return s;
  }
  ADD_FAILURE() << "no step " << id;
  return nlohmann::json::object();
}

// A fixture that runs TOML workflows through the real binary on the bundled plugins.
class TomlRunFixture : public ::testing::Test {
 protected:
  // Runs `workflow` (TOML text) with --output json and returns the report; the run must
  // end with exit 0 or 1 (it ran), `extra` are more arguments.
  nlohmann::json runJson(const std::string& workflow, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"run", dir_.write("wf.toml", workflow), "--plugins",
                                     dir_.plugins(), "--output", "json", "--poll-interval", "10ms"};
    args.insert(args.end(), extra.begin(), extra.end());
    last_ = plugboard(args);
    EXPECT_TRUE(last_.exit_code == 0 || last_.exit_code == 1) << last_.err << last_.out;
    return nlohmann::json::parse(last_.out);
  }

  PluginDir dir_;
  RunResult last_;
};

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_RUN_REPORT_H_
