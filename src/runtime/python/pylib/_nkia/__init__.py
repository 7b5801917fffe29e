"""nki-agent's kernel host: the Python half of the runtime.

Kernel files are loaded from memory (never from disk) as the package ``_nkia_kernel``; their imports
go through a policy that lets them reach the NKI modules, NumPy, a small allow-list of the standard
library and their own helper modules, and turns torch / torch_xla / jax into stand-ins that fail
only when used. The C++ host calls ``run_entry`` and reads the results back.
"""
