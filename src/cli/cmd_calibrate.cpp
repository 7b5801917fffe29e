// `nki-agent calibrate MEASUREMENTS.toml`: fits a target's free parameters ([[calibrate]]) to
// measured kernel latencies (cost/calibrate.h). Every point's kernel is traced once in a sandboxed
// worker, timing-only, as `profile` does; the fit then costs those traces under candidate target
// files. Prints every point's error before and after, the summary statistics and the parameters;
// --json gives the same as one object; -o writes the fitted target file, which `profile
// --hardware` and `verify --hardware` read.
//
// Never: a crash on a point whose kernel fails (it is reported and left out of the fit), or a
// written target file the fit did not evaluate.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "cli/cli.h"
#include "cost/calibrate.h"
#include "nki/target.h"
#include "runtime/kernel_service.h"

namespace nki_agent::cli {

namespace {

struct CalibrateCliOptions {
  std::string measurements;
  std::string hardware;  // a target file instead of the target's own
  std::string output;    // the fitted target file; empty: none
  int max_evaluations = kDefaultCalibrationEvaluations;
  KernelFlags k;  // the target and the sandbox limits of every point's run
};

// The point's trace: its kernel run timing-only in the sandbox, as `profile` runs a large one.
Result<Trace> trace_point(KernelService& service, const CalibrationPoint& p, const KernelFlags& base) {
  KernelFlags f = base;
  f.kernel = p.kernel_path;
  f.entry = p.entry;
  f.args = p.args;
  f.grid.clear();
  for (int64_t g : p.grid) f.grid += fmt::format("{}{}", f.grid.empty() ? "" : ",", g);
  auto call = kernel_call_from_options(f);
  if (!call) return fail(call.error());
  int64_t elements = 0;
  auto specs = parse_input_shapes(p.shapes, elements);
  if (!specs) return fail(specs.error());
  make_timing_only(*call, std::move(*specs));
  auto outcome = service.run(*call, f.limits(/*large_reply=*/true));
  if (!outcome) return fail(outcome.error());
  return std::move(outcome->trace);
}

int run_calibrate(const Context& ctx, const CalibrateCliOptions& o) {
  auto m = load_measurements_file(o.measurements);
  if (!m) return report(ctx, m.error());
  std::string base_text;
  std::string base_origin;
  if (o.hardware.empty()) {
    base_text = std::string(target_text(o.k.target));
    base_origin = fmt::format("data/targets/{}.toml", o.k.target);
  } else {
    // The file's Diagnostics are load_hardware_file's; the fit rewrites its text.
    if (auto hw = load_hardware_file(o.hardware); !hw) return report(ctx, hw.error());
    std::ifstream f(o.hardware, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    base_text = ss.str();
    base_origin = o.hardware;
  }
  // The base must be fit for calibration before any kernel runs.
  if (auto hw = calibration_base(*m, base_text, base_origin); !hw) return report(ctx, hw.error());

  // The kernels run under the measured target's limits (a --hardware file's may be another name's).
  KernelFlags run = o.k;
  if (target_by_name(m->target)) run.target = m->target;
  KernelServiceOptions so;
  so.workers = 1;
  auto service = KernelService::create(so);
  if (!service) return report(ctx, service.error());
  std::vector<Result<Trace>> traces;
  for (const CalibrationPoint& p : m->points) {
    if (!ctx.json) fmt::print(stderr, "tracing {} ({}:{})\n", p.name, p.kernel, p.entry);
    traces.push_back(trace_point(**service, p, run));
    if (!traces.back() && is_infrastructure_failure(traces.back().error())) return report(ctx, traces.back().error());
  }
  CalibrateOptions co;
  co.max_evaluations = o.max_evaluations;
  auto r = calibrate(*m, traces, base_text, base_origin, co);
  if (!r) return report(ctx, r.error());

  if (!o.output.empty()) {
    const std::string when = fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", fmt::gmtime(std::chrono::system_clock::now()));
    const std::string text = fitted_target_file(*r, when);
    // The file is the fitted text plus comments: it loads as the fit evaluated it.
    NKIA_ASSERT(parse_hardware(text, o.output).has_value());
    std::ofstream f(o.output, std::ios::binary | std::ios::trunc);
    if (!f || !(f << text) || !f.flush())
      return report(ctx, Diagnostic::error("nkia_unwritable", fmt::format("cannot write {}", o.output),
                                           "check that the folder exists and is writable"));
  }
  if (ctx.json) {
    nlohmann::json j = calibration_to_json(*r);
    if (!o.output.empty()) j["output"] = o.output;
    emit_json(ctx, std::move(j));
    return kExitOk;
  }
  fmt::print("{}", calibration_to_text(*r));
  if (!o.output.empty()) fmt::print("wrote {} (use it with --hardware {})\n", o.output, o.output);
  return kExitOk;
}

}  // namespace

void add_calibrate_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CalibrateCliOptions>();
  auto* sub = app.add_subcommand(
      "calibrate", "Fit a target's free parameters to measured kernel latencies and write the fitted target file");
  o->k.target = "trn1";
  sub->add_option("measurements", o->measurements, "The measurements file (.toml: [measurements] and [[point]]s)")
      ->required();
  sub->add_option("--target", o->k.target, "The measured NeuronCore")
      ->capture_default_str()
      ->check(CLI::IsMember(target_names()));
  sub->add_option("--hardware", o->hardware, "The base target description (.toml) instead of the target's own");
  sub->add_option("--output,-o", o->output, "Write the fitted target file here");
  sub->add_option("--max-evaluations", o->max_evaluations, "Most target files the fit evaluates")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  add_limit_options(*sub, o->k);
  sub->callback([&ctx, o] { ctx.exit_code = run_calibrate(ctx, *o); });
}

}  // namespace nki_agent::cli
