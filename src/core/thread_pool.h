// core/thread_pool.h — a small fixed pool of worker threads with a FIFO queue.
//
// For parallelism across independent jobs (candidates, tasks, requests), not inside one kernel
// run. submit() returns a std::future; an exception thrown by a job is stored in its future.
// The destructor finishes the queued jobs and joins the workers.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace nki_agent {

class ThreadPool {
 public:
  // threads == 0 means std::thread::hardware_concurrency() (at least 1).
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()); }

  template <typename F>
  auto submit(F&& fn) -> std::future<std::invoke_result_t<F>> {
    using R = std::invoke_result_t<F>;
    auto task = std::make_shared<std::packaged_task<R()>>(std::forward<F>(fn));
    std::future<R> fut = task->get_future();
    enqueue([task] { (*task)(); });
    return fut;
  }

  // Runs fn(i) for i in [0, n) on the pool and waits; rethrows the first exception.
  void parallel_for(int64_t n, const std::function<void(int64_t)>& fn);

 private:
  void enqueue(std::function<void()> job);
  void worker_loop();

  std::vector<std::thread> workers_;
  std::deque<std::function<void()>> queue_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
};

}  // namespace nki_agent
