// serve/admission.h — how many items the server takes on: a bounded queue in front of the workers.
//
// An item (one kernel to score; a batch is several) is admitted only while fewer than
// workers + queue items are admitted; past that the request is answered 429 at once rather than
// piling up until clients time out. An admitted item waits for one of `workers` slots, until its
// deadline. While draining (SIGTERM) nothing new is admitted and the server waits until the
// admitted items are done. Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace nki_agent::serve {

class Admission {
 public:
  using Clock = std::chrono::steady_clock;
  Admission(int workers, int queue) : workers_(workers), capacity_(workers + queue) {}

  // Admits `n` items, or none: false when they do not fit or the server is draining.
  bool try_admit(int n);
  // An admitted item takes a worker slot, waiting until `deadline`; false (the item is then
  // released) when the deadline passes first.
  bool start(Clock::time_point deadline);
  // An item that held a slot is done.
  void finish();
  // An admitted item that never started (its request failed before scoring).
  void abandon();

  void drain();
  bool draining() const;
  // Waits until no item is admitted, or the deadline; true when idle.
  bool wait_idle(Clock::time_point deadline);

  int64_t running() const;
  int64_t queued() const;
  int64_t rejected() const;

 private:
  const int workers_, capacity_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int admitted_ = 0, running_ = 0;
  int64_t rejected_ = 0;
  bool draining_ = false;
};

}  // namespace nki_agent::serve
