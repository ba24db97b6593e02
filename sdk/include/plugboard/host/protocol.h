// plugboard/host/protocol.h: out-of-process plugin protocol v1, frame by frame.
//
// The runtime and an out-of-process plugin (a process, a container, a Python module)
// exchange newline-delimited JSON over the plugin's stdin and stdout: one JSON object per
// line, at most `limit` bytes (or over two descriptors kProtocolFdsVariable names).
// docs/protocol.md is the specification; this file turns bytes into checked messages and
// back, for the runtime, plugboard-host and any deployer that speaks the protocol. Every message
// has a "type":
//   hello     {"type":"hello","protocols":[1],"frame_limit":N?}       runtime -> plugin
//             {"type":"hello","protocol":1,"manifest":{...}}          plugin -> runtime
//   execute   {"type":"execute","id":N,"request":{...}}               runtime -> plugin
//   result    {"type":"result","id":N,"result":{...},"out_of_memory":true?}  plugin -> runtime
//   log       {"type":"log","id":N?,"level":"info","message":"..."}   plugin -> runtime
//   cancel    {"type":"cancel","id":N}                                runtime -> plugin
//   shutdown  {"type":"shutdown"}                                     runtime -> plugin
// Value types and free functions, except FrameReader (one per stream, not thread-safe).
#ifndef PLUGBOARD_HOST_PROTOCOL_H_
#define PLUGBOARD_HOST_PROTOCOL_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "plugboard/host/expected.h"

namespace plugboard::host {

using Json = nlohmann::json;

inline constexpr int kProtocolVersion = 1;
// The most bytes a frame may hold (its newline excluded) unless the runtime's hello says
// otherwise in "frame_limit"; that value, at least kMinFrameLimit, then binds both sides.
inline constexpr std::size_t kDefaultFrameLimit = 16 << 20;
inline constexpr std::size_t kMinFrameLimit = 4096;
// The environment variable that names the channel's descriptors when they are not stdin
// and stdout: "IN,OUT" (the runtime's frames come on IN, the plugin's go to OUT).
inline constexpr const char* kProtocolFdsVariable = "PLUGBOARD_PROTOCOL_FDS";

// Which side sent a message; each side may send only its own types.
enum class Sender { kRuntime, kPlugin };

// Checks one frame (without its newline) sent by `from`: a JSON object whose "type" is
// one `from` may send, with the members that type requires (and the optional members
// "frame_limit" of the runtime's hello and "out_of_memory" of a result well-typed). The error says
// what is wrong and quotes the start of the line, so that a plugin's stray print is recognisable. A
// message nested deeper than kMaxJsonDepth or holding a NUL byte is refused
// (plugboard/host/json_text.h).
Expected<Json> parseFrame(std::string_view line, Sender from);

// The frame for `message`: compact JSON and a newline. The JSON library escapes every
// control character, so a frame never contains a newline of its own.
std::string frame(const Json& message);

// Splits a byte stream into lines. A line longer than the limit is an error (the rest
// of the stream cannot be trusted afterwards).
class FrameReader {
 public:
  explicit FrameReader(std::size_t limit = kDefaultFrameLimit) : limit_(limit) {}
  // Appends `bytes`; moves every complete line (without its newline) into `lines`.
  Status feed(std::string_view bytes, std::vector<std::string>& lines);
  // The limit for the lines still to come (a plugin adopts the one the runtime's hello gives).
  void setLimit(std::size_t limit) { limit_ = limit; }
  std::size_t limit() const { return limit_; }
  // Bytes of an incomplete line still held.
  std::size_t pending() const { return buffer_.size(); }

 private:
  std::size_t limit_;
  std::string buffer_;
};

}  // namespace plugboard::host

#endif  // PLUGBOARD_HOST_PROTOCOL_H_
