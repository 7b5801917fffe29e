// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// The task contract without running anything: task.toml parsing and its Diagnostics (every
// malformed field named, never a crash), shape sets, the precision policy, seeded inputs in each
// profile, and the output comparison with its named checks and numbers (tasks/task.h, inputs.h,
// compare.h).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "tasks/compare.h"
#include "tasks/inputs.h"
#include "tasks/task.h"
#include "tasks/task_dirs.h"

namespace nki_agent {
namespace {

namespace fs = std::filesystem;

const char* kPy = "import torch\nclass Model(torch.nn.Module):\n    pass\n";

const char* kToml = R"(
id = "X_1"
name = "demo"
level = 1
category = "elementwise"
operation = "x * w + b"
entry = "kernel"
dialects = ["legacy", "current"]
target = "trn1"
baseline = "baseline.py"

[[args]]
name = "x"
kind = "input"
dtype = "float32"
shape = [16, 512]

[[args]]
name = "idx"
kind = "input"
dtype = "int64"
shape = [16]
dist = "randint"
low = 0
high = 16

[[args]]
name = "norm_weight"
kind = "param"
dtype = "float32"
shape = [512]

[[outputs]]
dtype = "float32"
shape = [16, 512]

[tolerance]
float32 = { atol = 1e-4, rtol = 2e-4 }

[[variants]]
name = "ragged"
args = { x = [3, 700], idx = [3] }
outputs = [[3, 700]]

[cost]
flops = 8192
bytes = 65536
)";

Result<Task> parse(const std::string& toml) {
  return parse_task(toml, kPy, "/tmp/x");
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) s.replace(pos, from.size(), to);
  return s;
}

TEST(TaskFormat, ReadsEveryField) {
  auto t = parse(kToml);
  ASSERT_TRUE(t) << t.error().format();
  EXPECT_EQ(t->label(), "X_1_demo");
  EXPECT_EQ(t->level, 1);
  EXPECT_EQ(t->entry, "kernel");
  ASSERT_EQ(t->args.size(), 3u);
  EXPECT_EQ(t->args[1].dtype, DType::kInt32);  // int64 reaches the kernel as int32
  EXPECT_EQ(t->args[1].torch_dtype, "int64");
  EXPECT_EQ(t->args[1].dist, Dist::kRandint);
  EXPECT_EQ(t->args[2].kind, ArgKind::kParam);
  EXPECT_EQ(t->tolerance_for(DType::kFloat32).rtol, 2e-4);
  EXPECT_EQ(t->tolerance_for(DType::kFloat32).norm_rtol, 2e-4);  // defaults to rtol
  EXPECT_EQ(t->flops, 8192);
  EXPECT_EQ(t->seeds, 7);
  EXPECT_EQ(t->profiles.size(), 7u);
  EXPECT_EQ(t->hash.size(), 64u);
  EXPECT_TRUE(t->warnings.empty());
  auto sets = t->shape_sets();
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0].name, "prompt");
  EXPECT_EQ(sets[1].name, "ragged");
  EXPECT_EQ(sets[1].args[0], (Shape{3, 700}));
  EXPECT_EQ(sets[1].args[2], (Shape{512}));  // params keep their shape
  EXPECT_EQ(sets[1].outputs[0], (Shape{3, 700}));
}

TEST(TaskFormat, HashFollowsBothFiles) {
  auto a = parse(kToml), b = parse(replace(kToml, "rtol = 2e-4", "rtol = 3e-4"));
  auto c = parse_task(kToml, std::string(kPy) + "# changed\n", "/tmp/x");
  ASSERT_TRUE(a && b && c);
  EXPECT_NE(a->hash, b->hash);
  EXPECT_NE(a->hash, c->hash);
  EXPECT_EQ(a->hash, parse(kToml)->hash);
}

TEST(TaskFormat, OptionalVerifyAndPolicyTables) {
  auto t = parse(std::string(kToml) +
                 "[verify]\nseeds = 3\nprofiles = [\"normal\", \"large\"]\nlarge_scale = 10\n"
                 "[policy]\nallow_dtypes = [\"bfloat16\"]\n");
  ASSERT_TRUE(t) << t.error().format();
  EXPECT_EQ(t->seeds, 3);
  ASSERT_EQ(t->profiles.size(), 2u);
  EXPECT_EQ(t->profiles[1], InputProfile::kLarge);
  EXPECT_EQ(t->large_scale, 10);
  auto forbidden = t->forbidden_dtypes();
  EXPECT_EQ(std::count(forbidden.begin(), forbidden.end(), DType::kBFloat16), 0);
  EXPECT_EQ(std::count(forbidden.begin(), forbidden.end(), DType::kFloat16), 1);
  EXPECT_EQ(std::count(forbidden.begin(), forbidden.end(), DType::kTFloat32), 1);
}

TEST(TaskFormat, ReferenceMetadata) {
  auto t = parse(std::string(kToml) +
                 "[reference]\ntask_id = \"L2_conv_fusions_001\"\nexpected_speedup = [1.3, 5.0]\n"
                 "engine_hints = [\"tensor_engine\", \"vector_engine\"]\ntile_suggestions = { tile_c = 64 }\n");
  ASSERT_TRUE(t) << t.error().format();
  EXPECT_TRUE(t->warnings.empty());
  EXPECT_EQ(t->reference_task_id, "L2_conv_fusions_001");
  ASSERT_TRUE(t->expected_speedup);
  EXPECT_EQ(t->expected_speedup->first, 1.3);
  EXPECT_EQ(t->expected_speedup->second, 5.0);
  EXPECT_EQ(t->engine_hints, (std::vector<std::string>{"tensor_engine", "vector_engine"}));
  EXPECT_EQ(t->tile_suggestions.at("tile_c"), 64);
  for (const auto& [bad, needle] : std::vector<std::pair<std::string, std::string>>{
           {"expected_speedup = [5.0, 1.3]", "reference.expected_speedup"},
           {"expected_speedup = [1.3]", "reference.expected_speedup"},
           {"engine_hints = [\"gpsimd\"]", "reference.engine_hints"},
           {"tile_suggestions = { tile_q = 4 }", "reference.tile_suggestions.tile_q"},
           {"tile_suggestions = { tile_c = 0 }", "reference.tile_suggestions.tile_c"}}) {
    auto b = parse(std::string(kToml) + "[reference]\n" + bad + "\n");
    ASSERT_FALSE(b) << bad;
    EXPECT_NE(b.error().message.find(needle), std::string::npos) << b.error().format();
  }
}

TEST(TaskFormat, PrecisionPolicyFollowsTheNarrowestType) {
  auto fp32 = parse(kToml);
  ASSERT_TRUE(fp32);
  EXPECT_EQ(fp32->forbidden_dtypes().size(), 6u);  // tf32, bf16, fp16 and the three fp8
  auto bf16 = parse(replace(kToml, "dtype = \"float32\"\nshape = [16, 512]\n\n[[args]]\nname = \"idx\"",
                            "dtype = \"bfloat16\"\nshape = [16, 512]\n\n[[args]]\nname = \"idx\""));
  ASSERT_TRUE(bf16) << bf16.error().format();
  for (DType d : bf16->forbidden_dtypes()) EXPECT_FALSE(d == DType::kBFloat16 || d == DType::kFloat16);
  EXPECT_EQ(bf16->forbidden_dtypes().size(), 3u);  // only the fp8 formats
  auto any = parse(std::string(kToml) + "[policy]\nprecision = \"any\"\n");
  ASSERT_TRUE(any);
  EXPECT_TRUE(any->forbidden_dtypes().empty());
}

TEST(TaskFormat, UnknownKeysAreWarnings) {
  auto t = parse(replace(kToml, "level = 1", "level = 1\nflavour = \"sweet\""));
  ASSERT_TRUE(t);
  ASSERT_EQ(t->warnings.size(), 1u);
  EXPECT_NE(t->warnings[0].find("flavour"), std::string::npos);
}

// Every malformed field: a Diagnostic that names it.
TEST(TaskFormat, MalformedFieldsAreNamed) {
  struct Case {
    std::string from, to, needle;
  };
  const std::vector<Case> cases = {
      {"id = \"X_1\"\n", "", "id: missing"},
      {"shape = [16, 512]", "shape = [16, -1]", "args[0] (x).shape[1]"},
      {"shape = [16, 512]", "shape = \"big\"", "args[0] (x).shape"},
      {"dtype = \"int64\"", "dtype = \"complex64\"", "unsupported dtype 'complex64'"},
      {"kind = \"param\"", "kind = \"weight\"", "neither \"input\" nor \"param\""},
      {"name = \"norm_weight\"", "name = \"x\"", "'x' appears twice"},
      {"name = \"norm_weight\"", "name = \"norm.weight\"", "not a Python identifier"},
      {"high = 16", "", "needs high"},
      {"args = { x = [3, 700], idx = [3] }", "args = { norm_weight = [3] }", "parameter shapes stay fixed"},
      {"args = { x = [3, 700], idx = [3] }", "args = { nope = [3] }", "no such arg"},
      {"outputs = [[3, 700]]", "outputs = []", "must list the shape of each of the 1 outputs"},
      {"name = \"ragged\"", "name = \"prompt\"", "must be unique"},
      {"target = \"trn1\"", "target = \"h100\"", "target"},
      {"baseline = \"baseline.py\"", "baseline = \"../../etc/passwd\"", "baseline"},
      {"float32 = { atol = 1e-4, rtol = 2e-4 }", "float32 = { atol = -1, rtol = 2e-4 }", "tolerance.float32.atol"},
      {"float32 = { atol = 1e-4, rtol = 2e-4 }", "float33 = { atol = 1, rtol = 2 }", "not a dtype name"},
      {"flops = 8192", "flops = -5", "cost.flops"},
      {"[[outputs]]\ndtype = \"float32\"\nshape = [16, 512]\n", "", "outputs: missing"},
      {"entry = \"kernel\"", "entry = \"my kernel\"", "entry"},
  };
  for (const auto& c : cases) {
    auto t = parse(replace(kToml, c.from, c.to));
    ASSERT_FALSE(t) << "accepted: " << c.from << " -> " << c.to;
    EXPECT_EQ(t.error().code, "nkia_task_invalid") << t.error().format();
    EXPECT_NE(t.error().message.find(c.needle), std::string::npos) << t.error().format() << "\nwanted: " << c.needle;
  }
}

TEST(TaskFormat, SyntaxErrorsHaveALocation) {
  auto t = parse("id = \"a\"\nname = \n");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, "nkia_task_toml_syntax");
  EXPECT_EQ(t.error().loc.line, 2);
  auto garbage = parse(std::string("\x00\xff\xfe[[[", 6));
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().code, "nkia_task_toml_syntax");
  auto no_model = parse_task(kToml, "import torch\n", "/tmp/x");
  ASSERT_FALSE(no_model);
  EXPECT_NE(no_model.error().message.find("class Model"), std::string::npos);
}

TEST(TaskFormat, LoadAndResolveFolders) {
  fs::path root = fs::temp_directory_path() / ("nkia-task-format-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "level1" / "X_1_demo");
  std::ofstream(root / "level1" / "X_1_demo" / "task.toml") << kToml;
  std::ofstream(root / "level1" / "X_1_demo" / "task.py") << kPy;
  fs::create_directories(root / "level1" / "X_10_other");
  std::ofstream(root / "level1" / "X_10_other" / "task.toml") << kToml;
  auto dirs = find_task_dirs(root.string());
  ASSERT_TRUE(dirs);
  EXPECT_EQ(dirs->size(), 2u);
  auto d = resolve_task_dir("X_1", root.string());
  ASSERT_TRUE(d) << d.error().format();
  EXPECT_EQ(fs::path(*d).filename(), "X_1_demo");
  auto t = load_task(*d + "/task.toml");
  ASSERT_TRUE(t) << t.error().format();
  EXPECT_EQ(t->id, "X_1");
  EXPECT_EQ(resolve_task_dir("X", root.string()).error().code, "nkia_task_ambiguous");
  EXPECT_EQ(resolve_task_dir("Y_1", root.string()).error().code, "nkia_task_not_found");
  auto missing_py = load_task((root / "level1" / "X_10_other").string());
  ASSERT_FALSE(missing_py);
  EXPECT_NE(missing_py.error().message.find("task.py"), std::string::npos);
  EXPECT_EQ(load_task("/nonexistent/task").error().code, "nkia_task_not_found");
  fs::remove_all(root);
}

// The inputs of a (task, seed, shape set, profile) are part of every cached reference's key, by
// kInputGeneratorVersion: a change to any drawn bit must bump the version. The digest covers every
// dist and profile, float32 and bfloat16, at a size that ends in a partial block.
TEST(TaskInputs, DrawsTheSameBitsAsVersionTwo) {
  ASSERT_EQ(kInputGeneratorVersion, 2) << "a new generator version: pin its digest here";
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the bytes of every input, in order
  for (Dist dist : {Dist::kNormal, Dist::kPositive, Dist::kUniform})
    for (int profile = 0; profile < 7; ++profile)
      for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
        TaskArg a;
        a.name = "x";
        a.dtype = dtype;
        a.dist = dist;
        if (dist == Dist::kUniform) {
          a.low = -2.5;
          a.high = 4.0;
        }
        const Tensor t = generate_input(a, {1000, 37}, 11 + profile, static_cast<InputProfile>(profile), "prompt", 100);
        const auto* p = static_cast<const unsigned char*>(t.data());
        for (int64_t i = 0; i < t.nbytes(); ++i) {
          h ^= p[i];
          h *= 1099511628211ull;
        }
      }
  EXPECT_EQ(h, 0x03721fb6a9ae0775ull);
}

TEST(TaskInputs, SeededAndProfiled) {
  auto t = parse(kToml);
  ASSERT_TRUE(t);
  const TaskArg& x = t->args[0];
  Tensor a = generate_input(x, {64, 64}, 7, InputProfile::kNormal, "prompt", 100);
  Tensor b = generate_input(x, {64, 64}, 7, InputProfile::kNormal, "prompt", 100);
  Tensor c = generate_input(x, {64, 64}, 8, InputProfile::kNormal, "prompt", 100);
  Tensor v = generate_input(x, {64, 64}, 7, InputProfile::kNormal, "ragged", 100);
  EXPECT_EQ(a.to_f32_vector(), b.to_f32_vector());
  EXPECT_NE(a.to_f32_vector(), c.to_f32_vector());
  EXPECT_NE(a.to_f32_vector(), v.to_f32_vector());
  auto stats = [](const Tensor& values) {
    double lo = 1e300, hi = -1e300, sum2 = 0;
    for (float f : values.to_f32_vector()) {
      lo = std::min<double>(lo, f);
      hi = std::max<double>(hi, f);
      sum2 += double(f) * f;
    }
    return std::tuple{lo, hi, std::sqrt(sum2 / values.numel())};
  };
  auto [ulo, uhi, urms] = stats(generate_input(x, {64, 64}, 1, InputProfile::kUniform, "p", 100));
  EXPECT_GE(ulo, -1.0);
  EXPECT_LE(uhi, 1.0);
  auto [llo, lhi, lrms] = stats(generate_input(x, {64, 64}, 1, InputProfile::kLarge, "p", 100));
  EXPECT_NEAR(lrms, 100, 10);
  auto [zlo, zhi, zrms] = stats(generate_input(x, {64, 64}, 1, InputProfile::kNearZero, "p", 100));
  EXPECT_NEAR(zrms, 1e-3, 1e-4);
  auto [slo, shi, srms] = stats(generate_input(x, {64, 64}, 1, InputProfile::kScaled, "p", 100));
  EXPECT_NEAR(srms, 3, 0.3);
  auto [mlo, mhi, mrms] = stats(generate_input(x, {64, 64}, 1, InputProfile::kSmall, "p", 100));
  EXPECT_NEAR(mrms, 1e-2, 1e-3);
  // negated is a sign flip of a fresh normal draw: the same spread, its own values.
  Tensor neg = generate_input(x, {64, 64}, 1, InputProfile::kNegated, "p", 100);
  auto [nlo, nhi, nrms] = stats(neg);
  EXPECT_NEAR(nrms, 1, 0.1);
  EXPECT_NE(neg.to_f32_vector(), generate_input(x, {64, 64}, 1, InputProfile::kNormal, "p", 100).to_f32_vector());
  // randint keeps its range in every profile, as int32.
  Tensor idx = generate_input(t->args[1], {1000}, 1, InputProfile::kLarge, "p", 100);
  EXPECT_EQ(idx.dtype(), DType::kInt32);
  for (int64_t v2 : idx.to_i64_vector()) {
    EXPECT_GE(v2, 0);
    EXPECT_LT(v2, 16);
  }
  // positive stays positive.
  TaskArg pos = x;
  pos.dist = Dist::kPositive;
  for (auto p : kAllInputProfiles)
    for (float f : generate_input(pos, {256}, 3, p, "p", 100).to_f32_vector()) EXPECT_GT(f, 0) << profile_name(p);
  // bf16 args are drawn as bf16.
  TaskArg half = x;
  half.dtype = DType::kBFloat16;
  EXPECT_EQ(generate_input(half, {8}, 1, InputProfile::kNormal, "p", 100).dtype(), DType::kBFloat16);
  EXPECT_EQ(profile_for_seed(*t, 0), InputProfile::kNormal);
  EXPECT_EQ(profile_for_seed(*t, 2), InputProfile::kLarge);
  EXPECT_EQ(profile_for_seed(*t, 4), InputProfile::kNegated);
  EXPECT_EQ(profile_for_seed(*t, 6), InputProfile::kSmall);
  EXPECT_EQ(profile_for_seed(*t, 7), InputProfile::kNormal);
}

Tensor vec(std::vector<float> v, Shape shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
  return Tensor::from_f32(shape, v);
}

const Tolerance kTol{1e-4, 1e-4, 1e-4};

TEST(TaskCompare, PassesWithinTolerance) {
  auto r = compare_output(vec({1, 2, 3, -4}), vec({1, 2.0001f, 3, -4}), kTol, {});
  EXPECT_TRUE(r.passed()) << r.message;
  EXPECT_EQ(r.mismatches, 0);
  EXPECT_NEAR(r.max_abs_error, 1e-4, 2e-5);
}

TEST(TaskCompare, NamesTheCheckAndGivesTheNumbers) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor e = vec({1, 2, 3, 4, 5, 6}, {2, 3});
  auto unwritten = compare_output(vec({1, 2, 3, nan, nan, nan}, {2, 3}), e, kTol, {});
  EXPECT_EQ(unwritten.check, "unwritten");
  EXPECT_EQ(unwritten.unwritten, 3);
  EXPECT_EQ(unwritten.first_bad_index, (Shape{1, 0}));
  EXPECT_NE(unwritten.message.find("3 of 6 elements hold NaN"), std::string::npos) << unwritten.message;
  // With what the kernel stored known: only never-stored NaN is unwritten; stored NaN is a mismatch.
  OutputStores stores;
  stores.known = true;
  stores.unstored = {{4, 2}};
  auto partly = compare_output(vec({1, 2, 3, nan, nan, nan}, {2, 3}), e, kTol, {}, &stores);
  EXPECT_EQ(partly.check, "unwritten");
  EXPECT_EQ(partly.unwritten, 2);
  EXPECT_EQ(partly.stored_nan, 1);
  EXPECT_NE(partly.message.find("2 of 6 elements were never stored to"), std::string::npos) << partly.message;
  stores.unstored.clear();
  auto stored = compare_output(vec({1, 2, 3, nan, nan, 6}, {2, 3}), e, kTol, {}, &stores);
  EXPECT_EQ(stored.check, "mismatch");
  EXPECT_EQ(stored.unwritten, 0);
  EXPECT_EQ(stored.stored_nan, 2);
  EXPECT_EQ(stored.first_bad_index, (Shape{1, 0}));

  EXPECT_EQ(compare_output(vec({0, 0, 0, 0, 0, 0}, {2, 3}), e, kTol, {}).check, "zero_output");
  EXPECT_EQ(compare_output(vec({7, 7, 7, 7, 7, 7}, {2, 3}), e, kTol, {}).check, "constant_output");
  Tensor in = vec({9, 8, 7, 6, 5, 4}, {2, 3});
  auto copy = compare_output(in, e, kTol, std::vector<Tensor>{vec({1}), in});
  EXPECT_EQ(copy.check, "input_copy");
  EXPECT_NE(copy.message.find("argument #1"), std::string::npos);

  auto mismatch = compare_output(vec({1, 2, 3.5f, 4, 5, 6}, {2, 3}), e, kTol, {});
  EXPECT_EQ(mismatch.check, "mismatch");
  EXPECT_EQ(mismatch.mismatches, 1);
  EXPECT_EQ(mismatch.first_bad_index, (Shape{0, 2}));
  EXPECT_FLOAT_EQ(mismatch.first_bad_actual, 3.5f);
  EXPECT_FLOAT_EQ(mismatch.first_bad_expected, 3);
  EXPECT_NEAR(mismatch.max_abs_error, 0.5, 1e-6);
  EXPECT_NEAR(mismatch.max_rel_error, 0.5 / 3, 1e-6);
  auto j = mismatch.to_json();
  EXPECT_EQ(j["check"], "mismatch");
  EXPECT_EQ(j["first_bad_index"], (Shape{0, 2}));
}

// Large outputs are compared block by block: clean blocks in a fast pass, a block with anything
// amiss element by element. The figures must be the whole output's whichever way each block went:
// the first bad index in a later block, the worst errors wherever they are, infinities matched.
TEST(TaskCompare, FiguresSpanEveryBlockOfALargeOutput) {
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t n = 5 * 4096 + 7;  // five whole blocks and a ragged end
  std::vector<float> e(static_cast<size_t>(n)), a(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) e[static_cast<size_t>(i)] = 1.0f + static_cast<float>(i % 101) * 0.5f;
  a = e;
  a[100] = e[100] * (1 + 5e-5f);  // within tolerance, the largest relative error of a clean block
  e[4096 * 2 + 3] = inf;          // a matched infinity: its block goes the exact way, and passes
  a[4096 * 2 + 3] = inf;
  auto clean = compare_output(vec(a), vec(e), kTol, {});
  EXPECT_TRUE(clean.passed()) << clean.message;
  EXPECT_NEAR(clean.max_rel_error, 5e-5, 1e-5);
  EXPECT_EQ(clean.expected_max_abs, 51.0);  // finite values only: 1 + 100 * 0.5
  a[4096 * 3 + 10] += 1;                    // bad, in the fourth block
  a[n - 1] += 2;                            // worse, in the ragged end
  auto bad = compare_output(vec(a), vec(e), kTol, {});
  EXPECT_EQ(bad.check, "mismatch");
  EXPECT_EQ(bad.mismatches, 2);
  EXPECT_EQ(bad.first_bad_index, (Shape{4096 * 3 + 10}));
  EXPECT_NEAR(bad.max_abs_error, 2, 1e-5);
}

// The fast pass sees a block only through its sums and its worst error: a single NaN, infinity or
// element beyond tolerance anywhere in a long clean run (any lane, the ragged end included) must
// still reach the element-by-element verdict, and values near float32's largest must not look
// non-finite.
TEST(TaskCompare, OneAnomalyInALongCleanRunIsFound) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t n = 3 * 4096 + 13;
  std::vector<float> e(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) e[static_cast<size_t>(i)] = 0.25f + static_cast<float>(i % 37) * 0.125f;
  struct Anomaly {
    float actual, expected;
    const char* check;  // "" when it passes
  };
  const Anomaly anomalies[] = {{nan, 1, "unwritten"},   {1, nan, "mismatch"}, {inf, 1, "mismatch"},
                               {-inf, 1, "mismatch"},   {1, inf, "mismatch"}, {1.5f, 1, "mismatch"},
                               {inf, inf, ""},          {nan, nan, ""},       {3e38f, 3e38f, ""},
                               {-3.4e38f, -3.4e38f, ""}};
  for (const int64_t at : {int64_t{0}, int64_t{4096 + 5}, int64_t{2 * 4096 + 4095}, n - 1}) {
    for (const Anomaly& x : anomalies) {
      std::vector<float> a = e, ee = e;
      a[static_cast<size_t>(at)] = x.actual;
      ee[static_cast<size_t>(at)] = x.expected;
      auto r = compare_output(vec(a), vec(ee), kTol, {});
      EXPECT_EQ(r.check, x.check) << x.actual << " vs " << x.expected << " at " << at << ": " << r.message;
      if (*x.check != '\0') {
        EXPECT_EQ(r.first_bad_index, (Shape{at})) << x.actual << " vs " << x.expected;
      }
    }
  }
}

TEST(TaskCompare, RelativeNormCatchesSmallEverywhereErrors) {
  // Every element within atol + rtol|e| when atol is loose, but 5% off overall.
  Tolerance loose{0.1, 0, 1e-3};
  std::vector<float> e(100), a(100);
  for (int i = 0; i < 100; ++i) {
    e[i] = 1.0f + 0.01f * i;
    a[i] = e[i] * 1.05f;
  }
  auto r = compare_output(vec(a), vec(e), loose, {});
  EXPECT_EQ(r.check, "relative_norm");
  EXPECT_NEAR(r.rel_norm_error, 0.05, 1e-3);
  // A near-zero reference: zeros would pass the element check, the norm check does not.
  std::vector<float> tiny(100, 1e-6f), zeros(100, 0.0f);
  tiny[3] = 2e-6f;
  auto z = compare_output(vec(zeros), vec(tiny), kTol, {});
  EXPECT_FALSE(z.passed());
  EXPECT_TRUE(z.reference_too_small);
}

TEST(TaskCompare, NonFiniteReferencesMustMatchExactly) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(compare_output(vec({inf, -inf, nan, 1}), vec({inf, -inf, nan, 1}), kTol, {}).passed());
  EXPECT_EQ(compare_output(vec({inf, 1, nan, 1}), vec({-inf, 1, nan, 1}), kTol, {}).check, "mismatch");
  EXPECT_EQ(compare_output(vec({inf, 1, 2, 1}), vec({inf, 1, nan, 1}), kTol, {}).check, "mismatch");
}

TEST(TaskCompare, AbsoluteToleranceScalesWithTheOutput) {
  // Outputs of magnitude 1e4 (a large-magnitude profile): an absolute error of 0.05 on an element
  // near zero is accumulation noise, not a bug.
  std::vector<float> e(1000), a(1000);
  for (int i = 0; i < 1000; ++i) e[i] = a[i] = 1e4f + i;
  e[10] = 0.01f;
  a[10] = 0.06f;
  EXPECT_TRUE(compare_output(vec(a), vec(e), kTol, {}).passed());
}

TEST(TaskCompare, IntegersAreExact) {
  Tensor e = Tensor::from_i64({4}, std::vector<int64_t>{1, 2, 16777217, 4});
  Tensor a = Tensor::from_i64({4}, std::vector<int64_t>{1, 2, 16777216, 4});
  auto r = compare_output(a, e, Tolerance{}, {});
  EXPECT_EQ(r.check, "mismatch");
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_TRUE(compare_output(e, e, Tolerance{}, {}).passed());
}

TEST(TaskCompare, DegenerateReferences) {
  EXPECT_NE(degenerate_reference(vec({0, 0, 0}), kTol), "");
  EXPECT_NE(degenerate_reference(vec({2, 2, 2}), kTol), "");
  EXPECT_NE(degenerate_reference(vec({1e-6f, -2e-6f, 3e-6f}), kTol), "");
  EXPECT_EQ(degenerate_reference(vec({1, -2, 3}), kTol), "");
}

}  // namespace
}  // namespace nki_agent
