#!/usr/bin/python3
"""Prints a summary of a text-probability map written by `weave run` and saves it as a picture.

  summarize_map.py MAP.npy [OUT.pgm]

Shows the value range, the share of pixels the detector calls text (p > 0.3, PaddleOCR's
binarization threshold), the text regions found (connected rows/columns of such pixels) and a
coarse character-art rendering of the map; OUT.pgm (8-bit grayscale) is the full map as an image.
"""
import sys

import numpy as np


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    p = np.load(sys.argv[1])
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
    if len(sys.argv) == 3:
        with open(sys.argv[2], "wb") as f:
            f.write(b"P5\n%d %d\n255\n" % (w, h))
            f.write((np.clip(m, 0, 1) * 255).astype(np.uint8).tobytes())
        print(f"map image: {sys.argv[2]}")


if __name__ == "__main__":
    main()
