"""The legacy Neuron compiler package: only its NKI part (neuronxcc.nki) exists here."""
