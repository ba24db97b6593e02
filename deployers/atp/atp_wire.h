// deployers/atp/atp_wire.h: the Arcaflow Transport Protocol, version 3, as the Wire
// (deployers/common/wire.h) of one plugin process (docs/arcaflow.md).
//
// The runtime sends the start output (CBOR null); the plugin answers a hello {version: 3,
// schema}, which becomes the manifest (schema.h). A call is a WORK_START {id: step, config:
// args} with run id "pb-<call id>"; its answer is a WORK_DONE (its output id mapped to
// Succeeded or Failed), or an ERROR with step_fatal (an Error result). A non-fatal ERROR is
// a warning; a server_fatal ERROR, a run id no call has, a message that is not CBOR or not
// a map, or a hello of another version break the protocol, which ends the process and
// every call in it. debug_logs, cumulative in the plugin, become log lines of their new
// part. Cancel is the "cancel" SIGNAL for steps that declare a handler; shutdown is
// CLIENT_DONE. Thread-safety as wire.h says: execute() and cancel() take a lock.
#ifndef PLUGBOARD_DEPLOYERS_ATP_ATP_WIRE_H_
#define PLUGBOARD_DEPLOYERS_ATP_ATP_WIRE_H_

#include <functional>
#include <memory>

#include "deployers/atp/schema.h"
#include "deployers/common/wire.h"

namespace plugboard::atp_deployer {

inline constexpr int kAtpVersion = 3;

struct WireSpec {
  ManifestSpec manifest;
  std::size_t frame_limit = 0;  // the largest message, either way
  std::string who;              // "plugin 'name' (atp)", in results' messages
  // Called with the schema of each hello, on the child's reader thread (to cache it).
  std::function<void(const Json& schema)> on_schema;
};

std::unique_ptr<deployer_common::Wire> makeAtpWire(const WireSpec& spec);

}  // namespace plugboard::atp_deployer

#endif  // PLUGBOARD_DEPLOYERS_ATP_ATP_WIRE_H_
