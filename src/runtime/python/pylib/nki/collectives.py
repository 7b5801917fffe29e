"""nki.collectives: collective communication between NeuronCores (all_reduce, all_gather, ...).
The names exist so that kernels import; every operation is refused when called
(nkia_multicore_not_modelled, _nkia.multicore), since the simulator runs one core. ReplicaGroup
is a plain configuration object."""
from _nkia.multicore import refusing

_OPERATIONS = ("all_reduce", "all_gather", "all_gather_v", "reduce_scatter", "all_to_all", "all_to_all_v",
               "collective_permute", "collective_permute_implicit", "collective_permute_implicit_reduce",
               "collective_permute_implicit_current_processing_rank_id", "rank_id")


class ReplicaGroup:
    """nki.collectives.ReplicaGroup: the ranks a collective spans (kept as given)."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


for _name in _OPERATIONS:
    globals()[_name] = refusing(f"nki.collectives.{_name}")
del _name

__all__ = ["ReplicaGroup", *_OPERATIONS]
