"""nki.isa.constants: the enums that configure nki.isa instructions (engines, DMA queues and
descriptor modes, out-of-bounds handling, accumulator commands, matmul modes, core generations),
the same objects nki.isa itself exports. Defines nothing of its own."""
from _nkia.isa_common import (dge_mode, dma_engine, engine, matmul_perf_mode, nc_version, oob_mode,  # noqa: F401
                              reduce_cmd)
