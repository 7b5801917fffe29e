// serve/metrics.cpp — counting and the text exposition format (cumulative `le` buckets).
#include "serve/metrics.h"

#include <fmt/format.h>

namespace nki_agent::serve {

void Metrics::request(const std::string& route, int status, double seconds) {
  std::lock_guard lock(mu_);
  ++requests_[{route, status}];
  Histogram& h = latency_[route];
  for (size_t i = 0; i < kBuckets.size(); ++i)
    if (seconds <= kBuckets[i]) ++h.counts[i];
  ++h.count;
  h.sum += seconds;
}

void Metrics::reward(const std::string& preset, double score) {
  std::lock_guard lock(mu_);
  auto& r = rewards_[preset];
  ++r.first;
  r.second += score;
}

std::string Metrics::render(const Gauges& g) const {
  std::lock_guard lock(mu_);
  std::string out;
  out +=
      "# HELP nki_agent_requests_total Requests answered, by route and HTTP status.\n# TYPE nki_agent_requests_total "
      "counter\n";
  for (const auto& [k, n] : requests_)
    out += fmt::format("nki_agent_requests_total{{route=\"{}\",code=\"{}\"}} {}\n", k.first, k.second, n);
  out += "# HELP nki_agent_request_seconds Request latency, by route.\n# TYPE nki_agent_request_seconds histogram\n";
  for (const auto& [route, h] : latency_) {
    for (size_t i = 0; i < kBuckets.size(); ++i)
      out += fmt::format("nki_agent_request_seconds_bucket{{route=\"{}\",le=\"{}\"}} {}\n", route, kBuckets[i],
                         h.counts[i]);
    out += fmt::format("nki_agent_request_seconds_bucket{{route=\"{}\",le=\"+Inf\"}} {}\n", route, h.count);
    out += fmt::format("nki_agent_request_seconds_sum{{route=\"{}\"}} {}\n", route, h.sum);
    out += fmt::format("nki_agent_request_seconds_count{{route=\"{}\"}} {}\n", route, h.count);
  }
  out +=
      "# HELP nki_agent_rewards_total Kernels scored, by the preset of the answer.\n# TYPE nki_agent_rewards_total "
      "counter\n";
  for (const auto& [p, r] : rewards_) out += fmt::format("nki_agent_rewards_total{{preset=\"{}\"}} {}\n", p, r.first);
  out +=
      "# HELP nki_agent_reward_sum Sum of the rewards given, by preset (it can fall: some presets pay below 0).\n"
      "# TYPE nki_agent_reward_sum gauge\n";
  for (const auto& [p, r] : rewards_) out += fmt::format("nki_agent_reward_sum{{preset=\"{}\"}} {}\n", p, r.second);
  auto gauge = [&](const char* name, const char* help, const char* type, int64_t v) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{} {}\n", name, help, name, type, name, v);
  };
  gauge("nki_agent_in_flight", "Items being scored now.", "gauge", g.in_flight);
  gauge("nki_agent_queue_depth", "Items admitted and waiting for a worker.", "gauge", g.queued);
  gauge("nki_agent_rejected_busy_total", "Requests answered 429 because the queue was full.", "counter",
        g.rejected_busy);
  gauge("nki_agent_reward_cache_hits_total", "Kernels answered from the result cache.", "counter", g.cache_hits);
  gauge("nki_agent_reward_cache_misses_total", "Kernels not in the result cache.", "counter", g.cache_misses);
  gauge("nki_agent_verifications_total", "Kernels verified (a miss whose kernel was in flight waited for it).",
        "counter", g.verifications);
  gauge("nki_agent_kernel_worker_restarts_total", "Sandboxed kernel workers replaced after dying or hanging.",
        "counter", g.worker_restarts);
  return out;
}

}  // namespace nki_agent::serve
