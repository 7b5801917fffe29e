"""nki.language.constants: sizeinbytes (the bytes of one element of a dtype) and sbuf_min_align
(nl.tile_size's SBUF address alignment). Defines nothing of its own."""
from _nkia.dtypes import sizeinbytes  # noqa: F401
from _nkia.lang import tile_size as _tile_size

sbuf_min_align = _tile_size.sbuf_min_align
