// deployers/atp/cbor_reader.h: a stream of concatenated CBOR items (RFC 8949), as the
// Arcaflow Transport Protocol sends them, turned into JSON values one item at a time.
//
// Built on libcbor's streaming decoder (cbor_stream_decode), which reads one header at a
// time: bytes are fed as they arrive, an incomplete item is kept until the rest comes, and
// a complete one is known by where it ends. Everything CBOR has decodes: maps with keys of
// text, numbers or simple values (an integer key becomes its decimal text, any other its
// JSON text; a key that is an array, a map or a byte string is an error),
// tags (the tagged value is kept, the tag dropped), half, single and double floats,
// indefinite-length strings, arrays and maps, byte strings (JSON binary values), undefined
// (null). Not thread-safe: one reader per stream.
#ifndef PLUGBOARD_DEPLOYERS_ATP_CBOR_READER_H_
#define PLUGBOARD_DEPLOYERS_ATP_CBOR_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <plugboard/host/expected.h>
#include <plugboard/sdk.hpp>

namespace plugboard::atp_deployer {

class CborReader {
 public:
  // `item_limit`: the most bytes one item may take; `max_depth`: the deepest nesting.
  // `maps_only`: every top-level item must be a map (an ATP message); anything else is an
  // error quoting the bytes, so that text printed into the stream is recognisable.
  CborReader(std::size_t item_limit, std::size_t max_depth, bool maps_only);

  // Appends `bytes`; moves every complete item into `items`. An error (not CBOR, an item
  // over a limit, a top-level item that is not a map) ends the stream: later feeds fail too.
  host::Status feed(std::string_view bytes, std::vector<Json>& items);

  // Bytes of an incomplete item: decoded so far, and held until the rest comes.
  std::size_t pending() const { return item_bytes_ + buffer_.size(); }

  // The start of `bytes` as a quote for messages: printable ASCII as it is, other bytes
  // as \xNN, cut after `most` characters.
  static std::string quote(std::string_view bytes, std::size_t most = 160);

  // Decoder callbacks (called by libcbor; public for its C callback table).
  void addValue(Json value);
  void startCollection(bool map, bool indefinite, std::size_t size);
  void startChunks(bool text);
  void chunk(bool text, const unsigned char* data, std::size_t len);
  void tag();
  void indefiniteBreak();
  void fail(std::string why);

 private:
  struct Frame {
    enum class Kind { kArray, kMap, kTag, kBytes, kText };
    Kind kind = Kind::kArray;
    bool indefinite = false;
    std::uint64_t remaining = 0;  // entries still to come (a map counts keys and values)
    Json value;
    bool has_key = false;
    std::string key;
    std::string chunks;
  };

  void push(Frame frame);
  void closeTop();

  const std::size_t item_limit_, max_depth_;
  const bool maps_only_;
  std::string buffer_;  // bytes not yet decoded
  std::vector<Frame> stack_;
  std::size_t item_bytes_ = 0;  // bytes of the item being decoded, decoded so far
  std::vector<Json>* out_ = nullptr;
  std::string error_;
};

}  // namespace plugboard::atp_deployer

#endif  // PLUGBOARD_DEPLOYERS_ATP_CBOR_READER_H_
