// `nki-agent info`, `nki-agent dtypes` and `nki-agent cast`: what this build is, the element types
// kernels can use, and how a value rounds into each of them.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "cli/cli.h"
#include "core/version.h"
#include "tensor/dtype.h"

extern "C" char* openblas_get_config(void);

namespace nki_agent::cli {

namespace {

constexpr DType kAllDTypes[] = {DType::kFloat32,    DType::kBFloat16,     DType::kFloat16,    DType::kTFloat32,
                                DType::kFloat8E4M3, DType::kFloat8E4M3FN, DType::kFloat8E5M2, DType::kInt8,
                                DType::kInt16,      DType::kInt32,        DType::kUInt8,      DType::kUInt16,
                                DType::kUInt32,     DType::kBool};

std::string kind_of(DType t) {
  if (t == DType::kBool) return "bool";
  if (dtype_is_float(t)) return "float";
  return dtype_is_signed(t) ? "int" : "uint";
}

int run_info(const Context& ctx) {
  const char* blas = openblas_get_config();
  nlohmann::json j = {{"name", "nki-agent"},
                      {"version", kVersion},
                      {"build_type", kBuildType},
                      {"blas", blas ? blas : "unknown"},
                      {"hardware_threads", std::thread::hardware_concurrency()},
                      {"dtypes", nlohmann::json::array()}};
  for (DType t : kAllDTypes) j["dtypes"].push_back(dtype_name(t));
  if (ctx.json) {
    emit_json(ctx, j);
    return kExitOk;
  }
  fmt::print("nki-agent {} ({} build)\n", kVersion, kBuildType);
  fmt::print("  BLAS:             {}\n", j["blas"].get<std::string>());
  fmt::print("  hardware threads: {}\n", std::thread::hardware_concurrency());
  std::string names;
  for (DType t : kAllDTypes) names += fmt::format("{}{}", names.empty() ? "" : ", ", dtype_name(t));
  fmt::print("  element types:    {}\n", names);
  fmt::print("Run 'nki-agent --help' for the commands.\n");
  return kExitOk;
}

int run_dtypes(const Context& ctx) {
  nlohmann::json rows = nlohmann::json::array();
  for (DType t : kAllDTypes) {
    nlohmann::json r = {{"name", dtype_name(t)}, {"bytes", dtype_size(t)}, {"kind", kind_of(t)}};
    if (dtype_is_float(t)) {
      r["max_finite"] = dtype_max_finite(t);
    } else {
      r["min"] = int_dtype_range(t).lo;
      r["max"] = int_dtype_range(t).hi;
    }
    rows.push_back(r);
  }
  if (ctx.json) {
    emit_json(ctx, {{"dtypes", rows}});
    return kExitOk;
  }
  fmt::print("{:<15} {:>5}  {:<5}  {}\n", "dtype", "bytes", "kind", "range");
  for (const auto& r : rows) {
    std::string range = r.contains("max_finite")
                            ? fmt::format("±{:g}", r["max_finite"].get<double>())
                            : fmt::format("{} .. {}", r["min"].get<int64_t>(), r["max"].get<int64_t>());
    fmt::print("{:<15} {:>5}  {:<5}  {}\n", r["name"].get<std::string>(), r["bytes"].get<int>(),
               r["kind"].get<std::string>(), range);
  }
  return kExitOk;
}

struct CastOptions {
  std::string value;
  std::vector<std::string> dtypes;
  bool saturate = false;
};

int run_cast(const Context& ctx, const CastOptions& o) {
  char* end = nullptr;
  const double v = std::strtod(o.value.c_str(), &end);
  if (o.value.empty() || end != o.value.c_str() + o.value.size())
    return report(ctx, Diagnostic::error("nkia_bad_value", fmt::format("'{}' is not a number", o.value),
                                         "give a decimal or hex float such as 0.1, -3e5, 0x1.8p3, inf or nan"));
  std::vector<DType> targets;
  for (const auto& name : o.dtypes) {
    auto t = dtype_from_name(name);
    if (!t)
      return report(ctx, Diagnostic::error("nkia_unknown_dtype", fmt::format("unknown dtype '{}'", name),
                                           "run 'nki-agent dtypes' for the list"));
    targets.push_back(*t);
  }
  if (targets.empty())
    for (DType t : kAllDTypes) targets.push_back(t);

  const Fp8Overflow ovf = o.saturate ? Fp8Overflow::kSaturating : Fp8Overflow::kNonSaturating;
  const float f = static_cast<float>(v);
  nlohmann::json rows = nlohmann::json::array();
  for (DType t : targets) {
    uint8_t buf[8] = {};
    store_f32(buf, t, f, ovf);
    const float back = load_f32(buf, t);
    uint64_t bits = 0;
    std::memcpy(&bits, buf, static_cast<size_t>(dtype_size(t)));
    nlohmann::json r = {
        {"dtype", dtype_name(t)},
        {"bits", fmt::format("0x{:0{}x}", bits, 2 * dtype_size(t))},
        {"value", std::isfinite(back) ? nlohmann::json(back) : nlohmann::json(fmt::format("{}", back))},
        {"error", std::isfinite(back) ? nlohmann::json(static_cast<double>(back) - v) : nlohmann::json()}};
    rows.push_back(r);
  }
  if (ctx.json) {
    emit_json(ctx, {{"input", o.value}, {"saturate", o.saturate}, {"casts", rows}});
    return kExitOk;
  }
  fmt::print("{} rounded into each type ({} fp8 overflow):\n", o.value, o.saturate ? "saturating" : "non-saturating");
  fmt::print("{:<15} {:<12} {:<16} {}\n", "dtype", "bits", "value", "error");
  for (const auto& r : rows) {
    std::string val =
        r["value"].is_string() ? r["value"].get<std::string>() : fmt::format("{:.9g}", r["value"].get<double>());
    std::string err = r["error"].is_null() ? "-" : fmt::format("{:.3g}", r["error"].get<double>());
    fmt::print("{:<15} {:<12} {:<16} {}\n", r["dtype"].get<std::string>(), r["bits"].get<std::string>(), val, err);
  }
  return kExitOk;
}

}  // namespace

void add_info_command(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("info", "Show this build: version, BLAS, element types");
  sub->callback([&ctx] { ctx.exit_code = run_info(ctx); });
}

void add_dtypes_command(CLI::App& app, Context& ctx) {
  auto* sub = app.add_subcommand("dtypes", "List the element types NKI kernels can use, with their ranges");
  sub->callback([&ctx] { ctx.exit_code = run_dtypes(ctx); });
}

void add_cast_command(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<CastOptions>();
  auto* sub = app.add_subcommand("cast", "Show how a number rounds into each element type (RNE), with its bits");
  sub->add_option("value", opts->value, "The number (decimal, hex float, inf, nan)")->required();
  sub->add_option("--dtype,-t", opts->dtypes, "Only these types (repeatable)");
  sub->add_flag("--saturate", opts->saturate, "fp8 overflow saturates to the largest finite value");
  sub->callback([&ctx, opts] { ctx.exit_code = run_cast(ctx, *opts); });
}

}  // namespace nki_agent::cli
