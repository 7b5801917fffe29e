// serve/server.cpp — routes on httplib, each a translation onto the one scoring core.
#include "serve/server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <list>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "core/log.h"
#include "core/thread_pool.h"
#include "core/version.h"
#include "reward/presets.h"
#include "serve/admission.h"
#include "serve/auth.h"
#include "serve/metrics.h"
#include "serve/wire.h"

namespace nki_agent::serve {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

int status_of(const Diagnostic& d) {
  if (d.code == "nkia_task_not_found" || d.code == "nkia_serve_not_found") return 404;
  if (d.code == "nkia_reward_bad_request" || d.code == "nkia_serve_bad_json" ||
      d.code == "nkia_serve_inline_reference" || d.code == "nkia_inline_reference" || d.code == "nkia_task_ambiguous")
    return 400;
  if (d.code == "nkia_serve_unauthorized") return 401;
  if (d.code == "nkia_serve_body_too_large") return 413;
  if (d.code == "nkia_serve_busy") return 429;
  if (d.code == "nkia_serve_draining") return 503;
  return 500;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The last KernelGYM answers by request id, for GET /status and /results.
class AnswerStore {
 public:
  void put(const std::string& id, const json& answer) {
    std::lock_guard lock(mu_);
    auto it = index_.find(id);
    if (it != index_.end()) order_.erase(it->second);
    order_.emplace_front(id, answer);
    index_[id] = order_.begin();
    while (order_.size() > kCapacity) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }
  std::optional<json> get(const std::string& id) {
    std::lock_guard lock(mu_);
    auto it = index_.find(id);
    if (it == index_.end()) return std::nullopt;
    return it->second->second;
  }

 private:
  static constexpr size_t kCapacity = 16384;
  std::mutex mu_;
  std::list<std::pair<std::string, json>> order_;
  std::unordered_map<std::string, std::list<std::pair<std::string, json>>::iterator> index_;
};

}  // namespace

struct RewardServer::Impl {
  ServeOptions opt;
  std::unique_ptr<RewardScorer> scorer;
  TokenSet tokens = TokenSet::none();
  Admission admission;
  Metrics metrics;
  AnswerStore answers;
  // The items of batches, `workers` at a time (each waits for a worker slot as a single request does);
  // declared before `http` so that it outlives every handler.
  std::unique_ptr<ThreadPool> batch_pool;
  httplib::Server http;
  int port = 0;
  std::atomic<bool> stopping{false};
  std::atomic<bool> run_entered{false}, run_returned{false};
  std::mutex shutdown_mu;

  Impl(ServeOptions o, int workers, int queue) : opt(std::move(o)), admission(workers, queue) {}

  void send(httplib::Response& res, int status, const json& body) {
    res.status = status;
    res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
  }
  void refuse(httplib::Response& res, const Diagnostic& d) {
    const int status = status_of(d);
    if (status == 429 || status == 503) res.set_header("Retry-After", status == 429 ? "1" : "5");
    send(res, status, error_body(d));
  }

  Diagnostic busy() const {
    return admission.draining()
               ? Diagnostic::error("nkia_serve_draining", "the server is shutting down and takes no new requests",
                                   "retry against another replica")
               : Diagnostic::error("nkia_serve_busy", "every worker is busy and the queue is full",
                                   "retry after the Retry-After seconds");
  }

  // Scores one admitted item: waits for a worker until the deadline, then the core.
  RewardResult score_admitted(const RewardRequest& req, Clock::time_point deadline) {
    const auto t0 = Clock::now();
    if (!admission.start(deadline))
      return RewardResult::failure(Diagnostic::error(
          "nkia_serve_busy", fmt::format("no worker became free within the deadline ({} s)", opt.deadline_seconds),
          "retry, or add workers or replicas"));
    const double queued = seconds_since(t0);
    auto r = scorer->score(req);
    admission.finish();
    RewardResult out = r ? std::move(*r) : RewardResult::failure(r.error());
    out.queue_seconds = queued;
    if (out.score) metrics.reward(out.preset, *out.score);
    return out;
  }

  // Items scored in parallel (at most `workers` threads), in input order; parse failures answered
  // as their own error results. All valid items must already be admitted.
  std::vector<RewardResult> score_items(const std::vector<Result<RewardRequest>>& items, Clock::time_point deadline) {
    std::vector<RewardResult> results(items.size());
    batch_pool->parallel_for(static_cast<int64_t>(items.size()), [&](int64_t i) {
      const auto& item = items[static_cast<size_t>(i)];
      results[static_cast<size_t>(i)] = item ? score_admitted(*item, deadline) : RewardResult::failure(item.error());
    });
    return results;
  }

  // Admits the valid items of a request, or answers 429/503 and returns false.
  bool admit(const std::vector<Result<RewardRequest>>& items, httplib::Response& res) {
    const int n =
        static_cast<int>(std::count_if(items.begin(), items.end(), [](const auto& r) { return r.has_value(); }));
    if (n > opt.workers + opt.queue) {
      // It could never be admitted: retrying would not help.
      refuse(res,
             Diagnostic::error("nkia_reward_bad_request",
                               fmt::format("a batch of {} items is more than this server takes at once ({} workers "
                                           "+ {} queued)",
                                           n, opt.workers, opt.queue),
                               "split the batch, or start the server with a larger --queue"));
      return false;
    }
    if (n == 0 || admission.try_admit(n)) return true;
    refuse(res, busy());
    return false;
  }

  Clock::time_point deadline() const {
    return Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(opt.deadline_seconds * 1e3));
  }

  std::optional<json> body(const httplib::Request& req, httplib::Response& res) {
    auto j = parse_json_body(req.body);
    if (!j) {
      refuse(res, j.error());
      return std::nullopt;
    }
    return std::move(*j);
  }

  // A route: timing, metrics, and no exception ever escaping to httplib.
  httplib::Server::Handler route(std::string name,
                                 std::function<void(const httplib::Request&, httplib::Response&)> fn) {
    return [this, name = std::move(name), fn = std::move(fn)](const httplib::Request& req, httplib::Response& res) {
      const auto t0 = Clock::now();
      try {
        fn(req, res);
      } catch (const std::exception& e) {
        NKIA_LOG_ERROR("serve: {} {}: {}", req.method, req.path, e.what());
        send(res, 500, error_body(Diagnostic::error("nkia_internal", fmt::format("internal error: {}", e.what()))));
      }
      metrics.request(name, res.status, seconds_since(t0));
    };
  }

  void single_reward(const httplib::Request& req, httplib::Response& res,
                     const std::function<Result<RewardRequest>(const json&)>& parse,
                     const std::function<json(const RewardResult&)>& answer) {
    auto j = body(req, res);
    if (!j) return;
    auto rr = parse(*j);
    if (!rr) return refuse(res, rr.error());
    if (!admission.try_admit(1)) return refuse(res, busy());
    RewardResult r = score_admitted(*rr, deadline());
    if (r.status == "error" && r.error && status_of(*r.error) != 500 && r.turns.empty()) return refuse(res, *r.error);
    send(res, 200, answer(r));
  }

  void tool_route(const std::string& name, const httplib::Request& req, httplib::Response& res) {
    auto j = body(req, res);
    if (!j) return;
    auto t = tool_request_from_json(*j);
    if (!t) return refuse(res, t.error());
    if (!admission.try_admit(1)) return refuse(res, busy());
    if (!admission.start(deadline())) return refuse(res, busy());
    auto r = scorer->tool(t->task_id, name, t->kernel_code);
    admission.finish();
    if (!r) return refuse(res, r.error());
    send(res, 200, tool_answer(*r));
  }

  json op_item(const json& item) {
    auto op = op_request_from_json(item);
    if (!op) return error_body(op.error());
    if (!admission.try_admit(1)) return error_body(busy());
    if (!admission.start(deadline())) return error_body(busy());
    json answer;
    const auto t0 = Clock::now();
    if (op->op == "baseline") {
      auto s = scorer->baseline_speed(op->task_id);
      answer = s ? op_baseline_answer(*s, seconds_since(t0)) : error_body(s.error());
    } else {
      auto r = op->task_id.empty()
                   ? scorer->tool_at_shapes(op->op, op->kernel_source, kOpEntry, op->input_specs, op->target)
                   : scorer->tool(op->task_id, op->op, op->kernel_source);
      answer = r ? op_answer(*op, *r) : error_body(r.error());
    }
    admission.finish();
    if (carries_inline_reference(item) && !answer.contains("error")) answer["reference_source"] = kInlineReferenceNote;
    return answer;
  }

  void install_routes() {
    http.Post("/v1/reward", route("/v1/reward", [this](const auto& req, auto& res) {
                single_reward(req, res, reward_request_from_json, [](const RewardResult& r) { return r.to_json(); });
              }));
    http.Post("/v1/reward/batch", route("/v1/reward/batch", [this](const auto& req, auto& res) {
                auto j = body(req, res);
                if (!j) return;
                auto items = batch_requests_from_json(*j);
                if (!items) return refuse(res, items.error());
                if (!admit(*items, res)) return;
                json out = json::array();
                for (const auto& r : score_items(*items, deadline())) out.push_back(r.to_json());
                send(res, 200, {{"results", out}});
              }));
    for (const char* tool : {"compile", "verify", "profile"}) {
      const std::string path = std::string("/v1/") + tool;
      http.Post(path, route(path, [this, tool](const auto& req, auto& res) { tool_route(tool, req, res); }));
    }
    auto openrlhf = route("/openrlhf/get_reward", [this](const auto& req, auto& res) {
      auto j = body(req, res);
      if (!j) return;
      auto items = openrlhf_requests(*j);
      if (!items) return refuse(res, items.error());
      if (!admit(*items, res)) return;
      send(res, 200, openrlhf_answer(score_items(*items, deadline())));
    });
    http.Post("/openrlhf/get_reward", openrlhf);
    http.Post("/get_reward", openrlhf);
    auto slime = route("/slime/rm",
                       [this](const auto& req, auto& res) { single_reward(req, res, slime_request, slime_answer); });
    http.Post("/slime/rm", slime);
    http.Post("/rm", slime);
    http.Post("/evaluate", route("/evaluate", [this](const auto& req, auto& res) {
                auto j = body(req, res);
                if (!j) return;
                std::string id;
                auto rr = kernelgym_request(*j, id);
                if (!rr) return refuse(res, rr.error());
                if (!admission.try_admit(1)) return refuse(res, busy());
                const RewardResult r = score_admitted(*rr, deadline());
                json answer = r.status == "error" && r.error && r.turns.empty() ? kernelgym_error(id, *r.error)
                                                                                : kernelgym_answer(id, r);
                if (kernelgym_names_task(*j) && carries_inline_reference(*j))
                  answer["metadata"]["reference_code"] = kInlineReferenceNote;
                answers.put(id, answer);
                send(res, 200, answer);
              }));
    http.Post(
        "/evaluate/batch", route("/evaluate/batch", [this](const auto& req, auto& res) {
          auto j = body(req, res);
          if (!j) return;
          const json list = j->is_array() ? *j : j->is_object() && j->contains("requests") ? (*j)["requests"] : json();
          if (!list.is_array() || list.size() > kMaxBatchItems)
            return refuse(res, Diagnostic::error("nkia_reward_bad_request",
                                                 fmt::format("a batch is a list (or {{\"requests\": [...]}}) of "
                                                             "at most {} evaluate requests",
                                                             kMaxBatchItems)));
          std::vector<std::string> ids(list.size());
          std::vector<Result<RewardRequest>> items;
          for (size_t i = 0; i < list.size(); ++i) items.push_back(kernelgym_request(list[i], ids[i]));
          if (!admit(items, res)) return;
          const auto results = score_items(items, deadline());
          json out = json::array();
          for (size_t i = 0; i < results.size(); ++i) {
            const RewardResult& r = results[i];
            json a = r.status == "error" && r.error && r.turns.empty() ? kernelgym_error(ids[i], *r.error)
                                                                       : kernelgym_answer(ids[i], r);
            if (kernelgym_names_task(list[i]) && carries_inline_reference(list[i]))
              a["metadata"]["reference_code"] = kInlineReferenceNote;
            if (!ids[i].empty()) answers.put(ids[i], a);
            out.push_back(a);
          }
          send(res, 200, {{"results", out}});
        }));
    auto lookup = [this](const char* name) {
      return route(name, [this](const httplib::Request& req, httplib::Response& res) {
        const std::string id = req.matches.size() > 1 ? std::string(req.matches[1]) : std::string();
        auto a = answers.get(id);
        if (!a)
          return refuse(res,
                        Diagnostic::error("nkia_serve_not_found", fmt::format("no evaluation '{}'", id.substr(0, 100)),
                                          "POST /evaluate first; ids are the requests' task_id"));
        send(res, 200, *a);
      });
    };
    http.Get(R"(/status/([^/]+))", lookup("/status"));
    http.Get(R"(/results/([^/]+))", lookup("/results"));
    http.Post("/reward", route("/reward", [this](const auto& req, auto& res) {
                auto j = body(req, res);
                if (!j) return;
                const json a = op_item(*j);
                if (a.contains("error") && a["error"].is_object())
                  return refuse(res, Diagnostic::error(a["error"].value("code", ""), a["error"].value("message", "")));
                send(res, 200, a);
              }));
    http.Post("/reward/batch", route("/reward/batch", [this](const auto& req, auto& res) {
                auto j = body(req, res);
                if (!j) return;
                if (!j->is_object() || !j->contains("items") || !(*j)["items"].is_array())
                  return refuse(res, Diagnostic::error("nkia_reward_bad_request", "items must be a list"));
                const json& items = (*j)["items"];
                if (items.size() > 64)
                  return refuse(res, Diagnostic::error("nkia_reward_bad_request", "batch size exceeds 64"));
                std::vector<json> out(items.size());
                batch_pool->parallel_for(static_cast<int64_t>(items.size()), [&](int64_t i) {
                  out[static_cast<size_t>(i)] = op_item(items[static_cast<size_t>(i)]);
                });
                send(res, 200, {{"results", out}});
              }));
    http.Get("/health", route("/health", [this](const auto&, auto& res) {
               json presets = json::array();
               for (const auto& p : reward_presets()) presets.push_back(std::string(p.name));
               send(res, 200,
                    {{"status", admission.draining() ? "draining" : "ok"},
                     {"version", kVersion},
                     {"task_roots", scorer->options().task_roots},
                     {"tasks", scorer->tasks_indexed()},
                     {"presets", presets},
                     {"default_preset", std::string(kDefaultPreset)},
                     {"workers", opt.workers},
                     {"kernel_workers", scorer->kernel_workers()},
                     {"in_flight", admission.running()},
                     {"queued", admission.queued()}});
             }));
    http.Get("/metrics", route("/metrics", [this](const auto&, auto& res) {
               Gauges g;
               g.in_flight = admission.running();
               g.queued = admission.queued();
               g.cache_hits = scorer->cache_hits();
               g.cache_misses = scorer->cache_misses();
               g.verifications = scorer->verifications();
               g.worker_restarts = scorer->worker_restarts();
               g.rejected_busy = admission.rejected();
               res.status = 200;
               res.set_content(metrics.render(g), "text/plain; version=0.0.4");
             }));
  }

  void install_guards() {
    // Authorisation first, for every route but /health.
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (!tokens.required() || req.path == "/health") return httplib::Server::HandlerResponse::Unhandled;
      if (tokens.accepts(req.get_header_value("Authorization")) ||
          (req.has_param("token") && tokens.holds(req.get_param_value("token"))))
        return httplib::Server::HandlerResponse::Unhandled;
      refuse(res, Diagnostic::error("nkia_serve_unauthorized", "a missing or wrong bearer token",
                                    "send Authorization: Bearer <token>"));
      metrics.request("unauthorized", 401, 0);
      return httplib::Server::HandlerResponse::Handled;
    });
    // Answers httplib makes itself (413, 404, 400 on a malformed request line) get our JSON body.
    http.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req,
                                                                       httplib::Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      if (res.status == 413) {
        refuse(res,
               Diagnostic::error("nkia_serve_body_too_large",
                                 fmt::format("the body is over the server's limit of {} bytes", opt.max_body_bytes),
                                 "send smaller batches"));
      } else if (res.status == 404) {
        refuse(res, Diagnostic::error("nkia_serve_not_found",
                                      fmt::format("no route {} {}", req.method, req.path.substr(0, 200)),
                                      "docs/serve.md lists the routes"));
        metrics.request("not_found", 404, 0);
      } else {
        send(res, res.status, error_body(Diagnostic::error("nkia_serve_bad_json", fmt::format("HTTP {}", res.status))));
      }
      return httplib::Server::HandlerResponse::Handled;
    }));
    http.set_exception_handler([this](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
      send(res, 500, error_body(Diagnostic::error("nkia_internal", "internal error")));
    });
    http.set_payload_max_length(opt.max_body_bytes);
    http.set_read_timeout(static_cast<time_t>(opt.read_timeout_seconds), 0);
    http.set_write_timeout(static_cast<time_t>(opt.read_timeout_seconds), 0);
    http.set_keep_alive_timeout(5);
    // Threads for connections: every admitted item may hold one, plus room for /health, /metrics
    // and requests answered 429.
    const size_t threads = static_cast<size_t>(opt.workers + opt.queue) + 8;
    http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  }
};

RewardServer::RewardServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RewardServer::~RewardServer() {
  shutdown(0);
}

Result<std::unique_ptr<RewardServer>> RewardServer::create(ServeOptions options) {
  if (options.workers <= 0) options.workers = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (options.queue <= 0) options.queue = 4 * options.workers;
  TokenSet tokens = TokenSet::none();
  if (!options.tokens_file.empty()) {
    auto t = TokenSet::load(options.tokens_file);
    if (!t) return tl::unexpected(t.error());
    tokens = std::move(*t);
  } else if (!is_loopback_host(options.host)) {
    return tl::unexpected(Diagnostic::error(
        "nkia_bad_argument",
        fmt::format("serving on {} needs --tokens: only a loopback address may go without", options.host),
        "give --tokens FILE (one token per line), or bind to 127.0.0.1"));
  }
  if (options.scorer.kernel_workers <= 0) options.scorer.kernel_workers = options.workers;
  auto scorer = RewardScorer::create(options.scorer);
  if (!scorer) return tl::unexpected(scorer.error());
  const int workers = options.workers, queue = options.queue;
  auto impl = std::make_unique<Impl>(std::move(options), workers, queue);
  impl->scorer = std::move(*scorer);
  impl->batch_pool = std::make_unique<ThreadPool>(static_cast<unsigned>(workers));
  impl->tokens = std::move(tokens);
  impl->install_guards();
  impl->install_routes();
  if (impl->opt.port == 0) {
    impl->port = impl->http.bind_to_any_port(impl->opt.host);
    if (impl->port <= 0)
      return tl::unexpected(Diagnostic::error("nkia_bad_argument", fmt::format("cannot bind {}", impl->opt.host)));
  } else {
    if (!impl->http.bind_to_port(impl->opt.host, impl->opt.port))
      return tl::unexpected(Diagnostic::error("nkia_bad_argument",
                                              fmt::format("cannot bind {}:{}", impl->opt.host, impl->opt.port),
                                              "is another server on that port? choose another with --port"));
    impl->port = impl->opt.port;
  }
  return std::unique_ptr<RewardServer>(new RewardServer(std::move(impl)));
}

int RewardServer::port() const {
  return impl_->port;
}

void RewardServer::run() {
  {
    std::lock_guard lock(impl_->shutdown_mu);
    if (impl_->stopping) return;
    impl_->run_entered = true;
  }
  impl_->http.listen_after_bind();
  impl_->run_returned = true;
}

void RewardServer::shutdown(double drain_seconds) {
  {
    std::lock_guard lock(impl_->shutdown_mu);
    if (impl_->stopping.exchange(true)) return;
  }
  impl_->admission.drain();
  impl_->admission.wait_idle(Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(drain_seconds * 1e3)));
  // httplib's stop() does nothing until its listen loop runs: a run() that has entered but not yet
  // started listening is waited for (briefly), so that it cannot begin listening after the stop.
  if (impl_->run_entered)
    for (int i = 0; i < 5000 && !impl_->http.is_running() && !impl_->run_returned; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  impl_->http.stop();
}

}  // namespace nki_agent::serve
