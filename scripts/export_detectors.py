#!/usr/bin/python3
"""Exports two small object detectors with the output layouts users export, random but seeded
weights (Debian's PyTorch; nothing is downloaded). They test how weavemeta decodes detector
outputs (tests/vision/test_detectors.cpp, bench/bench_detection.cpp); the weights are random, so
the boxes mean nothing, but the layouts, the decode arithmetic and the candidate counts are those
of real exports.

  export_detectors.py OUT_DIR

Writes, in OUT_DIR:
  yolov5_style.onnx  input "images" [1,3,640,640] -> "output0" [1,25200,85]: a strided conv
                     backbone and YOLOv5's Detect head at strides 8, 16 and 32 (3 anchors each,
                     80 classes): sigmoid, xy = (2 s - 0.5 + grid) * stride, wh = (2 s)^2 * anchor,
                     rows of cx, cy, w, h, objectness, class scores
  yolov8_style.onnx  input "images" [1,3,640,640] -> "output0" [1,84,8400]: the same backbone and
                     an anchor-free head (YOLOv8/v11 layout): columns of cx, cy, w, h and 80
                     class scores (sigmoid), boxes from distances to the cell centre
"""
import os
import sys

import torch

CLASSES = 80
STRIDES = (8, 16, 32)
ANCHORS = ((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119), (116, 90, 156, 198, 373, 326))


def conv(cin, cout, stride):
    return torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 3, stride, 1), torch.nn.SiLU())


class Backbone(torch.nn.Module):
    """Feature maps at strides 8, 16 and 32 (few channels: the layouts matter, not the accuracy)."""

    def __init__(self):
        super().__init__()
        self.s8 = torch.nn.Sequential(conv(3, 8, 2), conv(8, 16, 2), conv(16, 16, 2))
        self.s16 = conv(16, 32, 2)
        self.s32 = conv(32, 32, 2)

    def forward(self, x):
        a = self.s8(x)
        b = self.s16(a)
        return a, b, self.s32(b)


def grid(h, w):
    ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32),
                            indexing="ij")
    return xs, ys


class YoloV5Style(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
        self.heads = torch.nn.ModuleList(torch.nn.Conv2d(c, 3 * (5 + CLASSES), 1) for c in (16, 32, 32))

    def forward(self, x):
        out = []
        for f, head, stride, anchors in zip(self.backbone(x), self.heads, STRIDES, ANCHORS):
            n, _, h, w = f.shape
            p = head(f).view(n, 3, 5 + CLASSES, h, w).permute(0, 1, 3, 4, 2).sigmoid()
            gx, gy = grid(h, w)
            a = torch.tensor(anchors, dtype=torch.float32).view(1, 3, 1, 1, 2)
            xy = (p[..., 0:2] * 2 - 0.5 + torch.stack((gx, gy), -1)) * stride
            wh = (p[..., 2:4] * 2) ** 2 * a
            out.append(torch.cat((xy, wh, p[..., 4:]), -1).view(n, -1, 5 + CLASSES))
        return torch.cat(out, 1)


class YoloV8Style(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
        self.boxes = torch.nn.ModuleList(torch.nn.Conv2d(c, 4, 1) for c in (16, 32, 32))
        self.classes = torch.nn.ModuleList(torch.nn.Conv2d(c, CLASSES, 1) for c in (16, 32, 32))

    def forward(self, x):
        out = []
        for f, box, cls, stride in zip(self.backbone(x), self.boxes, self.classes, STRIDES):
            n, _, h, w = f.shape
            gx, gy = grid(h, w)
            centre = torch.stack((gx + 0.5, gy + 0.5)).view(1, 2, h * w)
            d = torch.nn.functional.softplus(box(f)).view(n, 4, h * w) * 4  # left, top, right, bottom
            lt, rb = centre - d[:, 0:2], centre + d[:, 2:4]
            xywh = torch.cat(((lt + rb) / 2, rb - lt), 1) * stride
            out.append(torch.cat((xywh, cls(f).sigmoid().view(n, CLASSES, h * w)), 1))
        return torch.cat(out, 2)


def export(model, path):
    torch.manual_seed(0)
    for p in model.parameters():
        torch.nn.init.normal_(p, std=0.05)
    x = torch.rand(1, 3, 640, 640)
    torch.onnx.export(model.eval(), x, path, opset_version=13, input_names=["images"], output_names=["output0"],
                      do_constant_folding=True)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    export(YoloV5Style(), os.path.join(out, "yolov5_style.onnx"))
    export(YoloV8Style(), os.path.join(out, "yolov8_style.onnx"))


if __name__ == "__main__":
    main()
