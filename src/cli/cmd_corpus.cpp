// `nki-agent corpus generate --count N --seed S --out DIR [--jobs J]`, `nki-agent corpus report DIR` and
// `nki-agent corpus export DIR --format F`: the generated training corpus (corpus/corpus.h, docs/corpus.md).
#include <fmt/format.h>

#include <cstdio>

#include "cli/cli.h"
#include "corpus/corpus.h"
#include "corpus/export.h"
#include "corpus/report.h"

namespace nki_agent::cli {

namespace {

struct CorpusCliOptions {
  corpus::CorpusOptions gen;
  bool no_filters = false;
  std::string dir;
  corpus::ExportOptions exp;
  std::string exp_out;
};

int run_generate(const Context& ctx, CorpusCliOptions& o) {
  o.gen.filters = !o.no_filters;
  auto r = corpus::generate_corpus(o.gen);
  if (!r) return report(ctx, r.error());
  if (ctx.json) {
    emit_json(ctx, {{"out", o.gen.out}, {"kept", r->kept}, {"summary", r->summary}});
    return kExitOk;
  }
  const auto& f = r->summary["funnel"];
  std::printf("corpus: %lld tasks in %s (seed %llu, %s): %lld candidates considered\n", (long long)r->kept,
              o.gen.out.c_str(), (unsigned long long)o.gen.seed, r->summary.value("generator", "").c_str(),
              (long long)f.value("candidates", 0));
  for (const auto& st : f["stages"])
    if (st.value("dropped", 0) > 0)
      std::printf("  %-22s dropped %lld\n", st.value("stage", "").c_str(), (long long)st.value("dropped", 0));
  std::printf("corpus report %s shows the histograms\n", o.gen.out.c_str());
  return kExitOk;
}

int run_corpus_report(const Context& ctx, const CorpusCliOptions& o) {
  auto r = corpus::corpus_report(o.dir);
  if (!r) return report(ctx, r.error());
  if (ctx.json) {
    emit_json(ctx, *r);
    return kExitOk;
  }
  std::fputs(corpus::format_corpus_report(*r).c_str(), stdout);
  return kExitOk;
}

int run_export(const Context& ctx, const CorpusCliOptions& o) {
  int64_t rows = 0;
  auto text = corpus::export_corpus(o.dir, o.exp, rows);
  if (!text) return report(ctx, text.error());
  if (o.exp_out.empty() || o.exp_out == "-") {
    std::fputs(text->c_str(), stdout);
    return kExitOk;
  }
  std::FILE* f = std::fopen(o.exp_out.c_str(), "wb");
  const bool ok = f && std::fwrite(text->data(), 1, text->size(), f) == text->size();
  if (f) std::fclose(f);
  if (!ok)
    return report(ctx, Diagnostic::error("nkia_unwritable", fmt::format("cannot write {}", o.exp_out),
                                         "check the folder exists and is writable"));
  if (ctx.json)
    emit_json(ctx, {{"file", o.exp_out}, {"rows", rows}, {"format", o.exp.format}});
  else
    std::printf("corpus export: %lld %s rows in %s\n", (long long)rows, o.exp.format.c_str(), o.exp_out.c_str());
  return kExitOk;
}

}  // namespace

void add_corpus_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CorpusCliOptions>();
  auto* corpus = app.add_subcommand("corpus", "The generated training corpus: generate it, report on it, export it");
  corpus->require_subcommand(1);
  auto* gen = corpus->add_subcommand(
      "generate", "Draw, deduplicate, decontaminate (against NKIBench) and filter tasks; write them as task folders");
  gen->add_option("--count", o->gen.count, "Tasks to keep")->required()->check(CLI::Range(1, 1000000));
  gen->add_option("--seed", o->gen.seed, "The generator's seed")->required();
  gen->add_option("--out", o->gen.out, "The folder to write (level1..3/, lib/, corpus.jsonl)")->required();
  gen->add_option("--jobs", o->gen.jobs, "Filter batches at once (each runs in two processes)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  gen->add_option("--nkibench", o->gen.nkibench,
                  "NKIBench's root: level1..3 to decontaminate against, lib/ to copy "
                  "(default: tasks/nkibench)");
  gen->add_flag("--baseline-only", o->gen.baseline_only,
                "Only ops with a kernel in nkibench_ops: every task gets a baseline.py");
  gen->add_flag("--no-filters", o->no_filters, "Skip the execution filters (dedup and decontamination still run)");
  gen->add_flag("--force", o->gen.force, "Replace a corpus already in --out");
  gen->add_option("--similarity-threshold", o->gen.similarity_threshold,
                  "Drop candidates at least this similar to an NKIBench task (0..1)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  gen->add_option("--validation", o->gen.validation_fraction, "The fraction of tasks in the validation split")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  gen->add_option("--runtime-band", o->gen.filter.runtime_band_s, "Seconds one reference forward may take")
      ->capture_default_str();
  gen->add_option("--memory-band", o->gen.filter.memory_band_mib, "MiB of inputs, weights and outputs a task may hold")
      ->capture_default_str();
  gen->add_option("--python", o->gen.filter.python,
                  "The helpers' Python (default: $NKIA_REFERENCE_PYTHON, python3.11)");
  gen->callback([&ctx, o] { ctx.exit_code = run_generate(ctx, *o); });
  auto* rep = corpus->add_subcommand("report", "Op and category histograms, the filter funnel, similarity to NKIBench");
  rep->add_option("dir", o->dir, "The corpus folder")->required();
  rep->callback([&ctx, o] { ctx.exit_code = run_corpus_report(ctx, *o); });
  auto* exp = corpus->add_subcommand(
      "export", "A corpus or a task root (NKIBench) as RL / SFT datasets: verl, trl, openrlhf, kernelbench");
  exp->add_option("dir", o->dir, "The corpus folder, or a task root without corpus.jsonl (tasks/nkibench)")->required();
  exp->add_option("--format", o->exp.format, "verl (name the file .json), trl, openrlhf or kernelbench")->required();
  exp->add_option("-o,--out", o->exp_out, "Write to this file (default: stdout)");
  exp->add_option("--split", o->exp.split,
                  "Only this split: train or validation (a corpus); a task root's tasks are all in test");
  exp->add_option("--prompt-version", o->exp.prompt_version, "The prompt templates' version")->capture_default_str();
  exp->add_flag(
      "--single-shot", [o](int64_t) { o->exp.tools = false; },
      "The single-shot system prompt (one fenced kernel, no tools) instead of the tool loop's");
  exp->callback([&ctx, o] { ctx.exit_code = run_export(ctx, *o); });
}

}  // namespace nki_agent::cli
