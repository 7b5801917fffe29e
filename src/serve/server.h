// serve/server.h — `nki-agent serve`: the reward service over HTTP (docs/serve.md).
//
// One RewardScorer behind every route; the routes only translate (serve/wire.h). Requests are
// admitted through a bounded queue (serve/admission.h), authorised by bearer token when the server
// has tokens (serve/auth.h), size- and depth-checked before parsing, and counted
// (serve/metrics.h). A request that cannot be served is a JSON error with a 4xx or 5xx status; the
// server itself never stops for a request. shutdown() drains: it stops admitting, waits for what
// was admitted, then closes the listener. httplib.h stays inside server.cpp.
#pragma once

#include <memory>
#include <string>

#include "core/diagnostic.h"
#include "reward/score.h"

namespace nki_agent::serve {

inline constexpr int kDefaultPort = 8470;

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = kDefaultPort;  // 0: any free port (port() says which)
  int workers = 0;          // items scored at once; 0: one per core
  int queue = 0;            // items waiting for a worker; 0: 4 x workers
  std::string tokens_file;  // required unless host is loopback
  size_t max_body_bytes = size_t{8} << 20;
  double deadline_seconds = 600;     // how long an admitted item may wait for a worker
  double read_timeout_seconds = 30;  // a client that sends nothing for this long is dropped
  ScorerOptions scorer;
};

class RewardServer {
 public:
  // Loads the tokens, starts the scorer's kernel workers and binds the port. Codes:
  // nkia_bad_argument (tokens missing for a non-loopback host, a port that cannot be bound), the
  // scorer's.
  static Result<std::unique_ptr<RewardServer>> create(ServeOptions options);
  ~RewardServer();

  int port() const;
  // Serves until shutdown(); returns after the listener closed.
  void run();
  // Stops admitting (new requests get 503), waits up to `drain_seconds` for the admitted ones,
  // then closes the listener. Safe from any thread, once or more.
  void shutdown(double drain_seconds = 600);

  struct Impl;

 private:
  explicit RewardServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace nki_agent::serve
