#include "core/serving/argo_calls.h"

#include <openssl/evp.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/base/defaults.h"
#include "core/serving/http_router.h"

namespace plugboard::core {
namespace {

using Clock = std::chrono::steady_clock;

std::string digest(std::string_view body) {
  std::string out(EVP_MAX_MD_SIZE, '\0');
  unsigned int size = 0;
  EVP_Digest(body.data(), body.size(), reinterpret_cast<unsigned char*>(out.data()), &size,
             EVP_sha256(), nullptr);
  out.resize(size);
  return out;
}

}  // namespace

struct ArgoCalls::Impl {
  struct Entry {
    std::condition_variable done_cv;
    std::optional<Dispatch> result;  // set once, when the call ended
  };
  struct Finished {
    Clock::time_point at;
    std::string key;
    const Entry* entry;  // the key may have been dropped and given to a new call since
  };

  const Millis reply_deadline, keep_for;
  const std::size_t keep_count;

  mutable std::mutex mu;  // guards everything below
  std::unordered_map<std::string, std::shared_ptr<Entry>> table;
  std::deque<Finished> finished;  // in the order the calls ended

  Impl(Millis deadline, Millis keep, std::size_t count)
      : reply_deadline(deadline), keep_for(keep), keep_count(count) {}

  // Drops the outcomes kept too long or beyond the count. REQUIRES: mu held.
  void trim(Clock::time_point now) {
    while (!finished.empty() &&
           (finished.size() > keep_count || finished.front().at + keep_for <= now)) {
      drop(finished.front().key, finished.front().entry);
      finished.pop_front();
    }
  }

  // REQUIRES: mu held.
  void drop(const std::string& key, const Entry* entry) {
    if (auto it = table.find(key); it != table.end() && it->second.get() == entry) table.erase(it);
  }

  // Only a success is kept for requests sent again: any other outcome (Running or Pending
  // from the plugin, which wants to be called again; Failed or Error, which Argo may retry
  // with the same body; a template not handled here) goes to the requests that wait for it,
  // or to the first that comes after, and is then dropped. REQUIRES: mu held.
  void settle(const std::string& key, const Entry& entry) {
    if (entry.result && (!entry.result->handled || entry.result->outcome.phase != Phase::kSucceeded))
      drop(key, &entry);
  }
  std::optional<Dispatch> take(const std::string& key, const Entry& entry) {
    settle(key, entry);
    return entry.result;
  }
};

ArgoCalls::ArgoCalls(Millis reply_deadline, Millis keep_for, std::size_t keep_count)
    : impl_(std::make_unique<Impl>(reply_deadline, keep_for, keep_count)) {}

ArgoCalls::~ArgoCalls() = default;

std::size_t ArgoCalls::entries() const {
  std::lock_guard lock(impl_->mu);
  return impl_->table.size();
}

std::optional<Dispatch> ArgoCalls::execute(std::string_view body, const Run& run,
                                           SlowCallHelp* help) {
  Impl& s = *impl_;
  std::string key = digest(body);
  const auto start = Clock::now();
  std::unique_lock lock(s.mu);
  s.trim(start);
  auto& slot = s.table[key];
  if (slot == nullptr) {
    // This request runs the call.
    const std::shared_ptr<Impl::Entry> entry = slot = std::make_shared<Impl::Entry>();
    lock.unlock();
    bool answered = false;
    Dispatch d = run(answered);
    lock.lock();
    entry->result = d;  // a copy for the requests that wait for it, or come next
    const auto now = Clock::now();
    s.finished.push_back({now, key, entry.get()});
    s.trim(now);
    if (!answered) s.settle(key, *entry);  // this request has it: keep a success only
    lock.unlock();
    entry->done_cv.notify_all();
    return d;
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
  std::optional<Dispatch> out = s.take(key, *entry);
  lock.unlock();
  if (help != nullptr) help->callEnded();
  return out;
}

}  // namespace plugboard::core
