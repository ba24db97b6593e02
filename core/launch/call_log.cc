#include "core/launch/call_log.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace plugboard::core {
namespace {

struct CallRegistry {
  std::mutex mu;
  std::unordered_map<std::uint64_t, CallLog*> calls;
};

CallRegistry& callRegistry() {
  static auto* r = new CallRegistry;  // never destroyed: calls abandoned at exit may still log
  return *r;
}

thread_local CallLog* t_current = nullptr;

// Cut to at most `limit` bytes without splitting a UTF-8 sequence.
std::string cutLine(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return std::string(text);
  std::size_t end = limit;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end)) + " [cut]";
}

}  // namespace

std::string_view logLevelName(int level) {
  switch (level) {
    case 0:
      return "debug";
    case 1:
      return "info";
    case 2:
      return "warn";
    default:
      return level < 0 ? "debug" : "error";
  }
}

LogLines::LogLines(const LogLines& other)
    : ring_(other.ring_ ? std::make_unique<Ring>(*other.ring_) : nullptr) {}

LogLines& LogLines::operator=(const LogLines& other) {
  if (this != &other) ring_ = other.ring_ ? std::make_unique<Ring>(*other.ring_) : nullptr;
  return *this;
}

void LogLines::add(int level, std::string_view text) {
  LogLine line{level, cutLine(text, kMaxLineBytes)};
  if (!ring_) ring_ = std::make_unique<Ring>();
  Ring& r = *ring_;
  ++r.total;
  if (r.lines.size() < kMaxLines) {
    r.lines.push_back(std::move(line));
    return;
  }
  r.lines[r.next] = std::move(line);
  r.next = (r.next + 1) % kMaxLines;
}

void LogLines::appendSince(const LogLines& other, std::size_t seen) {
  if (other.total() <= seen) return;
  const std::size_t fresh = other.total() - seen;
  const auto lines = other.lines();
  const std::size_t kept = std::min(fresh, lines.size());
  // Those `other` dropped count as written (and dropped) here too.
  if (fresh > kept) {
    if (!ring_) ring_ = std::make_unique<Ring>();
    ring_->total += fresh - kept;
  }
  for (std::size_t i = lines.size() - kept; i < lines.size(); ++i)
    add(lines[i].level, lines[i].text);
}

std::vector<LogLine> LogLines::lines() const {
  std::vector<LogLine> out;
  if (!ring_) return out;
  const Ring& r = *ring_;
  out.reserve(r.lines.size());
  for (std::size_t i = 0; i < r.lines.size(); ++i) out.push_back(r.lines[(r.next + i) % r.lines.size()]);
  return out;
}

nlohmann::json LogLines::toJson() const {
  auto out = nlohmann::json::array();
  for (const auto& line : lines())
    out.push_back({{"level", logLevelName(line.level)}, {"text", line.text}});
  return out;
}

void CallLog::setLabel(std::string label) {
  std::lock_guard lock(mu_);
  label_ = std::move(label);
  wanted_.store(true, std::memory_order_relaxed);
}

std::string CallLog::label() const {
  std::lock_guard lock(mu_);
  return label_;
}

void CallLog::add(int level, std::string_view text) {
  std::lock_guard lock(mu_);
  lines_.add(level, text);
}

LogLines CallLog::take() {
  std::lock_guard lock(mu_);
  return std::exchange(lines_, LogLines{});
}

CallLogScope::CallLogScope(std::uint64_t call_id, CallLog* log)
    : call_id_(call_id), log_(log), outer_(t_current) {
  if (log_ == nullptr) return;
  t_current = log_;
  CallRegistry& r = callRegistry();
  std::lock_guard lock(r.mu);
  r.calls[call_id_] = log_;
}

CallLogScope::~CallLogScope() {
  if (log_ == nullptr) return;
  t_current = outer_;
  CallRegistry& r = callRegistry();
  std::lock_guard lock(r.mu);
  r.calls.erase(call_id_);
}

CallLogFound findCallLog(std::uint64_t call_id) {
  if (call_id == 0) return {std::unique_lock<std::mutex>(), t_current};
  CallRegistry& r = callRegistry();
  std::unique_lock lock(r.mu);
  auto it = r.calls.find(call_id);
  if (it == r.calls.end()) return {};
  return {std::move(lock), it->second};
}

}  // namespace plugboard::core
