#!/usr/bin/python3
"""Turns a PPM image into the normalized NCHW float32 tensor PP-OCR's detector expects.

  ppm_to_npy.py IN.ppm OUT.npy

(x / 255 - mean) / std per channel with the ImageNet mean/std PaddleOCR uses, RGB order, batch 1.
"""
import sys

import numpy as np


def read_ppm(path):
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos)
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P6" or int(fields[3]) != 255:
        sys.exit(f"{path}: not an 8-bit binary PPM")
    w, h = int(fields[1]), int(fields[2])
    return np.frombuffer(data[pos + 1:pos + 1 + w * h * 3], dtype=np.uint8).reshape(h, w, 3)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    img = read_ppm(sys.argv[1]).astype(np.float32) / 255.0
    mean = np.array([0.485, 0.456, 0.406], np.float32)
    std = np.array([0.229, 0.224, 0.225], np.float32)
    x = ((img - mean) / std).transpose(2, 0, 1)[None].astype(np.float32)
    np.save(sys.argv[2], np.ascontiguousarray(x))


if __name__ == "__main__":
    main()
