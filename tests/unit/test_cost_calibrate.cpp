// Calibrating a target (cost/calibrate.h, `nki-agent calibrate`): synthetic measurements made from
// a known parameter set are fitted back from other starting values (the parameters recovered, the
// errors gone), a parameter the data push past its range ends at the bound and says so, every
// malformed measurements file is its own Diagnostic, a point whose kernel fails is left out, the
// written target file re-loads with the fitted predictions, and the command's exit codes.
//
// The kernels are small ones of this file, each depending differently on the free parameters: a
// streaming add (DMA bandwidth), many small DMAs (DMA fixed latency), a Scalar/Vector ping-pong
// (cross-engine semaphores) and a matmul tile.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "cost/calibrate.h"
#include "cost/cost.h"
#include "nki/target.h"
#include "runtime/kernel_call.h"
#include "support/cli_runner.h"
#include "support/shared_service.h"
#include "tensor/tensor_spec.h"

namespace nki_agent {
namespace {

// The trn1 description without its own [[calibrate]] tables: the tests choose what is free.
std::string trn1_fixed() {
  std::string text(target_text("trn1"));
  const size_t at = text.find("\n[[calibrate]]");
  if (at != std::string::npos) text.resize(at + 1);
  return text;
}

constexpr const char* kStreamAdd = R"(import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def stream_add(a, b):
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range(rows // 128):
        lhs = nl.ndarray((128, cols), dtype=a.dtype, buffer=nl.sbuf)
        rhs = nl.ndarray((128, cols), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=lhs, src=a[t * 128:(t + 1) * 128, 0:cols])
        nisa.dma_copy(dst=rhs, src=b[t * 128:(t + 1) * 128, 0:cols])
        total = nl.ndarray((128, cols), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=total, data1=lhs, data2=rhs, op=nl.add)
        nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, 0:cols], src=total)
    return out
)";

constexpr const char* kSmallDmas = R"(import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def small_dmas(a, chunk=16):
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    for t in nl.sequential_range(cols // chunk):
        tile = nl.ndarray((rows, chunk), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=tile, src=a[0:rows, t * chunk:(t + 1) * chunk])
        nisa.dma_copy(dst=out[0:rows, t * chunk:(t + 1) * chunk], src=tile)
    return out
)";

constexpr const char* kPingPong = R"(import nki
import nki.language as nl


@nki.jit
def ping_pong(a, steps=16):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    for i in nl.sequential_range(steps):
        t = nl.exp(t)
        t = nl.add(t, 1.0)
    nl.store(out, value=t)
    return out
)";

constexpr const char* kMatmulTile = R"(import nki
import nki.language as nl


@nki.jit
def matmul_tile(lhsT, rhs):
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((M, N), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(K // 128):
        a = nl.load(lhsT[k * 128:(k + 1) * 128, 0:M])
        b = nl.load(rhs[k * 128:(k + 1) * 128, 0:N])
        acc += nl.matmul(a, b, transpose_x=True)
    nl.store(out, value=nl.copy(acc, dtype=out.dtype))
    return out
)";

constexpr const char* kRaises = R"(import nki


@nki.jit
def raises(a):
    raise ValueError("this kernel fails on purpose")
)";

constexpr const char* kFreeParameters = R"(
[[calibrate]]
key = "dma.efficiency"
min = 0.2
max = 1.0
source = "sustained share of the DMA peak"

[[calibrate]]
key = "dma.trigger_latency_ns"
min = 200
max = 4000
source = "fixed cost per DMA instruction"

[[calibrate]]
key = "sync.semaphore_latency_ns"
min = 10
max = 1000
source = "cross-engine semaphore"
)";

struct PointDef {
  const char* name;
  const char* file;
  const char* entry;
  std::vector<std::string> shapes;
  std::vector<std::string> args;
};

const std::vector<PointDef>& point_defs() {
  static const std::vector<PointDef> defs = {
      {"stream_add", "stream_add.py", "stream_add", {"a=float32[1024,2048]", "b=float32[1024,2048]"}, {}},
      {"small_dmas", "small_dmas.py", "small_dmas", {"a=float32[128,1024]"}, {}},
      {"ping_pong", "ping_pong.py", "ping_pong", {"a=float32[128,64]"}, {"steps=24"}},
      {"matmul_tile", "matmul_tile.py", "matmul_tile", {"lhsT=bfloat16[512,128]", "rhs=bfloat16[512,512]"}, {}},
  };
  return defs;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  ASSERT_TRUE(f.good()) << path;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string toml_strings(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", \"" : "\"") + v[i] + "\"";
  return s + "]";
}

// A measurements file over the point definitions with these latencies.
std::string measurements_text(const std::vector<double>& measured_us) {
  std::string s = "[measurements]\ntarget = \"trn1\"\nsource = \"synthetic\"\n";
  for (size_t i = 0; i < point_defs().size(); ++i) {
    const PointDef& d = point_defs()[i];
    s += fmt::format(
        "\n[[point]]\nname = \"{}\"\nkernel = \"{}\"\nentry = \"{}\"\nshapes = {}\nargs = {}\nmeasured_us = {}\n"
        "source = \"synthetic\"\n",
        d.name, d.file, d.entry, toml_strings(d.shapes), toml_strings(d.args), measured_us[i]);
  }
  return s;
}

class CostCalibrate : public testing::SharedServiceTest {
 protected:
  static void SetUpTestSuite() {
    start_service();
    dir_ = ::testing::TempDir() + "/nkia_calibrate";
    std::filesystem::create_directories(dir_);
    write_file(dir_ + "/stream_add.py", kStreamAdd);
    write_file(dir_ + "/small_dmas.py", kSmallDmas);
    write_file(dir_ + "/ping_pong.py", kPingPong);
    write_file(dir_ + "/matmul_tile.py", kMatmulTile);
    write_file(dir_ + "/raises.py", kRaises);
    // The fit starts from these, whatever the shipped description holds.
    auto base = set_target_numbers(
        trn1_fixed() + kFreeParameters,
        {{"dma.efficiency", 0.4}, {"dma.trigger_latency_ns", 1300}, {"sync.semaphore_latency_ns", 100}}, "base");
    ASSERT_TRUE(base) << base.error().format();
    base_ = *base;
    write_file(dir_ + "/base.toml", base_);
    traces_ = new std::vector<Result<Trace>>();
    for (const PointDef& d : point_defs()) {
      CalibrationPoint p;
      p.kernel_path = dir_ + "/" + d.file;
      p.entry = d.entry;
      p.shapes = d.shapes;
      p.args = d.args;
      traces_->push_back(trace(p));
    }
  }
  static void TearDownTestSuite() {
    delete traces_;
    traces_ = nullptr;
    stop_service();
  }

  // The point's kernel, timing-only in the shared sandbox.
  static Result<Trace> trace(const CalibrationPoint& p) {
    auto files = load_kernel_files(p.kernel_path);
    if (!files) return fail(files.error());
    KernelCall call;
    call.src = std::move(*files);
    call.entry = p.entry;
    call.target = "trn1";
    for (const auto& a : p.args) call.kwargs[a.substr(0, a.find('='))] = a.substr(a.find('=') + 1);
    std::vector<TensorSpec> specs;
    for (const auto& s : p.shapes) {
      auto spec = parse_tensor_spec(s);
      if (!spec) return fail(spec.error());
      specs.push_back(*spec);
    }
    make_timing_only(call, std::move(specs));
    auto out = service_->run(call, SandboxLimits::for_kernel(kDefaultKernelSeconds, kDefaultKernelMemoryMiB, true));
    if (!out) return fail(out.error());
    return std::move(out->trace);
  }

  // Every point's latency (µs) under the trn1 description with these numbers set.
  static std::vector<double> latencies(const std::vector<std::pair<std::string, double>>& values) {
    auto text = set_target_numbers(trn1_fixed(), values, "truth");
    EXPECT_TRUE(text) << text.error().format();
    auto hw = parse_hardware(*text, "truth");
    EXPECT_TRUE(hw) << hw.error().format();
    std::vector<double> out;
    for (const auto& t : *traces_) {
      EXPECT_TRUE(t) << t.error().format();
      auto r = profile_trace(*t, *hw);
      EXPECT_TRUE(r) << r.error().format();
      out.push_back(r->profile.total_ns / 1e3);
    }
    return out;
  }

  static Measurements measurements(const std::vector<double>& measured_us, const std::string& name) {
    const std::string path = dir_ + "/" + name;
    write_file(path, measurements_text(measured_us));
    auto m = load_measurements_file(path);
    EXPECT_TRUE(m) << m.error().format();
    return *m;
  }

  static const ParameterFit& param(const CalibrationResult& r, std::string_view key) {
    for (const auto& p : r.parameters)
      if (p.parameter.key == key) return p;
    throw std::runtime_error("no parameter " + std::string(key));
  }

  static inline std::string dir_;
  static inline std::string base_;
  static inline std::vector<Result<Trace>>* traces_ = nullptr;
};

TEST_F(CostCalibrate, TheKernelsDependOnTheParametersDifferently) {
  const auto base = latencies({});
  const auto slow_dma = latencies({{"dma.efficiency", 0.2}});
  const auto slow_trigger = latencies({{"dma.trigger_latency_ns", 4000}});
  const auto slow_sync = latencies({{"sync.semaphore_latency_ns", 1000}});
  // Bandwidth moves the streaming add most, the DMA trigger the small DMAs, the semaphore the
  // ping-pong.
  auto growth = [&](const std::vector<double>& v, size_t i) { return v[i] / base[i]; };
  EXPECT_GT(growth(slow_dma, 0), growth(slow_dma, 1));
  EXPECT_GT(growth(slow_trigger, 1), growth(slow_trigger, 0));
  EXPECT_GT(growth(slow_sync, 2), growth(slow_sync, 0));
  EXPECT_GT(growth(slow_sync, 2), 1.2);
}

TEST_F(CostCalibrate, RecoversAKnownParameterSet) {
  const std::vector<std::pair<std::string, double>> truth = {
      {"dma.efficiency", 0.62}, {"dma.trigger_latency_ns", 700}, {"sync.semaphore_latency_ns", 300}};
  const Measurements m = measurements(latencies(truth), "synthetic.toml");
  ASSERT_EQ(m.points.size(), 4u);
  auto r = calibrate(m, *traces_, base_, "base.toml");
  ASSERT_TRUE(r) << r.error().format();
  std::printf("%s", calibration_to_text(*r).c_str());
  EXPECT_EQ(r->included, 4u);
  EXPECT_GT(r->before.log_rms, 0.1);
  EXPECT_LT(r->after.log_rms, 0.005);
  EXPECT_LT(r->after.worst_abs_error, 0.01);
  EXPECT_DOUBLE_EQ(r->after.spearman, 1.0);
  EXPECT_LE(r->evaluations, kDefaultCalibrationEvaluations);
  // Each parameter back within 3% of its true value (from 0.4, 1300 and 100).
  for (const auto& [key, value] : truth) {
    const ParameterFit& p = param(*r, key);
    EXPECT_NEAR(p.after, value, 0.03 * value) << key;
    EXPECT_FALSE(p.at_min || p.at_max) << key;
  }
  EXPECT_DOUBLE_EQ(param(*r, "dma.efficiency").before, 0.4);
  const nlohmann::json j = calibration_to_json(*r);
  EXPECT_EQ(j["points"].size(), 4u);
  EXPECT_EQ(j["parameters"][0]["key"], "dma.efficiency");
  EXPECT_LT(j["after"]["log_rms"].get<double>(), j["before"]["log_rms"].get<double>());
}

TEST_F(CostCalibrate, AParameterPushedPastItsRangeEndsAtTheBound) {
  // DMA efficiency may reach at most 0.5 here; the measurements were made at 0.8, so the fit stops
  // at 0.5 and says so.
  std::string base = base_;
  const std::string range = "key = \"dma.efficiency\"\nmin = 0.2\nmax = 1.0";
  base.replace(base.find(range), range.size(), "key = \"dma.efficiency\"\nmin = 0.2\nmax = 0.5");
  const Measurements m = measurements(latencies({{"dma.efficiency", 0.8}}), "bound.toml");
  auto r = calibrate(m, *traces_, base, "narrow.toml");
  ASSERT_TRUE(r) << r.error().format();
  const ParameterFit& p = param(*r, "dma.efficiency");
  EXPECT_DOUBLE_EQ(p.after, 0.5);
  EXPECT_TRUE(p.at_max);
  EXPECT_FALSE(p.at_min);
  EXPECT_FALSE(param(*r, "dma.trigger_latency_ns").at_min || param(*r, "dma.trigger_latency_ns").at_max);
  EXPECT_LT(r->after.log_rms, r->before.log_rms);
  EXPECT_NE(calibration_to_text(*r).find("at its upper bound"), std::string::npos) << calibration_to_text(*r);
  EXPECT_EQ(calibration_to_json(*r)["parameters"][0]["at_bound"], "max");
}

TEST_F(CostCalibrate, TheWrittenFileReloadsWithTheFittedPredictions) {
  const Measurements m = measurements(
      latencies({{"dma.efficiency", 0.7}, {"dma.trigger_latency_ns", 900}, {"sync.semaphore_latency_ns", 60}}),
      "reload.toml");
  auto r = calibrate(m, *traces_, base_, "base.toml");
  ASSERT_TRUE(r) << r.error().format();
  const std::string file = fitted_target_file(*r, "2026-01-01 00:00:00 UTC");
  EXPECT_EQ(file.rfind("# Fitted by nki-agent calibrate at 2026-01-01 00:00:00 UTC from base.toml", 0), 0u) << file;
  // One provenance comment per fitted number, saying what it was.
  size_t comments = 0;
  for (size_t at = file.find("# fitted by nki-agent calibrate to "); at != std::string::npos;
       at = file.find("# fitted by nki-agent calibrate to ", at + 1))
    ++comments;
  EXPECT_EQ(comments, 3u);
  EXPECT_NE(file.find("; was 1300.0"), std::string::npos);
  EXPECT_NE(file.find("# descriptor/sync/semaphore-to-start"), std::string::npos);  // the old comment stays
  auto hw = parse_hardware(file, "fitted.toml");
  ASSERT_TRUE(hw) << hw.error().format();
  EXPECT_DOUBLE_EQ(hw->dma.efficiency, param(*r, "dma.efficiency").after);
  EXPECT_DOUBLE_EQ(hw->dma.trigger_latency_ns, param(*r, "dma.trigger_latency_ns").after);
  EXPECT_DOUBLE_EQ(hw->semaphore_latency_ns, param(*r, "sync.semaphore_latency_ns").after);
  EXPECT_EQ(hw->free_parameters.size(), 3u);
  for (size_t i = 0; i < traces_->size(); ++i) {
    auto rep = profile_trace(*(*traces_)[i], *hw);
    ASSERT_TRUE(rep);
    EXPECT_DOUBLE_EQ(rep->profile.total_ns / 1e3, r->points[i].after_us) << r->points[i].name;
  }
}

TEST_F(CostCalibrate, ANumberWrittenAsAnIntegerIsFittedAsOne) {
  // dependency_overhead_cycles is written "200" in trn1.toml: its fitted value is an integer too.
  const std::string base = trn1_fixed() +
                           "\n[[calibrate]]\nkey = \"engines.scalar.dependency_overhead_cycles\"\nmin = 0.5\n"
                           "max = 999.5\nsource = \"t\"\n\n[[calibrate]]\nkey = \"dma.efficiency\"\nmin = 0.2\n"
                           "max = 1.0\nsource = \"t\"\n";
  const Measurements m = measurements(
      latencies({{"engines.scalar.dependency_overhead_cycles", 517}, {"dma.efficiency", 0.45}}), "integer.toml");
  auto r = calibrate(m, *traces_, base, "integer-base.toml");
  ASSERT_TRUE(r) << r.error().format();
  const double cycles = param(*r, "engines.scalar.dependency_overhead_cycles").after;
  EXPECT_EQ(cycles, std::round(cycles));
  EXPECT_GE(cycles, 1);
  EXPECT_LE(cycles, 999);
  EXPECT_NE(r->fitted_text.find(fmt::format("dependency_overhead_cycles = {}", static_cast<int64_t>(cycles))),
            std::string::npos);
  auto hw = parse_hardware(fitted_target_file(*r, "now"), "fitted");
  ASSERT_TRUE(hw) << hw.error().format();
  EXPECT_DOUBLE_EQ(hw->engine(Engine::kScalar).dependency_overhead_cycles, cycles);
  EXPECT_LT(r->after.log_rms, r->before.log_rms);
}

TEST_F(CostCalibrate, AFailingPointIsLeftOutOfTheFit) {
  std::vector<double> measured = latencies({{"dma.efficiency", 0.5}});
  std::string text = measurements_text(measured) +
                     "\n[[point]]\nname = \"raises\"\nkernel = \"raises.py\"\nentry = \"raises\"\n"
                     "shapes = [\"a=float32[128,128]\"]\nmeasured_us = 5.0\n";
  write_file(dir_ + "/failing.toml", text);
  auto m = load_measurements_file(dir_ + "/failing.toml");
  ASSERT_TRUE(m) << m.error().format();
  std::vector<Result<Trace>> traces;
  for (const auto& t : *traces_) traces.push_back(t);
  traces.push_back(trace(m->points.back()));
  ASSERT_FALSE(traces.back());
  auto r = calibrate(*m, traces, base_, "base.toml");
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ(r->included, 4u);
  ASSERT_TRUE(r->points.back().excluded);
  EXPECT_NE(calibration_to_text(*r).find("raises"), std::string::npos);
  EXPECT_TRUE(calibration_to_json(*r)["points"][4].contains("excluded"));
  EXPECT_LT(r->after.log_rms, 0.01);

  // No point at all: a Diagnostic, not a fit.
  std::vector<Result<Trace>> none;
  for (size_t i = 0; i < m->points.size(); ++i) none.push_back(traces.back());
  auto empty = calibrate(*m, none, base_, "base.toml");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, "nkia_calibrate_no_points");
}

TEST_F(CostCalibrate, ATargetWithoutFreeParametersOrOfAnotherNameIsRefused) {
  const Measurements m = measurements(latencies({}), "plain.toml");
  auto r = calibrate(m, *traces_, trn1_fixed(), "data/targets/trn1.toml");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_calibrate_no_parameters");
  Measurements other = m;
  other.target = "trn2";
  auto t = calibrate(other, *traces_, base_, "base.toml");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, "nkia_bad_argument");
}

TEST_F(CostCalibrate, MalformedMeasurementsAreDiagnostics) {
  const std::string head = "[measurements]\ntarget = \"trn1\"\n";
  const std::string good_point =
      "[[point]]\nname = \"p\"\nkernel = \"stream_add.py\"\nentry = \"stream_add\"\n"
      "shapes = [\"a=float32[128,128]\", \"b=float32[128,128]\"]\nmeasured_us = 3.0\n";
  auto point_with = [&](const std::string& from, const std::string& to) {
    std::string p = good_point;
    p.replace(p.find(from), from.size(), to);
    return head + p;
  };
  std::string many = head;
  for (int i = 0; i < 1001; ++i)
    many += fmt::format(
        "[[point]]\nname = \"p{}\"\nkernel = \"stream_add.py\"\nentry = \"e\"\nshapes = []\nmeasured_us = 1\n", i);
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"not toml [", {"not valid TOML"}},
      {good_point, {"[measurements]", "missing"}},
      {head + "colour = 1\n" + good_point, {"unknown key", "colour"}},
      {head, {"no [[point]]"}},
      {point_with("entry = \"stream_add\"\n", "entry = \"stream_add\"\nwhen = 3\n"),
       {"point 'p'", "unknown key", "when"}},
      {point_with("measured_us = 3.0\n", ""), {"point 'p'", "measured_us", "missing"}},
      {point_with("measured_us = 3.0", "measured_us = 0.0"), {"point 'p'", "measured_us", "positive"}},
      {point_with("measured_us = 3.0", "measured_us = -2"), {"point 'p'", "measured_us", "positive"}},
      {point_with("measured_us = 3.0", "measured_us = \"fast\""), {"point 'p'", "measured_us", "number"}},
      {point_with("entry = \"stream_add\"\n", ""), {"point 'p'", "entry", "missing"}},
      {point_with("name = \"p\"\n", ""), {"point[0]", "name", "missing"}},
      {head + good_point + good_point, {"point 'p'", "twice"}},
      {point_with("stream_add.py", "no_such_kernel.py"), {"point 'p'", "kernel", "no_such_kernel.py"}},
      {point_with("a=float32[128,128]", "a=float33[128]"), {"point 'p'", "shapes", "float33"}},
      {point_with("measured_us", "grid = [0]\nmeasured_us"), {"point 'p'", "grid"}},
      {point_with("measured_us", "args = [\"nonsense\"]\nmeasured_us"), {"point 'p'", "args", "nonsense"}},
      {many, {"1001 points", "at most 1000"}},
  };
  for (const auto& [text, needles] : cases) {
    auto m = parse_measurements(text, dir_ + "/bad.toml");
    ASSERT_FALSE(m) << text;
    EXPECT_EQ(m.error().code, "nkia_measurements_invalid") << m.error().format();
    for (const auto& n : needles)
      EXPECT_NE(m.error().message.find(n), std::string::npos) << n << ": " << m.error().format();
  }
  // A good file reads, its kernel resolved against the file's folder.
  auto ok = parse_measurements(head + good_point, dir_ + "/good.toml");
  ASSERT_TRUE(ok) << ok.error().format();
  EXPECT_EQ(ok->points[0].kernel_path, std::filesystem::path(dir_ + "/stream_add.py").lexically_normal().string());
  EXPECT_DOUBLE_EQ(ok->points[0].measured_us, 3.0);
  auto missing = load_measurements_file(dir_ + "/absent.toml");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "nkia_measurements_unreadable");
}

TEST(CostCalibrateText, SettingANumberRewritesOnlyItsToken) {
  const std::string text =
      "[dma]\nefficiency = 0.40                      # calibrated: a comment\nengines = 16  # an integer\n"
      "[t]\nx = {a = 1.5, b = 2.5}\n";
  auto out = set_target_numbers(text, {{"dma.efficiency", 0.123456789}, {"dma.engines", 12.4}, {"t.x.b", 7}}, "t");
  ASSERT_TRUE(out) << out.error().format();
  EXPECT_EQ(*out,
            "[dma]\nefficiency = 0.123456789               # calibrated: a comment\nengines = 12  # an integer\n"
            "[t]\nx = {a = 1.5, b = 7.0}\n");
  auto bad = set_target_numbers(text, {{"dma.colour", 1}}, "t");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("dma.colour"), std::string::npos);
}

TEST(CostCalibrateText, SpearmanUsesAverageRanksForTies) {
  EXPECT_NEAR(spearman_correlation({1, 2, 2, 3}, {1, 2, 3, 4}), 4.5 / std::sqrt(22.5), 1e-12);
  EXPECT_DOUBLE_EQ(spearman_correlation({1, 5, 9}, {30, 20, 10}), -1.0);
  EXPECT_DOUBLE_EQ(spearman_correlation({1, 1, 1}, {1, 2, 3}), 0.0);
}

TEST_F(CostCalibrate, TheCommandsExitCodes) {
  using testing::run_cli;
  using testing::Stderr;
  const std::string cli = NKIA_CLI;
  const std::string meas = dir_ + "/cli.toml";
  write_file(meas, measurements_text(latencies({{"dma.efficiency", 0.6}, {"dma.trigger_latency_ns", 900}})));
  const std::string out = dir_ + "/fitted.toml";
  std::filesystem::remove(out);
  auto ok = run_cli("--json calibrate " + meas + " --target trn1 --hardware " + dir_ + "/base.toml -o " + out);
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  auto j = nlohmann::json::parse(ok.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << ok.out;
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["output"], out);
  EXPECT_LT(j["after"]["log_rms"].get<double>(), 0.01);
  EXPECT_NE(read_file(out).find("# fitted by nki-agent calibrate to " + meas + " (4 points"), std::string::npos);
  // The written file is a target `profile --hardware` takes, with the fitted prediction.
  auto prof = run_cli("--json profile " + dir_ + "/stream_add.py --entry stream_add --timing-only --hardware " + out +
                      " --shapes 'a=float32[1024,2048]' 'b=float32[1024,2048]'");
  ASSERT_EQ(prof.exit_code, 0) << prof.out;
  auto pj = nlohmann::json::parse(prof.out, nullptr, false);
  EXPECT_NEAR(pj["summary"]["total_time_ns"].get<double>() / 1e3, j["points"][0]["after_us"].get<double>(), 1e-6);
  auto text = run_cli("calibrate " + meas + " --hardware " + dir_ + "/base.toml", Stderr::kDrop);
  EXPECT_EQ(text.exit_code, 0);
  for (const char* k : {"stream_add", "median |error|", "Spearman", "dma.efficiency", "evaluations"})
    EXPECT_NE(text.out.find(k), std::string::npos) << k << "\n" << text.out;

  write_file(dir_ + "/broken.toml", "[measurements]\ntarget = \"trn1\"\n[[point]]\nname = \"x\"\n");
  auto bad = run_cli("--json calibrate " + dir_ + "/broken.toml --hardware " + dir_ + "/base.toml");
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("nkia_measurements_invalid"), std::string::npos) << bad.out;
  write_file(dir_ + "/fixed.toml", trn1_fixed());
  auto no_params = run_cli("--json calibrate " + meas + " --target trn1 --hardware " + dir_ + "/fixed.toml");
  EXPECT_EQ(no_params.exit_code, 1) << no_params.out;
  EXPECT_NE(no_params.out.find("nkia_calibrate_no_parameters"), std::string::npos) << no_params.out;
  EXPECT_EQ(run_cli("calibrate").exit_code, 2);
  EXPECT_EQ(run_cli("calibrate " + meas + " --no-such-flag").exit_code, 2);
  EXPECT_EQ(run_cli("calibrate " + meas + " --target trn9").exit_code, 2);
}

}  // namespace
}  // namespace nki_agent
