"""NumPy's float16 conversions, as an oracle for tests/unit/test_dtype.cpp.

  fp16_table.py decode OUT      writes float32(x) for every float16 bit pattern 0..65535, in order
  fp16_table.py encode IN OUT   reads float32 values, writes float16(x) as uint16 bits

Files are raw little-endian arrays (float32 "<f4", uint16 "<u2"), no header.
"""
import sys

import numpy as np


def main(argv):
    if len(argv) == 3 and argv[1] == "decode":
        bits = np.arange(1 << 16, dtype="<u2")
        bits.view("<f2").astype("<f4").tofile(argv[2])
        return 0
    if len(argv) == 4 and argv[1] == "encode":
        values = np.fromfile(argv[2], dtype="<f4")
        with np.errstate(all="ignore"):  # overflow to inf is what is being tested
            values.astype("<f2").view("<u2").tofile(argv[3])
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
