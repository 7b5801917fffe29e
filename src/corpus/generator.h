// corpus/generator.h — draws a task graph from a seed: a layout, shapes from partition-friendly and
// ragged distributions, a dtype, a structure (a single op, a chain, a residual, two branches that
// join, several outputs) and the ops of the vocabulary that apply, every parameter explicit.
//
// Task `index` draws from its own Philox stream (tensor/rng.h: Rng(seed, index)), never a
// std:: distribution, so a task is the same on every machine and does not depend on how many
// tasks come before it or on the number of jobs.
#pragma once

#include <cstdint>

#include "corpus/graph.h"

namespace nki_agent::corpus {

// Bumped whenever the same seed would draw other tasks or write them differently (corpus-gen-2: the
// bf16/fp16 tolerance rule of docs/corpus.md): it is part of every task's provenance.
inline constexpr const char* kGeneratorVersion = "corpus-gen-2";

struct GeneratorOptions {
  bool baseline_only = false;  // only ops with a lib kernel, so that every task has a baseline.py
  int attempt_stream = 0;      // a second draw for the same index (dedup and filters reject some)
};

TaskGraph generate_graph(uint64_t seed, uint64_t index, const GeneratorOptions& options);

}  // namespace nki_agent::corpus
