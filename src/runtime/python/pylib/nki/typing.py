"""nki.typing (current dialect): its API comes with the NKI semantics core."""
