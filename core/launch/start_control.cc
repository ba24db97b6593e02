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

StartDeadline::StartDeadline(StartControl& control, Millis timeout) {
  waiter_ = std::thread([this, &control, timeout] {
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, timeout, [this] { return done_; })) return;
    lock.unlock();
    control.cancel();
  });
}

StartDeadline::~StartDeadline() {
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  waiter_.join();
}

}  // namespace plugboard::core
