// Verifications already done, on disk (tasks/verify_cache.h).
#include "tasks/verify_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "core/clock.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/version.h"
#include "runtime/worker_pool.h"
#include "tasks/baseline.h"
#include "tasks/reference.h"
#include "tasks/reference_cache.h"

namespace nki_agent {

namespace fs = std::filesystem;

namespace {

// Bump when the stored form or the key's meaning changes.
constexpr int64_t kResultCacheVersion = 1;

// Kernel failures the machine's load or state decides, not the kernel: never stored.
bool load_dependent(const std::string& code) {
  return code == "nkia_sandbox_timeout" || code == "nkia_sandbox_cpu_limit" || code == "nkia_sandbox_memory_limit" ||
         code == "nkia_sandbox_crash" || code == "nkia_frame_timeout" || code == "nkia_shared_memory";
}

// "size|mtime ns|inode" of an executable; empty when it cannot be read.
std::string file_identity(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return "";
  return fmt::format("{}|{}|{}|{}", path, st.st_size,
                     static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec, st.st_ino);
}

// nki-agent's version and both executables: the simulator that produced a result.
const std::string& simulator_identity() {
  static const std::string id = [] {
    char self[4096];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return std::string();
    const std::string me = file_identity(std::string(self, static_cast<size_t>(n)));
    auto worker = locate_worker("");
    const std::string w = worker ? file_identity(*worker) : "";
    if (me.empty() || w.empty()) return std::string();
    return fmt::format("{}|{}|{}|{}", kVersion, kBuildType, me, w);
  }();
  return id;
}

void hash_files(Hasher& h, const KernelFiles& f) {
  h.field(f.main_path).field(static_cast<int64_t>(f.files.size()));
  for (const auto& [path, src] : f.files) h.field(path).field(src);
}

// ---- reading a stored result back (the inverse of the to_json methods) ----

const nlohmann::json* member(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::string str(const nlohmann::json& j, const char* key) {
  const auto* v = member(j, key);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

// A number; null (how NaN and infinities are written) reads as NaN.
double num(const nlohmann::json& j, const char* key, double dflt = 0) {
  const auto* v = member(j, key);
  if (v == nullptr) return dflt;
  if (v->is_null()) return std::numeric_limits<double>::quiet_NaN();
  return v->is_number() ? v->get<double>() : dflt;
}

int64_t integer(const nlohmann::json& j, const char* key) {
  const auto* v = member(j, key);
  return v && v->is_number_integer() ? v->get<int64_t>() : 0;
}

bool flag(const nlohmann::json& j, const char* key) {
  const auto* v = member(j, key);
  return v && v->is_boolean() && v->get<bool>();
}

std::vector<std::string> strings(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  if (const auto* v = member(j, key); v && v->is_array())
    for (const auto& s : *v)
      if (s.is_string()) out.push_back(s.get<std::string>());
  return out;
}

OutputCheck output_from_json(const nlohmann::json& j) {
  OutputCheck o;
  o.check = str(j, "check");
  o.message = str(j, "message");
  o.elements = integer(j, "elements");
  o.mismatches = integer(j, "mismatches");
  o.unwritten = integer(j, "unwritten");
  o.stored_nan = integer(j, "stored_nan");
  o.max_abs_error = num(j, "max_abs_error");
  o.max_rel_error = num(j, "max_rel_error");
  o.rel_norm_error = num(j, "rel_norm_error");
  o.expected_max_abs = num(j, "expected_max_abs");
  o.reference_too_small = flag(j, "reference_too_small");
  if (const auto* idx = member(j, "first_bad_index"); idx && idx->is_array())
    for (const auto& d : *idx)
      if (d.is_number_integer()) o.first_bad_index.push_back(d.get<int64_t>());
  o.first_bad_actual = num(j, "first_bad_actual");
  o.first_bad_expected = num(j, "first_bad_expected");
  return o;
}

CaseResult case_from_json(const nlohmann::json& j) {
  CaseResult c;
  c.index = static_cast<int>(integer(j, "index"));
  c.shape_set = str(j, "shapes");
  c.seed = static_cast<uint64_t>(integer(j, "seed"));
  c.profile = str(j, "profile");
  c.timing_only = flag(j, "timing_only");
  c.ran = flag(j, "ran");
  c.passed = flag(j, "passed");
  c.check = str(j, "check");
  c.message = str(j, "message");
  if (const auto* e = member(j, "kernel_error"); e && e->is_object()) c.kernel_error = Diagnostic::from_json(*e);
  if (const auto* outs = member(j, "outputs"); outs && outs->is_array())
    for (const auto& o : *outs) c.outputs.push_back(output_from_json(o));
  c.notes = strings(j, "notes");
  c.kernel_seconds = num(j, "kernel_seconds");
  return c;
}

SpeedResult speed_from_json(const nlohmann::json& j) {
  SpeedResult s;
  s.available = flag(j, "available");
  s.reason = str(j, "reason");
  s.target = str(j, "target");
  s.candidate_seconds = num(j, "candidate_seconds");
  s.baseline_seconds = num(j, "baseline_seconds");
  s.speedup = num(j, "speedup");
  s.roofline_seconds = num(j, "roofline_seconds");
  s.roofline_fraction = num(j, "roofline_fraction");
  return s;
}

}  // namespace

std::string result_cache_dir_for(const std::string& reference_cache_dir) {
  return (fs::path(reference_cache_dir.empty() ? default_reference_cache_dir() : reference_cache_dir) / "results")
      .string();
}

std::string verify_result_key(const Task& task, const KernelFiles& candidate, const VerifyOptions& o) {
  const std::string& sim = simulator_identity();
  if (sim.empty()) return "";
  if (o.speed.available() && o.speed.identity.empty()) return "";
  Hasher h;
  h.field("verify-result").field(kResultCacheVersion).field(sim).field(torch_fingerprint());
  h.field(task.hash).field(task.id);
  hash_files(h, candidate);
  if (auto base = load_baseline_files(task)) {
    h.field("baseline");
    hash_files(h, *base);
  } else {
    h.field("no baseline: " + base.error().message);
  }
  h.field(static_cast<int64_t>(o.seeds)).field(static_cast<int64_t>(o.seed_base));
  h.field(static_cast<int64_t>(o.shape_sets.size()));
  for (const auto& s : o.shape_sets) h.field(s);
  h.field(fmt::format("{:.17g}", o.kernel_seconds)).field(o.kernel_memory_mib);
  h.field(static_cast<int64_t>(o.static_policy)).field(static_cast<int64_t>(o.fail_fast));
  h.field(o.max_compute_bytes).field(o.max_compute_output_bytes);
  h.field(static_cast<int64_t>(o.reference.threads));
  h.field(o.speed.available() ? o.speed.identity : std::string("no speed"));
  return to_hex(h.finish());
}

bool verify_result_repeatable(const VerifyResult& r, const VerifyOptions& o) {
  if (r.diagnostic && load_dependent(r.diagnostic->code)) return false;
  for (const auto& c : r.cases)
    if (c.kernel_error && load_dependent(c.kernel_error->code)) return false;
  // A passing kernel whose speed was asked for but not measured: the timing run failed.
  if (r.passed && o.speed.available() && !r.speed.available) return false;
  return true;
}

VerifyResult verify_result_from_json(const nlohmann::json& j) {
  VerifyResult r;
  r.task = str(j, "task");
  r.kernel = str(j, "kernel");
  r.passed = flag(j, "passed");
  r.check = str(j, "check");
  r.message = str(j, "message");
  if (const auto* d = member(j, "diagnostic"); d && d->is_object()) r.diagnostic = Diagnostic::from_json(*d);
  if (const auto* vs = member(j, "violations"); vs && vs->is_array())
    for (const auto& v : *vs)
      r.violations.push_back(PolicyViolation{str(v, "rule"), str(v, "message"), str(v, "file"),
                                             static_cast<int>(integer(v, "line")), static_cast<int>(integer(v, "col")),
                                             str(v, "hint")});
  if (const auto* cs = member(j, "cases"); cs && cs->is_array())
    for (const auto& c : *cs) r.cases.push_back(case_from_json(c));
  r.cases_total = static_cast<int>(integer(j, "cases_total"));
  r.cases_run = static_cast<int>(integer(j, "cases_run"));
  r.cases_passed = static_cast<int>(integer(j, "cases_passed"));
  if (const auto* s = member(j, "speed")) r.speed = speed_from_json(*s);
  if (const auto* ref = member(j, "reference")) {
    r.reference.cached = static_cast<int>(integer(*ref, "cached"));
    r.reference.computed = static_cast<int>(integer(*ref, "computed"));
    r.reference.seconds = num(*ref, "seconds");
    r.reference.compute_seconds = num(*ref, "compute_seconds");
    r.reference.torch = str(*ref, "torch");
  }
  r.warnings = strings(j, "warnings");
  r.seconds = num(j, "seconds");
  return r;
}

VerifyResultCache::VerifyResultCache(std::string dir) : dir_(std::move(dir)) {}

std::string VerifyResultCache::path_of(const std::string& key) const {
  return (fs::path(dir_) / key.substr(0, 2) / (key + ".json")).string();
}

std::optional<VerifyResult> VerifyResultCache::get(const std::string& key) const {
  if (key.size() != 64) return std::nullopt;
  const auto start = std::chrono::steady_clock::now();
  const std::string path = path_of(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || integer(j, "version") != kResultCacheVersion || str(j, "key") != key) return std::nullopt;
  const auto* stored = member(j, "result");
  if (stored == nullptr || !stored->is_object()) return std::nullopt;
  VerifyResult r = verify_result_from_json(*stored);
  r.from_result_cache = true;
  r.verified_seconds = r.seconds;
  r.seconds = seconds_since(start);
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);  // its last use, for eviction
  return r;
}

void VerifyResultCache::put(const std::string& key, const VerifyResult& result, const VerifyOptions& options) const {
  if (key.size() != 64 || result.from_result_cache || !verify_result_repeatable(result, options)) return;
  static std::atomic<uint64_t> serial{0};
  const fs::path final_path = path_of(key);
  std::error_code ec;
  fs::create_directories(final_path.parent_path(), ec);
  if (ec) {
    NKIA_LOG_DEBUG("result cache {}: cannot create {}: {}", dir_, final_path.parent_path().string(), ec.message());
    return;
  }
  const nlohmann::json j = {{"version", kResultCacheVersion}, {"key", key}, {"result", result.to_json()}};
  const fs::path tmp = final_path.string() + fmt::format(".tmp.{}.{}", ::getpid(), serial++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << j.dump();
    if (!out) {
      NKIA_LOG_DEBUG("result cache {}: cannot write {}", dir_, tmp.string());
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, final_path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return;
  }

  // Keep the folder under its limit: least recently used results go first.
  int64_t limit = kDefaultResultCacheMaxBytes;
  if (auto set = cache_limit(kResultCacheMaxBytesEnv, kDefaultResultCacheMaxBytes)) {
    limit = set->bytes;
  } else {
    NKIA_LOG_WARN("{}; keeping the result cache within the default {} bytes", set.error().message, limit);
  }
  struct Entry {
    fs::file_time_type used;
    int64_t bytes;
    fs::path path;
  };
  std::vector<Entry> entries;
  int64_t total = 0;
  for (auto it = fs::recursive_directory_iterator(dir_, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code fec;
    if (!it->is_regular_file(fec) || it->path().extension() != ".json") continue;
    const auto size = static_cast<int64_t>(it->file_size(fec));
    if (fec) continue;
    const auto used = it->last_write_time(fec);
    if (fec) continue;
    entries.push_back({used, size, it->path()});
    total += size;
  }
  if (total <= limit) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const auto& e : entries) {
    if (total <= limit) break;
    if (e.path == final_path) continue;
    std::error_code rec;
    if (fs::remove(e.path, rec)) total -= e.bytes;
  }
}

}  // namespace nki_agent
