// `nki-agent check`: compile-check a kernel without computing anything. The kernel runs in a
// sandboxed worker in timing-only mode (every instruction validated and traced, no numerics) on
// zero inputs of the given shapes; the result is the first Diagnostic, printed like a compiler's,
// or a summary of what the kernel issues (instructions per engine, DMA bytes, elements processed
// and the output shapes) and the run's warnings on stderr — with --json, the whole trace too.
#include <fmt/format.h>

#include "cli/cli.h"
#include "nki/target.h"
#include "nki/trace.h"
#include "runtime/kernel_service.h"
#include "tensor/tensor_spec.h"

namespace nki_agent::cli {

namespace {

struct CheckOptions {
  KernelFlags k;
  std::vector<std::string> shapes;  // name=dtype[shape]
  std::string trace;                // a file for the trace's JSON; empty: none
};

Result<KernelCall> build_call(const CheckOptions& o) {
  auto call = kernel_call_from_options(o.k);
  if (!call) return fail(call.error());
  // Zeros, made in the worker: timing-only runs read only the shapes and types.
  std::vector<TensorSpec> specs;
  for (const auto& text : o.shapes) {
    auto spec = parse_tensor_spec(text);
    if (!spec) return fail(spec.error());
    specs.push_back(std::move(*spec));
  }
  make_timing_only(*call, std::move(specs));
  return call;
}

std::string human_bytes(int64_t b) {
  if (b >= (int64_t{1} << 30)) return fmt::format("{:.2f} GiB", static_cast<double>(b) / (1 << 30));
  if (b >= (int64_t{1} << 20)) return fmt::format("{:.2f} MiB", static_cast<double>(b) / (1 << 20));
  if (b >= (int64_t{1} << 10)) return fmt::format("{:.2f} KiB", static_cast<double>(b) / (1 << 10));
  return fmt::format("{} B", b);
}

void print_summary(const CheckOptions& o, const KernelOutcome& outcome, const TraceSummary& s) {
  fmt::print("{}: '{}' passed the checks on {} (timing-only: nothing computed)\n", o.k.kernel, o.k.entry, o.k.target);
  std::string per_engine;
  for (int e = 0; e < kNumEngines; ++e)
    per_engine += fmt::format("{}{} {}", e ? ", " : "", engine_name(static_cast<Engine>(e)), s.per_engine[e]);
  fmt::print("  instructions  {} ({})\n", s.instructions, per_engine);
  fmt::print("  dma bytes     {} ({})\n", s.dma_bytes, human_bytes(s.dma_bytes));
  fmt::print("  elements      {}\n", s.elements);
  if (s.dropped > 0)
    fmt::print("  truncated     the trace keeps {} instructions; {} more ran unrecorded and are not counted\n",
               s.instructions, s.dropped);
  std::string outs;
  for (const TensorSpec& t : outcome.output_specs)
    outs += fmt::format("{}{} {}{}", outs.empty() ? "" : ", ", t.name, dtype_name(t.dtype), shape_str(t.shape));
  fmt::print("  outputs       {}\n", outs.empty() ? "none" : outs);
}

int run_check(const Context& ctx, const CheckOptions& o) {
  auto call = build_call(o);
  if (!call) return report(ctx, call.error());
  KernelServiceOptions so;
  so.workers = 1;
  auto service = KernelService::create(so);
  if (!service) return report(ctx, service.error());
  auto outcome = (*service)->run(*call, o.k.limits(/*large_reply=*/true));
  if (!outcome) return report(ctx, outcome.error());

  const TraceSummary summary = summarize(outcome->trace);
  const nlohmann::json about = {
      {"kernel", o.k.kernel}, {"entry", o.k.entry}, {"target", o.k.target}, {"timing_only", true}};
  if (!o.trace.empty())
    if (auto w = write_trace_file(o.trace, about, outcome->trace); !w) return report(ctx, w.error());

  nlohmann::json outs = nlohmann::json::array();
  for (const TensorSpec& t : outcome->output_specs)
    outs.push_back({{"name", t.name}, {"dtype", dtype_name(t.dtype)}, {"shape", t.shape}});
  if (ctx.json) {
    nlohmann::json result = trace_document(about, outcome->trace);
    result["outputs"] = outs;
    result["printed"] = outcome->printed;
    result["warnings"] = warnings_json(outcome->warnings);
    if (!o.trace.empty()) result["trace_file"] = o.trace;
    emit_json(ctx, result);
    return kExitOk;
  }
  print_summary(o, *outcome, summary);
  if (!o.trace.empty()) fmt::print("  trace         {}\n", o.trace);
  print_warnings(ctx, outcome->warnings);
  if (!outcome->printed.empty()) fmt::print(stderr, "kernel printed:\n{}", outcome->printed);
  return kExitOk;
}

}  // namespace

void add_check_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CheckOptions>();
  auto* sub = app.add_subcommand(
      "check", "Check a kernel on inputs of given shapes without computing: diagnostics or instruction counts");
  o->k.target = "trn1";
  add_kernel_options(*sub, o->k);
  sub->add_option("--shapes,-s", o->shapes, "The tensor inputs, name=dtype[shape] (zeros)");
  sub->add_option("--target", o->k.target, "The NeuronCore to check against")
      ->capture_default_str()
      ->check(CLI::IsMember(target_names()));
  sub->add_option("--trace", o->trace, "Write the executed instructions as JSON to this file");
  add_limit_options(*sub, o->k);
  sub->callback([&ctx, o] { ctx.exit_code = run_check(ctx, *o); });
}

}  // namespace nki_agent::cli
