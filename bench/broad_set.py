#!/usr/bin/python3
"""Exports the broad benchmark set: architectures nobody tuned Weave for, random but seeded
weights (Debian's PyTorch and torchvision 0.14; nothing is downloaded). Speed on them is what
docs/performance.md reports against ONNX Runtime; correctness is checked by the same bench run
(weave's outputs against ONNX Runtime's).

  bench/broad_set.py OUT_DIR [--only NAME ...]     export (models already in OUT_DIR are kept)
  bench/broad_set.py --list                       one line per model: NAME DIMS

Each model is written as OUT_DIR/NAME.onnx with one input "input" of the shape below (batch 1)
and its outputs. BatchNorm statistics are calibrated on random batches so that activations keep
a unit-ish scale through random layers (outputs of tens of layers of random weights otherwise
vanish or explode, and comparisons against a peer mean nothing).

  yolov5s_style        640x640  CSP backbone, SPPF, PAN neck, Detect decode <1,25200,85> (Conv+BN+SiLU)
  yolov8n_style        640x640  C2f blocks (Split), SPPF, decoupled head, DFL softmax decode <1,84,8400>
  ssdlite_mnv3         320x320  SSDlite320-MobileNetV3 backbone and heads (boxes and class logits)
  efficientnet_b0      224x224  MBConv, squeeze-excitation, SiLU, depthwise 3x3/5x5
  mobilenet_v3_large   224x224  HardSwish, HardSigmoid squeeze-excitation, depthwise 3x3/5x5
  convnext_tiny        224x224  7x7 depthwise, LayerNorm, GELU, layer scale
  regnet_y_400mf       224x224  grouped 3x3, squeeze-excitation
  resnext50_32x4d      224x224  grouped 3x3 (32 groups), bottlenecks
  vit_tiny             224x224  patch 16, 6 layers, dim 192, 3 heads: attention, LayerNorm, GELU
  swin_t               224x224  shifted-window attention, LayerNorm, GELU
  deeplabv3_mnv3       320x320  dilated convolutions, ASPP, bilinear Resize
  lraspp_mnv3          320x320  MobileNetV3 with a lite segmentation head
  shufflenet_v2        224x224  channel shuffle (Reshape/Transpose), depthwise
  densenet121          224x224  dense concatenations
  mnasnet1_0           224x224  inverted residuals, depthwise 5x5
  googlenet            224x224  Inception branches, concatenations
  transformer_encoder  [1,128,256] a 2-layer transformer encoder (d 256, 4 heads, GELU)
"""
import argparse
import os
import sys
import warnings

import torch
import torchvision

warnings.filterwarnings("ignore")


def calibrate(model, shape, batches=2, batch=4):
    """BatchNorm statistics from random batches (see the top)."""
    has_bn = False
    for m in model.modules():
        if isinstance(m, (torch.nn.BatchNorm2d, torch.nn.BatchNorm1d)):
            m.momentum = None
            has_bn = True
    if has_bn:
        model.train()
        with torch.no_grad():
            for _ in range(batches):
                model(torch.randn(batch, *shape[1:]))
    return model.eval()


# ---- a YOLOv5s-style detector (the architecture, written here; no weights of anyone's) ----

class ConvBnSiLU(torch.nn.Module):
    def __init__(self, cin, cout, k=1, s=1):
        super().__init__()
        self.conv = torch.nn.Conv2d(cin, cout, k, s, (k - 1) // 2, bias=False)
        self.bn = torch.nn.BatchNorm2d(cout)
        self.act = torch.nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Bottleneck(torch.nn.Module):
    """Two convolutions (the first k x k: 1 in YOLOv5, 3 in YOLOv8) and the shortcut."""

    def __init__(self, c, shortcut=True, k=1):
        super().__init__()
        self.cv1 = ConvBnSiLU(c, c, k)
        self.cv2 = ConvBnSiLU(c, c, 3)
        self.add = shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C3(torch.nn.Module):
    """CSP bottleneck with three convolutions."""

    def __init__(self, cin, cout, n=1, shortcut=True):
        super().__init__()
        h = cout // 2
        self.cv1 = ConvBnSiLU(cin, h)
        self.cv2 = ConvBnSiLU(cin, h)
        self.cv3 = ConvBnSiLU(2 * h, cout)
        self.m = torch.nn.Sequential(*(Bottleneck(h, shortcut) for _ in range(n)))

    def forward(self, x):
        return self.cv3(torch.cat((self.m(self.cv1(x)), self.cv2(x)), 1))


class SPPF(torch.nn.Module):
    def __init__(self, cin, cout, k=5):
        super().__init__()
        h = cin // 2
        self.cv1 = ConvBnSiLU(cin, h)
        self.cv2 = ConvBnSiLU(h * 4, cout)
        self.m = torch.nn.MaxPool2d(k, 1, k // 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.m(x)
        y2 = self.m(y1)
        return self.cv2(torch.cat((x, y1, y2, self.m(y2)), 1))


class YoloV5sStyle(torch.nn.Module):
    """YOLOv5s's layer plan (width 0.5, depth 0.33) with its Detect head's decode."""

    anchors = ((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119), (116, 90, 156, 198, 373, 326))
    strides = (8, 16, 32)

    def __init__(self, classes=80):
        super().__init__()
        self.nc = classes
        self.b0 = ConvBnSiLU(3, 32, 6, 2)
        self.b1 = torch.nn.Sequential(ConvBnSiLU(32, 64, 3, 2), C3(64, 64, 1))
        self.b2 = torch.nn.Sequential(ConvBnSiLU(64, 128, 3, 2), C3(128, 128, 2))
        self.b3 = torch.nn.Sequential(ConvBnSiLU(128, 256, 3, 2), C3(256, 256, 3))
        self.b4 = torch.nn.Sequential(ConvBnSiLU(256, 512, 3, 2), C3(512, 512, 1), SPPF(512, 512))
        self.h1 = ConvBnSiLU(512, 256)
        self.h2 = C3(512, 256, 1, False)
        self.h3 = ConvBnSiLU(256, 128)
        self.h4 = C3(256, 128, 1, False)
        self.h5 = ConvBnSiLU(128, 128, 3, 2)
        self.h6 = C3(256, 256, 1, False)
        self.h7 = ConvBnSiLU(256, 256, 3, 2)
        self.h8 = C3(512, 512, 1, False)
        self.up = torch.nn.Upsample(scale_factor=2, mode="nearest")
        self.detect = torch.nn.ModuleList(torch.nn.Conv2d(c, 3 * (5 + classes), 1) for c in (128, 256, 512))

    def forward(self, x):
        p3 = self.b2(self.b1(self.b0(x)))
        p4 = self.b3(p3)
        p5 = self.b4(p4)
        t5 = self.h1(p5)
        t4 = self.h3(self.h2(torch.cat((self.up(t5), p4), 1)))
        o3 = self.h4(torch.cat((self.up(t4), p3), 1))
        o4 = self.h6(torch.cat((self.h5(o3), t4), 1))
        o5 = self.h8(torch.cat((self.h7(o4), t5), 1))
        out = []
        for f, head, stride, anchors in zip((o3, o4, o5), self.detect, self.strides, self.anchors):
            n, _, h, w = f.shape
            p = head(f).view(n, 3, 5 + self.nc, h, w).permute(0, 1, 3, 4, 2).sigmoid()
            ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32),
                                    indexing="ij")
            a = torch.tensor(anchors, dtype=torch.float32).view(1, 3, 1, 1, 2)
            xy = (p[..., 0:2] * 2 - 0.5 + torch.stack((xs, ys), -1)) * stride
            wh = (p[..., 2:4] * 2) ** 2 * a
            out.append(torch.cat((xy, wh, p[..., 4:]), -1).view(n, -1, 5 + self.nc))
        return torch.cat(out, 1)


# ---- a YOLOv8n-style detector (the architecture, written here; no weights of anyone's) ----

class C2f(torch.nn.Module):
    """CSP bottleneck with two convolutions: the first one's output split in halves, each
    bottleneck reading the last part, all parts joined."""

    def __init__(self, cin, cout, n=1, shortcut=True):
        super().__init__()
        self.c = cout // 2
        self.cv1 = ConvBnSiLU(cin, 2 * self.c)
        self.cv2 = ConvBnSiLU((2 + n) * self.c, cout)
        self.m = torch.nn.ModuleList(Bottleneck(self.c, shortcut, 3) for _ in range(n))

    def forward(self, x):
        y = list(self.cv1(x).split((self.c, self.c), 1))
        y.extend(m(y[-1]) for m in self.m)
        return self.cv2(torch.cat(y, 1))


class YoloV8nStyle(torch.nn.Module):
    """YOLOv8n's layer plan (width 0.25, depth 0.33), its decoupled head and the distribution
    focal loss decode (a softmax over 16 bins per box side) to boxes and class scores."""

    strides = (8, 16, 32)
    bins = 16

    def __init__(self, classes=80):
        super().__init__()
        self.nc = classes
        self.b0 = torch.nn.Sequential(ConvBnSiLU(3, 16, 3, 2), ConvBnSiLU(16, 32, 3, 2), C2f(32, 32, 1))
        self.b1 = torch.nn.Sequential(ConvBnSiLU(32, 64, 3, 2), C2f(64, 64, 2))
        self.b2 = torch.nn.Sequential(ConvBnSiLU(64, 128, 3, 2), C2f(128, 128, 2))
        self.b3 = torch.nn.Sequential(ConvBnSiLU(128, 256, 3, 2), C2f(256, 256, 1), SPPF(256, 256))
        self.n1 = C2f(384, 128, 1, False)
        self.n2 = C2f(192, 64, 1, False)
        self.n3 = ConvBnSiLU(64, 64, 3, 2)
        self.n4 = C2f(192, 128, 1, False)
        self.n5 = ConvBnSiLU(128, 128, 3, 2)
        self.n6 = C2f(384, 256, 1, False)
        self.up = torch.nn.Upsample(scale_factor=2, mode="nearest")
        box = 4 * self.bins
        self.box = torch.nn.ModuleList(
            torch.nn.Sequential(ConvBnSiLU(c, 64, 3), ConvBnSiLU(64, 64, 3), torch.nn.Conv2d(64, box, 1))
            for c in (64, 128, 256))
        self.cls = torch.nn.ModuleList(
            torch.nn.Sequential(ConvBnSiLU(c, 80, 3), ConvBnSiLU(80, 80, 3), torch.nn.Conv2d(80, classes, 1))
            for c in (64, 128, 256))
        self.register_buffer("proj", torch.arange(self.bins, dtype=torch.float32).view(1, self.bins, 1, 1))

    def forward(self, x):
        p3 = self.b1(self.b0(x))
        p4 = self.b2(p3)
        p5 = self.b3(p4)
        t4 = self.n1(torch.cat((self.up(p5), p4), 1))
        o3 = self.n2(torch.cat((self.up(t4), p3), 1))
        o4 = self.n4(torch.cat((self.n3(o3), t4), 1))
        o5 = self.n6(torch.cat((self.n5(o4), p5), 1))
        n = x.shape[0]
        feats, anchors, strides = [], [], []
        for f, box, cls, stride in zip((o3, o4, o5), self.box, self.cls, self.strides):
            _, _, h, w = f.shape
            feats.append(torch.cat((box(f), cls(f)), 1).view(n, 4 * self.bins + self.nc, -1))
            ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32) + 0.5,
                                    torch.arange(w, dtype=torch.float32) + 0.5, indexing="ij")
            anchors.append(torch.stack((xs, ys), 0).view(2, -1))
            strides.append(torch.full((1, h * w), float(stride)))
        y = torch.cat(feats, 2)
        a = y.shape[2]
        box, cls = y.split((4 * self.bins, self.nc), 1)
        # Each side's distance: the expectation of a softmax over its bins.
        dist = torch.nn.functional.conv2d(box.view(n, 4, self.bins, a).transpose(2, 1).softmax(1), self.proj)
        lt, rb = dist.view(n, 4, a).chunk(2, 1)
        anchor = torch.cat(anchors, 1).unsqueeze(0)
        xy1, xy2 = anchor - lt, anchor + rb
        boxes = torch.cat(((xy1 + xy2) / 2, xy2 - xy1), 1) * torch.cat(strides, 1)
        return torch.cat((boxes, cls.sigmoid()), 1)


class SsdLiteHeads(torch.nn.Module):
    """SSDlite320-MobileNetV3's backbone and heads, without the box decoding and NMS of torchvision."""

    def __init__(self):
        super().__init__()
        m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)
        self.backbone, self.head = m.backbone, m.head

    def forward(self, x):
        out = self.head(list(self.backbone(x).values()))
        return out["bbox_regression"], out["cls_logits"]


class Segmentation(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def vit_tiny():
    from torchvision.models.vision_transformer import VisionTransformer
    return VisionTransformer(image_size=224, patch_size=16, num_layers=6, num_heads=3, hidden_dim=192,
                             mlp_dim=768, num_classes=1000)


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, activation="gelu", batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 2)

    def forward(self, x):
        return self.encoder(x)


def tv(name, **kw):
    return lambda: getattr(torchvision.models, name)(weights=None, **kw)


# name -> (constructor, input shape, opset)
MODELS = {
    "yolov5s_style": (YoloV5sStyle, (1, 3, 640, 640), 13),
    "yolov8n_style": (YoloV8nStyle, (1, 3, 640, 640), 13),
    "ssdlite_mnv3": (SsdLiteHeads, (1, 3, 320, 320), 13),
    "efficientnet_b0": (tv("efficientnet_b0"), (1, 3, 224, 224), 13),
    "mobilenet_v3_large": (tv("mobilenet_v3_large"), (1, 3, 224, 224), 13),
    "convnext_tiny": (tv("convnext_tiny"), (1, 3, 224, 224), 13),
    "regnet_y_400mf": (tv("regnet_y_400mf"), (1, 3, 224, 224), 13),
    "resnext50_32x4d": (tv("resnext50_32x4d"), (1, 3, 224, 224), 13),
    "vit_tiny": (vit_tiny, (1, 3, 224, 224), 14),
    "swin_t": (tv("swin_t"), (1, 3, 224, 224), 14),
    "deeplabv3_mnv3": (lambda: Segmentation(torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
        weights=None, weights_backbone=None, aux_loss=False)), (1, 3, 320, 320), 13),
    "lraspp_mnv3": (lambda: Segmentation(torchvision.models.segmentation.lraspp_mobilenet_v3_large(
        weights=None, weights_backbone=None)), (1, 3, 320, 320), 13),
    "shufflenet_v2": (tv("shufflenet_v2_x1_0"), (1, 3, 224, 224), 13),
    "densenet121": (tv("densenet121"), (1, 3, 224, 224), 13),
    "mnasnet1_0": (tv("mnasnet1_0"), (1, 3, 224, 224), 13),
    "googlenet": (tv("googlenet", aux_logits=False, init_weights=True), (1, 3, 224, 224), 13),
    "transformer_encoder": (Encoder, (1, 128, 256), 14),
}


def export(name, out):
    make, shape, opset = MODELS[name]
    torch.manual_seed(0)
    model = calibrate(make(), shape)
    x = torch.randn(*shape)
    path = os.path.join(out, name + ".onnx")
    # With gradients on, PyTorch's fused transformer fast path (not exportable) stays off.
    torch.onnx.export(model, x, path, opset_version=opset, input_names=["input"], do_constant_folding=True)
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        for name, (_, shape, _) in MODELS.items():
            print(name, "x".join(map(str, shape)))
        return 0
    if not a.out:
        ap.error("OUT_DIR is required (or --list)")
    os.makedirs(a.out, exist_ok=True)
    for name in a.only or MODELS:
        if name not in MODELS:
            print("unknown model", name, file=sys.stderr)
            return 2
        if os.path.exists(os.path.join(a.out, name + ".onnx")):
            continue
        print("exporting", name, flush=True)
        export(name, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
