// nki/isa.h — the instruction core: NeuronCore instructions with explicit destinations, as
// nki.isa has them in the current dialect. Both dialects' front ends lower onto these.
//
// Each instruction, in one pass: validates its operands against the compiler's rules (a
// Diagnostic with the NKI catalogue code on failure), computes the numbers (engines widen to
// float32, compute, and round once into the destination's type), and appends an
// InstructionRecord to the trace.
#pragma once

#include <optional>

#include "core/diagnostic.h"
#include "nki/nki_tensor.h"
#include "nki/target.h"
#include "nki/trace.h"
#include "tensor/ops.h"

namespace nki_agent {

// What one kernel launch executes against.
struct ExecContext {
  const TargetSpec* target = &target_trn1();
  Trace trace;
};

// Copies src into dst through a DMA queue (any memories but PSUM to HBM); the element counts must
// match, and the element type converts on the way.
Result<void> isa_dma_copy(ExecContext& ctx, const Access& dst, const Access& src, const SourceLoc& loc);

// dst = a <op> b, elementwise on the Vector engine; a and b are on-chip tiles of the same shape, or
// b has one element per partition ([P, 1]) and broadcasts along the free axes.
Result<void> isa_tensor_tensor(ExecContext& ctx, const Access& dst, const Access& a, const Access& b, BinaryOp op,
                               const SourceLoc& loc);

// dst = src <op> scalar (or scalar <op> src when `reverse`), on the Vector engine.
Result<void> isa_tensor_scalar(ExecContext& ctx, const Access& dst, const Access& src, BinaryOp op, double scalar,
                               bool reverse, const SourceLoc& loc);

// dst = op(src * scale + bias) on the Scalar engine; bias is a [P, 1] tile or absent.
Result<void> isa_activation(ExecContext& ctx, const Access& dst, UnaryOp op, const Access& src,
                            const std::optional<Access>& bias, double scale, const SourceLoc& loc);

// Every element of dst = value (rounded into dst's type), on the given compute engine.
Result<void> isa_memset(ExecContext& ctx, const Access& dst, double value, Engine engine, const SourceLoc& loc);

// dst = src (with the type conversion), on the given compute engine.
Result<void> isa_tensor_copy(ExecContext& ctx, const Access& dst, const Access& src, Engine engine,
                             const SourceLoc& loc);

}  // namespace nki_agent
