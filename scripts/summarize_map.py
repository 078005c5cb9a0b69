#!/usr/bin/python3
"""Prints a summary of a text-probability map written by `weave run` and saves it as a picture.

  summarize_map.py MAP.npy|MAP.f32 [OUT.png|OUT.pgm] [--shape HxW]

MAP.f32 is raw float32 (what `weaveinfer ! filesink` writes); give its --shape.

Shows the value range, the share of pixels the detector calls text (p > 0.3, PaddleOCR's
binarization threshold), the text regions found (connected rows/columns of such pixels) and a
coarse character-art rendering of the map; OUT (8-bit grayscale PNG or PGM) is the full map as an image.
"""
import struct
import sys
import zlib

import numpy as np


def write_png(path, gray):
    """8-bit grayscale PNG: signature, IHDR, one zlib IDAT of filter-0 rows, IEND."""
    h, w = gray.shape

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + gray[y].tobytes() for y in range(h))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def main():
    args = sys.argv[1:]
    shape = None
    if "--shape" in args:
        i = args.index("--shape")
        shape = tuple(int(v) for v in args[i + 1].split("x"))
        del args[i:i + 2]
    if len(args) not in (1, 2):
        sys.exit(__doc__)
    if args[0].endswith(".npy"):
        p = np.load(args[0])
    else:
        if shape is None:
            sys.exit("raw maps need --shape HxW")
        p = np.fromfile(args[0], dtype=np.float32)
        if p.size != shape[0] * shape[1]:
            sys.exit(f"{args[0]}: {p.size} floats, expected {shape[0]}x{shape[1]}")
        p = p.reshape(1, 1, *shape)
    m = p.reshape(p.shape[-2], p.shape[-1])
    text = m > 0.3
    print(f"output map {list(p.shape)} {p.dtype}: min {m.min():.3f} max {m.max():.3f} mean {m.mean():.3f}")
    print(f"text pixels (p > 0.3): {text.mean() * 100:.1f}%")
    rows = np.flatnonzero(text.any(axis=1))
    bands, start = [], None
    for i, r in enumerate(rows):
        if start is None:
            start = r
        if i + 1 == len(rows) or rows[i + 1] != r + 1:
            bands.append((start, r))
            start = None
    print(f"text lines found: {len(bands)}")
    for a, b in bands:
        cols = np.flatnonzero(text[a:b + 1].any(axis=0))
        print(f"  rows {a:4d}-{b:4d}  columns {cols.min():4d}-{cols.max():4d}")
    h, w = m.shape
    ch, cw = max(1, h // 24), max(1, w // 72)
    shades = " .:-=+*#%@"
    for y in range(0, h - ch + 1, ch):
        line = ""
        for x in range(0, w - cw + 1, cw):
            v = m[y:y + ch, x:x + cw].mean()
            line += shades[min(9, int(v * 10))]
        print("  |" + line + "|")
    if len(args) == 2:
        gray = (np.clip(m, 0, 1) * 255).astype(np.uint8)
        if args[1].endswith(".png"):
            write_png(args[1], gray)
        else:
            with open(args[1], "wb") as f:
                f.write(b"P5\n%d %d\n255\n" % (w, h))
                f.write(gray.tobytes())
        print(f"map image: {args[1]}")


if __name__ == "__main__":
    main()
