"""neuronxcc.nki.compiler (legacy dialect): its API comes with the NKI semantics core."""
