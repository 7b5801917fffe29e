// nki/aliases.h — retyped aliases (nki/views.h retyped_view: t.view(dtype), t.ap(dtype=)) kept in step
// with the tensor whose bytes they reinterpret (NkiTensor::origin).
//
// An alias shares its origin's storage, so values written through either are the other's at once; what
// each keeps apart is its analysis state: which elements hold data (nki/written.h), the poison a fresh
// tensor is owed and the DMA copies not yet carried out (nki/nki_tensor.h). These functions carry that
// state across: an alias element holds data when every origin element its bytes lie in does, and the
// other way round. Never here: the views themselves (nki/views.cpp) or instruction rules.
#pragma once

namespace nki_agent {

struct Access;
struct NkiTensor;

// Before an instruction reads or writes the alias `t`: its origin's poison and pending copies are
// carried out (the shared bytes hold what the kernel wrote), and t's written flags are its origin's.
// A no-op for tensors that are not aliases.
void sync_alias_from_origin(NkiTensor& t);
// After an instruction wrote `dst`, a view of an alias: the origin elements whose bytes the write
// reached take their written flags from the alias's (written when every alias element over them is)
// and count as stored; the origin counts as written. A no-op for views of tensors that are not aliases.
void sync_origin_from_alias(const Access& dst);

}  // namespace nki_agent
