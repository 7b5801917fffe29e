"""nki.compiler: direct allocation and compiler directives (see _nkia.compiler)."""
from _nkia.compiler import (disable_stack_allocator, enable_stack_allocator, force_auto_alloc, no_reorder,  # noqa: F401
                            psum, sbuf, skip_middle_end_transformations)

from _nkia.policy import host_tool_stand_in as _host_tool_stand_in  # noqa: E402

# NKI's tracer front end, a host tool: a stand-in (importable; calling into it fails).
frontend = _host_tool_stand_in("nki.compiler.frontend")
