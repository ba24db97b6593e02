// fuzz/protocol.cc: protocol v1 as each side reads it (plugboard/host/protocol.h): the
// frame reader splitting a stream into lines, and the message checks of both sides, the
// runtime reading a plugin's frames (deployers/common/child.cc) and plugboard-host
// reading the runtime's (tools/plugboard-host/main.cc).
//
// The first byte chooses how the stream arrives (the size of each read) and the second the
// frame limit; the rest is the stream. Every line is checked as each side checks it, and
// a message that passes must hold what that side then reads without further checks.
#include <string>
#include <vector>

#include <plugboard/host/protocol.h>

#include "fuzz/support.h"

namespace {

namespace host = plugboard::host;
using host::Json;

bool isId(const Json& m) { return m.contains("id") && m["id"].is_number_unsigned(); }

// What plugboard-host reads of a message from the runtime once parseFrame() passed it.
void checkFromRuntime(const Json& m) {
  const std::string& type = m["type"].get_ref<const std::string&>();
  if (type == "hello") {
    FUZZ_CHECK(m["protocols"].is_array() && !m["protocols"].empty());
    for (const auto& v : m["protocols"]) FUZZ_CHECK(v.is_number_integer());
  } else if (type == "execute") {
    FUZZ_CHECK(isId(m));
    FUZZ_CHECK(m["request"].is_object());
    m["request"].dump();
  } else if (type == "cancel") {
    FUZZ_CHECK(isId(m));
  } else {
    FUZZ_CHECK(type == "shutdown");
  }
}

// What the runtime reads of a message from a plugin once parseFrame() passed it.
void checkFromPlugin(const Json& m) {
  const std::string& type = m["type"].get_ref<const std::string&>();
  if (type == "hello") {
    FUZZ_CHECK(m["protocol"].is_number_integer());
    FUZZ_CHECK(m["manifest"].is_object());
  } else if (type == "result") {
    FUZZ_CHECK(isId(m));
    FUZZ_CHECK(m["result"].is_object());
    m["result"].dump(-1, ' ', false, Json::error_handler_t::replace);
  } else {
    FUZZ_CHECK(type == "log");
    FUZZ_CHECK(m["message"].is_string());
    FUZZ_CHECK(!m.contains("id") || isId(m));
    const std::string level = m.value("level", "info");
    FUZZ_CHECK(level == "debug" || level == "info" || level == "warn" || level == "error");
  }
}

void checkLine(const std::string& line, host::Sender from) {
  auto message = host::parseFrame(line, from);
  if (!message) {
    FUZZ_CHECK(!message.error().message().empty());
    return;
  }
  // The JSON library reads "{...}\0..." as the object before the NUL: no such line passes.
  FUZZ_CHECK(line.find('\0') == std::string::npos);
  if (from == host::Sender::kRuntime) {
    checkFromRuntime(*message);
  } else {
    checkFromPlugin(*message);
  }
  // Sent again, the message is one line that the same side accepts as the same message.
  const std::string again = host::frame(*message);
  FUZZ_CHECK(!again.empty() && again.back() == '\n');
  FUZZ_CHECK(again.find('\n') == again.size() - 1);
  auto reparsed = host::parseFrame(std::string_view(again).substr(0, again.size() - 1), from);
  FUZZ_CHECK(reparsed.ok());
  FUZZ_CHECK(*reparsed == *message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input = plugboard::fuzz::asText(data, size);
  const std::size_t piece = plugboard::fuzz::takeByte(input) % 64 + 1;
  const std::uint8_t limit_byte = plugboard::fuzz::takeByte(input);
  const std::size_t limit = limit_byte == 0 ? host::kDefaultFrameLimit : limit_byte * 4u;
  host::FrameReader reader(limit);
  std::vector<std::string> lines;
  std::size_t delivered = 0;
  while (!input.empty()) {
    const std::string_view bytes = input.substr(0, piece);
    input.remove_prefix(bytes.size());
    lines.clear();
    const auto st = reader.feed(bytes, lines);
    for (const auto& line : lines) {
      FUZZ_CHECK(line.size() <= limit);
      FUZZ_CHECK(line.find('\n') == std::string::npos);
      checkLine(line, host::Sender::kRuntime);
      checkLine(line, host::Sender::kPlugin);
      delivered += line.size() + 1;
    }
    if (!st) return 0;  // the rest of the stream cannot be trusted: both sides stop
    FUZZ_CHECK(reader.pending() <= limit);
    FUZZ_CHECK(delivered + reader.pending() == size - 2 - input.size());
  }
  return 0;
}
