"""Building blocks for NKIBench baselines: one plain NKI kernel per PyTorch operation.

A fused task's baseline runs the way eager PyTorch runs on a device: every operation of the
reference is its own kernel, reading its inputs from HBM and writing its result to HBM, where the
next one reads it. Each block here is an ``@nki.jit`` kernel (legacy dialect) that allocates its
output in shared HBM and returns it; a baseline calls them in order from its own ``@nki.jit``
entry (a kernel called from a kernel is inlined, so the whole chain is one launch).

Blocks are simple, not tuned: they are the speed a fused kernel is measured against. Baselines
import them (``from nkibench_ops import elementwise``); candidate kernels cannot.
"""
