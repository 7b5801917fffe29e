// agent/bench_merge.h — `nki-agent bench merge`: the databases of a benchmark's shards joined
// into one run.
//
// A benchmark spread over a job array runs `bench --shard I/N` in each job, each into its own
// database; merge reads every run of every input and writes them to a new database as one run:
// the first input's run with its "shard" option removed (so its key is the unsharded run's, and
// `bench --resume` on the merged file continues it), holding every input row. The inputs must be
// one benchmark: runs that differ in model, prompt version, simulator version or any other option
// but the shard are refused. When two inputs hold the same (task, sample), a result is kept over
// an interrupted row, else the first input's row; such rows are counted as duplicates.
#pragma once

#include <string>
#include <vector>

#include "core/diagnostic.h"

namespace nki_agent {

struct MergeOptions {
  std::vector<std::string> inputs;  // databases of `bench` runs (typically one shard each)
  std::string out;                  // the database to write; it must not exist
  std::string run_id;               // the merged run's id; empty: the first input run's
};

struct MergeSummary {
  std::string out, run_id;
  int runs = 0, rows = 0, duplicates = 0;
};

// Codes: nkia_bad_argument (an input that is missing or holds no run, an output that exists, runs
// of different benchmarks), nkia_store_io.
Result<MergeSummary> merge_bench_databases(const MergeOptions& options);

}  // namespace nki_agent
