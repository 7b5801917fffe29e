"""neuronxcc.nki.typing: kernel parameter annotations."""
from _nkia.typing import mutable_tensor, scalar, tensor  # noqa: F401
