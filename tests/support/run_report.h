// tests/support/run_report.h: reading the report of `plugboard run --output json`.
#ifndef PLUGBOARD_TESTS_SUPPORT_RUN_REPORT_H_
#define PLUGBOARD_TESTS_SUPPORT_RUN_REPORT_H_

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace plugboard::testing {

// The status of step `id` in `report`; a missing step fails the test.
inline nlohmann::json reportStep(const nlohmann::json& report, const std::string& id) {
  for (const auto& s : report["steps"]) {
    if (s["id"] == id) return s;
  }
  ADD_FAILURE() << "no step " << id;
  return nlohmann::json::object();
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_RUN_REPORT_H_
