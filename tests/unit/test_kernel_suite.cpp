// nkia-shards: 8 (about 250 short tests, each of which would otherwise start CPython in a process)
//
// The kernel suite: every tests/kernels/*.py is an NKI kernel of our own with a header that says
// how to call it and what it must compute (tests/kernels/README.md); every tests/kernels/fail/*.py
// is a kernel with a realistic mistake and the Diagnostic it must get; every
// tests/kernels/calibration/*.py re-creates a kernel measured on a device (the cost model's
// calibration points, tests/kernels/calibration/README.md) and runs like the first kind, without the
// dialect twins. One test per file.
//
// A passing kernel runs in-process (python_run) on seeded inputs (our Rng, one stream per input
// name); the NumPy oracle (tests/oracle/kernel_reference.py) evaluates the header's reference in
// float64 on the same values; the outputs are compared with the header's tolerance
// (|got - want| <= atol + rtol * |want|, NaN only where the reference is NaN).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "nki/error_catalogue.h"
#include "runtime/kernel_call.h"
#include "runtime/python/py_host.h"
#include "runtime/python/replay.h"
#include "support/python_oracle.h"
#include "tensor/npy.h"
#include "tensor/rng.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;

struct InputSpec {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
  std::string dist = "normal";  // normal(p0 = mean, p1 = stddev) or uniform(p0 = low, p1 = high)
  double p0 = 0.0, p1 = 1.0;
};

struct KernelSpec {
  std::string path;       // absolute
  std::string test_name;  // add_legacy, fail_partition_limit, calibration_stream_relu
  bool must_fail = false;
  bool calibration = false;  // tests/kernels/calibration/: one dialect, no twin
  std::string entry;
  std::vector<InputSpec> inputs;
  std::map<std::string, std::string> args;
  uint64_t seed = 2024;
  std::string reference;
  std::optional<double> atol, rtol;
  std::string target;         // "trn1", "trn2" or "trn3" (`target:`); empty: the runtime's default, trn1
  std::string known_failure;  // the reason, when the header says `status: known-failure <reason>`
  std::string expect_code;
  int expect_line = 0;
  std::string header_error;  // a malformed header: the test fails with this
};

void PrintTo(const KernelSpec& k, std::ostream* os) {
  *os << k.path;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::vector<std::string> split_ws(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// name=dtype[d0,d1,...] with an optional ~normal(mean,std) or ~uniform(low,high).
std::optional<InputSpec> parse_input(const std::string& text, std::string& error) {
  static const std::regex re(
      R"(^([A-Za-z_][A-Za-z0-9_]*)=([A-Za-z0-9_]+)\[([0-9,]+)\](?:~(normal|uniform)\(([^,()]+),([^,()]+)\))?$)");
  std::smatch m;
  if (!std::regex_match(text, m, re)) {
    error = "bad input spec '" + text + "' (want name=dtype[d0,d1] or name=dtype[d0,d1]~uniform(lo,hi))";
    return std::nullopt;
  }
  InputSpec in;
  in.name = m[1];
  auto dt = dtype_from_name(m[2].str());
  if (!dt) {
    error = "unknown dtype '" + m[2].str() + "' in '" + text + "'";
    return std::nullopt;
  }
  in.dtype = *dt;
  std::stringstream dims(m[3].str());
  for (std::string d; std::getline(dims, d, ',');) {
    if (d.empty()) {
      error = "empty dimension in '" + text + "'";
      return std::nullopt;
    }
    in.shape.push_back(std::stoll(d));
  }
  if (m[4].matched) {
    in.dist = m[4];
    try {
      in.p0 = std::stod(m[5].str());
      in.p1 = std::stod(m[6].str());
    } catch (const std::exception&) {
      error = "bad distribution parameters in '" + text + "'";
      return std::nullopt;
    }
  }
  return in;
}

void parse_directive(KernelSpec& k, const std::string& key, const std::string& value) {
  auto bad = [&](const std::string& why) {
    if (k.header_error.empty()) k.header_error = "header '" + key + "': " + why;
  };
  if (key == "entry") {
    k.entry = trim(value);
  } else if (key == "inputs") {
    for (const auto& w : split_ws(value)) {
      std::string err;
      if (auto in = parse_input(w, err))
        k.inputs.push_back(*in);
      else
        bad(err);
    }
  } else if (key == "args") {
    for (const auto& w : split_ws(value)) {
      size_t eq = w.find('=');
      if (eq == std::string::npos || eq == 0)
        bad("bad argument '" + w + "' (want name=python-literal)");
      else
        k.args[w.substr(0, eq)] = w.substr(eq + 1);
    }
  } else if (key == "seed") {
    try {
      k.seed = std::stoull(trim(value));
    } catch (const std::exception&) {
      bad("not an integer");
    }
  } else if (key == "reference") {
    k.reference = value;
  } else if (key == "tolerance") {
    for (const auto& w : split_ws(value)) {
      size_t eq = w.find('=');
      std::string name = eq == std::string::npos ? w : w.substr(0, eq);
      double v = 0;
      try {
        v = std::stod(w.substr(eq + 1));
      } catch (const std::exception&) {
        bad("bad value in '" + w + "'");
        continue;
      }
      if (name == "atol")
        k.atol = v;
      else if (name == "rtol")
        k.rtol = v;
      else
        bad("unknown tolerance '" + name + "' (atol, rtol)");
    }
  } else if (key == "target") {
    k.target = trim(value);
    if (k.target != "trn1" && k.target != "trn2" && k.target != "trn3") bad("want trn1, trn2 or trn3");
  } else if (key == "status") {
    std::string v = trim(value);
    if (v.rfind("known-failure", 0) != 0 || trim(v.substr(13)).empty())
      bad("want 'known-failure <reason>'");
    else
      k.known_failure = trim(v.substr(13));
  } else if (key == "expect-error") {
    static const std::regex re(R"(^([a-z0-9_]+) line ([0-9]+)$)");
    std::smatch m;
    std::string v = trim(value);
    if (!std::regex_match(v, m, re)) {
      bad("want '<code> line <N>'");
    } else {
      k.expect_code = m[1];
      k.expect_line = std::stoi(m[2].str());
    }
  }
}

KernelSpec parse_kernel_file(const fs::path& path, bool must_fail, bool calibration) {
  KernelSpec k;
  k.path = path.string();
  k.must_fail = must_fail;
  k.calibration = calibration;
  k.test_name = std::string(must_fail ? "fail_" : calibration ? "calibration_" : "") + path.stem().string();
  for (char& c : k.test_name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  std::ifstream in(path);
  if (!in) {
    k.header_error = "cannot read the file";
    return k;
  }
  static const std::set<std::string> keys = {"entry",     "inputs",    "args",   "seed",        "target",
                                             "reference", "tolerance", "status", "expect-error"};
  static const std::regex directive(R"(^# ([a-z][a-z-]*):(.*)$)");
  std::string line, key;  // key: the directive the previous line belonged to, if any
  std::map<std::string, std::string> values;
  std::vector<std::string> order;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] != '#') break;  // the header is the leading comment block
    std::smatch m;
    if (!key.empty() && line.rfind("#  ", 0) == 0 && !trim(line.substr(1)).empty()) {
      values[key] += "\n" + line.substr(1);  // a continuation: '#' then at least two spaces
    } else if (std::regex_match(line, m, directive) && keys.count(m[1].str())) {
      key = m[1];
      if (values.count(key)) {
        k.header_error = "header: '" + key + "' given twice";
        key.clear();
        continue;
      }
      values[key] = m[2].str().empty() || m[2].str()[0] != ' ' ? m[2].str() : m[2].str().substr(1);
      order.push_back(key);
    } else {
      key.clear();  // prose
    }
  }
  for (const auto& name : order) parse_directive(k, name, values[name]);
  if (k.header_error.empty()) {
    if (k.entry.empty())
      k.header_error = "header: no 'entry'";
    else if (must_fail && k.expect_code.empty())
      k.header_error = "header: a fail/ kernel needs 'expect-error'";
    else if (!must_fail && trim(k.reference).empty())
      k.header_error = "header: no 'reference'";
    else if (!must_fail && !k.expect_code.empty())
      k.header_error = "header: 'expect-error' outside fail/";
  }
  return k;
}

std::vector<KernelSpec> discover() {
  std::vector<KernelSpec> out;
  const fs::path root = fs::path(NKIA_SOURCE_DIR) / "tests" / "kernels";
  struct Folder {
    fs::path dir;
    bool must_fail, calibration;
  };
  for (const Folder& folder :
       {Folder{root, false, false}, Folder{root / "fail", true, false}, Folder{root / "calibration", false, true}}) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(folder.dir, ec))
      if (e.is_regular_file() && e.path().extension() == ".py") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) out.push_back(parse_kernel_file(f, folder.must_fail, folder.calibration));
  }
  return out;
}

const std::vector<KernelSpec>& all_kernels() {
  static const std::vector<KernelSpec> kernels = discover();
  return kernels;
}

// Default tolerances by the output's dtype: a little above its rounding error.
std::pair<double, double> default_tolerance(DType t) {
  switch (t) {
    case DType::kBFloat16: return {1e-2, 1e-2};
    case DType::kFloat16: return {1e-3, 1e-3};
    default: return {1e-5, 1e-5};
  }
}

std::string index_string(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

std::string shape_string(const Shape& shape) {
  std::string s = "[";
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

class KernelSuite : public ::testing::TestWithParam<KernelSpec> {
 protected:
  static void SetUpTestSuite() {
    auto r = python_host_init();
    ASSERT_TRUE(r) << r.error().format();
  }

  static Result<KernelOutcome> run_kernel(const KernelSpec& k, std::vector<Tensor>* inputs_out = nullptr,
                                          bool eager_state = false) {
    auto files = load_kernel_files(k.path);
    if (!files) return fail(files.error());
    KernelCall call;
    call.src = std::move(*files);
    call.entry = k.entry;
    for (const auto& in : k.inputs) {
      Rng rng(k.seed, Rng::stream_id(in.name));
      call.inputs.push_back(in.dist == "uniform" ? random_uniform(in.shape, in.dtype, rng, in.p0, in.p1)
                                                 : random_normal(in.shape, in.dtype, rng, in.p0, in.p1));
      call.input_names.push_back(in.name);
    }
    call.kwargs = k.args;
    call.target = k.target;
    call.eager_state = eager_state;
    if (inputs_out) *inputs_out = call.inputs;
    return python_run(call);
  }
};

void check_must_fail(const KernelSpec& k, const Result<KernelOutcome>& r, bool* matched, std::string* what) {
  if (r) {
    *matched = false;
    *what = "the kernel ran without an error";
    return;
  }
  *matched = r.error().code == k.expect_code && r.error().loc.line == k.expect_line;
  *what = r.error().code + " line " + std::to_string(r.error().loc.line) + ": " + r.error().format();
}

TEST_P(KernelSuite, Runs) {
  const KernelSpec& k = GetParam();
  SCOPED_TRACE("kernel " + k.path);
  ASSERT_TRUE(k.header_error.empty()) << k.path << ": " << k.header_error;

  if (k.must_fail) {
    auto r = run_kernel(k);
    bool matched = false;
    std::string what;
    check_must_fail(k, r, &matched, &what);
    if (!k.known_failure.empty())
      GTEST_SKIP() << "known failure: " << k.known_failure << "\n  expected " << k.expect_code << " line "
                   << k.expect_line << (matched ? "; NOW MATCHES: remove the status line" : "; got " + what);
    EXPECT_TRUE(matched) << k.path << ": expected " << k.expect_code << " line " << k.expect_line << ", got " << what;
    if (!r) {
      EXPECT_FALSE(r.error().hint.empty()) << k.path << ": the Diagnostic has no hint";
    }
    return;
  }

  std::vector<Tensor> inputs;
  auto r = run_kernel(k, &inputs);
  if (!k.known_failure.empty())
    GTEST_SKIP() << "known failure: " << k.known_failure
                 << (r ? "\n  the kernel now runs: check its results and remove the status line"
                       : "\n  still fails: " + r.error().format());
  ASSERT_TRUE(r) << k.path << " failed:\n" << r.error().format();
  // A correct kernel runs clean: no unwritten memory read, no SBUF over-subscription.
  for (const Diagnostic& w : r->warnings) ADD_FAILURE() << k.path << ": " << w.format();

  testing::ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  std::vector<std::string> oracle_args = {dir.path()};
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto saved = npy_save(dir.file(k.inputs[i].name + ".npy"), inputs[i], NpyOptions{NarrowAs::kFloat32});
    ASSERT_TRUE(saved) << saved.error().format();
    oracle_args.push_back(k.inputs[i].name);
  }
  {
    std::ofstream ref(dir.file("reference.txt"));
    ref << k.reference << "\n";
  }
  auto oracle = testing::run_python(testing::oracle_script("kernel_reference.py"), oracle_args);
  ASSERT_EQ(oracle.exit_code, 0) << "the reference of " << k.path << " failed:\n" << oracle.output;
  size_t n_ref = 0;
  {
    std::istringstream lines(oracle.output);
    std::string last;
    for (std::string w; lines >> w;) last = w;  // the oracle's last word: the number of outputs
    n_ref = std::strtoul(last.c_str(), nullptr, 10);
  }
  ASSERT_GT(n_ref, 0u) << "unexpected oracle output: " << oracle.output;
  ASSERT_EQ(r->outputs.size(), n_ref) << k.path << ": the kernel returned " << r->outputs.size()
                                      << " outputs, the reference " << n_ref;

  for (size_t o = 0; o < n_ref; ++o) {
    auto want_t = npy_load(dir.file("ref_" + std::to_string(o) + ".npy"));
    ASSERT_TRUE(want_t) << want_t.error().format();
    const Tensor& got_t = r->outputs[o];
    ASSERT_EQ(got_t.shape(), want_t->shape()) << k.path << " output " << o << ": shape " << shape_string(got_t.shape())
                                              << ", reference " << shape_string(want_t->shape());
    auto [datol, drtol] = default_tolerance(got_t.dtype());
    const double atol = k.atol.value_or(datol), rtol = k.rtol.value_or(drtol);
    std::vector<float> got = got_t.to_f32_vector(), want = want_t->to_f32_vector();
    double max_abs = 0, max_rel = 0;
    int64_t bad = 0, first_bad = -1;
    for (size_t i = 0; i < got.size(); ++i) {
      const double g = got[i], w = want[i];
      bool ok;
      if (std::isnan(w) || std::isnan(g)) {
        ok = std::isnan(w) && std::isnan(g);
      } else {
        const double err = std::fabs(g - w);
        max_abs = std::max(max_abs, err);
        if (w != 0) max_rel = std::max(max_rel, err / std::fabs(w));
        ok = err <= atol + rtol * std::fabs(w);
      }
      if (!ok) {
        if (first_bad < 0) first_bad = static_cast<int64_t>(i);
        ++bad;
      }
    }
    EXPECT_EQ(bad, 0) << k.path << " output " << o << " (" << dtype_name(got_t.dtype()) << shape_string(got_t.shape())
                      << "): " << bad << " of " << got.size() << " elements outside atol=" << atol << " rtol=" << rtol
                      << "; max abs error " << max_abs << ", max rel error " << max_rel << "; first bad index "
                      << index_string(first_bad, got_t.shape()) << ": got "
                      << got[static_cast<size_t>(std::max<int64_t>(first_bad, 0))] << ", want "
                      << want[static_cast<size_t>(std::max<int64_t>(first_bad, 0))];
    RecordProperty("max_abs_error_" + std::to_string(o), std::to_string(max_abs));
  }

  // The lazy state of the NKI core (poison laid at the first read, DMA copies carried out when
  // needed, nki/nki_tensor.h) changes no bit: the same kernel with everything done at once gives
  // byte-identical outputs and the same warnings.
  auto eager = run_kernel(k, nullptr, /*eager_state=*/true);
  ASSERT_TRUE(eager) << k.path << " failed with eager state:\n" << eager.error().format();
  ASSERT_EQ(eager->outputs.size(), r->outputs.size());
  for (size_t o = 0; o < r->outputs.size(); ++o) {
    const Tensor a = r->outputs[o].contiguous(), b = eager->outputs[o].contiguous();
    ASSERT_EQ(a.dtype(), b.dtype());
    ASSERT_EQ(a.shape(), b.shape());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), static_cast<size_t>(a.nbytes())), 0)
        << k.path << " output " << o << " differs between lazy and eager state";
  }
  EXPECT_EQ(eager->warnings.size(), r->warnings.size()) << k.path;
}

// A call of three runs (three seeds' inputs) replays its first run's recording on the other two
// (runtime/python/replay.h), and every run's outcome is the one a run in Python gives: the same
// output bytes, stored elements and warnings.
using KernelReplay = KernelSuite;

TEST_P(KernelReplay, ReplaysGiveTheRunsOfPython) {
  const KernelSpec& k = GetParam();
  auto files = load_kernel_files(k.path);
  ASSERT_TRUE(files) << files.error().format();
  KernelCall call;
  call.src = std::move(*files);
  call.entry = k.entry;
  call.kwargs = k.args;
  call.target = k.target;
  call.kernel_only = true;
  call.collect_trace = false;
  call.runs = 3;
  for (uint64_t seed = k.seed; seed < k.seed + 3; ++seed)
    for (const auto& in : k.inputs) {
      Rng rng(seed, Rng::stream_id(in.name));
      call.inputs.push_back(in.dist == "uniform" ? random_uniform(in.shape, in.dtype, rng, in.p0, in.p1)
                                                 : random_normal(in.shape, in.dtype, rng, in.p0, in.p1));
    }
  for (const auto& in : k.inputs) call.input_names.push_back(in.name);
  RunSeries series(call);
  for (int i = 0; i < call.runs; ++i) {
    SCOPED_TRACE("run " + std::to_string(i));
    auto replayed = series.run(i);
    auto ran = python_run(call_of_run(call, i));
    ASSERT_TRUE(ran) << ran.error().format();
    ASSERT_TRUE(replayed) << replayed.error().format();
    ASSERT_EQ(replayed->outputs.size(), ran->outputs.size());
    for (size_t o = 0; o < ran->outputs.size(); ++o) {
      const Tensor a = replayed->outputs[o].contiguous(), b = ran->outputs[o].contiguous();
      ASSERT_EQ(a.dtype(), b.dtype());
      ASSERT_EQ(a.shape(), b.shape());
      EXPECT_EQ(std::memcmp(a.data(), b.data(), static_cast<size_t>(a.nbytes())), 0) << "output " << o;
    }
    ASSERT_EQ(replayed->output_stores.size(), ran->output_stores.size());
    for (size_t o = 0; o < ran->output_stores.size(); ++o)
      EXPECT_EQ(replayed->output_stores[o].unstored, ran->output_stores[o].unstored) << "output " << o;
    ASSERT_EQ(replayed->warnings.size(), ran->warnings.size());
    for (size_t w = 0; w < ran->warnings.size(); ++w)
      EXPECT_EQ(replayed->warnings[w].format(), ran->warnings[w].format());
  }
  EXPECT_EQ(series.replayed(), 2) << k.path << " was not replayed: " << series.why_not();
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelSuite, ::testing::ValuesIn(all_kernels()),
                         [](const ::testing::TestParamInfo<KernelSpec>& p) { return p.param.test_name; });

// The kernels that run: not the must-fail ones, not known failures.
std::vector<KernelSpec> passing_kernels() {
  std::vector<KernelSpec> out;
  for (const KernelSpec& k : all_kernels())
    if (!k.must_fail && k.known_failure.empty() && k.header_error.empty()) out.push_back(k);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelReplay, ::testing::ValuesIn(passing_kernels()),
                         [](const ::testing::TestParamInfo<KernelSpec>& p) { return p.param.test_name; });

// Every code the core can raise into a kernel, with the first source file that raises it: each
// `nki_error("<code>"` in src/**/*.cpp|h and each `NkiError("<code>"` in
// the Python front end src/runtime/python/pylib/**/*.py, the code possibly on the next line. A code
// chosen at run time (`NkiError("a" if c else "b", ...)`) counts only by its first literal.
std::map<std::string, std::string> codes_raised_by_the_core() {
  static const std::regex cpp_re(R"re(\bnki_error\(\s*"([a-z0-9_]+)")re");
  static const std::regex py_re(R"re(\bNkiError\(\s*"([a-z0-9_]+)")re");
  std::map<std::string, std::string> out;
  const fs::path src = fs::path(NKIA_SOURCE_DIR) / "src";
  const fs::path pylib = src / "runtime" / "python" / "pylib";
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(src, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const fs::path& f = it->path();
    const std::string ext = f.extension().string();
    const bool py = ext == ".py" && f.string().rfind(pylib.string(), 0) == 0;
    if (ext != ".cpp" && ext != ".h" && !py) continue;
    std::ifstream in(f);
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    const std::regex& re = py ? py_re : cpp_re;
    for (std::sregex_iterator m(s.begin(), s.end(), re), end; m != end; ++m)
      out.emplace((*m)[1].str(), f.lexically_relative(NKIA_SOURCE_DIR).string());
  }
  return out;
}

// Raised kernel codes that no must-fail kernel can expect, each with the reason. Keep it empty
// unless a code really is out of a kernel's reach (raised only for the host, or only as a defence
// against states the front end cannot produce) or is a warning (the suite's kernels must run clean).
const std::map<std::string, std::string>& codes_without_a_kernel() {
  static const std::map<std::string, std::string> allow = {
      // A warning: the kernel runs and passes, so no must-fail kernel can expect it
      // (test_kernel_trace and test_cli_check over-subscribe SBUF instead).
      {"nkia_sbuf_capacity_exceeded", "a warning, not a failure"},
      // Warnings about unwritten memory: test_nki_written runs kernels that raise them.
      {"nkia_uninitialized_read", "a warning, not a failure"},
      {"nkia_output_partially_written", "a warning, not a failure"},
      // A warning about the Scalar engine's input ranges: test_py_errors runs kernels that raise it.
      {"nkia_activation_input_out_of_range", "a warning, not a failure"},
  };
  return allow;
}

// A kernel code: one of the NKI rules (catalogue, constraint or simulator origin). The table's other
// codes (how the kernel's Python ran, the sandbox, the tools) are covered by their own tests.
bool is_kernel_code(const std::string& code) {
  const ErrorInfo* e = find_error(code);
  return e != nullptr && error_origin_is_kernel(e->origin);
}

// The suite itself: every kernel in both dialects (the calibration kernels excepted: each
// re-creates one measured kernel as it was written), a must-fail kernel for every kernel code the
// core raises today, and a bf16 case.
TEST(KernelSuiteFiles, CoverTheDialectsAndTheErrorCodes) {
  const auto& kernels = all_kernels();
  std::set<std::string> names, codes;
  bool bf16 = false;
  size_t calibration = 0;
  for (const auto& k : kernels) {
    EXPECT_TRUE(k.header_error.empty()) << k.path << ": " << k.header_error;
    if (k.must_fail) {
      if (k.known_failure.empty()) codes.insert(k.expect_code);
      continue;
    }
    if (k.calibration) {
      ++calibration;
      continue;
    }
    names.insert(k.test_name);
    for (const auto& in : k.inputs) bf16 |= in.dtype == DType::kBFloat16;
  }
  for (const auto& n : names) {
    const bool legacy = n.size() > 7 && n.compare(n.size() - 7, 7, "_legacy") == 0;
    const bool current = n.size() > 8 && n.compare(n.size() - 8, 8, "_current") == 0;
    EXPECT_TRUE(legacy || current) << n << ": name kernels <name>_legacy.py / <name>_current.py";
    if (legacy) {
      EXPECT_TRUE(names.count(n.substr(0, n.size() - 7) + "_current")) << n << " has no current twin";
    }
    if (current) {
      EXPECT_TRUE(names.count(n.substr(0, n.size() - 8) + "_legacy")) << n << " has no legacy twin";
    }
  }
  for (const char* base : {"add", "transpose", "matmul_basic", "matmul_tiled", "matmul_blocked", "softmax", "layernorm",
                           "rmsnorm", "attention_causal", "maxpool", "cumsum"})
    EXPECT_TRUE(names.count(std::string(base) + "_legacy")) << base;
  EXPECT_TRUE(bf16) << "no kernel has bfloat16 inputs";
  EXPECT_GT(calibration, 0u) << "no kernel in tests/kernels/calibration/";

  const auto raised = codes_raised_by_the_core();
  // The scan must see the core: a moved source tree would otherwise make this test pass vacuously.
  ASSERT_GE(raised.size(), 20u) << "found too few nki_error/NkiError calls under " << NKIA_SOURCE_DIR << "/src";
  for (const auto& [code, file] : raised) {
    if (!is_kernel_code(code) || codes_without_a_kernel().count(code)) continue;
    EXPECT_TRUE(codes.count(code)) << "no must-fail kernel in tests/kernels/fail/ expects " << code << " (raised in "
                                   << file << ")";
  }
  for (const auto& [code, why] : codes_without_a_kernel()) {
    EXPECT_TRUE(raised.count(code) && is_kernel_code(code)) << code << " is allow-listed but is no raised kernel code";
    EXPECT_FALSE(codes.count(code)) << code << " is allow-listed (" << why << ") but a must-fail kernel expects it";
  }
  // Every must-fail kernel names a registered code (known failures: the code the simulator should
  // raise).
  for (const auto& k : kernels)
    if (k.must_fail && !k.expect_code.empty()) {
      EXPECT_NE(find_error(k.expect_code), nullptr)
          << k.path << ": expect-error names " << k.expect_code << ", which is not in the error table";
    }
}

// The calibration kernels and the measurements files agree: every tests/kernels/calibration/*.py has
// a [[point]] in one of data/calibration/*.toml (trn1.toml, the fit's input, or a file of published
// points kept out of the fit), and every point names such a file (relative to its measurements
// file), its header's entry, measured shapes, a positive latency and a source; names are unique
// within a file. Each file is read line by line (`key = value` in [[point]] tables), the way it is
// written.
TEST(KernelSuiteFiles, CalibrationKernelsAreMeasured) {
  const fs::path dir = fs::path(NKIA_SOURCE_DIR) / "data" / "calibration";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".toml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty()) << "no measurements file in " << dir;
  struct Point {
    std::map<std::string, std::string> values;
  };
  static const std::regex kv(R"re(^([a-z_]+)\s*=\s*(.*?)\s*(#.*)?$)re");
  auto unquote = [](const std::string& v) {
    return v.size() >= 2 && v.front() == '"' && v.back() == '"' ? v.substr(1, v.size() - 2) : std::string();
  };
  std::map<std::string, const KernelSpec*> kernels;  // canonical path -> kernel
  for (const auto& k : all_kernels())
    if (k.calibration) kernels[fs::weakly_canonical(k.path).string()] = &k;
  ASSERT_FALSE(kernels.empty());
  std::set<std::string> measured;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    std::ifstream in(file);
    ASSERT_TRUE(in) << "cannot read " << file;
    std::vector<Point> points;
    for (std::string line; std::getline(in, line);) {
      line = trim(line);
      if (line == "[[point]]") {
        points.emplace_back();
        continue;
      }
      std::smatch m;
      if (!points.empty() && std::regex_match(line, m, kv)) points.back().values[m[1]] = m[2];
    }
    EXPECT_FALSE(points.empty()) << file << " has no [[point]]";
    std::set<std::string> names;
    for (const Point& p : points) {
      auto get = [&](const char* key) {
        auto it = p.values.find(key);
        return it == p.values.end() ? std::string() : it->second;
      };
      const std::string name = unquote(get("name"));
      SCOPED_TRACE("point " + name);
      EXPECT_FALSE(name.empty()) << "a point without a name";
      EXPECT_TRUE(names.insert(name).second) << "two points named " << name;
      const std::string kernel = unquote(get("kernel"));
      const fs::path path = fs::weakly_canonical(file.parent_path() / kernel);
      auto k = kernels.find(path.string());
      ASSERT_NE(k, kernels.end()) << "kernel '" << kernel << "' is no file of tests/kernels/calibration/";
      measured.insert(path.string());
      EXPECT_EQ(unquote(get("entry")), k->second->entry) << "the entry differs from the header's";
      EXPECT_TRUE(std::regex_match(get("shapes"), std::regex(R"re(^\[\s*"[^"]+"(\s*,\s*"[^"]+")*\s*\]$)re")))
          << "shapes: " << get("shapes");
      const std::string us = get("measured_us");
      EXPECT_GT(std::strtod(us.c_str(), nullptr), 0.0) << "measured_us: " << us;
      EXPECT_FALSE(unquote(get("source")).empty()) << "a point without a source";
    }
  }
  for (const auto& [path, k] : kernels)
    EXPECT_TRUE(measured.count(path)) << path << " has no point in any of data/calibration/*.toml";
}

}  // namespace
}  // namespace nki_agent
