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

void StartControl::detach() {
  std::lock_guard lock(mu_);
  canceller_ = nullptr;
}

}  // namespace plugboard::core
