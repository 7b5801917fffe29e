"""SPMD launch queries shared by both dialects: program_id, num_programs, program_ndim."""
import _nkia_core as core


def _grid():
    ctx = core.current_context()
    if ctx is None:
        raise RuntimeError("program_id / num_programs are only defined inside a running kernel")
    return ctx


def program_id(axis=0):
    """This instance's index along grid axis `axis` (0 for a launch without a grid)."""
    ctx = _grid()
    if not ctx.grid:
        if axis != 0:
            raise IndexError(f"program_id({axis}): the kernel was launched without an SPMD grid")
        return 0
    if not 0 <= axis < len(ctx.grid):
        raise IndexError(f"program_id({axis}): the launch grid {tuple(ctx.grid)} has {len(ctx.grid)} axes")
    return ctx.program_id[axis]


def num_programs(axes=None):
    """The number of instances along `axes` (an int or a tuple), or in total when omitted."""
    ctx = _grid()
    grid = tuple(ctx.grid) or (1,)
    if axes is None:
        axes = tuple(range(len(grid)))
    elif isinstance(axes, int):
        axes = (axes,)
    n = 1
    for a in axes:
        if not 0 <= a < len(grid):
            raise IndexError(f"num_programs({a}): the launch grid {grid} has {len(grid)} axes")
        n *= grid[a]
    return n


def program_ndim():
    """The number of axes of the launch grid (0 without a grid)."""
    return len(_grid().grid)
