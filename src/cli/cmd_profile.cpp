// `nki-agent profile`: the simulated profile of a kernel on a NeuronCore. The kernel runs in a
// sandboxed worker like `check` does — timing-only (checked and traced, nothing computed) unless
// its inputs are small, then on seeded random data — and the cost model (src/cost, docs/
// cost-model.md) schedules its trace on the target's hardware description: total latency, engine
// activity, MFU/HFU/MBU, DMA statistics, roofline, the hot source lines and insights; --json gives
// the same as one object, --trace writes a Perfetto trace.
#include <fmt/format.h>

#include "cli/cli.h"
#include "cost/cost.h"
#include "cost/perfetto.h"
#include "cost/trace_json.h"
#include "nki/target.h"
#include "runtime/kernel_service.h"
#include "tensor/rng.h"
#include "tensor/tensor_spec.h"

namespace nki_agent::cli {

namespace {

// Inputs with at most this many elements in all run on real (random) data by default.
constexpr int64_t kComputeElementLimit = int64_t{1} << 20;

struct ProfileOptions {
  KernelFlags k;
  std::vector<std::string> shapes;  // name=dtype[shape]
  std::string hardware;             // a TOML file instead of the target's own description
  std::string trace;                // a Perfetto trace file; empty: none
  std::string from_trace;           // profile this recorded trace instead of running the kernel
  bool timing_only = false;
  bool compute = false;
  uint64_t seed = 0;
  size_t lines = 10;
};

struct Prepared {
  KernelCall call;
  bool timing_only = true;
};

Result<Prepared> build_call(const ProfileOptions& o) {
  auto made = kernel_call_from_options(o.k);
  if (!made) return fail(made.error());
  Prepared p;
  p.call = std::move(*made);
  KernelCall& call = p.call;
  int64_t elements = 0;
  auto parsed = parse_input_shapes(o.shapes, elements);
  if (!parsed) return fail(parsed.error());
  std::vector<TensorSpec> specs = std::move(*parsed);
  p.timing_only = o.timing_only || (!o.compute && elements > kComputeElementLimit);
  if (p.timing_only) {
    make_timing_only(call, std::move(specs));
    return p;
  }
  call.collect_trace = true;
  call.want_outputs = false;
  for (const auto& spec : specs) {
    call.input_names.push_back(spec.name);
    Rng rng(o.seed, Rng::stream_id(spec.name));
    call.inputs.push_back(random_normal(spec.shape, spec.dtype, rng));
  }
  return p;
}

// The kernel's trace: from a run in the sandbox, or from a file recorded earlier.
struct Traced {
  Trace trace;
  std::string printed;
  bool timing_only = true;
};

Result<Traced> trace_kernel(const ProfileOptions& o) {
  Traced t;
  if (!o.from_trace.empty()) {
    auto tr = load_trace_file(o.from_trace);
    if (!tr) return fail(tr.error());
    t.trace = std::move(*tr);
    return t;
  }
  auto prepared = build_call(o);
  if (!prepared) return fail(prepared.error());
  KernelServiceOptions so;
  so.workers = 1;
  auto service = KernelService::create(so);
  if (!service) return fail(service.error());
  auto outcome = (*service)->run(prepared->call, o.k.limits(/*large_reply=*/true));
  if (!outcome) return fail(outcome.error());
  t.trace = std::move(outcome->trace);
  t.printed = std::move(outcome->printed);
  t.timing_only = prepared->timing_only;
  return t;
}

int run_profile(const Context& ctx, const ProfileOptions& o) {
  Result<HardwareSpec> hw = o.hardware.empty() ? hardware_for_target(o.k.target) : load_hardware_file(o.hardware);
  if (!hw) return report(ctx, hw.error());
  auto traced = trace_kernel(o);
  if (!traced) return report(ctx, traced.error());
  const Trace& trace = traced->trace;

  auto report_r = profile_trace(trace, *hw);
  if (!report_r) return report(ctx, report_r.error());
  const CostReport& r = *report_r;
  if (!o.trace.empty()) {
    PerfettoOptions po;
    std::string base = o.k.kernel;
    if (size_t slash = base.rfind('/'); slash != std::string::npos) base = base.substr(slash + 1);
    po.title = fmt::format("{}:{} on {} ({})", base, o.k.entry, hw->target.name, hw->target.core);
    if (auto w = write_perfetto_trace(o.trace, trace, r.program, r.schedule, *hw, po); !w)
      return report(ctx, w.error());
  }
  if (ctx.json) {
    nlohmann::json result = {{"kernel", o.k.kernel}, {"entry", o.k.entry}, {"timing_only", traced->timing_only}};
    if (!o.from_trace.empty()) result["from_trace"] = o.from_trace;
    result.update(profile_to_json(r.profile, o.lines));
    if (!o.trace.empty()) result["trace_file"] = o.trace;
    emit_json(ctx, result);
    return kExitOk;
  }
  if (!o.from_trace.empty())
    fmt::print("{}: recorded trace on {} ({})\n", o.from_trace, hw->target.name, hw->target.core);
  else
    fmt::print("{}: '{}' on {} ({}{})\n", o.k.kernel, o.k.entry, hw->target.name, hw->target.core,
               traced->timing_only ? ", timing-only" : ", computed on random inputs");
  fmt::print("{}", profile_to_text(r.profile, o.lines));
  if (!o.trace.empty()) fmt::print("  trace        {} (open it in https://ui.perfetto.dev)\n", o.trace);
  if (!traced->printed.empty()) fmt::print(stderr, "kernel printed:\n{}", traced->printed);
  return kExitOk;
}

}  // namespace

void add_profile_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ProfileOptions>();
  auto* sub = app.add_subcommand(
      "profile", "Simulated profile of a kernel on a NeuronCore: latency, engine use, MFU/MBU, roofline, insights");
  o->k.target = "trn1";
  const auto kernel_options = add_kernel_options(*sub, o->k, /*required=*/false);
  CLI::Option* kernel = kernel_options.first;
  CLI::Option* entry = kernel_options.second;
  auto* from =
      sub->add_option("--from-trace", o->from_trace,
                      "Profile a trace recorded by `check --trace` or `run --trace` instead of running a kernel");
  from->excludes(kernel)->excludes(entry);
  sub->add_option("--shapes,-s", o->shapes, "The tensor inputs, name=dtype[shape]");
  sub->add_option("--target", o->k.target, "The NeuronCore to profile on")
      ->capture_default_str()
      ->check(CLI::IsMember(target_names()));
  sub->add_option("--hardware", o->hardware, "A hardware description (.toml) instead of the target's own");
  sub->add_option("--trace", o->trace, "Write a Perfetto / Chrome trace (JSON) of the simulated schedule to this file");
  auto* t = sub->add_flag("--timing-only", o->timing_only, "Never compute (default when inputs exceed 2^20 elements)");
  sub->add_flag("--compute", o->compute, "Compute on random inputs even when they are large")->excludes(t);
  sub->add_option("--seed", o->seed, "Seed for the random inputs of a computed run")->capture_default_str();
  sub->add_option("--lines", o->lines, "How many hot source lines to show")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  add_limit_options(*sub, o->k);
  sub->callback([&ctx, o, kernel, entry, from] {
    if (from->count() == 0 && (kernel->count() == 0 || entry->count() == 0))
      throw CLI::RequiredError("a kernel file and --entry (or --from-trace FILE)");
    ctx.exit_code = run_profile(ctx, *o);
  });
}

}  // namespace nki_agent::cli
