"""neuronxcc.nki.typing (legacy dialect): its API comes with the NKI semantics core."""
