#include "core/serving/argo_calls.h"

#include <plugboard/host/sha256.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/base/defaults.h"

namespace plugboard::core {
namespace {

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
  struct Waiter {
    std::uint64_t id;
    AlarmClock::TimerId reply_deadline;
    Answer answer;
  };
  struct Entry {
    std::optional<Reply> result;  // set once, when the call ended
    std::list<Waiter> waiters;    // the requests not yet answered, until the call ends
    std::uint64_t last_waiter = 0;
  };
  struct Finished {
    Clock::TimePoint at;
    Key key;
    const Entry* entry;  // the key may have been dropped and given to a new call since
    std::size_t bytes;   // its reply's, while the table holds it
  };

  AlarmClock& clock;
  const Millis reply_deadline, keep_for;
  const Limits limits;

  mutable std::mutex mu;  // guards everything below
  std::unordered_map<Key, std::shared_ptr<Entry>, KeyHash> table;
  std::deque<Finished> finished;  // in the order the calls ended
  std::size_t finished_bytes = 0;  // of the entries of `finished` the table still holds

  Impl(AlarmClock& c, Millis deadline, Millis keep, Limits l)
      : clock(c), reply_deadline(deadline), keep_for(keep), limits(l) {}

  // Drops the outcomes kept too long or beyond the count or the bytes. REQUIRES: mu held.
  void trim(Clock::TimePoint now) {
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

ArgoCalls::ArgoCalls(AlarmClock& clock, Millis reply_deadline, Millis keep_for, Limits limits)
    : impl_(std::make_shared<Impl>(clock, reply_deadline, keep_for, limits)) {}

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
  const auto now = s.clock.now();
  std::lock_guard lock(s.mu);
  s.trim(now);
  auto it = s.table.find(key);
  if (it == s.table.end() || !it->second->result || !it->second->result->succeeded) {
    return std::nullopt;
  }
  return it->second->result->body;
}

void ArgoCalls::execute(const Key& key, const Run& run, Answer answer) {
  Impl& s = *impl_;
  const auto now = s.clock.now();
  std::unique_lock lock(s.mu);
  s.trim(now);
  auto& slot = s.table[key];
  const bool starts = slot == nullptr;  // this request starts the call
  if (starts) slot = std::make_shared<Impl::Entry>();
  const std::shared_ptr<Impl::Entry> entry = slot;
  if (entry->result) {
    std::optional<Reply> out = s.take(key, *entry);
    lock.unlock();
    return answer(std::move(out));
  }
  const std::uint64_t id = ++entry->last_waiter;
  Impl::Waiter& waiter = entry->waiters.emplace_back(Impl::Waiter{id, 0, std::move(answer)});
  // At the reply deadline the request is answered nothing (Running), unless the call ended
  // first. The timer lets the table go: a late one finds nothing to do.
  waiter.reply_deadline =
      s.clock.at(now + s.reply_deadline, [weak = std::weak_ptr<Impl>(impl_), entry, id] {
        const auto impl = weak.lock();
        if (impl == nullptr) return;
        Answer late;
        {
          std::lock_guard lock(impl->mu);
          auto it = std::find_if(entry->waiters.begin(), entry->waiters.end(),
                                 [id](const Impl::Waiter& w) { return w.id == id; });
          if (it == entry->waiters.end()) return;  // answered when the call ended
          late = std::move(it->answer);
          entry->waiters.erase(it);
        }
        late(std::nullopt);
      });
  lock.unlock();
  if (!starts) return;
  run([impl = impl_, key, entry](Reply reply) {
    Impl& s = *impl;
    std::list<Impl::Waiter> waiters;
    {
      std::lock_guard lock(s.mu);
      entry->result = reply;  // for the requests that come next, if none waits
      const auto now = s.clock.now();
      s.finished.push_back({now, key, entry.get(), reply.body.size()});
      s.finished_bytes += reply.body.size();
      waiters.swap(entry->waiters);
      // A timer that fires now finds its waiter gone: each request is answered once.
      for (const auto& w : waiters) s.clock.cancel(w.reply_deadline);
      if (!waiters.empty()) s.settle(key, *entry);  // they have it: keep a success only
      s.trim(now);
    }
    for (auto it = waiters.begin(); it != waiters.end(); ++it) {
      it->answer(std::next(it) == waiters.end() ? std::move(reply) : reply);
    }
  });
}

}  // namespace plugboard::core
