// Fitting a target's free parameters to measured latencies: the measurements file's reader, the
// rewriting of numbers in a target's TOML text, the bounded Nelder–Mead fit on log latency, the
// statistics and the report (cost/calibrate.h says how the fit works).
#include "cost/calibrate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <sstream>
#include <thread>

#include "core/thread_pool.h"
#include "cost/cost.h"
#include "nki/target_toml.h"
#include "tensor/tensor_spec.h"

namespace nki_agent {

namespace {

constexpr std::string_view kMeasurementsHint =
    "see docs/cost-model.md (\"Calibrating a target\") for the measurements file's fields";

// A Diagnostic of the shared TOML reader, re-coded as the measurements file's.
Diagnostic as_measurements(Diagnostic d, std::string_view path, int line) {
  d.code = "nkia_measurements_invalid";
  d.hint = std::string(kMeasurementsHint);
  d.notes.clear();
  d.loc.file = std::string(path);
  if (line > 0) d.loc.line = line;
  return d;
}

Diagnostic measurements_error(std::string_view path, int line, std::string msg) {
  Diagnostic d =
      Diagnostic::error("nkia_measurements_invalid", fmt::format("{}: {}", path, msg), std::string(kMeasurementsHint));
  d.loc.file = std::string(path);
  d.loc.line = line;
  return d;
}

int line_of(const toml::node* n) {
  return n ? static_cast<int>(n->source().begin.line) : 0;
}

Result<CalibrationPoint> read_point(const toml::table* t, size_t index, const std::string& path,
                                    const std::filesystem::path& folder) {
  const int line = line_of(t);
  if (!t) return fail(measurements_error(path, line, fmt::format("point[{}] must be a table ([[point]])", index)));
  CalibrationPoint p;
  p.line = line;
  const toml::node* name_n = t->get("name");
  const auto name = name_n ? name_n->value_exact<std::string>() : std::nullopt;
  if (!name || name->empty())
    return fail(measurements_error(
        path, line, fmt::format("point[{}].name {}", index, name_n ? "must be a non-empty string" : "is missing")));
  p.name = *name;
  TableReader r(t, fmt::format("point '{}'", p.name), path);
  auto mapped = [&](const Diagnostic& d) { return fail(as_measurements(d, path, line)); };
  // Unknown keys are refused here, before anything is read; "grid" is read by hand (integers).
  if (auto ok = r.only({"name", "kernel", "entry", "shapes", "args", "grid", "measured_us", "source"}); !ok)
    return mapped(ok.error());
  auto kernel = r.string("kernel", std::nullopt);
  if (!kernel) return mapped(kernel.error());
  if (kernel->empty()) return fail(measurements_error(path, line, fmt::format("{} is empty", r.where("kernel"))));
  p.kernel = *kernel;
  const std::filesystem::path kp(*kernel);
  p.kernel_path = (kp.is_absolute() ? kp : folder / kp).lexically_normal().string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p.kernel_path, ec) || !std::ifstream(p.kernel_path))
    return fail(measurements_error(
        path, line, fmt::format("{} = '{}': cannot read {}", r.where("kernel"), *kernel, p.kernel_path)));
  auto entry = r.string("entry", std::nullopt);
  if (!entry) return mapped(entry.error());
  if (entry->empty()) return fail(measurements_error(path, line, fmt::format("{} is empty", r.where("entry"))));
  p.entry = *entry;
  if (!r.present("shapes"))
    return fail(measurements_error(path, line, fmt::format("{} is missing", r.where("shapes"))));
  auto shapes = r.strings("shapes");
  if (!shapes) return mapped(shapes.error());
  for (const auto& s : *shapes)
    if (auto spec = parse_tensor_spec(s); !spec)
      return fail(
          measurements_error(path, line, fmt::format("{}: '{}': {}", r.where("shapes"), s, spec.error().message)));
  p.shapes = *shapes;
  auto args = r.strings("args");
  if (!args) return mapped(args.error());
  for (const auto& a : *args)
    if (a.find('=') == std::string::npos || a.front() == '=')
      return fail(
          measurements_error(path, line, fmt::format("{}: '{}' is not name=python-literal", r.where("args"), a)));
  p.args = *args;
  if (const toml::node* g = t->get("grid")) {
    const toml::array* a = g->as_array();
    if (!a)
      return fail(measurements_error(path, line, fmt::format("{} must be an array of integers", r.where("grid"))));
    for (const auto& e : *a) {
      auto v = e.value_exact<int64_t>();
      if (!v || *v < 1 || *v > 65536)
        return fail(
            measurements_error(path, line, fmt::format("{} must hold integers in [1, 65536]", r.where("grid"))));
      p.grid.push_back(*v);
    }
  }
  const toml::node* mu = t->get("measured_us");
  auto measured =
      r.number("measured_us", std::nullopt, -std::numeric_limits<double>::max(), std::numeric_limits<double>::max());
  if (!measured) return mapped(measured.error());
  if (!(*measured > 0) || *measured > 1e9)
    return fail(measurements_error(path, line_of(mu) ? line_of(mu) : line,
                                   fmt::format("{} = {} must be a positive latency in microseconds (at most 1e9)",
                                               r.where("measured_us"), *measured)));
  p.measured_us = *measured;
  auto src = r.string("source", std::string());
  if (!src) return mapped(src.error());
  p.source = *src;
  return p;
}

// The position of a number's value token in a target text: 0-based line and column.
struct TokenAt {
  size_t line = 0, col = 0;
  bool integer = false;
  double value = 0;
};

Result<TokenAt> number_token(const toml::table& root, std::string_view key, std::string_view origin) {
  const toml::node* n = root.at_path(key).node();
  if (!n || !(n->is_floating_point() || n->is_integer()) || n->source().begin.line == 0)
    return fail("nkia_hardware_invalid", fmt::format("{}: '{}' names no number of the file", origin, key),
                "a [[calibrate]] key is the dotted path of a number in the same file");
  TokenAt t;
  t.line = n->source().begin.line - 1;
  t.col = n->source().begin.column - 1;
  t.integer = n->is_integer();
  t.value = n->value<double>().value_or(0);
  return t;
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size() - 1;
    lines.emplace_back(text.substr(pos, nl + 1 - pos));
    pos = nl + 1;
  }
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l;
  return out;
}

// A value as a TOML number that reads back as the same double.
std::string toml_number(double v, bool integer) {
  if (integer) return fmt::format("{}", static_cast<int64_t>(std::llround(v)));
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

// Where the value token starting at `col` ends.
size_t token_end(const std::string& line, size_t col) {
  size_t e = col;
  while (e < line.size() && !std::isspace(static_cast<unsigned char>(line[e])) && line[e] != ',' && line[e] != '}' &&
         line[e] != ']' && line[e] != '#')
    ++e;
  return e;
}

// A free parameter's position in the unit interval and back.
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double value(double u) const {
    u = std::clamp(u, 0.0, 1.0);
    if (log) return std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo)));
    return lo + u * (hi - lo);
  }
  double unit(double v) const {
    const double u = log ? (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo)) : (v - lo) / (hi - lo);
    return std::clamp(u, 0.0, 1.0);
  }
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double r = 0.5 * static_cast<double>(i + j) + 1;
    for (size_t k = i; k <= j; ++k) rank[idx[k]] = r;
    i = j + 1;
  }
  return rank;
}

FitStats stats_of(const std::vector<double>& predicted, const std::vector<double>& measured) {
  FitStats s;
  std::vector<double> abs_err;
  double sq = 0;
  for (size_t i = 0; i < predicted.size(); ++i) {
    abs_err.push_back(std::abs(predicted[i] / measured[i] - 1));
    const double d = std::log(predicted[i]) - std::log(measured[i]);
    sq += d * d;
  }
  s.median_abs_error = median(abs_err);
  s.worst_abs_error = abs_err.empty() ? 0 : *std::max_element(abs_err.begin(), abs_err.end());
  s.log_rms = predicted.empty() ? 0 : std::sqrt(sq / static_cast<double>(predicted.size()));
  s.spearman = spearman_correlation(predicted, measured);
  return s;
}

// The fit's state: the base text, the parameters' axes and the included points' traces.
class Fitter {
 public:
  Fitter(std::string_view base_text, std::string_view origin, std::vector<std::string> keys, std::vector<Axis> axes,
         std::vector<const Trace*> traces, std::vector<double> measured_us, int max_evaluations, unsigned threads)
      : base_(base_text),
        origin_(origin),
        keys_(std::move(keys)),
        axes_(std::move(axes)),
        traces_(std::move(traces)),
        measured_(std::move(measured_us)),
        max_evaluations_(max_evaluations) {
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    threads = std::min<unsigned>(threads, static_cast<unsigned>(traces_.size()));
    if (threads > 1) pool_ = std::make_unique<ThreadPool>(threads);
  }

  std::vector<std::pair<std::string, double>> values_at(const std::vector<double>& u) const {
    std::vector<std::pair<std::string, double>> out;
    for (size_t i = 0; i < keys_.size(); ++i) out.emplace_back(keys_[i], axes_[i].value(u[i]));
    return out;
  }

  // Every included point's predicted latency (µs) at `u`, or a Diagnostic.
  Result<std::vector<double>> predict(const std::vector<double>& u) const { return predict_values(values_at(u)); }
  Result<std::vector<double>> predict_values(const std::vector<std::pair<std::string, double>>& values) const {
    NKIA_TRY(text, set_target_numbers(base_, values, origin_));
    NKIA_TRY(hw, parse_hardware(text, origin_));
    std::vector<std::optional<Result<double>>> each(traces_.size());
    auto cost = [&](int64_t i) {
      auto rep = profile_trace(*traces_[static_cast<size_t>(i)], hw);
      each[static_cast<size_t>(i)] =
          rep ? Result<double>(rep->profile.total_ns / 1e3) : Result<double>(fail(rep.error()));
    };
    if (pool_)
      pool_->parallel_for(static_cast<int64_t>(traces_.size()), cost);
    else
      for (size_t i = 0; i < traces_.size(); ++i) cost(static_cast<int64_t>(i));
    std::vector<double> out;
    for (auto& e : each) {
      if (!*e) return fail(e->error());
      out.push_back(**e);
    }
    return out;
  }

  double objective(std::vector<double> u) {
    for (double& x : u) x = std::clamp(x, 0.0, 1.0);
    if (auto it = cache_.find(u); it != cache_.end()) return it->second;
    ++evaluations_;
    double f = std::numeric_limits<double>::infinity();
    if (auto p = predict(u)) {
      f = 0;
      for (size_t i = 0; i < p->size(); ++i) {
        const double d = (*p)[i] > 0 ? std::log((*p)[i]) - std::log(measured_[i]) : 1e3;
        f += d * d;
      }
    }
    cache_.emplace(u, f);
    return f;
  }

  bool exhausted() const { return evaluations_ >= max_evaluations_; }
  int evaluations() const { return evaluations_; }

  // One Nelder–Mead run from `start` with initial steps `step` in the unit cube; returns whether it
  // converged (rather than running out of evaluations).
  bool nelder_mead(std::vector<double>& best, double& best_f, double step) {
    const size_t n = best.size();
    std::vector<std::vector<double>> x(n + 1, best);
    std::vector<double> f(n + 1);
    f[0] = objective(x[0]);
    for (size_t i = 0; i < n; ++i) {
      x[i + 1][i] = best[i] + step <= 1.0 ? best[i] + step : best[i] - step;
      f[i + 1] = objective(x[i + 1]);
    }
    auto clamp = [](std::vector<double> v) {
      for (double& e : v) e = std::clamp(e, 0.0, 1.0);
      return v;
    };
    auto along = [&](const std::vector<double>& c, const std::vector<double>& w, double t) {
      std::vector<double> v(n);
      for (size_t k = 0; k < n; ++k) v[k] = c[k] + t * (w[k] - c[k]);
      return clamp(v);
    };
    bool converged = false;
    while (!exhausted()) {
      std::vector<size_t> order(n + 1);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return f[a] < f[b]; });
      std::vector<std::vector<double>> xs;
      std::vector<double> fs;
      for (size_t i : order) {
        xs.push_back(x[i]);
        fs.push_back(f[i]);
      }
      x = std::move(xs);
      f = std::move(fs);
      double size = 0;
      for (size_t i = 1; i <= n; ++i)
        for (size_t k = 0; k < n; ++k) size = std::max(size, std::abs(x[i][k] - x[0][k]));
      if (size < 1e-6 || (std::isfinite(f[n]) && f[n] - f[0] <= 1e-14 + 1e-10 * f[0] && size < 1e-3)) {
        converged = true;
        break;
      }
      std::vector<double> c(n, 0.0);
      for (size_t i = 0; i < n; ++i)
        for (size_t k = 0; k < n; ++k) c[k] += x[i][k] / static_cast<double>(n);
      const std::vector<double> xr = along(c, x[n], -1.0);
      const double fr = objective(xr);
      if (fr < f[0]) {
        const std::vector<double> xe = along(c, x[n], -2.0);
        const double fe = objective(xe);
        if (fe < fr) {
          x[n] = xe, f[n] = fe;
        } else {
          x[n] = xr, f[n] = fr;
        }
        continue;
      }
      if (fr < f[n - 1]) {
        x[n] = xr, f[n] = fr;
        continue;
      }
      const bool outside = fr < f[n];
      const std::vector<double> xc = along(c, outside ? xr : x[n], 0.5);
      const double fc = objective(xc);
      if (fc < (outside ? fr : f[n])) {
        x[n] = xc, f[n] = fc;
        continue;
      }
      for (size_t i = 1; i <= n && !exhausted(); ++i) {
        x[i] = along(x[0], x[i], 0.5);
        f[i] = objective(x[i]);
      }
    }
    const size_t b = static_cast<size_t>(std::min_element(f.begin(), f.end()) - f.begin());
    if (f[b] < best_f) {
      best = x[b];
      best_f = f[b];
    }
    return converged;
  }

 private:
  std::string_view base_;
  std::string_view origin_;
  std::vector<std::string> keys_;
  std::vector<Axis> axes_;
  std::vector<const Trace*> traces_;
  std::vector<double> measured_;
  int max_evaluations_;
  int evaluations_ = 0;
  std::map<std::vector<double>, double> cache_;
  std::unique_ptr<ThreadPool> pool_;  // the points are costed in parallel; null: one thread
};

std::string percent(double e) {
  return fmt::format("{:+.1f}%", 100 * e);
}

std::string stats_line(std::string_view label, double a, double b, bool as_percent) {
  if (as_percent)
    return fmt::format("  {:<16} {:>10} {:>10}\n", label, fmt::format("{:.1f}%", 100 * a),
                       fmt::format("{:.1f}%", 100 * b));
  return fmt::format("  {:<16} {:>10.3f} {:>10.3f}\n", label, a, b);
}

nlohmann::json stats_json(const FitStats& s) {
  return {{"median_abs_error", s.median_abs_error},
          {"worst_abs_error", s.worst_abs_error},
          {"log_rms", s.log_rms},
          {"spearman", s.spearman}};
}

}  // namespace

Result<Measurements> parse_measurements(std::string_view text, const std::string& path) {
  auto parsed = parse_target_toml(text, path);
  if (!parsed) return fail(as_measurements(parsed.error(), path, parsed.error().loc.line));
  const toml::table& root = *parsed;
  Measurements m;
  m.path = path;
  TableReader top(&root, "", path);
  if (auto ok = top.only({"measurements", "point"}); !ok) return fail(as_measurements(ok.error(), path, 0));
  const toml::node* head = root.get("measurements");
  if (!head || !head->as_table())
    return fail(measurements_error(
        path, 1, head ? "measurements must be a table ([measurements])" : "the [measurements] table is missing"));
  {
    TableReader r(head->as_table(), "measurements", path);
    const int line = line_of(head);
    if (auto ok = r.only({"target", "source"}); !ok) return fail(as_measurements(ok.error(), path, line));
    auto target = r.string("target", std::nullopt);
    if (!target) return fail(as_measurements(target.error(), path, line));
    m.target = *target;
    auto src = r.string("source", std::string());
    if (!src) return fail(as_measurements(src.error(), path, line));
    m.source = *src;
  }
  const toml::node* pts = root.get("point");
  const toml::array* arr = pts ? pts->as_array() : nullptr;
  if (!pts || !arr || arr->empty())
    return fail(measurements_error(
        path, line_of(pts),
        pts ? "point must be a non-empty array of tables ([[point]])" : "no [[point]] tables: nothing to fit"));
  if (arr->size() > kMaxCalibrationPoints)
    return fail(measurements_error(
        path, line_of(pts),
        fmt::format("{} points: at most {} are fitted at once", arr->size(), kMaxCalibrationPoints)));
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::set<std::string> names;
  for (size_t i = 0; i < arr->size(); ++i) {
    NKIA_TRY(p, read_point((*arr)[i].as_table(), i, path, folder));
    if (!names.insert(p.name).second)
      return fail(measurements_error(path, p.line, fmt::format("point '{}': the name is given twice", p.name)));
    m.points.push_back(std::move(p));
  }
  return m;
}

Result<Measurements> load_measurements_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::error_code ec;
  if (!f || std::filesystem::is_directory(path, ec))
    return fail("nkia_measurements_unreadable", fmt::format("cannot read the measurements file {}", path),
                std::string(kMeasurementsHint));
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  if (text.size() > (8u << 20))
    return fail(measurements_error(path, 0, "larger than 8 MiB; a measurements file is a few KiB"));
  return parse_measurements(text, path);
}

Result<std::string> set_target_numbers(std::string_view text, const std::vector<std::pair<std::string, double>>& values,
                                       std::string_view origin) {
  NKIA_TRY(root, parse_target_toml(text, origin));
  std::vector<std::string> lines = split_lines(text);
  std::vector<std::pair<TokenAt, std::string>> edits;
  for (const auto& [key, v] : values) {
    NKIA_TRY(at, number_token(root, key, origin));
    if (at.line >= lines.size() || at.col >= lines[at.line].size())
      return fail("nkia_hardware_invalid", fmt::format("{}: '{}' is not where its parser says", origin, key),
                  "write the number on one line");
    edits.emplace_back(at, toml_number(v, at.integer));
  }
  // Right to left on each line, so earlier columns stay valid.
  std::sort(edits.begin(), edits.end(), [](const auto& a, const auto& b) {
    return a.first.line != b.first.line ? a.first.line < b.first.line : a.first.col > b.first.col;
  });
  for (const auto& [at, token] : edits) {
    std::string& line = lines[at.line];
    const size_t end = token_end(line, at.col);
    // Keep a comment after the value in its column where the spaces before it allow.
    size_t spaces = 0;
    while (end + spaces < line.size() && line[end + spaces] == ' ') ++spaces;
    const bool comment_follows = spaces > 0 && end + spaces < line.size() && line[end + spaces] == '#';
    const long delta = static_cast<long>(token.size()) - static_cast<long>(end - at.col);
    if (comment_follows && delta > 0)
      line.erase(end, std::min(static_cast<size_t>(delta), spaces - 1));
    else if (comment_follows && delta < 0)
      line.insert(end, static_cast<size_t>(-delta), ' ');
    line.replace(at.col, end - at.col, token);
  }
  return join_lines(lines);
}

double spearman_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 2) return 0;
  const std::vector<double> ra = average_ranks(a), rb = average_ranks(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n, mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  if (saa == 0 || sbb == 0) return 0;
  return sab / std::sqrt(saa * sbb);
}

Result<HardwareSpec> calibration_base(const Measurements& m, std::string_view base_text, std::string_view base_origin) {
  NKIA_TRY(hw, parse_hardware(base_text, base_origin));
  if (m.target != hw.target.name)
    return fail("nkia_bad_argument",
                fmt::format("{} measures target '{}', but the target description {} is '{}'", m.path, m.target,
                            base_origin, hw.target.name),
                "give --target (or a --hardware file) of the measured target");
  if (hw.free_parameters.empty())
    return fail("nkia_calibrate_no_parameters",
                fmt::format("{} declares no free parameters: nothing to fit", base_origin),
                "add [[calibrate]] tables (key, min, max, source) to the target file and give it with --hardware");
  return hw;
}

Result<CalibrationResult> calibrate(const Measurements& m, const std::vector<Result<Trace>>& traces,
                                    std::string_view base_text, std::string_view base_origin,
                                    const CalibrateOptions& options) {
  NKIA_ASSERT(traces.size() == m.points.size());
  NKIA_TRY(hw, calibration_base(m, base_text, base_origin));
  NKIA_TRY(root, parse_target_toml(base_text, base_origin));

  CalibrationResult r;
  r.measurements_path = m.path;
  r.target = hw.target.name;
  r.base_origin = std::string(base_origin);
  std::vector<std::string> keys;
  std::vector<Axis> axes;
  std::vector<double> start;
  std::vector<bool> integer;
  for (const FreeParameter& p : hw.free_parameters) {
    NKIA_TRY(at, number_token(root, p.key, base_origin));
    integer.push_back(at.integer);
    Axis a{p.min, p.max, p.min > 0 && p.max / p.min > 10};
    ParameterFit pf;
    pf.parameter = p;
    pf.before = at.value;
    r.parameters.push_back(pf);
    keys.push_back(p.key);
    start.push_back(a.unit(at.value));
    axes.push_back(a);
  }

  std::vector<const Trace*> included;
  std::vector<double> measured;
  std::vector<size_t> included_index;
  for (size_t i = 0; i < m.points.size(); ++i) {
    const CalibrationPoint& p = m.points[i];
    PointFit pf;
    pf.name = p.name;
    pf.measured_us = p.measured_us;
    if (!traces[i]) {
      pf.excluded = traces[i].error();
    } else if (auto rep = profile_trace(*traces[i], hw); !rep) {
      pf.excluded = rep.error();
    } else if (!(rep->profile.total_ns > 0)) {
      pf.excluded =
          Diagnostic::error("nkia_profile_empty", fmt::format("point '{}' is predicted to take no time", p.name));
    } else {
      pf.before_us = rep->profile.total_ns / 1e3;
      included.push_back(&*traces[i]);
      measured.push_back(p.measured_us);
      included_index.push_back(i);
    }
    r.points.push_back(std::move(pf));
  }
  r.included = included.size();
  if (included.empty())
    return fail("nkia_calibrate_no_points", fmt::format("no point of {} could be profiled: nothing to fit", m.path),
                "fix the points' kernels (each one's error is listed) and run calibrate again");

  Fitter fitter(base_text, base_origin, keys, axes, included, measured, std::max(1, options.max_evaluations),
                options.threads);
  std::vector<double> best = start;
  double best_f = fitter.objective(best);
  r.converged = fitter.nelder_mead(best, best_f, 0.25);
  if (r.converged && !fitter.exhausted()) {
    r.converged = fitter.nelder_mead(best, best_f, 0.05);
  }
  r.evaluations = fitter.evaluations();

  // The fitted values as written: 6 significant digits (an integer for a number written as one),
  // within their ranges; the predictions after are those of the text written.
  auto values = fitter.values_at(best);
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = values[i].second;
    double rounded = v == 0 ? 0 : std::stod(fmt::format("{:.6g}", v));
    values[i].second = integer[i] ? std::clamp(std::round(rounded), std::ceil(axes[i].lo), std::floor(axes[i].hi))
                                  : std::clamp(rounded, axes[i].lo, axes[i].hi);
  }
  NKIA_TRY(after, fitter.predict_values(values));
  NKIA_TRY(text, set_target_numbers(base_text, values, base_origin));
  r.fitted_text = std::move(text);
  for (size_t i = 0; i < r.parameters.size(); ++i) {
    ParameterFit& pf = r.parameters[i];
    pf.after = values[i].second;
    const double span = axes[i].hi - axes[i].lo;
    pf.at_min = pf.after <= axes[i].lo + 1e-6 * span;
    pf.at_max = pf.after >= axes[i].hi - 1e-6 * span;
  }
  std::vector<double> before;
  for (size_t k = 0; k < included_index.size(); ++k) {
    r.points[included_index[k]].after_us = after[k];
    before.push_back(r.points[included_index[k]].before_us);
  }
  r.before = stats_of(before, measured);
  r.after = stats_of(after, measured);
  return r;
}

std::string fitted_target_file(const CalibrationResult& r, std::string_view when) {
  const std::string what = fmt::format("{} ({} points, log-RMS {:.4f} -> {:.4f})", r.measurements_path, r.included,
                                       r.before.log_rms, r.after.log_rms);
  std::vector<std::string> lines = split_lines(r.fitted_text);
  auto root = parse_target_toml(r.fitted_text, r.base_origin);
  std::string changes;
  for (const ParameterFit& p : r.parameters) {
    changes += fmt::format("{}{} {} -> {}", changes.empty() ? "" : ", ", p.parameter.key, toml_number(p.before, false),
                           toml_number(p.after, false));
    if (!root) continue;
    auto at = number_token(*root, p.parameter.key, r.base_origin);
    if (!at || at->line >= lines.size()) continue;
    std::string& line = lines[at->line];
    const bool nl = !line.empty() && line.back() == '\n';
    if (nl) line.pop_back();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    line += fmt::format("  # fitted by nki-agent calibrate to {}; was {}", what, toml_number(p.before, at->integer));
    if (nl) line += '\n';
  }
  return fmt::format("# Fitted by nki-agent calibrate at {} from {} to {}: {}.\n", when, r.base_origin, what, changes) +
         join_lines(lines);
}

std::string calibration_to_text(const CalibrationResult& r) {
  std::string out = fmt::format("calibrate {} on {} ({}): {} of {} points, {} free parameters\n", r.measurements_path,
                                r.target, r.base_origin, r.included, r.points.size(), r.parameters.size());
  size_t w = 5;
  for (const auto& p : r.points) w = std::max(w, p.name.size());
  out += fmt::format("  {:<{}} {:>12} {:>12} {:>9} {:>12} {:>9}\n", "point", w, "measured us", "before us", "error",
                     "after us", "error");
  for (const auto& p : r.points) {
    if (p.excluded) {
      out += fmt::format("  {:<{}} {:>12.2f}  excluded: {}\n", p.name, w, p.measured_us, p.excluded->message);
      continue;
    }
    out += fmt::format("  {:<{}} {:>12.2f} {:>12.2f} {:>9} {:>12.2f} {:>9}\n", p.name, w, p.measured_us, p.before_us,
                       percent(p.before_us / p.measured_us - 1), p.after_us, percent(p.after_us / p.measured_us - 1));
  }
  out += fmt::format("  {:<16} {:>10} {:>10}\n", "", "before", "after");
  out += stats_line("median |error|", r.before.median_abs_error, r.after.median_abs_error, true);
  out += stats_line("worst |error|", r.before.worst_abs_error, r.after.worst_abs_error, true);
  out += stats_line("log RMS", r.before.log_rms, r.after.log_rms, false);
  out += stats_line("Spearman", r.before.spearman, r.after.spearman, false);
  out += fmt::format("parameters ({} evaluations, {}):\n", r.evaluations,
                     r.converged ? "converged" : "stopped at the evaluation limit");
  size_t kw = 3;
  for (const auto& p : r.parameters) kw = std::max(kw, p.parameter.key.size());
  for (const auto& p : r.parameters)
    out += fmt::format("  {:<{}} {:>12} -> {:<12} [{}, {}]{}\n", p.parameter.key, kw, toml_number(p.before, false),
                       toml_number(p.after, false), p.parameter.min, p.parameter.max,
                       p.at_min   ? "  at its lower bound"
                       : p.at_max ? "  at its upper bound"
                                  : "");
  return out;
}

nlohmann::json calibration_to_json(const CalibrationResult& r) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : r.points) {
    nlohmann::json j = {{"name", p.name}, {"measured_us", p.measured_us}};
    if (p.excluded) {
      j["excluded"] = p.excluded->to_json();
    } else {
      j["before_us"] = p.before_us;
      j["after_us"] = p.after_us;
      j["error_before"] = p.before_us / p.measured_us - 1;
      j["error_after"] = p.after_us / p.measured_us - 1;
    }
    points.push_back(std::move(j));
  }
  nlohmann::json params = nlohmann::json::array();
  for (const auto& p : r.parameters)
    params.push_back({{"key", p.parameter.key},
                      {"min", p.parameter.min},
                      {"max", p.parameter.max},
                      {"source", p.parameter.source},
                      {"before", p.before},
                      {"after", p.after},
                      {"at_bound", p.at_min   ? nlohmann::json("min")
                                   : p.at_max ? nlohmann::json("max")
                                              : nlohmann::json()}});
  return {{"measurements", r.measurements_path},
          {"target", r.target},
          {"base", r.base_origin},
          {"points", std::move(points)},
          {"included", r.included},
          {"before", stats_json(r.before)},
          {"after", stats_json(r.after)},
          {"parameters", std::move(params)},
          {"evaluations", r.evaluations},
          {"converged", r.converged}};
}

}  // namespace nki_agent
