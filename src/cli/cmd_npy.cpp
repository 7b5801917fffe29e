// `nki-agent npy info|diff` and `nki-agent random`: inspect and compare .npy arrays (kernel inputs
// and outputs), and generate seeded random inputs in any element type.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "cli/cli.h"
#include "tensor/npy.h"
#include "tensor/rng.h"
#include "tensor/tensor_spec.h"

namespace nki_agent::cli {

namespace {

struct Stats {
  int64_t count = 0, nan = 0, inf = 0;
  double min = 0, max = 0, mean = 0, rms = 0;
};

Stats stats_of(const Tensor& t) {
  Stats s;
  std::vector<float> v = t.to_f32_vector();
  s.count = static_cast<int64_t>(v.size());
  double sum = 0, sq = 0;
  int64_t finite = 0;
  s.min = std::numeric_limits<double>::infinity();
  s.max = -s.min;
  for (float x : v) {
    if (std::isnan(x)) {
      ++s.nan;
      continue;
    }
    if (std::isinf(x)) ++s.inf;
    s.min = std::min<double>(s.min, x);
    s.max = std::max<double>(s.max, x);
    if (std::isfinite(x)) {
      sum += x;
      sq += static_cast<double>(x) * x;
      ++finite;
    }
  }
  if (finite) {
    s.mean = sum / static_cast<double>(finite);
    s.rms = std::sqrt(sq / static_cast<double>(finite));
  }
  if (s.count == s.nan) s.min = s.max = 0;
  return s;
}

int run_npy_info(const Context& ctx, const std::vector<std::string>& files) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& f : files) {
    auto t = npy_load(f);
    if (!t) return report(ctx, t.error());
    Stats s = stats_of(*t);
    nlohmann::json j = {{"file", f},           {"dtype", dtype_name(t->dtype())},
                        {"shape", t->shape()}, {"count", s.count},
                        {"nan", s.nan},        {"inf", s.inf},
                        {"min", s.min},        {"max", s.max},
                        {"mean", s.mean},      {"rms", s.rms}};
    arr.push_back(j);
    if (!ctx.json)
      fmt::print("{}: {}{}  min {:.6g}  max {:.6g}  mean {:.6g}  rms {:.6g}{}{}\n", f, dtype_name(t->dtype()),
                 shape_str(t->shape()), s.min, s.max, s.mean, s.rms, s.nan ? fmt::format("  NaN {}", s.nan) : "",
                 s.inf ? fmt::format("  inf {}", s.inf) : "");
  }
  emit_json(ctx, {{"arrays", arr}});
  return kExitOk;
}

struct DiffOptions {
  std::string actual, expected;
  double atol = 1e-5, rtol = 1e-3;
};

// Compares like numpy.allclose(actual, expected, rtol, atol, equal_nan=True): an element matches when
// |a - e| <= atol + rtol * |e|, or both are NaN, or both are the same infinity.
int run_npy_diff(const Context& ctx, const DiffOptions& o) {
  auto a = npy_load(o.actual);
  if (!a) return report(ctx, a.error());
  auto e = npy_load(o.expected);
  if (!e) return report(ctx, e.error());
  if (a->shape() != e->shape())
    return report(ctx, Diagnostic::error("nkia_shape_mismatch",
                                         fmt::format("{} has shape {} but {} has shape {}", o.actual,
                                                     shape_str(a->shape()), o.expected, shape_str(e->shape())),
                                         "compare arrays of the same shape"));
  std::vector<float> va = a->to_f32_vector(), ve = e->to_f32_vector();
  int64_t bad = 0, first_bad = -1;
  double max_abs = 0, max_rel = 0;
  for (size_t i = 0; i < va.size(); ++i) {
    const double x = va[i], y = ve[i];
    bool ok;
    if (std::isnan(x) || std::isnan(y)) {
      ok = std::isnan(x) && std::isnan(y);
    } else if (std::isinf(x) || std::isinf(y)) {
      ok = x == y;
    } else {
      const double d = std::fabs(x - y);
      max_abs = std::max(max_abs, d);
      if (y != 0) max_rel = std::max(max_rel, d / std::fabs(y));
      ok = d <= o.atol + o.rtol * std::fabs(y);
    }
    if (!ok && bad++ == 0) first_bad = static_cast<int64_t>(i);
  }
  nlohmann::json idx = nlohmann::json::array();
  if (first_bad >= 0) {
    int64_t rem = first_bad;
    std::vector<int64_t> index(a->shape().size());
    for (size_t d = index.size(); d-- > 0;) {
      index[d] = rem % a->shape()[d];
      rem /= a->shape()[d];
    }
    idx = index;
  }
  nlohmann::json j = {{"actual", o.actual}, {"expected", o.expected},   {"count", va.size()},
                      {"mismatches", bad},  {"max_abs_error", max_abs}, {"max_rel_error", max_rel},
                      {"atol", o.atol},     {"rtol", o.rtol},           {"match", bad == 0}};
  if (first_bad >= 0) {
    j["first_mismatch"] = {{"index", idx}, {"actual", va[first_bad]}, {"expected", ve[first_bad]}};
  }
  if (ctx.json) {
    nlohmann::json out = {{"ok", bad == 0}};
    out.update(j);
    print_json(out);
  } else {
    fmt::print("{} elements, {} mismatches (atol {:g}, rtol {:g}); max abs error {:.6g}, max rel error {:.6g}\n",
               va.size(), bad, o.atol, o.rtol, max_abs, max_rel);
    if (first_bad >= 0)
      fmt::print("first mismatch at [{}]: actual {:.9g}, expected {:.9g}\n",
                 fmt::join(idx.get<std::vector<int64_t>>(), ", "), va[first_bad], ve[first_bad]);
  }
  return bad == 0 ? kExitOk : kExitUserError;
}

struct RandomOptions {
  std::vector<std::string> specs;
  uint64_t seed = 0;
  std::string dist = "normal";
  double low = 0, high = 1, mean = 0, std = 1;
  std::string out = ".";
  bool float32_values = false;
};

int run_random(const Context& ctx, const RandomOptions& o) {
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec)
    return report(
        ctx, Diagnostic::error("nkia_unwritable", fmt::format("cannot create folder {}: {}", o.out, ec.message())));
  nlohmann::json files = nlohmann::json::array();
  for (const auto& text : o.specs) {
    auto spec = parse_tensor_spec(text);
    if (!spec) return report(ctx, spec.error());
    // One independent stream per name: adding or reordering specs does not change the others.
    Rng rng(o.seed, Rng::stream_id(spec->name));
    Tensor t;
    if (o.dist == "normal") {
      t = random_normal(spec->shape, spec->dtype, rng, o.mean, o.std);
    } else if (o.dist == "uniform") {
      t = random_uniform(spec->shape, spec->dtype, rng, o.low, o.high);
    } else {
      if (!(o.low < o.high))
        return report(
            ctx, Diagnostic::error("nkia_bad_range", fmt::format("--low {} must be below --high {}", o.low, o.high)));
      t = random_integers(spec->shape, spec->dtype, rng, static_cast<int64_t>(std::ceil(o.low)),
                          static_cast<int64_t>(std::ceil(o.high)));
    }
    std::string path = (std::filesystem::path(o.out) / (spec->name + ".npy")).string();
    auto saved = npy_save(path, t, {o.float32_values ? NarrowAs::kFloat32 : NarrowAs::kRawBits});
    if (!saved) return report(ctx, saved.error());
    files.push_back({{"name", spec->name}, {"path", path}, {"dtype", dtype_name(t.dtype())}, {"shape", t.shape()}});
    if (!ctx.json) fmt::print("wrote {} ({})\n", path, spec->to_string());
  }
  emit_json(ctx, {{"seed", o.seed}, {"distribution", o.dist}, {"files", files}});
  return kExitOk;
}

}  // namespace

void add_npy_command(CLI::App& app, Context& ctx) {
  auto* npy = app.add_subcommand("npy", "Inspect and compare .npy arrays");
  npy->require_subcommand(1);

  auto files = std::make_shared<std::vector<std::string>>();
  auto* info = npy->add_subcommand("info", "Type, shape and statistics of .npy files");
  info->add_option("files", *files, "The .npy files")->required();
  info->callback([&ctx, files] { ctx.exit_code = run_npy_info(ctx, *files); });

  auto d = std::make_shared<DiffOptions>();
  auto* diff = npy->add_subcommand("diff", "Compare two arrays like numpy.allclose; exit 1 on a mismatch");
  diff->add_option("actual", d->actual, "The array to check")->required();
  diff->add_option("expected", d->expected, "The reference array")->required();
  diff->add_option("--atol", d->atol, "Absolute tolerance")->capture_default_str()->check(CLI::NonNegativeNumber);
  diff->add_option("--rtol", d->rtol, "Relative tolerance")->capture_default_str()->check(CLI::NonNegativeNumber);
  diff->callback([&ctx, d] { ctx.exit_code = run_npy_diff(ctx, *d); });
}

void add_random_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<RandomOptions>();
  auto* sub = app.add_subcommand("random", "Write seeded random arrays as .npy, e.g. 'a=bfloat16[128,512]'");
  sub->add_option("specs", o->specs, "name=dtype[d0,d1,...] for each array")->required();
  sub->add_option("--seed", o->seed, "Seed; each name draws its own stream")->capture_default_str();
  sub->add_option("--dist", o->dist, "normal, uniform or integers")
      ->check(CLI::IsMember({"normal", "uniform", "integers"}))
      ->capture_default_str();
  sub->add_option("--low", o->low, "Lower bound (uniform, integers)")->capture_default_str();
  sub->add_option("--high", o->high, "Upper bound, exclusive (uniform, integers)")->capture_default_str();
  sub->add_option("--mean", o->mean, "Mean (normal)")->capture_default_str();
  sub->add_option("--std", o->std, "Standard deviation (normal)")->capture_default_str();
  sub->add_option("--out", o->out, "Output folder")->capture_default_str();
  sub->add_flag("--float32-values", o->float32_values,
                "Write bfloat16/fp8 arrays as float32 values instead of tagged raw bits");
  sub->callback([&ctx, o] { ctx.exit_code = run_random(ctx, *o); });
}

}  // namespace nki_agent::cli
