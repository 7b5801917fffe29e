// serve/admission.cpp — counters under one mutex; waiters woken when a slot or the queue frees.
#include "serve/admission.h"

namespace nki_agent::serve {

bool Admission::try_admit(int n) {
  std::lock_guard lock(mu_);
  if (draining_ || admitted_ + n > capacity_) {
    ++rejected_;
    return false;
  }
  admitted_ += n;
  return true;
}

bool Admission::start(Clock::time_point deadline) {
  std::unique_lock lock(mu_);
  if (!cv_.wait_until(lock, deadline, [&] { return running_ < workers_; })) {
    --admitted_;
    cv_.notify_all();
    return false;
  }
  ++running_;
  return true;
}

void Admission::finish() {
  std::lock_guard lock(mu_);
  --running_;
  --admitted_;
  cv_.notify_all();
}

void Admission::abandon() {
  std::lock_guard lock(mu_);
  --admitted_;
  cv_.notify_all();
}

void Admission::drain() {
  std::lock_guard lock(mu_);
  draining_ = true;
  cv_.notify_all();
}

bool Admission::draining() const {
  std::lock_guard lock(mu_);
  return draining_;
}

bool Admission::wait_idle(Clock::time_point deadline) {
  std::unique_lock lock(mu_);
  return cv_.wait_until(lock, deadline, [&] { return admitted_ == 0; });
}

int64_t Admission::running() const {
  std::lock_guard lock(mu_);
  return running_;
}

int64_t Admission::queued() const {
  std::lock_guard lock(mu_);
  return admitted_ - running_;
}

int64_t Admission::rejected() const {
  std::lock_guard lock(mu_);
  return rejected_;
}

}  // namespace nki_agent::serve
