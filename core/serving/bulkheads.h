// core/serving/bulkheads.h: each plugin's share of serve's call pool, so that one plugin
// whose calls hang or spin cannot starve the others (a bulkhead per plugin, as Envoy's
// per-cluster circuit breakers and Hystrix's thread-pool bulkheads).
//
// A plugin (name@version; the polls for keys no plugin has share one, "(polls)") has at
// most `calls` calls in flight and `queue` more waiting for one of those to end, in order.
// A call beyond both is refused at once; a call that waited `wait` in the queue is refused
// then. Neither is ever queued behind another plugin's calls. A call holds its place until
// it returns, not only until its deadline: one that ignored its cancellation and was
// abandoned to the pool keeps it, so calls to a plugin that never returns cannot pile up
// threads beyond its `calls`.
//
// Limits come from the defaults, or from an override by the plugin's lower-case name
// (docs/configuration.md: plugin_calls, plugin_queue, [plugin_limits.NAME]).
//
// Thread-safe. The bulkheads hold no thread: a call's `start` runs within enter() or within
// leave() (on the thread whose call ended), a `refuse` within enter() or on the clock's
// timer thread (the queue's wait). Neither runs with a lock held.
#ifndef PLUGBOARD_CORE_SERVING_BULKHEADS_H_
#define PLUGBOARD_CORE_SERVING_BULKHEADS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/base/clock.h"
#include "core/base/duration.h"

namespace plugboard::core {

struct BulkheadLimits {
  int calls;  // in flight at once, >= 1 (in an override, -1: the default's)
  int queue;  // waiting for one of those, >= 0 (in an override, -1: the default's)
};

class Bulkheads {
 public:
  // The bulkhead of the calls that poll for a key no hosted plugin has.
  static constexpr const char* kPolls = "(polls)";

  // REQUIRES: `clock` outlives the bulkheads. `by_name` is keyed by lower-case plugin name.
  Bulkheads(AlarmClock& clock, BulkheadLimits defaults,
            std::map<std::string, BulkheadLimits> by_name, Millis wait);
  ~Bulkheads();
  Bulkheads(const Bulkheads&) = delete;
  Bulkheads& operator=(const Bulkheads&) = delete;

  using Start = std::function<void()>;
  using Refuse = std::function<void(std::string message)>;
  // A call for `plugin` (name@version): `start` runs now or when one of the plugin's calls
  // ends, or `refuse` gets a one-line message, at once when the plugin's calls and queue
  // are full or after `wait` in the queue. Once `start` ran, leave(plugin) must follow when
  // the call returned (or was given up before it started).
  void enter(const std::string& plugin, Start start, Refuse refuse);
  void leave(const std::string& plugin);

  struct Counts {
    std::string plugin;
    BulkheadLimits limits;
    int in_flight = 0;
    int queued = 0;
    std::uint64_t refused_full = 0;    // at once: calls and queue full
    std::uint64_t refused_waited = 0;  // after `wait` in the queue
    std::uint64_t refused() const { return refused_full + refused_waited; }
  };
  // Every plugin that has had a call, by name@version.
  std::vector<Counts> counts() const;
  // One plugin's; zeros and its limits when it has had no call.
  Counts countsOf(const std::string& plugin) const;
  BulkheadLimits limitsOf(const std::string& plugin) const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;  // shared with the queue's timers, which may outlive it
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_SERVING_BULKHEADS_H_
