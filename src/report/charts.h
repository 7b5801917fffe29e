// report/charts.h — the report's plots (report/svg.h) from its runs, one series per run:
//   chart-pass-level     pass rate by level (bars)
//   chart-pass-category  pass rate by category (horizontal bars)
//   chart-fast-p         the fast_p curve: fast_p against p from 0 to kFastCurveMax (a line per
//                        run, KernelBench's thresholds marked)
//   chart-speedup        the distribution of correct tasks' speedups on a log axis: bins of ×2
//                        from 1/16 to 16, each bin (lo, hi] so that exactly 1× is "not faster"
//   chart-turns          turns to the first pass (agent runs only)
//   chart-failures       failure kinds: the failed check, the compile Diagnostic code, refused
// and, per comparison, chart-compare-<k>: its tasks by verdict (report/compare.h).
#pragma once

#include <string>
#include <vector>

#include "report/compare.h"
#include "report/report.h"

namespace nki_agent {

inline constexpr double kFastCurveMax = 3.0;
inline constexpr double kFastCurveStep = 0.05;

// The speedup histogram's bins: their labels, and the bin of a speedup (> 0).
std::vector<std::string> speedup_bin_labels();
size_t speedup_bin(double speedup);

// The label of a run in legends and headings: "run id (model)".
std::string run_label(const RunReport& r);

// The six charts above, in that order, as SVG elements.
std::vector<std::string> render_run_charts(const std::vector<RunReport>& runs);
std::string render_comparison_chart(const RunComparison& c, const std::string& id);

}  // namespace nki_agent
