"""neuronxcc.nki.isa (legacy dialect): its API comes with the NKI semantics core."""
