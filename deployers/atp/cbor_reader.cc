// deployers/atp/cbor_reader.cc: see cbor_reader.h.
#include "deployers/atp/cbor_reader.h"

#include <cbor.h>

#include <cstdio>
#include <limits>
#include <utility>

namespace plugboard::atp_deployer {
namespace {

CborReader& self(void* ctx) { return *static_cast<CborReader*>(ctx); }

void onUint8(void* c, uint8_t v) { self(c).addValue(Json(static_cast<std::uint64_t>(v))); }
void onUint16(void* c, uint16_t v) { self(c).addValue(Json(static_cast<std::uint64_t>(v))); }
void onUint32(void* c, uint32_t v) { self(c).addValue(Json(static_cast<std::uint64_t>(v))); }
void onUint64(void* c, uint64_t v) { self(c).addValue(Json(v)); }
// A negative integer arrives as n for the value -1 - n.
void onNegint(void* c, uint64_t n) {
  if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    self(c).addValue(Json(-1.0 - static_cast<double>(n)));
  } else {
    self(c).addValue(Json(-1 - static_cast<std::int64_t>(n)));
  }
}
void onNegint8(void* c, uint8_t n) { onNegint(c, n); }
void onNegint16(void* c, uint16_t n) { onNegint(c, n); }
void onNegint32(void* c, uint32_t n) { onNegint(c, n); }
void onBytesStart(void* c) { self(c).startChunks(false); }
void onBytes(void* c, cbor_data d, size_t n) { self(c).chunk(false, d, n); }
void onTextStart(void* c) { self(c).startChunks(true); }
void onText(void* c, cbor_data d, size_t n) { self(c).chunk(true, d, n); }
void onIndefArray(void* c) { self(c).startCollection(false, true, 0); }
void onArray(void* c, size_t n) { self(c).startCollection(false, false, n); }
void onIndefMap(void* c) { self(c).startCollection(true, true, 0); }
void onMap(void* c, size_t n) { self(c).startCollection(true, false, n); }
void onTag(void* c, uint64_t) { self(c).tag(); }
void onFloat(void* c, float v) { self(c).addValue(Json(static_cast<double>(v))); }
void onDouble(void* c, double v) { self(c).addValue(Json(v)); }
void onNull(void* c) { self(c).addValue(Json(nullptr)); }
void onBool(void* c, bool v) { self(c).addValue(Json(v)); }
void onBreak(void* c) { self(c).indefiniteBreak(); }

const cbor_callbacks kCallbacks = {
    .uint8 = onUint8,
    .uint16 = onUint16,
    .uint32 = onUint32,
    .uint64 = onUint64,
    .negint64 = onNegint,
    .negint32 = onNegint32,
    .negint16 = onNegint16,
    .negint8 = onNegint8,
    .byte_string_start = onBytesStart,
    .byte_string = onBytes,
    .string = onText,
    .string_start = onTextStart,
    .indef_array_start = onIndefArray,
    .array_start = onArray,
    .indef_map_start = onIndefMap,
    .map_start = onMap,
    .tag = onTag,
    .float2 = onFloat,
    .float4 = onFloat,
    .float8 = onDouble,
    .undefined = onNull,
    .null = onNull,
    .boolean = onBool,
    .indef_break = onBreak,
};

std::string keyText(const Json& key) {
  return key.is_string() ? key.get<std::string>()
                         : key.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

CborReader::CborReader(std::size_t item_limit, std::size_t max_depth, bool maps_only)
    : item_limit_(item_limit), max_depth_(max_depth), maps_only_(maps_only) {}

std::string CborReader::quote(std::string_view bytes, std::size_t most) {
  std::string out;
  for (unsigned char c : bytes) {
    if (out.size() >= most) {
      out += "...";
      break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

host::Status CborReader::feed(std::string_view bytes, std::vector<Json>& items) {
  if (!error_.empty()) return host::Error(error_);
  buffer_.append(bytes);
  out_ = &items;
  std::size_t pos = 0;
  while (pos < buffer_.size() && error_.empty()) {
    const auto* data = reinterpret_cast<const unsigned char*>(buffer_.data()) + pos;
    const std::size_t left = buffer_.size() - pos;
    if (stack_.empty() && item_bytes_ == 0 && maps_only_ && (data[0] & 0xe0) != 0xa0) {
      error_ = "sent bytes that are not an ATP message (a CBOR map): \"" +
               quote(std::string_view(buffer_).substr(pos)) + "\"";
      break;
    }
    const cbor_decoder_result r = cbor_stream_decode(data, left, &kCallbacks, this);
    if (r.status == CBOR_DECODER_NEDATA) {
      if (item_bytes_ + left > item_limit_ || r.required > item_limit_) {
        error_ = "sent a CBOR item larger than the limit of " + std::to_string(item_limit_) +
                 " bytes (option 'frame_limit')";
      }
      break;
    }
    if (r.status != CBOR_DECODER_FINISHED || r.read == 0) {
      if (error_.empty()) {
        error_ = "sent bytes that are not valid CBOR: \"" +
                 quote(std::string_view(buffer_).substr(pos)) + "\"";
      }
      break;
    }
    pos += r.read;
    item_bytes_ = stack_.empty() ? 0 : item_bytes_ + r.read;
    if (item_bytes_ > item_limit_) {
      error_ = "sent a CBOR item larger than the limit of " + std::to_string(item_limit_) +
               " bytes (option 'frame_limit')";
    }
  }
  buffer_.erase(0, pos);
  out_ = nullptr;
  if (!error_.empty()) return host::Error(error_);
  return host::Status::Ok();
}

void CborReader::fail(std::string why) {
  if (error_.empty()) error_ = std::move(why);
}

void CborReader::push(Frame frame) {
  if (stack_.size() >= max_depth_) {
    fail("sent a CBOR item nested deeper than " + std::to_string(max_depth_) + " levels");
    return;
  }
  stack_.push_back(std::move(frame));
}

void CborReader::addValue(Json value) {
  if (!error_.empty()) return;
  if (stack_.empty()) {
    if (out_ != nullptr) out_->push_back(std::move(value));
    return;
  }
  Frame& top = stack_.back();
  switch (top.kind) {
    case Frame::Kind::kTag:
      stack_.pop_back();
      addValue(std::move(value));
      return;
    case Frame::Kind::kBytes:
    case Frame::Kind::kText:
      fail("sent an indefinite-length string holding something other than its chunks");
      return;
    case Frame::Kind::kArray:
      top.value.push_back(std::move(value));
      break;
    case Frame::Kind::kMap:
      if (!top.has_key) {
        // Text, numbers and simple values only: a container's text as a key, dumped again
        // at each level of keys within keys, would grow without bound.
        if (value.is_structured() || value.is_binary()) {
          fail("sent a CBOR map whose key is an array, a map or a byte string");
          return;
        }
        top.key = keyText(value);
        top.has_key = true;
      } else {
        top.value[top.key] = std::move(value);
        top.has_key = false;
      }
      break;
  }
  if (!top.indefinite && --top.remaining == 0) closeTop();
}

void CborReader::closeTop() {
  Frame frame = std::move(stack_.back());
  stack_.pop_back();
  if (frame.kind == Frame::Kind::kText) {
    addValue(Json(std::move(frame.chunks)));
  } else if (frame.kind == Frame::Kind::kBytes) {
    addValue(Json::binary(std::vector<std::uint8_t>(frame.chunks.begin(), frame.chunks.end())));
  } else {
    addValue(std::move(frame.value));
  }
}

void CborReader::startCollection(bool map, bool indefinite, std::size_t size) {
  if (!error_.empty()) return;
  Json empty = map ? Json::object() : Json::array();
  if (!indefinite && size == 0) {
    addValue(std::move(empty));
    return;
  }
  Frame frame;
  frame.kind = map ? Frame::Kind::kMap : Frame::Kind::kArray;
  frame.indefinite = indefinite;
  frame.remaining = map ? 2 * static_cast<std::uint64_t>(size) : size;
  frame.value = std::move(empty);
  push(std::move(frame));
}

void CborReader::startChunks(bool text) {
  Frame frame;
  frame.kind = text ? Frame::Kind::kText : Frame::Kind::kBytes;
  frame.indefinite = true;
  push(std::move(frame));
}

void CborReader::chunk(bool text, const unsigned char* data, std::size_t len) {
  if (!error_.empty()) return;
  const auto kind = text ? Frame::Kind::kText : Frame::Kind::kBytes;
  if (!stack_.empty() &&
      (stack_.back().kind == Frame::Kind::kText || stack_.back().kind == Frame::Kind::kBytes)) {
    if (stack_.back().kind != kind) {
      fail("sent an indefinite-length string with a chunk of another type");
      return;
    }
    stack_.back().chunks.append(reinterpret_cast<const char*>(data), len);
    return;
  }
  if (text) {
    addValue(Json(std::string(reinterpret_cast<const char*>(data), len)));
  } else {
    addValue(Json::binary(std::vector<std::uint8_t>(data, data + len)));
  }
}

void CborReader::tag() {
  Frame frame;
  frame.kind = Frame::Kind::kTag;
  push(std::move(frame));
}

void CborReader::indefiniteBreak() {
  if (!error_.empty()) return;
  if (stack_.empty() || !stack_.back().indefinite || stack_.back().kind == Frame::Kind::kTag) {
    fail("sent a CBOR break outside an indefinite-length item");
    return;
  }
  if (stack_.back().kind == Frame::Kind::kMap && stack_.back().has_key) {
    fail("sent an indefinite-length map ending after a key without its value");
    return;
  }
  closeTop();
}

}  // namespace plugboard::atp_deployer
