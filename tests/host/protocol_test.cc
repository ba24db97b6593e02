#include "plugboard/host/protocol.h"

#include <gtest/gtest.h>

#include "plugboard/host/json_text.h"
#include "tests/support/deep_json.h"

namespace plugboard::host {
namespace {

std::string errorOf(std::string_view line, Sender from) {
  auto m = parseFrame(line, from);
  return m.ok() ? "ok" : m.error().message();
}

TEST(ProtocolTest, AcceptsEveryMessageFromItsOwnSide) {
  for (const char* line :
       {R"({"type":"hello","protocols":[1]})",
        R"({"type":"execute","id":7,"request":{"rpc":"template.execute","args":{}}})",
        R"({"type":"cancel","id":7})", R"({"type":"shutdown"})"}) {
    EXPECT_EQ(errorOf(line, Sender::kRuntime), "ok") << line;
  }
  for (const char* line : {R"({"type":"hello","protocol":1,"manifest":{"name":"x"}})",
                           R"({"type":"result","id":7,"result":{"phase":"Succeeded"}})",
                           R"({"type":"log","level":"warn","message":"careful"})",
                           R"({"type":"log","id":7,"message":"about call 7"})"}) {
    EXPECT_EQ(errorOf(line, Sender::kPlugin), "ok") << line;
  }
}

TEST(ProtocolTest, RefusesWrongSidesShapesAndStrayOutput) {
  EXPECT_EQ(errorOf("Hello from print()", Sender::kPlugin),
            "not a protocol message (a JSON object per line): 'Hello from print()'");
  EXPECT_EQ(
      errorOf(R"({"type":"execute","id":1,"request":{}})", Sender::kPlugin),
      R"(unknown message type 'execute' from the plugin: '{"type":"execute","id":1,"request":{}}')");
  EXPECT_EQ(
      errorOf(R"({"type":"result","id":-1,"result":{}})", Sender::kPlugin),
      R"('result' message needs a non-negative integer "id": '{"type":"result","id":-1,"result":{}}')");
  EXPECT_EQ(errorOf(R"({"type":"hello","protocol":1})", Sender::kPlugin).substr(0, 48),
            R"('hello' message needs the plugin's "manifest" ob)");
  EXPECT_EQ(
      errorOf(R"({"type":"log","level":"loud","message":"x"})", Sender::kPlugin).substr(0, 60),
      R"('log' message has a "level" other than debug, info, warn or )");
  EXPECT_EQ(errorOf(R"({"id":1})", Sender::kRuntime), R"(message without a "type": '{"id":1}')");
  const std::string long_line(500, 'x');
  EXPECT_EQ(errorOf(long_line, Sender::kPlugin),
            "not a protocol message (a JSON object per line): '" + std::string(80, 'x') + "...'");
}

TEST(ProtocolTest, ChecksTheFrameLimitOfAHelloAndTheOutOfMemoryFlagOfAResult) {
  EXPECT_EQ(errorOf(R"({"type":"hello","protocols":[1],"frame_limit":4096})", Sender::kRuntime),
            "ok");
  for (const char* limit : {"4095", "-1", "\"16M\"", "1.5e6"}) {
    const std::string line =
        std::string(R"({"type":"hello","protocols":[1],"frame_limit":)") + limit + "}";
    EXPECT_EQ(
        errorOf(line, Sender::kRuntime)
            .find(
                R"('hello' message has a "frame_limit" that is not an integer of at least 4096: )"),
        0u)
        << line;
  }
  EXPECT_EQ(
      errorOf(R"({"type":"result","id":1,"result":{},"out_of_memory":true})", Sender::kPlugin),
      "ok");
  EXPECT_EQ(errorOf(R"({"type":"result","id":1,"result":{},"out_of_memory":1})", Sender::kPlugin)
                .find(R"('result' message has an "out_of_memory" that is not true or false: )"),
            0u);
}

TEST(ProtocolTest, ReaderTakesANewLimitForTheLinesToCome) {
  FrameReader reader(8);
  std::vector<std::string> lines;
  ASSERT_TRUE(reader.feed("{\"a\":1}\n", lines).ok());
  reader.setLimit(16);
  EXPECT_EQ(reader.limit(), 16u);
  ASSERT_TRUE(reader.feed("{\"abcdefgh\":1}\n", lines).ok());
  EXPECT_EQ(lines.size(), 2u);
}

// Copying or writing a value recurses once per level: a frame nested some tens of
// thousands of levels deep would break the stack of the side that reads it.
TEST(ProtocolTest, RefusesMessagesNestedBeyondTheLimit) {
  using plugboard::testing::kStackBreakingDepth;
  using plugboard::testing::nestedArrays;
  const auto result = [](std::size_t depth) {
    return R"({"type":"result","id":1,"result":{"x":)" + nestedArrays(depth) + "}}";
  };
  EXPECT_EQ(errorOf(result(kMaxJsonDepth - 2), Sender::kPlugin), "ok");
  EXPECT_TRUE(errorOf(result(kMaxJsonDepth - 1), Sender::kPlugin)
                  .starts_with("a protocol message nested deeper than 512 levels: '{"));
  EXPECT_NE(errorOf(result(kStackBreakingDepth), Sender::kPlugin).find("nested deeper"),
            std::string::npos);
  const std::string execute =
      R"({"type":"execute","id":1,"request":{"args":)" + nestedArrays(kStackBreakingDepth) + "}}";
  EXPECT_NE(errorOf(execute, Sender::kRuntime).find("nested deeper"), std::string::npos);
}

// The JSON library takes a NUL byte between tokens for the end of the text: without the
// check, this line passed for a shutdown (found by fuzz/argo_args.cc's check against a
// parse of the whole text).
TEST(ProtocolTest, RefusesMessagesHoldingANulByte) {
  using namespace std::string_view_literals;
  EXPECT_EQ(errorOf("{\"type\":\"shutdown\"}\0garbage"sv, Sender::kRuntime),
            "a protocol message holds a NUL byte, which JSON never does: "
            "'{\"type\":\"shutdown\"} garbage'");
}

TEST(ProtocolTest, FramesAreOneLineEvenWithNewlinesInside) {
  const Json m = {{"type", "log"}, {"message", "two\nlines"}};
  const std::string f = frame(m);
  EXPECT_EQ(f.find('\n'), f.size() - 1);
  EXPECT_EQ(*parseFrame(std::string_view(f).substr(0, f.size() - 1), Sender::kPlugin), m);
}

TEST(ProtocolTest, ReaderSplitsLinesAcrossChunksAndEnforcesTheLimit) {
  FrameReader reader(32);
  std::vector<std::string> lines;
  ASSERT_TRUE(reader.feed("{\"a\":1}\n{\"b\"", lines).ok());
  ASSERT_TRUE(reader.feed(":2}\n{", lines).ok());
  EXPECT_EQ(lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"}));
  EXPECT_EQ(reader.pending(), 1u);
  EXPECT_FALSE(reader.feed(std::string(40, 'x'), lines).ok());
  FrameReader strict(8);
  std::vector<std::string> more;
  auto st = strict.feed("0123456789\n", more);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message(), "a protocol frame of 10 bytes exceeds the limit of 8");
}

}  // namespace
}  // namespace plugboard::host
