// cost/calibrate.h — fitting a target's free parameters to measured kernel latencies
// (`nki-agent calibrate`, docs/cost-model.md "Calibrating a target").
//
// A measurements file lists kernels, their shapes and their measured latencies ([[point]] tables);
// a target description declares which of its numbers are free and their physical ranges
// ([[calibrate]], cost/hardware.h FreeParameter). Setting a parameter rewrites that number's token
// on its line of the target's TOML text (the rest of the line, its comment included, stays) and
// re-parses the text with parse_hardware, so every candidate is a target file that could be
// written out as it is. The fit minimises the sum over points of (ln predicted - ln measured)^2
// with a bounded Nelder–Mead search: each parameter lives in the unit interval of its range
// (logarithmic when the range is positive and spans more than a factor of 10, linear otherwise),
// candidates are clamped to it, the start is the base file's values, and one restart from the best
// vertex follows the first convergence. It is deterministic: the same inputs give the same fit.
//
// The kernels are traced by the caller (the CLI runs them in the sandbox, timing-only, as
// `profile` does); this file only costs traces. Never: a crash or an exception on a malformed
// measurements file or a point whose profile fails (those are Diagnostics, or excluded points),
// or a written target that parse_hardware would refuse.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/diagnostic.h"
#include "cost/hardware.h"
#include "nki/trace.h"

namespace nki_agent {

inline constexpr size_t kMaxCalibrationPoints = 1000;
inline constexpr int kDefaultCalibrationEvaluations = 400;

// One [[point]] of a measurements file.
struct CalibrationPoint {
  std::string name;
  std::string kernel;       // the path as written (relative to the measurements file)
  std::string kernel_path;  // the path resolved against the measurements file's folder
  std::string entry;
  std::vector<std::string> shapes;  // name=dtype[shape], as `profile --shapes` takes them
  std::vector<std::string> args;    // name=python-literal, as `profile --arg` takes them
  std::vector<int64_t> grid;        // the SPMD grid; empty: a plain call
  double measured_us = 0;
  std::string source;
  int line = 0;  // the [[point]] table's line
};

struct Measurements {
  std::string path;  // the file, as given
  std::string target;
  std::string source;
  std::vector<CalibrationPoint> points;
};

// Parses a measurements file's text; `path` names it in Diagnostics and anchors the kernels'
// relative paths. Each kernel file must be readable. Codes nkia_measurements_invalid (not TOML, an
// unknown key, a missing or mistyped field, a non-positive latency, a duplicate name, an
// unreadable kernel, more than kMaxCalibrationPoints points; the message names the point and the
// field, the location is its line).
Result<Measurements> parse_measurements(std::string_view text, const std::string& path);
// Reads and parses a file. Code nkia_measurements_unreadable too.
Result<Measurements> load_measurements_file(const std::string& path);

// The target text with each keyed number's value token replaced by `value` (written so it reads
// back as the same double, an integer for a number that was an integer); the rest of every line
// stays. Code nkia_hardware_invalid when a key names no number of the text.
Result<std::string> set_target_numbers(std::string_view text, const std::vector<std::pair<std::string, double>>& values,
                                       std::string_view origin);

struct CalibrateOptions {
  int max_evaluations = kDefaultCalibrationEvaluations;  // target-file evaluations, each costing every point
  unsigned threads = 0;  // threads costing the points of one evaluation; 0: one per core (the fit is the same)
};

struct PointFit {
  std::string name;
  double measured_us = 0;
  double before_us = 0, after_us = 0;  // predicted with the base and the fitted parameters
  std::optional<Diagnostic> excluded;  // why the point takes no part (its trace or profile failed)
};

struct ParameterFit {
  FreeParameter parameter;
  double before = 0, after = 0;
  bool at_min = false, at_max = false;  // the fitted value ends at a bound of its range
};

// Errors over the included points; error = predicted / measured - 1.
struct FitStats {
  double median_abs_error = 0, worst_abs_error = 0;
  double log_rms = 0;   // sqrt(mean((ln predicted - ln measured)^2))
  double spearman = 0;  // rank correlation of predicted and measured (average ranks for ties)
};

struct CalibrationResult {
  std::string measurements_path, target, base_origin;
  std::vector<PointFit> points;  // in file order
  std::vector<ParameterFit> parameters;
  FitStats before, after;
  size_t included = 0;  // points that take part
  int evaluations = 0;
  bool converged = false;
  std::string fitted_text;  // the base text with the fitted values, before provenance comments
};

// The base target description, checked for calibrating `m`: it parses, it is the measured target
// and it declares free parameters. Codes: those of parse_hardware, nkia_bad_argument (the
// measurements are for another target), nkia_calibrate_no_parameters (no [[calibrate]]).
Result<HardwareSpec> calibration_base(const Measurements& m, std::string_view base_text, std::string_view base_origin);

// Fits `base_text`'s free parameters to the points; `traces[i]` is point i's trace, or why it
// could not be made. Codes: those of calibration_base, nkia_calibrate_no_points (no point could be
// profiled).
Result<CalibrationResult> calibrate(const Measurements& m, const std::vector<Result<Trace>>& traces,
                                    std::string_view base_text, std::string_view base_origin,
                                    const CalibrateOptions& options = {});

// The target file to write: the fitted text, each fitted number's line ending in a comment that
// says it was fitted, to what and what it was, and a header line saying when and what was fitted.
// `when` is the time stamp the header shows.
std::string fitted_target_file(const CalibrationResult& r, std::string_view when);

// The report: every point's measured, predicted and error before and after, the summary statistics
// and every parameter before -> after with its range.
std::string calibration_to_text(const CalibrationResult& r);
nlohmann::json calibration_to_json(const CalibrationResult& r);

// Spearman's rank correlation of two equally long samples, ties taking their average rank; 0 when
// either is constant or shorter than 2.
double spearman_correlation(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace nki_agent
