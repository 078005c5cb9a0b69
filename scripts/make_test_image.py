#!/usr/bin/python3
"""Draws a synthetic "document" for demos: dark, text-like strokes on a light background.

  make_test_image.py OUT.ppm|OUT.rgb [--width W] [--height H] [--seed N]

Writes a binary PPM (P6, 8-bit RGB), which GStreamer, OpenCV and most viewers read without any
image codec. Lines of "words" made of glyph-like strokes (bars, crossbars, diagonals) give the
PP-OCR detector something to find; nothing is downloaded or copied from a font. The output
depends only on the arguments: the generator is a small xorshift written here, not NumPy's, whose
streams may change between releases.
"""
import argparse
import sys

import numpy as np


class XorShift32:
    def __init__(self, seed):
        self.s = (seed & 0xFFFFFFFF) or 0x9E3779B9

    def u32(self):
        x = self.s
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        self.s = x
        return x

    def int(self, lo, hi):
        """Uniform integer in [lo, hi)."""
        return lo + self.u32() % max(1, hi - lo)


def stamp_line(img, x0, y0, x1, y1, thick, ink):
    """A straight stroke of the given thickness, drawn as overlapping squares."""
    steps = max(abs(x1 - x0), abs(y1 - y0), 1)
    h, w, _ = img.shape
    for i in range(steps + 1):
        x = round(x0 + (x1 - x0) * i / steps)
        y = round(y0 + (y1 - y0) * i / steps)
        img[max(0, y):min(h, y + thick), max(0, x):min(w, x + thick)] = ink


def draw_glyph(img, rng, x, y, gw, gh, thick, ink):
    """2-4 strokes chosen from the skeleton of a box: bars, crossbars and diagonals."""
    r, b, cx, cy = x + gw - thick, y + gh - thick, x + (gw - thick) // 2, y + (gh - thick) // 2
    strokes = [
        (x, y, x, b), (r, y, r, b), (cx, y, cx, b),  # vertical bars
        (x, y, r, y), (x, cy, r, cy), (x, b, r, b),  # crossbars
        (x, b, r, y), (x, y, r, b),                  # diagonals
    ]
    for _ in range(rng.int(2, 5)):
        stamp_line(img, *strokes[rng.int(0, len(strokes))], thick, ink)


def make_image(width, height, seed):
    rng = XorShift32(seed)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    # Paper: warm light grey with a gentle illumination gradient.
    shade = 1.0 - 0.06 * (yy / max(1, height - 1)) - 0.04 * np.abs(xx / max(1, width - 1) - 0.5)
    img = (np.array([242, 238, 228], np.float32) * shade[..., None]).astype(np.uint8)

    margin = max(4, width // 20)
    line_h = max(8, height // 14)
    y = margin
    while y + line_h < height - margin:
        gh = max(6, line_h * rng.int(70, 100) // 100)
        gw = max(4, gh * 6 // 10)
        thick = max(1, gh // 8)
        ink = np.array([rng.int(15, 60)] * 3, np.uint8)
        x = margin + rng.int(0, 3 * gw)
        right = width - margin - rng.int(0, width // 4)  # ragged right edge
        while x + gw < right:
            for _ in range(rng.int(2, 9)):  # a word
                if x + gw >= right:
                    break
                draw_glyph(img, rng, x, y, gw, gh, thick, ink)
                x += gw + max(1, gw // 4)
            x += gw  # space
        y += line_h + line_h * rng.int(40, 110) // 100
    return img


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--width", type=int, default=640)
    ap.add_argument("--height", type=int, default=480)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if not (16 <= args.width <= 8192 and 16 <= args.height <= 8192):
        ap.error("width and height must be within 16..8192")
    img = make_image(args.width, args.height, args.seed)
    with open(args.out, "wb") as f:
        # .rgb: headerless RGB bytes, what GStreamer's rawvideoparse reads; otherwise a P6 PPM.
        if not args.out.endswith(".rgb"):
            f.write(b"P6\n%d %d\n255\n" % (args.width, args.height))
        f.write(np.ascontiguousarray(img).tobytes())
    print(f"wrote {args.out} ({args.width}x{args.height})", file=sys.stderr)


if __name__ == "__main__":
    main()
