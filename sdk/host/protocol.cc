#include "plugboard/host/protocol.h"

#include <cstdint>

#include "plugboard/host/json_text.h"

namespace plugboard::host {
namespace {

std::string quoted(std::string_view line) {
  constexpr std::size_t kShown = 80;
  std::string shown(line.substr(0, kShown));
  for (char& c : shown) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  return "'" + shown + (line.size() > kShown ? "...'" : "'");
}

bool isId(const Json& m) {
  auto id = m.find("id");
  return id != m.end() && id->is_number_unsigned();
}

}  // namespace

Expected<Json> parseFrame(std::string_view line, Sender from) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (holdsNul(line)) return Error("a protocol message " + std::string(kNulText) + ": " + quoted(line));
  if (jsonDeeperThan(line)) return Error("a protocol message " + tooDeepText() + ": " + quoted(line));
  Json m = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (m.is_discarded() || !m.is_object()) {
    return Error("not a protocol message (a JSON object per line): " + quoted(line));
  }
  auto type_it = m.find("type");
  if (type_it == m.end() || !type_it->is_string())
    return Error("message without a \"type\": " + quoted(line));
  const std::string type = type_it->get<std::string>();
  auto bad = [&](const std::string& what) {
    return Error("'" + type + "' message " + what + ": " + quoted(line));
  };

  if (from == Sender::kRuntime) {
    if (type == "hello") {
      auto p = m.find("protocols");
      if (p == m.end() || !p->is_array() || p->empty())
        return bad("needs \"protocols\", a list of versions");
      for (const auto& v : *p) {
        if (!v.is_number_integer()) return bad("lists a version that is not an integer");
      }
      auto limit = m.find("frame_limit");
      if (limit != m.end() &&
          (!limit->is_number_unsigned() || limit->get<std::uint64_t>() < kMinFrameLimit)) {
        return bad("has a \"frame_limit\" that is not an integer of at least " +
                   std::to_string(kMinFrameLimit));
      }
    } else if (type == "execute") {
      if (!isId(m)) return bad("needs a non-negative integer \"id\"");
      if (!m.contains("request") || !m["request"].is_object())
        return bad("needs an object \"request\"");
    } else if (type == "cancel") {
      if (!isId(m)) return bad("needs a non-negative integer \"id\"");
    } else if (type != "shutdown") {
      return Error("unknown message type '" + type + "' from the runtime: " + quoted(line));
    }
    return m;
  }

  if (type == "hello") {
    auto p = m.find("protocol");
    if (p == m.end() || !p->is_number_integer())
      return bad("needs \"protocol\", the chosen version");
    if (!m.contains("manifest") || !m["manifest"].is_object())
      return bad("needs the plugin's \"manifest\" object");
  } else if (type == "result") {
    if (!isId(m)) return bad("needs a non-negative integer \"id\"");
    if (!m.contains("result") || !m["result"].is_object()) return bad("needs an object \"result\"");
    if (m.contains("out_of_memory") && !m["out_of_memory"].is_boolean())
      return bad("has an \"out_of_memory\" that is not true or false");
  } else if (type == "log") {
    auto msg = m.find("message");
    if (msg == m.end() || !msg->is_string()) return bad("needs a string \"message\"");
    if (m.contains("id") && !isId(m))
      return bad("has an \"id\" that is not a non-negative integer");
    auto level = m.find("level");
    if (level != m.end()) {
      static const char* kLevels[] = {"debug", "info", "warn", "error"};
      bool known = false;
      for (const char* l : kLevels) known = known || (level->is_string() && *level == l);
      if (!known) return bad("has a \"level\" other than debug, info, warn or error");
    }
  } else {
    return Error("unknown message type '" + type + "' from the plugin: " + quoted(line));
  }
  return m;
}

std::string frame(const Json& message) {
  std::string out = message.dump(-1, ' ', false, Json::error_handler_t::replace);
  out += '\n';
  return out;
}

Status FrameReader::feed(std::string_view bytes, std::vector<std::string>& lines) {
  buffer_.append(bytes);
  std::size_t start = 0;
  for (;;) {
    const auto nl = buffer_.find('\n', start);
    if (nl == std::string::npos) break;
    if (nl - start > limit_) {
      return Error("a protocol frame of " + std::to_string(nl - start) +
                   " bytes exceeds the limit of " + std::to_string(limit_));
    }
    lines.emplace_back(buffer_, start, nl - start);
    start = nl + 1;
  }
  buffer_.erase(0, start);
  if (buffer_.size() > limit_) {
    return Error("a protocol frame exceeds the limit of " + std::to_string(limit_) +
                 " bytes before its newline");
  }
  return Status::Ok();
}

}  // namespace plugboard::host
