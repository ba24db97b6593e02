// deployers/common/wire_v1.cc: protocol v1 as a Wire (wire.h): newline-delimited JSON
// frames, checked by the host kit (plugboard/host/protocol.h).
#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>

#include <plugboard/host/protocol.h>

#include "deployers/common/wire.h"

namespace plugboard::deployer_common {
namespace {

class V1Wire : public Wire {
 public:
  explicit V1Wire(std::size_t frame_limit) : frame_limit_(frame_limit), reader_(frame_limit) {}

  std::string greeting() override {
    return host::frame({{"type", "hello"},
                        {"protocols", {host::kProtocolVersion}},
                        {"frame_limit", frame_limit_}});
  }

  host::Status feed(std::string_view bytes, std::vector<WireEvent>& events) override {
    lines_.clear();
    if (host::Status fed = reader_.feed(bytes, lines_); !fed)
      return host::Error("broke the protocol: " + fed.error().message());
    for (const auto& line : lines_) {
      if (host::Status st = handleLine(line, events); !st) return st;
    }
    return host::Status::Ok();
  }

  host::Expected<std::string> execute(std::uint64_t id, std::string_view request) override {
    std::string f = R"({"type":"execute","id":)" + std::to_string(id) + R"(,"request":)";
    const std::size_t start = f.size();
    if (start + request.size() + 1 > frame_limit_) {
      // Sent, it would break the channel for every call in flight: this call alone fails.
      return host::Error("the request of " + std::to_string(request.size()) +
                         " bytes is more than the protocol's frame limit of " +
                         std::to_string(frame_limit_) +
                         " bytes allows (option 'frame_limit'); it was not sent");
    }
    f.append(request);
    // Raw newlines in the request can only be whitespace between tokens (JSON strings
    // escape them); a frame must not contain any.
    std::replace_if(
        f.begin() + static_cast<std::ptrdiff_t>(start), f.end(),
        [](char c) { return c == '\n' || c == '\r'; }, ' ');
    f += "}\n";
    return f;
  }

  std::string cancel(std::uint64_t id) override {
    return host::frame({{"type", "cancel"}, {"id", id}});
  }

  std::string shutdown() override { return host::frame({{"type", "shutdown"}}); }

 private:
  host::Status handleLine(const std::string& line, std::vector<WireEvent>& events) {
    const auto broke = [](const std::string& why) {
      return host::Error("broke the protocol: " + why);
    };
    auto message = host::parseFrame(line, host::Sender::kPlugin);
    if (!message) return broke(message.error().message());
    Json& m = *message;
    const std::string& type = m["type"].get_ref<const std::string&>();
    WireEvent event;
    if (type == "hello") {
      if (greeted_) return broke("it said 'hello' twice");
      if (m["protocol"] != host::kProtocolVersion) {
        return broke("it chose protocol " + m["protocol"].dump() +
                     ", which was not offered (this runtime speaks 1)");
      }
      greeted_ = true;
      event.kind = WireEvent::Kind::kHello;
      event.manifest = std::move(m["manifest"]);
    } else if (type == "result") {
      if (!greeted_) return broke("'result' before 'hello'");
      event.kind = WireEvent::Kind::kResult;
      event.id = m["id"].get<std::uint64_t>();
      event.out_of_memory = m.value("out_of_memory", false);
      event.result = std::move(m["result"]);
    } else {
      // "log", the only other type parseFrame admits from a plugin. It may come before
      // hello: plugboard-host forwards what a plugin logs while it loads.
      event.kind = WireEvent::Kind::kLog;
      event.level = m.value("level", "info");
      event.text = m["message"].get<std::string>();
      if (m.contains("id")) {
        event.for_call = true;
        event.id = m["id"].get<std::uint64_t>();
      }
    }
    events.push_back(std::move(event));
    return host::Status::Ok();
  }

  const std::size_t frame_limit_;
  host::FrameReader reader_;
  std::vector<std::string> lines_;
  bool greeted_ = false;
};

}  // namespace

std::unique_ptr<Wire> makeV1Wire(std::size_t frame_limit) {
  return std::make_unique<V1Wire>(frame_limit);
}

}  // namespace plugboard::deployer_common
