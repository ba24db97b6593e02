#include "core/serving/argo_calls.h"

#include <plugboard/host/sha256.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/base/defaults.h"

namespace plugboard::core {
namespace {

using Clock = std::chrono::steady_clock;

// A body's SHA-256: held in place, so a key costs no allocation.
using Key = ArgoCalls::Key;

struct KeyHash {
  std::size_t operator()(const Key& key) const {
    std::size_t h;  // a digest's bytes are as good a hash as any
    std::memcpy(&h, key.data(), sizeof h);
    return h;
  }
};

}  // namespace

struct ArgoCalls::Impl {
  struct Entry {
    std::condition_variable done_cv;
    std::optional<Reply> result;  // set once, when the call ended
  };
  struct Finished {
    Clock::time_point at;
    Key key;
    const Entry* entry;  // the key may have been dropped and given to a new call since
    std::size_t bytes;   // its reply's, while the table holds it
  };

  const Millis reply_deadline, keep_for;
  const Limits limits;

  mutable std::mutex mu;  // guards everything below
  std::unordered_map<Key, std::shared_ptr<Entry>, KeyHash> table;
  std::deque<Finished> finished;  // in the order the calls ended
  std::size_t finished_bytes = 0;  // of the entries of `finished` the table still holds

  Impl(Millis deadline, Millis keep, Limits l)
      : reply_deadline(deadline), keep_for(keep), limits(l) {}

  // Drops the outcomes kept too long or beyond the count or the bytes. REQUIRES: mu held.
  void trim(Clock::time_point now) {
    while (!finished.empty() &&
           (finished.size() > limits.count || finished_bytes > limits.bytes ||
            finished.front().at + keep_for <= now)) {
      drop(finished.front().key, finished.front().entry);
      finished_bytes -= finished.front().bytes;
      finished.pop_front();
    }
  }

  // REQUIRES: mu held.
  void drop(const Key& key, const Entry* entry) {
    if (auto it = table.find(key); it != table.end() && it->second.get() == entry) table.erase(it);
  }

  // Only a success is kept for requests sent again: any other outcome (Running or Pending
  // from the plugin, which wants to be called again; Failed or Error, which Argo may retry
  // with the same body; a template not handled here) goes to the requests that wait for it,
  // or to the first that comes after, and is then dropped. REQUIRES: mu held.
  void settle(const Key& key, const Entry& entry) {
    if (entry.result && (!entry.result->succeeded || entry.result->body.size() > limits.max_reply)) {
      drop(key, &entry);
      // Its bytes no longer count; it ended recently, so it is found near the back.
      for (auto f = finished.rbegin(); f != finished.rend(); ++f) {
        if (f->entry == &entry) {
          finished_bytes -= std::exchange(f->bytes, 0);
          break;
        }
      }
    }
  }
  std::optional<Reply> take(const Key& key, const Entry& entry) {
    settle(key, entry);
    return entry.result;
  }
};

ArgoCalls::ArgoCalls(Millis reply_deadline, Millis keep_for, Limits limits)
    : impl_(std::make_unique<Impl>(reply_deadline, keep_for, limits)) {}

ArgoCalls::~ArgoCalls() = default;

std::size_t ArgoCalls::entries() const {
  std::lock_guard lock(impl_->mu);
  return impl_->table.size();
}

ArgoCalls::Kept ArgoCalls::kept() const {
  std::lock_guard lock(impl_->mu);
  std::size_t count = 0;
  for (const auto& f : impl_->finished) count += f.bytes > 0 ? 1 : 0;
  return {count, impl_->finished_bytes};
}

ArgoCalls::Key ArgoCalls::keyOf(std::string_view body) { return host::sha256(body); }

std::optional<std::string> ArgoCalls::kept(const Key& key) {
  Impl& s = *impl_;
  const auto now = Clock::now();
  std::lock_guard lock(s.mu);
  s.trim(now);
  auto it = s.table.find(key);
  if (it == s.table.end() || !it->second->result || !it->second->result->succeeded) {
    return std::nullopt;
  }
  return it->second->result->body;
}

std::optional<ArgoCalls::Reply> ArgoCalls::execute(const Key& key, const Run& run,
                                                   SlowCallNotice* help) {
  Impl& s = *impl_;
  const auto start = Clock::now();
  std::unique_lock lock(s.mu);
  s.trim(start);
  auto& slot = s.table[key];
  if (slot == nullptr) {
    // This request runs the call.
    const std::shared_ptr<Impl::Entry> entry = slot = std::make_shared<Impl::Entry>();
    lock.unlock();
    bool answered = false;
    Reply reply = run(answered);
    lock.lock();
    entry->result = reply;  // a copy for the requests that wait for it, or come next
    const auto now = Clock::now();
    s.finished.push_back({now, key, entry.get(), reply.body.size()});
    s.finished_bytes += reply.body.size();
    if (!answered) s.settle(key, *entry);  // this request has it: keep a success only
    s.trim(now);
    lock.unlock();
    entry->done_cv.notify_all();
    return reply;
  }
  const std::shared_ptr<Impl::Entry> entry = slot;
  if (entry->result) return s.take(key, *entry);
  // Wait; past defaults::kSlowCall the waiting thread's event loop gets help.
  const auto deadline = start + s.reply_deadline;
  const auto ended = [&] { return entry->result.has_value(); };
  if (help != nullptr &&
      !entry->done_cv.wait_until(lock, std::min(deadline, start + defaults::kSlowCall), ended) &&
      Clock::now() < deadline) {
    lock.unlock();
    help->callIsSlow();
    lock.lock();
  }
  entry->done_cv.wait_until(lock, deadline, ended);
  std::optional<Reply> out = s.take(key, *entry);
  lock.unlock();
  if (help != nullptr) help->callEnded();
  return out;
}

}  // namespace plugboard::core
