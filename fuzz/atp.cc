// fuzz/atp.cc: what the atp deployer reads from an Arcaflow plugin's stdout
// (deployers/atp/atp_wire.h): a stream of CBOR items split by the CBOR reader, the hello's
// schema made a manifest, and the runtime messages after it, through the Wire as the
// child's reader thread feeds it.
//
// The first byte chooses the size of each read; the rest is the stream. The reader must
// never return an item that is not a map, and each event the wire makes must hold what
// the child then reads without further checks.
#include <string>
#include <vector>

#include "deployers/atp/atp_wire.h"
#include "deployers/atp/cbor_reader.h"
#include "fuzz/support.h"

namespace {

namespace atp = plugboard::atp_deployer;
using plugboard::Json;
using plugboard::deployer_common::WireEvent;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input = plugboard::fuzz::asText(data, size);
  const std::size_t piece = 1 + plugboard::fuzz::takeByte(input) % 64;

  atp::CborReader reader(1 << 16, 64, true);
  atp::WireSpec spec;
  spec.manifest = {"fuzzed", "1.0.0", "", {"success"}};
  spec.frame_limit = 1 << 16;
  spec.who = "plugin 'fuzzed' (atp)";
  auto wire = atp::makeAtpWire(spec);
  wire->greeting();
  bool wire_ok = true;
  std::vector<Json> items;
  std::vector<WireEvent> events;
  for (std::size_t at = 0; at < input.size(); at += piece) {
    const std::string_view bytes = input.substr(at, piece);
    items.clear();
    if (reader.feed(bytes, items).ok()) {
      for (const auto& item : items) {
        FUZZ_CHECK(item.is_object());
        item.dump(-1, ' ', false, Json::error_handler_t::replace);
        if (item.contains("schema")) {
          auto manifest = atp::manifestOf(item["schema"], spec.manifest);
          if (manifest) {
            FUZZ_CHECK((*manifest)["provides"].is_array());
            manifest->dump(-1, ' ', false, Json::error_handler_t::replace);
          }
        }
      }
    }
    if (!wire_ok) continue;
    events.clear();
    wire_ok = wire->feed(bytes, events).ok();
    for (const auto& e : events) {
      if (e.kind == WireEvent::Kind::kHello) {
        FUZZ_CHECK(e.manifest.is_object());
        // A call after the hello, as the runtime would send one.
        auto start = wire->execute(1, R"({"rpc":"template.execute","args":{"a":1}})");
        if (start) wire->cancel(1);
      } else if (e.kind == WireEvent::Kind::kResult) {
        FUZZ_CHECK(e.result.is_object() && e.result.contains("phase"));
      }
    }
  }
  wire->shutdown();
  return 0;
}
