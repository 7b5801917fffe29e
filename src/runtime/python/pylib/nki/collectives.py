"""nki.collectives: collective communication between the ranks of a replica group (all_reduce,
all_gather, reduce_scatter, all_to_all, collective permutes, rank_id). nki-agent runs every rank the
collectives name (_nkia.collectives has the model)."""
from _nkia.collectives import (all_gather, all_gather_v, all_reduce, all_to_all, all_to_all_v,  # noqa: F401
                               collective_permute, collective_permute_implicit,
                               collective_permute_implicit_current_processing_rank_id,
                               collective_permute_implicit_reduce, rank_id, reduce_scatter)


class ReplicaGroup:
    """nki.collectives.ReplicaGroup: the groups of ranks a collective spans, e.g. ReplicaGroup([[0, 1, 2, 3]]).
    Groups do not overlap; a rank's collective is with the other ranks of its group."""

    def __init__(self, replica_groups=(), *args, **kwargs):
        self.groups = kwargs.pop("groups", replica_groups)
        self.args, self.kwargs = args, kwargs

    def __repr__(self):
        return f"ReplicaGroup({[list(g) for g in self.groups]!r})"


__all__ = ["ReplicaGroup", "all_reduce", "all_gather", "all_gather_v", "reduce_scatter", "all_to_all",
           "all_to_all_v", "collective_permute", "collective_permute_implicit",
           "collective_permute_implicit_reduce", "collective_permute_implicit_current_processing_rank_id",
           "rank_id"]
