"""neuronxcc.nki.isa.constants: the enums that configure the legacy nisa instructions, the same
objects neuronxcc.nki.isa (and nki.isa) export. Defines nothing of its own."""
from _nkia.isa_common import (dge_mode, dma_engine, engine, matmul_perf_mode, nc_version, oob_mode,  # noqa: F401
                              reduce_cmd)
