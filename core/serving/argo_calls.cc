#include "core/serving/argo_calls.h"

#include <openssl/evp.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/base/defaults.h"
#include "core/serving/http_router.h"

namespace plugboard::core {
namespace {

using Clock = std::chrono::steady_clock;
// An idle pool thread leaves after this long without a call.
constexpr auto kIdleThreadLife = std::chrono::seconds(30);

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

  // The pool.
  std::condition_variable work_cv, exit_cv;
  std::deque<std::function<void()>> work;
  int threads = 0, idle = 0;
  bool stop = false;

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
  std::optional<Dispatch> take(const std::string& key, const std::shared_ptr<Entry>& entry) {
    if (entry->result &&
        (!entry->result->handled || entry->result->outcome.phase != Phase::kSucceeded)) {
      drop(key, entry.get());
    }
    return entry->result;
  }

  // REQUIRES: mu held.
  void submit(std::function<void()> task, std::unique_lock<std::mutex>& lock) {
    // Each waiting task needs an idle thread of its own: one thread taking two tasks in
    // turn would hold the second behind a long first.
    work.push_back(std::move(task));
    const bool spawn = work.size() > static_cast<std::size_t>(idle);
    if (spawn) ++threads;
    lock.unlock();  // the woken thread need not wait for this lock
    if (spawn) {
      std::thread([this] { serve(); }).detach();
    } else {
      work_cv.notify_one();
    }
    lock.lock();
  }

  void serve() {
    std::unique_lock lock(mu);
    while (true) {
      ++idle;
      const bool woke =
          work_cv.wait_for(lock, kIdleThreadLife, [&] { return stop || !work.empty(); });
      --idle;
      if (work.empty() && (stop || !woke)) break;
      auto task = std::move(work.front());
      work.pop_front();
      lock.unlock();
      task();
      lock.lock();
    }
    if (--threads == 0) exit_cv.notify_all();
  }
};

ArgoCalls::ArgoCalls(Millis reply_deadline, Millis keep_for, std::size_t keep_count)
    : impl_(std::make_unique<Impl>(reply_deadline, keep_for, keep_count)) {}

ArgoCalls::~ArgoCalls() {
  std::unique_lock lock(impl_->mu);
  impl_->stop = true;
  impl_->work_cv.notify_all();
  impl_->exit_cv.wait(lock, [&] { return impl_->threads == 0; });
}

std::size_t ArgoCalls::entries() const {
  std::lock_guard lock(impl_->mu);
  return impl_->table.size();
}

std::optional<Dispatch> ArgoCalls::execute(std::string_view body, std::function<Dispatch()> run,
                                           SlowCallHelp* help) {
  Impl& s = *impl_;
  std::string key = digest(body);
  const auto start = Clock::now();
  std::unique_lock lock(s.mu);
  s.trim(start);
  auto& slot = s.table[key];
  const bool fresh = slot == nullptr;
  if (fresh) slot = std::make_shared<Impl::Entry>();
  const std::shared_ptr<Impl::Entry> entry = slot;
  if (entry->result) return s.take(key, entry);
  if (fresh) {
    s.submit(
        [&s, entry, key, run = std::move(run)] {
          Dispatch d = run();
          {
            std::lock_guard lock(s.mu);
            entry->result = std::move(d);
            const auto now = Clock::now();
            s.finished.push_back({now, key, entry.get()});
            s.trim(now);
          }
          entry->done_cv.notify_all();
        },
        lock);
  }
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
  std::optional<Dispatch> out = s.take(key, entry);
  lock.unlock();
  if (help != nullptr) help->callEnded();
  return out;
}

}  // namespace plugboard::core
