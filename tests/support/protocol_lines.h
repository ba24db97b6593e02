// tests/support/protocol_lines.h: protocol v1 conversations as a test drives them through
// a plugin host's stdin and stdout (plugboard-host, a Python plugin).
#ifndef PLUGBOARD_TESTS_SUPPORT_PROTOCOL_LINES_H_
#define PLUGBOARD_TESTS_SUPPORT_PROTOCOL_LINES_H_

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace plugboard::testing {

// The messages as frames: one JSON object per line.
inline std::string lines(const std::vector<nlohmann::json>& messages) {
  std::string out;
  for (const auto& m : messages) out += m.dump() + "\n";
  return out;
}

// The frames of `out`; a line that is not JSON fails the test.
inline std::vector<nlohmann::json> parseLines(const std::string& out) {
  std::vector<nlohmann::json> messages;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not a protocol line on stdout: " << line;
    messages.push_back(j);
  }
  return messages;
}

// The `result` message for call `id`, or nullptr.
inline const nlohmann::json* resultFor(const std::vector<nlohmann::json>& messages, int id) {
  for (const auto& m : messages) {
    if (m["type"] == "result" && m["id"] == id) return &m;
  }
  return nullptr;
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_PROTOCOL_LINES_H_
