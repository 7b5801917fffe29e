// The launch rules of nki/launch.h, driven from C++ with no Python: tensor creation (the partition
// limit, on-chip rank, shared_hbm inside a loop, the same outputs in every SPMD instance), loops
// (affine iteration tags, the scope of a tensor created in a scoped iteration, carried reads),
// operand admission (scope, immutable inputs) and capacity (PSUM over capacity is an error, an
// SBUF peak over the usable bytes a warning), and the unwritten-output warning.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "nki/launch.h"
#include "nki/written.h"

namespace nki_agent {
namespace {

SourceLoc at(int line) {
  return SourceLoc{"kernel.py", line, 0};
}

TensorRequest request(Shape shape, Buffer buffer, DType dtype = DType::kFloat32) {
  TensorRequest r;
  r.shape = std::move(shape);
  r.buffer = buffer;
  r.dtype = dtype;
  return r;
}

std::shared_ptr<NkiTensor> create(Launch& l, const TensorRequest& r, int line = 1) {
  auto t = l.new_tensor(r, at(line));
  EXPECT_TRUE(t) << t.error().format();
  return t ? *t : nullptr;
}

std::string code_of(const Result<void>& r) {
  return r ? std::string() : r.error().code;
}
template <class T>
std::string code_of(const Result<T>& r) {
  return r ? std::string() : r.error().code;
}

// An instruction writing `dst` (memset), with its operand admitted as the front end admits it.
Result<void> write(Launch& l, const Access& dst, int line = 1) {
  if (auto ok = l.admit(dst, "dst"); !ok) return ok;
  return isa_memset(l.exec, dst, 1.0, Engine::kVector, at(line));
}

// An instruction reading `src` into `dst` (tensor_copy).
Result<void> copy(Launch& l, const Access& dst, const Access& src, int line = 1) {
  if (auto ok = l.admit(dst, "dst"); !ok) return ok;
  if (auto ok = l.admit(src, "src"); !ok) return ok;
  return isa_tensor_copy(l.exec, dst, src, Engine::kVector, at(line));
}

// ---- creation ----------------------------------------------------------------------------------

TEST(NkiLaunch, OnChipTensorsKeepWithinThePartitionLimitAndHaveAFreeDimension) {
  Launch l;
  l.begin_instance(0);
  EXPECT_EQ(code_of(l.new_tensor(request({129, 4}, Buffer::kSbuf), at(3))), "err_num_partition_exceed_arch_limit");
  EXPECT_EQ(code_of(l.new_tensor(request({256, 4}, Buffer::kPsum), at(3))), "err_num_partition_exceed_arch_limit");
  EXPECT_EQ(code_of(l.new_tensor(request({128}, Buffer::kSbuf), at(4))), "nkia_insufficient_rank");
  EXPECT_EQ(code_of(l.new_tensor(request({4, -1}, Buffer::kSbuf), at(5))), "nkia_bad_shape");
  EXPECT_TRUE(l.new_tensor(request({128, 4}, Buffer::kSbuf), at(6)));
  // HBM tensors are plain arrays: no partition rule, one dimension is enough.
  EXPECT_TRUE(l.new_tensor(request({4096}, Buffer::kPrivateHbm), at(7)));
  // Block dimensions lead the partition axis (legacy nl.par_dim): (4, par_dim(128), 8) is fine,
  // (2, par_dim(129), 8) is not, and a block tensor still needs a free dimension.
  TensorRequest blocks = request({4, 128, 8}, Buffer::kSbuf);
  blocks.blocks = 1;
  auto b = l.new_tensor(blocks, at(8));
  ASSERT_TRUE(b) << b.error().format();
  EXPECT_EQ((*b)->blocks, 1);
  blocks.shape = {2, 129, 8};
  EXPECT_EQ(code_of(l.new_tensor(blocks, at(9))), "err_num_partition_exceed_arch_limit");
  blocks.shape = {2, 128};
  EXPECT_EQ(code_of(l.new_tensor(blocks, at(10))), "nkia_insufficient_rank");
  // The limit is the target's.
  EXPECT_TRUE(check_tensor_shape(l.exec, {128, 1}, Buffer::kPsum, 0));
}

TEST(NkiLaunch, SharedHbmTensorsAreCreatedAtTheKernelsTopLevel) {
  Launch l;
  l.begin_instance(0);
  EXPECT_TRUE(l.new_tensor(request({8, 8}, Buffer::kSharedHbm), at(2)));
  const int64_t legacy = l.loop_begin(/*affine=*/true, /*scoped=*/true);
  ASSERT_TRUE(l.loop_next(legacy));
  auto r = l.new_tensor(request({8, 8}, Buffer::kSharedHbm), at(4));
  EXPECT_EQ(code_of(r), "err_shared_hbm_must_in_kernel_level");
  l.loop_end(legacy);
  // The current dialect's loops are unrolled with Python's scoping: they own no tensors.
  const int64_t current = l.loop_begin(true, /*scoped=*/false);
  ASSERT_TRUE(l.loop_next(current));
  EXPECT_TRUE(l.new_tensor(request({8, 8}, Buffer::kSharedHbm), at(7)));
  l.loop_end(current);
}

TEST(NkiLaunch, EverySpmdInstanceGetsTheFirstInstancesOutputs) {
  Launch l({2, 3});
  ASSERT_EQ(l.instances(), 6);
  l.begin_instance(4);
  EXPECT_EQ(l.program_id, (std::vector<int64_t>{1, 1}));
  l.begin_instance(0);
  auto out = create(l, request({16, 4}, Buffer::kSharedHbm, DType::kBFloat16));
  auto second = create(l, request({2}, Buffer::kSharedHbm));
  ASSERT_TRUE(l.end_instance());
  l.begin_instance(1);
  EXPECT_EQ(l.program_id, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(create(l, request({16, 4}, Buffer::kSharedHbm, DType::kBFloat16)), out);
  EXPECT_EQ(create(l, request({2}, Buffer::kSharedHbm)), second);
  ASSERT_TRUE(l.end_instance());
  // An instance that allocates other outputs than the first did.
  l.begin_instance(2);
  auto other = l.new_tensor(request({16, 4}, Buffer::kSharedHbm, DType::kFloat32), at(12));
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().code, "nkia_bad_shape");
  EXPECT_NE(other.error().message.find("SPMD instances allocate different shared_hbm tensors"), std::string::npos);
  // Private tensors are the instance's own.
  l.begin_instance(3);
  auto a = create(l, request({4, 4}, Buffer::kSbuf));
  l.begin_instance(4);
  EXPECT_NE(create(l, request({4, 4}, Buffer::kSbuf)), a);
}

// ---- loops -------------------------------------------------------------------------------------

TEST(NkiLaunch, AffineLoopsTagTheirIterations) {
  Launch l;
  l.begin_instance(0);
  EXPECT_EQ(l.exec.affine_tag, 0);
  const int64_t outer = l.loop_begin(true, false);
  EXPECT_EQ(l.exec.affine_tag, 0);  // before the first iteration
  ASSERT_TRUE(l.loop_next(outer));
  EXPECT_EQ(l.exec.affine_tag, outer << 32);
  ASSERT_TRUE(l.loop_next(outer));
  EXPECT_EQ(l.exec.affine_tag, (outer << 32) | 1);
  // A sequential loop inside keeps the affine loop's tag; an affine one inside tags with its own.
  const int64_t seq = l.loop_begin(false, false);
  ASSERT_TRUE(l.loop_next(seq));
  EXPECT_EQ(l.exec.affine_tag, (outer << 32) | 1);
  const int64_t inner = l.loop_begin(true, false);
  ASSERT_TRUE(l.loop_next(inner));
  EXPECT_EQ(l.exec.affine_tag, inner << 32);
  // Leaving the sequential loop (a break) leaves the inner one too.
  l.loop_end(seq);
  EXPECT_EQ(l.exec.affine_tag, (outer << 32) | 1);
  ASSERT_TRUE(l.loop_done(outer));
  l.loop_end(outer);
  EXPECT_EQ(l.exec.affine_tag, 0);
  // A tensor remembers the iteration it was created in.
  const int64_t again = l.loop_begin(true, false);
  ASSERT_TRUE(l.loop_next(again));
  auto t = create(l, request({4, 4}, Buffer::kSbuf));
  EXPECT_EQ(t->iterations.created_tag, again << 32);
  l.loop_end(again);
}

TEST(NkiLaunch, ATensorOfAScopedIterationIsOutOfScopeOnceItEnds) {
  Launch l;
  l.begin_instance(0);
  auto top = create(l, request({4, 4}, Buffer::kSbuf));
  const int64_t loop = l.loop_begin(true, /*scoped=*/true);
  ASSERT_TRUE(l.loop_next(loop));
  EXPECT_TRUE(l.first_iterations());
  auto mine = create(l, request({4, 4}, Buffer::kSbuf), 5);
  EXPECT_NE(l.current_scope(), 0);
  EXPECT_EQ(mine->launch.scope, l.current_scope());
  EXPECT_TRUE(write(l, whole(mine)));
  EXPECT_TRUE(copy(l, whole(top), whole(mine)));
  ASSERT_TRUE(l.loop_next(loop));  // the next iteration: `mine` belonged to the last one
  EXPECT_FALSE(l.first_iterations());
  auto r = copy(l, whole(top), whole(mine));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "err_local_variable_used_out_of_scope");
  EXPECT_NE(r.error().message.find("('src')"), std::string::npos);
  l.loop_end(loop);
  // ... and after the loop; the top-level tensor is in scope throughout.
  EXPECT_EQ(code_of(l.admit(whole(mine), "data")), "err_local_variable_used_out_of_scope");
  EXPECT_TRUE(l.admit(whole(top), "data"));
  EXPECT_EQ(l.current_scope(), 0);
}

TEST(NkiLaunch, AnAffineIterationMayNotReadWhatAnotherWrote) {
  Launch l;
  l.begin_instance(0);
  auto acc = create(l, request({4, 4}, Buffer::kSbuf));
  auto out = create(l, request({4, 4}, Buffer::kSbuf));
  const int64_t loop = l.loop_begin(true, false);
  ASSERT_TRUE(l.loop_next(loop));
  ASSERT_TRUE(write(l, whole(acc), 3));
  ASSERT_TRUE(l.loop_next(loop));
  // Iteration 1 reads acc, which iteration 0 wrote, and leaves it: a carried dependency, found when
  // the iteration ends.
  ASSERT_TRUE(copy(l, whole(out), whole(acc), 5));
  auto r = l.loop_done(loop);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_affine_range_carried_dependency");
  l.loop_end(loop);

  // Accumulating (read, then rewrite the same elements in the iteration) is allowed.
  Launch ok;
  ok.begin_instance(0);
  auto sum = create(ok, request({4, 4}, Buffer::kSbuf));
  auto tmp = create(ok, request({4, 4}, Buffer::kSbuf));
  ASSERT_TRUE(write(ok, whole(sum)));
  const int64_t acc_loop = ok.loop_begin(true, false);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(ok.loop_next(acc_loop));
    ASSERT_TRUE(copy(ok, whole(tmp), whole(sum)));
    ASSERT_TRUE(copy(ok, whole(sum), whole(tmp)));
  }
  EXPECT_TRUE(ok.loop_done(acc_loop));
  ok.loop_end(acc_loop);
}

// ---- operands ----------------------------------------------------------------------------------

TEST(NkiLaunch, AnImmutableInputIsReadNeverWritten) {
  Launch l;
  l.begin_instance(0);
  auto in = argument_tensor(Tensor::zeros({4, 4}, DType::kFloat32), "a");
  in->immutable = true;
  EXPECT_TRUE(l.admit(whole(in), "src"));
  for (const char* role : {"dst", "dst_idx", "reduce_res"})
    EXPECT_EQ(code_of(l.admit(whole(in), role)), "err_cannot_update_immutable_parameter") << role;
  EXPECT_EQ(code_of(check_writable(whole(in), "dst")), "err_cannot_update_immutable_parameter");
  in->immutable = false;
  EXPECT_TRUE(l.admit(whole(in), "dst"));
}

// ---- capacity ----------------------------------------------------------------------------------

void psum_capacity_verdicts(bool recording) {
  // Three [128, 2048] float32 tiles (8 KiB per partition each; trn1's PSUM holds 16 KiB) whose live
  // spans overlap: the third goes over, and the error is located where it was allocated.
  Launch l;
  l.exec.trace.set_recording(recording);
  l.begin_instance(0);
  auto a = create(l, request({128, 2048}, Buffer::kPsum), 10);
  auto b = create(l, request({128, 2048}, Buffer::kPsum), 11);
  auto c = create(l, request({128, 2048}, Buffer::kPsum), 12);
  ASSERT_TRUE(write(l, whole(a)));
  ASSERT_TRUE(write(l, whole(b)));
  ASSERT_TRUE(write(l, whole(c)));
  ASSERT_TRUE(write(l, whole(a)));
  ASSERT_TRUE(write(l, whole(b)));
  EXPECT_EQ(l.psum_ranges().size(), 3u);
  auto r = l.end_instance();
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_psum_capacity_exceeded");
  EXPECT_EQ(r.error().loc.line, 12);

  // Two at a time fit, however many there are in turn; tiles the kernel never accesses, and block
  // tensors, take no span.
  Launch fits;
  fits.exec.trace.set_recording(recording);
  fits.begin_instance(0);
  for (int i = 0; i < 6; ++i) {
    auto t = create(fits, request({128, 2048}, Buffer::kPsum));
    ASSERT_TRUE(write(fits, whole(t)));
  }
  create(fits, request({128, 2048}, Buffer::kPsum));
  TensorRequest blocks = request({4, 128, 2048}, Buffer::kPsum);
  blocks.blocks = 1;
  create(fits, blocks);
  EXPECT_TRUE(fits.end_instance());
  // A new instance starts counting afresh.
  fits.begin_instance(0);
  EXPECT_TRUE(fits.psum_ranges().empty());
  EXPECT_EQ(fits.exec.trace.size(), recording ? 6u : 0u);  // the six memsets
}

TEST(NkiLaunch, PsumTilesLiveAtOnceBeyondPsumsCapacityAreAnError) {
  // The spans are counted in instructions, whether or not the launch keeps its trace (a
  // verification keeps none): the verdicts are the same either way.
  for (const bool recording : {true, false}) {
    SCOPED_TRACE(recording ? "trace kept" : "trace not kept");
    psum_capacity_verdicts(recording);
  }
}

TEST(NkiLaunch, AMatmulResultIsAPsumTileLiveFromItsCreation) {
  Launch l;
  l.begin_instance(0);
  auto stationary = create(l, request({128, 128}, Buffer::kSbuf));
  auto moving = create(l, request({128, 512}, Buffer::kSbuf));
  ASSERT_TRUE(write(l, whole(stationary)));
  auto r = l.new_matmul_result(whole(stationary), whole(moving), MatmulPerfMode::kNone, at(9));
  ASSERT_TRUE(r) << r.error().format();
  EXPECT_EQ((*r)->buffer, Buffer::kPsum);
  EXPECT_EQ((*r)->data.dtype(), DType::kFloat32);
  ASSERT_TRUE((*r)->launch.live);
  EXPECT_EQ((*r)->launch.live->first, 1);  // the instruction it is made for, the second of the launch
  EXPECT_EQ((*r)->launch.live->bytes, 512 * 4);
  EXPECT_EQ((*r)->data.shape(), (Shape{128, 512}));
  EXPECT_EQ((*r)->launch.live->loc.line, 9);
}

TEST(NkiLaunch, AnSbufPeakOverTheUsableBytesIsOneWarningForTheLaunch) {
  // trn1 has 180224 usable SBUF bytes per partition; three [128, 16384] float32 tiles (64 KiB each)
  // live at once need more, in each of two instances: one warning, at the tile that first went over.
  Launch l({2});
  for (int64_t i = 0; i < l.instances(); ++i) {
    l.begin_instance(i);
    auto a = create(l, request({128, 16384}, Buffer::kSbuf), 20);
    auto b = create(l, request({128, 16384}, Buffer::kSbuf), 21);
    auto c = create(l, request({128, 16384}, Buffer::kSbuf), 22);
    ASSERT_TRUE(write(l, whole(a)));
    ASSERT_TRUE(write(l, whole(b)));
    ASSERT_TRUE(write(l, whole(c)));
    ASSERT_TRUE(write(l, whole(a)));
    ASSERT_TRUE(write(l, whole(b)));
    ASSERT_TRUE(l.end_instance());  // SBUF spills: no error
  }
  EXPECT_EQ(l.sbuf_use().peak_bytes, 3 * 16384 * 4);
  l.finish();
  std::vector<Diagnostic> w = l.exec.warnings.take();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].code, "nkia_sbuf_capacity_exceeded");
  EXPECT_EQ(w[0].severity, Severity::kWarning);
  EXPECT_EQ(w[0].loc.line, 22);

  // Two such tiles fit: no warning.
  Launch fits;
  fits.begin_instance(0);
  auto a = create(fits, request({128, 16384}, Buffer::kSbuf));
  auto b = create(fits, request({128, 16384}, Buffer::kSbuf));
  ASSERT_TRUE(write(fits, whole(a)));
  ASSERT_TRUE(write(fits, whole(b)));
  ASSERT_TRUE(fits.end_instance());
  fits.finish();
  EXPECT_TRUE(fits.exec.warnings.empty());
}

// ---- the unwritten-output warning --------------------------------------------------------------

TEST(NkiLaunch, AnOutputWithUnwrittenElementsIsAWarningAtTheReturn) {
  Launch l;
  l.begin_instance(0);
  auto out = create(l, request({4, 8}, Buffer::kSharedHbm));
  mark_written(Access{out, out->data.slice(0, 0, 2)});  // rows 0 and 1
  auto d = unwritten_output_warning(out, at(30));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->code, "nkia_output_partially_written");
  EXPECT_EQ(d->severity, Severity::kWarning);
  EXPECT_EQ(d->loc.line, 30);
  EXPECT_NE(d->message.find("the first: [2, 0]"), std::string::npos) << d->message;
  mark_written(whole(out));
  EXPECT_FALSE(unwritten_output_warning(out, at(30)));
}

}  // namespace
}  // namespace nki_agent
