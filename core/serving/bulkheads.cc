#include "core/serving/bulkheads.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <unordered_map>

#include "core/base/text.h"

namespace plugboard::core {

struct Bulkheads::Impl {
  struct Waiting {
    std::uint64_t id;
    Start start;
    Refuse refuse;
    AlarmClock::TimerId timer;
  };
  struct Plugin {
    BulkheadLimits limits;
    int in_flight = 0;
    std::deque<Waiting> queue;  // in the order they came
    std::uint64_t last_id = 0;
    std::uint64_t refused_full = 0, refused_waited = 0;
  };

  AlarmClock& clock;
  const BulkheadLimits defaults;
  const std::map<std::string, BulkheadLimits> by_name;
  const Millis wait;

  mutable std::mutex mu;  // guards plugins and every Plugin
  // Entries are never removed: one per name@version that had a call.
  std::unordered_map<std::string, std::unique_ptr<Plugin>> plugins;

  Impl(AlarmClock& c, BulkheadLimits d, std::map<std::string, BulkheadLimits> b, Millis w)
      : clock(c), defaults(d), by_name(std::move(b)), wait(w) {}

  BulkheadLimits limitsOf(const std::string& plugin) const {
    const auto it = by_name.find(toLower(plugin.substr(0, plugin.find('@'))));
    if (it == by_name.end()) return defaults;
    return {it->second.calls < 0 ? defaults.calls : it->second.calls,
            it->second.queue < 0 ? defaults.queue : it->second.queue};
  }

  // REQUIRES: mu held.
  Plugin& get(const std::string& plugin) {
    auto& p = plugins[plugin];
    if (p == nullptr) {
      p = std::make_unique<Plugin>();
      p->limits = limitsOf(plugin);
    }
    return *p;
  }

  static std::string name(const std::string& plugin) { return "plugin '" + plugin + "'"; }
};

Bulkheads::Bulkheads(AlarmClock& clock, BulkheadLimits defaults,
                     std::map<std::string, BulkheadLimits> by_name, Millis wait)
    : impl_(std::make_shared<Impl>(clock, defaults, std::move(by_name), wait)) {}

// Calls still queued are dropped unanswered: the server that would answer them is going.
// Their timers find nothing when they fire.
Bulkheads::~Bulkheads() = default;

void Bulkheads::enter(const std::string& plugin, Start start, Refuse refuse) {
  Impl& s = *impl_;
  std::unique_lock lock(s.mu);
  Impl::Plugin& p = s.get(plugin);
  if (p.in_flight < p.limits.calls) {
    ++p.in_flight;
    lock.unlock();
    return start();
  }
  if (static_cast<int>(p.queue.size()) < p.limits.queue) {
    const std::uint64_t id = ++p.last_id;
    // At the end of its wait the call is refused, unless a place was given to it first.
    const auto timer = s.clock.after(s.wait, [weak = std::weak_ptr<Impl>(impl_), plugin, id] {
      const auto impl = weak.lock();
      if (impl == nullptr) return;
      Refuse late;
      int calls = 0;
      {
        std::lock_guard lock(impl->mu);
        Impl::Plugin& p = impl->get(plugin);
        auto it = std::find_if(p.queue.begin(), p.queue.end(),
                               [id](const Impl::Waiting& w) { return w.id == id; });
        if (it == p.queue.end()) return;  // it was started
        late = std::move(it->refuse);
        p.queue.erase(it);
        ++p.refused_waited;
        calls = p.limits.calls;
      }
      late(Impl::name(plugin) + " kept its " + std::to_string(calls) +
           " calls in flight (its bound, plugin_calls) for " + formatElapsed(impl->wait) +
           " while this call waited in its queue; the call was not started, try again later");
    });
    p.queue.push_back({id, std::move(start), std::move(refuse), timer});
    return;
  }
  ++p.refused_full;
  const BulkheadLimits limits = p.limits;
  lock.unlock();
  refuse(Impl::name(plugin) + " has " + std::to_string(limits.calls) + " calls in flight and " +
         std::to_string(limits.queue) +
         " waiting, its bounds (plugin_calls, plugin_queue); the call was refused, try again "
         "later");
}

void Bulkheads::leave(const std::string& plugin) {
  Impl& s = *impl_;
  std::unique_lock lock(s.mu);
  Impl::Plugin& p = s.get(plugin);
  if (p.queue.empty()) {
    --p.in_flight;
    return;
  }
  // The place passes to the call that waited longest; its timer, if firing now, finds it gone.
  Impl::Waiting next = std::move(p.queue.front());
  p.queue.pop_front();
  s.clock.cancel(next.timer);
  lock.unlock();
  next.start();
}

std::vector<Bulkheads::Counts> Bulkheads::counts() const {
  std::vector<Counts> out;
  {
    std::lock_guard lock(impl_->mu);
    for (const auto& [plugin, p] : impl_->plugins) {
      out.push_back({plugin, p->limits, p->in_flight, static_cast<int>(p->queue.size()),
                     p->refused_full, p->refused_waited});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Counts& a, const Counts& b) { return a.plugin < b.plugin; });
  return out;
}

Bulkheads::Counts Bulkheads::countsOf(const std::string& plugin) const {
  std::lock_guard lock(impl_->mu);
  const auto it = impl_->plugins.find(plugin);
  if (it == impl_->plugins.end()) return {plugin, impl_->limitsOf(plugin)};
  const Impl::Plugin& p = *it->second;
  return {plugin,         p.limits,        p.in_flight, static_cast<int>(p.queue.size()),
          p.refused_full, p.refused_waited};
}

BulkheadLimits Bulkheads::limitsOf(const std::string& plugin) const {
  return impl_->limitsOf(plugin);
}

}  // namespace plugboard::core
