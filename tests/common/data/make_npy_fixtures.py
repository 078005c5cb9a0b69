#!/usr/bin/python3
"""Writes the tiny .npy fixtures read by tests/common/test_npy.cpp, using NumPy's own writer.

  make_npy_fixtures.py [OUT_DIR]   (default: the directory of this script)

The values are hand-picked so that the C++ test can check them literally; rerunning the script
must reproduce the committed files byte for byte.
"""
import os
import sys

import numpy as np


def save(out_dir, name, arr, version=None):
    path = os.path.join(out_dir, name)
    with open(path, "wb") as f:
        if version is None:
            np.save(f, arr, allow_pickle=False)
        else:
            np.lib.format.write_array(f, arr, version=version, allow_pickle=False)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    save(out_dir, "f32_2x3.npy", (np.arange(6, dtype="<f4") * 0.5 - 1.0).reshape(2, 3))
    save(out_dir, "i64_scalar.npy", np.array(-42, dtype="<i8"))
    save(out_dir, "u8_5.npy", np.array([0, 1, 127, 128, 255], dtype="|u1"))
    save(out_dir, "b1_4.npy", np.array([True, False, False, True]))
    save(out_dir, "f16_3.npy", np.array([1.0, -2.5, 65504.0], dtype="<f2"))
    save(out_dir, "i32_2x2x1.npy", np.array([[[7], [-8]], [[2147483647], [-2147483648]]], dtype="<i4"))
    # Format versions 2.0 and 3.0 (NumPy picks 1.0 unless told otherwise).
    save(out_dir, "f64_0x3_v2.npy", np.zeros((0, 3), dtype="<f8"), version=(2, 0))
    save(out_dir, "i16_3_v3.npy", np.array([-1, 0, 300], dtype="<i2"), version=(3, 0))
    # Valid NumPy files that Weave rejects on purpose.
    save(out_dir, "be_f4.npy", np.array([1.0, 2.0], dtype=">f4"))
    save(out_dir, "fortran_f4.npy", np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)))


if __name__ == "__main__":
    main()
