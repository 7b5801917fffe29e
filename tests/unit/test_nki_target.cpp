// The targets (nki/target.h): each is one file, data/targets/<t>.toml, compiled in. Its [target]
// and [limits] tables read with every field checked; the checker takes its limits from the target
// it runs on, and so does nl.tile_size in both dialects; a file like the compiled-in ones with
// another name is a target of its own.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "nki/isa.h"
#include "nki/isa_select.h"
#include "nki/launch.h"
#include "nki/target.h"
#include "runtime/python/py_host.h"

namespace nki_agent {
namespace {

// `text` with the line starting with `key` replaced by `line` (removed when `line` is empty).
std::string with_line(const std::string& text, const std::string& key, const std::string& line) {
  const size_t at = text.find("\n" + key);
  EXPECT_NE(at, std::string::npos) << key;
  if (at == std::string::npos) return text;
  const size_t end = text.find('\n', at + 1);
  return text.substr(0, at + 1) + line + (line.empty() ? "" : "\n") + text.substr(end + 1);
}

TEST(NkiTarget, EveryCompiledInTargetReadsAndCarriesTheSpecsNumbers) {
  ASSERT_GE(target_names().size(), 2u);
  for (const std::string& name : target_names()) {
    auto t = target_by_name(name);
    ASSERT_TRUE(t) << t.error().format();
    EXPECT_EQ((*t)->name, name) << "data/targets/" << name << ".toml names another target";
    EXPECT_FALSE((*t)->core.empty());
    EXPECT_EQ((*t)->partitions % (*t)->gpsimd_partition_group, 0);
  }
  const TargetSpec& trn1 = target_trn1();
  EXPECT_EQ(trn1.core, "NeuronCore-v2");
  EXPECT_EQ(trn1.core_version, 2);
  EXPECT_EQ(trn1.partitions, 128);
  EXPECT_EQ(trn1.sbuf_bytes_per_partition, 180224);
  EXPECT_EQ(trn1.psum_banks * trn1.psum_bank_bytes, trn1.psum_bytes_per_partition);
  EXPECT_EQ(trn1.psum_fmax, 512);
  EXPECT_EQ(trn1.gemm_stationary_fmax, 128);
  EXPECT_EQ(trn1.gemm_moving_fmax, 512);
  EXPECT_EQ(trn1.bn_stats_fmax, 512);
  EXPECT_EQ(trn1.max8_fmax, 16384);
  EXPECT_EQ(trn1.gpsimd_partition_group, 16);
  auto trn2 = target_by_name("trn2");
  ASSERT_TRUE(trn2);
  EXPECT_EQ((*trn2)->core_version, 3);
  EXPECT_EQ((*trn2)->sbuf_bytes_per_partition, 212984);
}

TEST(NkiTarget, EveryLimitNamesItsSource) {
  // Each limit's line says where the number comes from: the spec's section, or that it is assumed.
  for (const EmbeddedTarget& t : embedded_targets())
    for (const TargetLimit& l : kTargetLimits) {
      const std::string text(t.toml);
      const size_t at = text.find("\n" + std::string(l.key) + " = ");
      ASSERT_NE(at, std::string::npos) << t.name << ": " << l.key;
      const std::string line = text.substr(at + 1, text.find('\n', at + 1) - at - 1);
      const size_t hash = line.find('#');
      ASSERT_NE(hash, std::string::npos) << t.name << ": " << line;
      const std::string note = line.substr(hash);
      EXPECT_TRUE(note.find("spec §") != std::string::npos || note.find("assumed") != std::string::npos)
          << t.name << ".toml gives no source for " << l.key << ": " << line;
    }
}

TEST(NkiTarget, AnUnknownTargetListsTheCompiledInOnes) {
  auto t = target_by_name("trn9");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, "nkia_unknown_target");
  for (const std::string& name : target_names()) EXPECT_NE(t.error().hint.find(name), std::string::npos);
}

TEST(NkiTarget, LimitsAreReadFieldByFieldAndRefuseWhatIsWrong) {
  const std::string trn1(target_text("trn1"));
  // Another target is another file: the same layout with its own name and numbers.
  std::string other = with_line(trn1, "name = ", "name = \"trn1-half\"");
  other = with_line(other, "sbuf_bytes_per_partition = ", "sbuf_bytes_per_partition = 90112");
  other = with_line(other, "bn_stats_fmax = ", "bn_stats_fmax = 256");
  auto t = parse_target(other, "trn1-half.toml");
  ASSERT_TRUE(t) << t.error().format();
  EXPECT_EQ(t->name, "trn1-half");
  EXPECT_EQ(t->sbuf_bytes_per_partition, 90112);
  EXPECT_EQ(t->bn_stats_fmax, 256);
  EXPECT_EQ(t->max8_fmax, 16384);

  auto refused = [&](const std::string& text, const std::string& mentions) {
    auto r = parse_target(text, "bad.toml");
    ASSERT_FALSE(r) << "accepted: " << mentions;
    EXPECT_EQ(r.error().code, "nkia_hardware_invalid") << r.error().format();
    EXPECT_NE(r.error().message.find(mentions), std::string::npos) << r.error().format();
  };
  refused(with_line(trn1, "max8_fmax = ", ""), "limits.max8_fmax is missing");
  refused(with_line(trn1, "max8_fmax = ", "max8_fmx = 16384"), "unknown key limits.max8_fmx");
  refused(with_line(trn1, "psum_fmax = ", "psum_fmax = \"wide\""), "limits.psum_fmax must be an integer");
  refused(with_line(trn1, "psum_banks = ", "psum_banks = 9"), "do not fit");
  refused(with_line(trn1, "psum_fmax = ", "psum_fmax = 1024"), "do not fit a PSUM bank");
  refused(with_line(trn1, "gpsimd_partition_group = ", "gpsimd_partition_group = 24"), "does not divide");
  refused(with_line(trn1, "core_version = ", ""), "target.core_version is missing");
  refused(with_line(trn1, "[limits]", "[limitz]"), "[limits]");
  auto syntax = parse_target("[target\nname = 1\n", "bad.toml");
  ASSERT_FALSE(syntax);
  EXPECT_EQ(syntax.error().code, "nkia_hardware_syntax");
  EXPECT_EQ(syntax.error().loc.line, 1);
}

SourceLoc at(int line) {
  return SourceLoc{"kernel.py", line, 0};
}

Access sbuf(Launch& l, Shape shape) {
  TensorRequest r;
  r.shape = std::move(shape);
  r.buffer = Buffer::kSbuf;
  r.dtype = DType::kFloat32;
  auto t = l.new_tensor(r, at(1));
  EXPECT_TRUE(t) << t.error().format();
  return whole(*t);
}

std::string code_of(const Result<void>& r) {
  return r ? std::string() : r.error().code;
}

TEST(NkiTarget, TheCheckerTakesItsLimitsFromTheTargetItRunsOn) {
  auto half =
      parse_target(with_line(with_line(std::string(target_text("trn1")), "bn_stats_fmax = ", "bn_stats_fmax = 256"),
                             "max8_fmax = ", "max8_fmax = 1024"),
                   "trn1-narrow.toml");
  ASSERT_TRUE(half) << half.error().format();
  const TargetSpec* narrow_target = &*half;
  for (const TargetSpec* target : {&target_trn1(), narrow_target}) {
    Launch l;
    l.exec.target = target;
    l.exec.compute = false;
    l.begin_instance(0);
    const Access stats = sbuf(l, {128, 6});
    const bool narrow = target != &target_trn1();
    EXPECT_EQ(code_of(isa_bn_stats(l.exec, stats, sbuf(l, {128, 512}), at(2))),
              narrow ? "err_size_of_dimension_exceed_arch_limit" : "");
    EXPECT_EQ(code_of(isa_bn_stats(l.exec, stats, sbuf(l, {128, 256}), at(3))), "");
    EXPECT_EQ(code_of(isa_max8(l.exec, sbuf(l, {128, 8}), sbuf(l, {128, 2048}), at(4))),
              narrow ? "err_size_of_dimension_exceed_arch_limit" : "");
  }
}

// nl.tile_size in both dialects reads the target of the run.
class NkiTargetTileSize : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = python_host_init();
    ASSERT_TRUE(r) << r.error().format();
  }
  static std::string printed(const std::string& src, const std::string& target) {
    KernelCall c;
    c.src = kernel_files_from_source(src);
    c.entry = "k";
    c.inputs = {Tensor::zeros({128, 4}, DType::kFloat32)};
    c.target = target;
    auto r = python_run(c);
    EXPECT_TRUE(r) << r.error().format();
    return r ? r->printed : std::string();
  }
};

constexpr const char* kLegacy = R"py(
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

@nki.jit
def k(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ts = nl.tile_size
    print(ts.pmax, ts.psum_fmax, ts.gemm_moving_fmax, ts.total_available_sbuf_size, ts.sbuf_fmax, ts.sbuf_size_bytes)
    try:
        ts.psum_fmaxx
    except AttributeError as e:
        print("AttributeError", "psum_fmax" in str(e))
    nl.store(out, nl.load(x))
    return out
)py";

constexpr const char* kCurrent = R"py(
import nki
import nki.language as nl

PMAX = nl.tile_size.pmax

@nki.jit
def k(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    print(PMAX, nl.tile_size.psum_num_banks, nl.tile_size.sbuf_fmax_bytes, nl.tile_size.bn_stats_fmax)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nki.isa.dma_copy(dst=t, src=x)
    nki.isa.dma_copy(dst=out, src=t)
    return out
)py";

TEST_F(NkiTargetTileSize, ReadsTheRunningTargetsLimits) {
  EXPECT_EQ(printed(kLegacy, "trn1"), "128 512 512 180224 45056 23068672\nAttributeError True\n");
  EXPECT_EQ(printed(kLegacy, "trn2"), "128 512 512 212984 53246 27261952\nAttributeError True\n");
  EXPECT_EQ(printed(kCurrent, "trn1"), "128 8 180224 512\n");
  EXPECT_EQ(printed(kCurrent, "trn2"), "128 8 212984 512\n");
}

}  // namespace
}  // namespace nki_agent
