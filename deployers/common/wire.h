// deployers/common/wire.h: what a Child (child.h) says to its plugin and how it reads the
// answers: protocol v1 (docs/protocol.md) by default, or another protocol a deployer brings
// (the atp deployer's Arcaflow Transport Protocol). Part of library plugboard_deployer_common.
//
// A Wire turns the child's calls into bytes for its input and the bytes of its output into
// events. The Child owns the process, its threads, the calls in flight, cancel graces,
// crashes and the end; the Wire owns framing and meaning. One Wire per child process.
// Thread-safety: feed() runs on the child's reader thread only; execute(), cancel() and
// shutdown() may run on other threads at the same time, so a Wire with state shared
// between them guards it itself.
#ifndef PLUGBOARD_DEPLOYERS_COMMON_WIRE_H_
#define PLUGBOARD_DEPLOYERS_COMMON_WIRE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <plugboard/host/expected.h>
#include <plugboard/sdk.hpp>

namespace plugboard::deployer_common {

// One thing the plugin said.
struct WireEvent {
  enum class Kind {
    kHello,   // the handshake is complete: `manifest` is the plugin's manifest
    kResult,  // call `id` ended with `result` (a result JSON object)
    kLog,     // a log line `text` at `level` ("debug", "info", "warn" or "error"),
              // written during call `id` when `for_call`
  };
  Kind kind = Kind::kLog;
  std::uint64_t id = 0;
  Json manifest;
  Json result;
  bool out_of_memory = false;  // with kResult: the plugin reported a failed allocation
  std::string level = "info";
  std::string text;
  bool for_call = false;  // kLog: the plugin said which call the line belongs to
};

class Wire {
 public:
  virtual ~Wire() = default;
  // The bytes sent as soon as the child runs (v1's hello).
  virtual std::string greeting() = 0;
  // Reads bytes of the plugin's output, appending what they say to `events`. An error is
  // a break of the protocol that ends the child; its message completes "plugin 'x' ...",
  // e.g. "broke the protocol: ...".
  virtual host::Status feed(std::string_view bytes, std::vector<WireEvent>& events) = 0;
  // The bytes that start call `id` with `request` (one JSON object, a request as a native
  // plugin receives it). An error fails this call alone; its message follows "plugin 'x': ".
  virtual host::Expected<std::string> execute(std::uint64_t id, std::string_view request) = 0;
  // The bytes that ask call `id` to stop; empty when the plugin has no way to be asked: the
  // Child then waits for nothing (Child::cancel()).
  virtual std::string cancel(std::uint64_t id) = 0;
  // The bytes that tell the plugin to end once its calls are done.
  virtual std::string shutdown() = 0;
};

// Protocol v1 (plugboard/host/protocol.h): the hello offering version 1 and `frame_limit`.
std::unique_ptr<Wire> makeV1Wire(std::size_t frame_limit);

}  // namespace plugboard::deployer_common

#endif  // PLUGBOARD_DEPLOYERS_COMMON_WIRE_H_
