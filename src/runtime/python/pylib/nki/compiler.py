"""nki.compiler: direct allocation and compiler directives (see _nkia.compiler)."""
from _nkia.compiler import (disable_stack_allocator, enable_stack_allocator, force_auto_alloc, no_reorder,  # noqa: F401
                            psum, sbuf, skip_middle_end_transformations)
