#include "core/launch/start_control.h"

#include <utility>

namespace plugboard::core {

void StartControl::cancel() {
  std::lock_guard lock(mu_);
  if (cancelled_) return;
  cancelled_ = true;
  if (canceller_) canceller_();
}

bool StartControl::cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

void StartControl::attach(std::function<void()> canceller) {
  std::lock_guard lock(mu_);
  canceller_ = std::move(canceller);
  if (cancelled_) canceller_();
}

void StartControl::release() {
  std::lock_guard lock(mu_);
  canceller_ = nullptr;
}

StartDeadline::StartDeadline(AlarmClock& clock, StartControl& control, Millis timeout)
    : clock_(clock), timer_(clock.after(timeout, [&control, fired = fired_] {
        control.cancel();
        {
          std::lock_guard lock(fired->mu);
          fired->done = true;
        }
        fired->cv.notify_all();
      })) {}

StartDeadline::~StartDeadline() {
  if (clock_.cancel(timer_)) return;  // it will not fire
  // It fired or is firing: `control` must outlive its cancel().
  std::unique_lock lock(fired_->mu);
  fired_->cv.wait(lock, [this] { return fired_->done; });
}

}  // namespace plugboard::core
