"""neuronxcc.nki.language (legacy dialect): its API comes with the NKI semantics core."""

from _nkia.spmd import num_programs, program_id, program_ndim  # noqa: E402,F401
