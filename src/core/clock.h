// core/clock.h — the few time helpers several modules need: elapsed wall time and UTC stamps.
#pragma once

#include <chrono>
#include <ctime>
#include <string>

namespace nki_agent {

// Seconds of wall time since `t0` (steady clock).
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The current UTC time: ISO 8601 ("2026-11-29T23:15:00Z"), or compact for file and run names
// ("20261129T231500Z").
inline std::string utc_timestamp(bool iso) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, iso ? "%Y-%m-%dT%H:%M:%SZ" : "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

}  // namespace nki_agent
