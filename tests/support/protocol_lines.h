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

// Checks a conversation that ran under a hello's `frame_limit` of `limit` bytes, in which
// call 1 returned a result too large for it and call 2 logged a message too long for it:
// every frame keeps to the limit, call 1 is an Error naming `plugin` and the limit, a log
// message was cut to fit, and call 2 still succeeded (the channel stayed in step).
inline void expectFramesKeptWithin(std::size_t limit, const std::string& plugin,
                                   const std::string& out) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) EXPECT_LE(line.size(), limit) << line.substr(0, 80);
  const auto messages = parseLines(out);
  const nlohmann::json* one = resultFor(messages, 1);
  const nlohmann::json* two = resultFor(messages, 2);
  ASSERT_TRUE(one && two) << out.substr(0, 400);
  const std::string message = (*one)["result"].value("message", "");
  EXPECT_EQ((*one)["result"]["phase"], "Error");
  EXPECT_EQ(message.find("plugin '" + plugin +
                         "' returned a result too large for the protocol: its frame of "),
            0u)
      << *one;
  EXPECT_NE(message.find("exceeds the frame limit of " + std::to_string(limit) + " bytes"),
            std::string::npos)
      << *one;
  EXPECT_EQ((*two)["result"]["phase"], "Succeeded") << *two;
  bool cut = false;
  for (const auto& m : messages) {
    cut = cut || (m["type"] == "log" &&
                  m.value("message", "").find("[cut to fit the protocol's frame limit]") !=
                      std::string::npos);
  }
  EXPECT_TRUE(cut) << out.substr(0, 400);
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_PROTOCOL_LINES_H_
