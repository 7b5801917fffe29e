// nki/isa_collective.h — the data movement of nki.collectives between the ranks of a launch
// (nki/launch.h, "ranks of a replica group"). The operations themselves — which rank receives what
// from whom, and when the ranks meet — are the front end's (_nkia.collectives): it takes each rank's
// sources when the rank reaches the collective (collective_snapshot) and, once every rank of the
// group has, has each rank receive its part into its destinations (isa_collective_receive).
//
// A received part is one DMA on the receiving rank's queues in its trace (the cost model prices it
// as a DMA of its bytes; the links between NeuronCores or devices are not modelled), reading the part
// and the receiving rank's own source of the same elements, so that it starts after that source is
// written, as the collective does on every rank.
#pragma once

#include <memory>
#include <optional>

#include "nki/isa.h"

namespace nki_agent {

// The values of `src` as a rank's collective reads them when it reaches the call: a tensor of its
// own in src's memory, holding a copy of the elements (poison included, after settling), written in
// full. Not tracked by the launch (no capacity, no scope). A timing-only run, which computes no
// values, takes no snapshot (the front end passes src itself).
std::shared_ptr<NkiTensor> collective_snapshot(const Access& src);

// dst receives `part` (another rank's, or its own, contribution of equal element count), or with
// `combine` (nl.add / maximum / minimum) combines it into what dst holds: dst = combine(dst, part),
// in float32, rounded once into dst's type. `own`: the receiving rank's source of the same elements
// (null: none). HBM or SBUF operands, never PSUM (the collectives' memories).
Result<void> isa_collective_receive(ExecContext& ctx, const Access& dst, const Access& part, const Access* own,
                                    std::optional<BinaryOp> combine, const SourceLoc& loc);

// A kernel argument of rank 0 as another rank gets it: its own copy of the values (the ranks are
// devices, each with its caller's inputs in its HBM), the same name and flags.
std::shared_ptr<NkiTensor> rank_argument_copy(NkiTensor& arg);

}  // namespace nki_agent
