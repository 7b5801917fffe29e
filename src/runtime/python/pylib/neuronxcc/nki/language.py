"""neuronxcc.nki.language (legacy dialect), as simulated by nki-agent."""
from _nkia.lang import *  # noqa: F401,F403
