// serve/metrics.h — the reward service's counters, as Prometheus text (GET /metrics).
//
// Requests by route and status, their latency as a histogram per route, rewards by preset (count
// and sum, so a dashboard can plot the mean reward of a run), and the gauges the server reads at
// render time: requests in flight and queued, result-cache hits and misses, kernel workers
// restarted. Thread-safe; names are prefixed nki_agent_.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace nki_agent::serve {

struct Gauges {
  int64_t in_flight = 0;
  int64_t queued = 0;
  int64_t cache_hits = 0;
  int64_t cache_misses = 0;
  int64_t verifications = 0;
  int64_t worker_restarts = 0;
  int64_t rejected_busy = 0;
};

class Metrics {
 public:
  static constexpr std::array<double, 13> kBuckets = {0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 120, 600};

  void request(const std::string& route, int status, double seconds);
  void reward(const std::string& preset, double score);
  std::string render(const Gauges& g) const;

 private:
  struct Histogram {
    std::array<int64_t, kBuckets.size()> counts{};
    int64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, int64_t> requests_;
  std::map<std::string, Histogram> latency_;
  std::map<std::string, std::pair<int64_t, double>> rewards_;
};

}  // namespace nki_agent::serve
