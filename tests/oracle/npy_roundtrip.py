"""NumPy side of the .npy interop tests (tests/unit/test_npy.cpp).

  npy_roundtrip.py check DIR   loads every file listed in DIR/manifest.json (written by nki_agent)
                               with np.load and checks descr, shape and element bits; untagged files
                               must also be byte-identical to what np.save writes for the same array.
  npy_roundtrip.py write DIR   writes .npy files with NumPy (C and Fortran order, every dtype the
                               reader takes, versions 1.0/2.0/3.0, 0-d, empty, a >65535-byte header,
                               and files the reader must refuse) and lists them, with the bits
                               nki_agent should load, in DIR/numpy_manifest.json.

Element bits are compared as unsigned integers of the element's width (bool as uint8), in C order,
so NaN payloads and signed zeros count.
"""
import io
import json
import os
import struct
import sys

import numpy as np

UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def bits_of(a):
    """Element bits of array a in C order, as a list of Python ints."""
    a = np.ascontiguousarray(a)
    return a.view(UINT_OF_SIZE[a.dtype.itemsize]).reshape(-1).tolist()


def header_text(raw):
    major = raw[6]
    if major == 1:
        (hlen,) = struct.unpack("<H", raw[8:10])
        return raw[10:10 + hlen].decode("latin1")
    (hlen,) = struct.unpack("<I", raw[8:12])
    return raw[12:12 + hlen].decode("utf8")


def check(folder):
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    failures = []
    for e in manifest:
        path = os.path.join(folder, e["file"])
        try:
            a = np.load(path)  # allow_pickle stays False: our files must not need it
            raw = open(path, "rb").read()
            problems = []
            if a.dtype.str != e["descr"]:
                problems.append(f"descr {a.dtype.str!r} != {e['descr']!r}")
            if list(a.shape) != e["shape"]:
                problems.append(f"shape {a.shape} != {e['shape']}")
            if not problems and bits_of(a) != e["bits"]:
                problems.append("element bits differ")
            text = header_text(raw)
            tag = e.get("tag")
            if tag is not None and f"# nki_agent dtype={tag}" not in text:
                problems.append(f"tag {tag!r} missing from header {text!r}")
            if tag is None and "nki_agent" in text:
                problems.append(f"unexpected tag in header {text!r}")
            if (10 + len(text) if raw[6] == 1 else 12 + len(text)) % 64 != 0:
                problems.append("data does not start at a multiple of 64 bytes")
            if raw[6] != e.get("version", 1):
                problems.append(f"version {raw[6]} != {e.get('version', 1)}")
            if tag is None:
                buf = io.BytesIO()
                np.save(buf, a)
                if buf.getvalue() != raw:
                    problems.append("bytes differ from np.save of the same array")
            if problems:
                failures.append(f"{e['file']}: " + "; ".join(problems))
        except Exception as ex:  # report every file, not just the first
            failures.append(f"{e['file']}: np.load failed: {ex!r}")
    for f in failures:
        print("FAIL", f)
    print(f"checked {len(manifest)} files, {len(failures)} failures")
    return 0 if not failures else 1


# ---- files written by NumPy ----------------------------------------------------------------------

def values(dtype, shape):
    """Deterministic values of every kind a dtype can hold (specials for floats, extremes for ints)."""
    n = int(np.prod(shape)) if len(shape) else 1
    dt = np.dtype(dtype)
    i = np.arange(n)
    if dt.kind == "f":
        v = ((i * 37) % 23 - 11.5) * 0.8125
        specials = [np.nan, -0.0, np.inf, -np.inf, 65504.0, 1e-6]
        v = v.astype(dt)
        for k, s in enumerate(specials[: max(0, n - 2)]):
            v[(k * 5 + 1) % n] = s
    elif dt.kind == "b":
        v = (i * 7) % 3 == 0
    else:
        info = np.iinfo(dt)
        span = min(int(info.max) - int(info.min), 2**31 - 1)
        v = (int(info.min) + (i * 104729) % (span + 1)).astype(dt)
        if n >= 2:
            v[0] = info.min if dt.kind == "i" and dt.itemsize < 8 else 0
            v[-1] = info.max if dt.itemsize < 8 else 7
    return np.asarray(v, dtype=dt).reshape(shape)


LOADS_AS = {  # NumPy dtype -> (nki_agent dtype, NumPy dtype of the loaded bits)
    "float32": ("float32", np.float32), "float16": ("float16", np.float16),
    "float64": ("float32", np.float32), "int8": ("int8", np.int8), "int16": ("int16", np.int16),
    "int32": ("int32", np.int32), "int64": ("int32", np.int32), "uint8": ("uint8", np.uint8),
    "uint16": ("uint16", np.uint16), "uint32": ("uint32", np.uint32), "uint64": ("int32", np.int32),
    "bool": ("bool", np.uint8),
}


def write(folder):
    manifest = []

    def ok(name, a, save, extra=None):
        path = os.path.join(folder, name)
        save(path, a)
        ours, bits_dtype = LOADS_AS[a.dtype.name]
        with np.errstate(over="ignore", invalid="ignore"):
            expect = np.ascontiguousarray(a).astype(bits_dtype)
        entry = {"file": name, "dtype": ours, "shape": list(a.shape), "bits": bits_of(expect)}
        entry.update(extra or {})
        manifest.append(entry)

    def bad(name, a, code, allow_pickle=False):
        np.save(os.path.join(folder, name), a, allow_pickle=allow_pickle)
        manifest.append({"file": name, "error": code})

    def with_version(version):
        def save(path, a):
            with open(path, "wb") as f:
                np.lib.format.write_array(f, a, version=version)
        return save

    def plain(path, a):
        np.save(path, a)

    for dt in LOADS_AS:
        if dt == "int64":  # values that fit in int32, which they load as
            a = (np.arange(24).reshape(2, 3, 4) * 89478485 - 10**9).astype(np.int64)
        elif dt == "uint64":
            a = (np.arange(24).reshape(2, 3, 4) * 89478485).astype(np.uint64)
        else:
            a = values(dt, (2, 3, 4))
        ok(f"c_{dt}.npy", a, plain)
        f = np.asfortranarray(a)
        ok(f"f_{dt}.npy", f, plain, {"fortran": True})
        ok(f"v2_{dt}.npy", a[:, 1], with_version((2, 0)))
        ok(f"v3_{dt}.npy", np.asfortranarray(a[1]), with_version((3, 0)), {"fortran": True})
        ok(f"strided_{dt}.npy", f[1], plain)  # neither C nor Fortran contiguous: NumPy writes C order
        ok(f"1d_{dt}.npy", a.reshape(-1), plain)

    ok("scalar_f32.npy", np.array(3.25, dtype=np.float32), plain)
    ok("scalar_i32.npy", np.array(-7, dtype=np.int32), plain)
    ok("scalar_bool.npy", np.array(True), plain)
    ok("empty_1d.npy", np.zeros((0,), np.float32), plain)
    ok("empty_2d.npy", np.zeros((3, 0), np.int16), plain)
    ok("empty_f.npy", np.asfortranarray(np.zeros((0, 5), np.float16)), plain)
    ok("f_unit_axis.npy", np.asfortranarray(values("float32", (2, 1, 3))), plain, {"fortran": True})
    # float64 values around the float32 range: overflow to inf, underflow to 0 and subnormals.
    ok("f64_edges.npy", np.array([3.5e38, -3.5e38, 3.4028235e38, 3.4028235677973366e38, 1e-50, -1e-40,
                                  np.nan, 0.1, 2.0**-149, 2.0**-150 * 1.5], dtype=np.float64), plain)
    ok("i64_range.npy", np.array([-2**31, 2**31 - 1, 0, -1], dtype=np.int64), plain)
    ok("u64_range.npy", np.array([0, 2**31 - 1], dtype=np.uint64), plain)

    # A version 2.0 header longer than 65535 bytes (padding is spaces, which the format allows;
    # NumPy itself only produces one for huge structured dtypes).
    big = values("float32", (4, 5))
    text = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 5), }"
    hlen = 70000
    hlen += (64 - (12 + hlen) % 64) % 64
    text = text + " " * (hlen - len(text) - 1) + "\n"
    path = os.path.join(folder, "big_header.npy")
    with open(path, "wb") as fh:
        fh.write(b"\x93NUMPY\x02\x00" + struct.pack("<I", len(text)) + text.encode("latin1") + big.tobytes())
    assert np.array_equal(np.load(path, allow_pickle=True), big)  # NumPy only loads it when trusted
    manifest.append({"file": "big_header.npy", "dtype": "float32", "shape": [4, 5], "bits": bits_of(big)})

    # Headers NumPy accepts but does not write itself: double quotes, no trailing comma, Python 2
    # longs, comments.
    handmade = {
        "dq.npy": '{"descr": "<i2", "fortran_order": False, "shape": (2, 3)}',
        "py2_long.npy": "{'descr': '<i2', 'fortran_order': False, 'shape': (2L, 3L), }",
        "comment.npy": "{'descr': '<i2', 'shape': (2, 3), 'fortran_order': False} # written by hand",
    }
    small = np.arange(6, dtype=np.int16).reshape(2, 3) - 3
    for name, text in handmade.items():
        text = text + " " * ((64 - (10 + len(text) + 1) % 64) % 64) + "\n"
        path = os.path.join(folder, name)
        with open(path, "wb") as fh:
            fh.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin1") + small.tobytes())
        assert np.array_equal(np.load(path), small), name
        manifest.append({"file": name, "dtype": "int16", "shape": [2, 3], "bits": bits_of(small)})

    # Files the reader must refuse, with the code it must give.
    bad("be_f4.npy", np.arange(4, dtype=">f4"), "nkia_npy_big_endian")
    bad("be_i2.npy", np.arange(4, dtype=">i2"), "nkia_npy_big_endian")
    bad("c8.npy", np.arange(4, dtype=np.complex64), "nkia_npy_unsupported_dtype")
    bad("str.npy", np.array(["ab", "c"]), "nkia_npy_unsupported_dtype")
    bad("bytes.npy", np.array([b"ab", b"c"]), "nkia_npy_unsupported_dtype")
    bad("dt64.npy", np.array(["2024-01-01"], dtype="datetime64[ns]"), "nkia_npy_unsupported_dtype")
    bad("record.npy", np.zeros(3, dtype=[("a", "<f4"), ("b", "<i4")]), "nkia_npy_unsupported_dtype")
    bad("object.npy", np.array([1, "a", None], dtype=object), "nkia_npy_object_array", allow_pickle=True)
    bad("i64_big.npy", np.array([0, 2**31], dtype=np.int64), "nkia_npy_value_range")
    bad("i64_small.npy", np.array([-2**31 - 1], dtype=np.int64), "nkia_npy_value_range")
    bad("u64_big.npy", np.array([2**63 + 5], dtype=np.uint64), "nkia_npy_value_range")

    with open(os.path.join(folder, "numpy_manifest.json"), "w") as f:
        json.dump(manifest, f)
    print(f"wrote {len(manifest)} files")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("check", "write"):
        print(__doc__)
        sys.exit(2)
    sys.exit(check(sys.argv[2]) if sys.argv[1] == "check" else write(sys.argv[2]))
