#!/usr/bin/python3
"""Exports the models Weave tests and benchmarks with, using Debian's PyTorch.

All weights are random but seeded, so every machine with the same Debian packages makes the same
files. Nothing is downloaded.

  export_models.py OUT_DIR [--only NAME ...]

Writes, in OUT_DIR:
  resnet18.onnx, mobilenet_v2.onnx, squeezenet1_1.onnx   torchvision architectures, opset 13,
                                                          input "input" [batch,3,224,224], output "logits"
  lstm_lm.onnx     embedding + LSTM + linear: inputs tokens int64 [batch,seq], h0, c0 [1,batch,H];
                   outputs next_logits [batch,seq,V], h1, c1
  resnet18_backbone.onnx, resnet18_head.onnx
                   resnet18.onnx cut in two (same weights): the backbone maps "input"
                   [batch,3,224,224] to the last feature map "features" [batch,512,7,7]; the head
                   (average pool + fc) maps "features" to "logits" [batch,1000]. Chained they
                   compute what resnet18.onnx computes (pipelines/chain.sh shows it).
  lstm_step.onnx   the embedding + LSTM of the same network (same weights): tokens, h0, c0 -> h1, c1
  lstm_output.onnx the linear head of the same network: h [1,batch,H] -> logits [1,batch,V]
                   (the two halves share every param with lstm_lm.onnx byte for byte; their
                   exporter-generated initializer names are renamed to lstm.W/R/B, head.weight_t)
"""
import argparse
import os
import sys
import warnings

import torch
import torchvision


def calibrated_torchvision(name):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None)
    # Random weights shrink activations layer by layer (mobilenet_v2's logits end near 1e-9,
    # below any useful tolerance). Calibrating BatchNorm statistics on random batches keeps
    # every layer's output at a unit-ish scale, so reference comparisons mean something.
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.momentum = None  # cumulative average over the calibration batches
    model.train()
    with torch.no_grad():
        for _ in range(2):
            model(torch.randn(8, 3, 224, 224))
    return model.eval()


def export_torchvision(name, path):
    model = calibrated_torchvision(name)
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(model, x, path, opset_version=13, input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, do_constant_folding=True)


class ResnetBackbone(torch.nn.Module):
    """resnet18 up to (not including) the average pool: the last feature map."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        n = self.net
        x = n.maxpool(n.relu(n.bn1(n.conv1(x))))
        return n.layer4(n.layer3(n.layer2(n.layer1(x))))


class ResnetHead(torch.nn.Module):
    """resnet18's average pool and classifier."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, features):
        return self.net.fc(torch.flatten(self.net.avgpool(features), 1))


def export_resnet18_part(part, path):
    # The same seeded, calibrated network as resnet18.onnx, so the two halves chained give its output.
    net = calibrated_torchvision("resnet18")
    if part == "backbone":
        module, x, names = ResnetBackbone(net), torch.randn(1, 3, 224, 224), (["input"], ["features"])
    else:
        module, x, names = ResnetHead(net), torch.randn(1, 512, 7, 7), (["features"], ["logits"])
    torch.onnx.export(module.eval(), x, path, opset_version=13, input_names=names[0], output_names=names[1],
                      dynamic_axes={names[0][0]: {0: "batch"}, names[1][0]: {0: "batch"}},
                      do_constant_folding=True)


class LstmLM(torch.nn.Module):
    def __init__(self, vocab=256, embed=64, hidden=128):
        super().__init__()
        self.embedding = torch.nn.Embedding(vocab, embed)
        self.lstm = torch.nn.LSTM(embed, hidden, batch_first=True)
        self.head = torch.nn.Linear(hidden, vocab)

    def forward(self, tokens, h0, c0):
        x = self.embedding(tokens)
        y, (h1, c1) = self.lstm(x, (h0, c0))
        return self.head(y), h1, c1


def export_lstm(path):
    torch.manual_seed(0)
    model = LstmLM().eval()
    tokens = torch.randint(0, 256, (1, 8), dtype=torch.int64)
    h0 = torch.zeros(1, 1, 128)
    c0 = torch.zeros(1, 1, 128)
    torch.onnx.export(model, (tokens, h0, c0), path, opset_version=13,
                      input_names=["tokens", "h0", "c0"], output_names=["next_logits", "h1", "c1"],
                      dynamic_axes={"tokens": {0: "batch", 1: "seq"}, "h0": {1: "batch"}, "c0": {1: "batch"},
                                    "next_logits": {0: "batch", 1: "seq"}, "h1": {1: "batch"}, "c1": {1: "batch"}})


class LstmStep(torch.nn.Module):
    """One recurrent step of LstmLM without its head: the state update only."""

    def __init__(self, lm):
        super().__init__()
        self.embedding = lm.embedding
        self.lstm = lm.lstm

    def forward(self, tokens, h0, c0):
        _, (h1, c1) = self.lstm(self.embedding(tokens), (h0, c0))
        return h1, c1


class LstmOutput(torch.nn.Module):
    """LstmLM's head alone. h is 3-D like the LSTM output, so the exporter writes the same
    MatMul (with the same transposed weight) + Add as in lstm_lm.onnx rather than a Gemm."""

    def __init__(self, lm):
        super().__init__()
        self.head = lm.head

    def forward(self, h):
        return self.head(h)


def seeded_lstm_lm():
    # Same seed and construction order as export_lstm, hence the very same weights.
    torch.manual_seed(0)
    return LstmLM().eval()


def rename_generated(path, names):
    """Gives the exporter's numbered initializer names ("onnx::LSTM_98") stable names, chosen by
    (op type, input index) of the node that reads them."""
    import onnx
    model = onnx.load(path)
    g = model.graph
    rename = {}
    for node in g.node:
        for i, inp in enumerate(node.input):
            new = names.get((node.op_type, i))
            if new and inp.startswith("onnx::"):
                rename[inp] = new
    for init in g.initializer:
        init.name = rename.get(init.name, init.name)
    for node in g.node:
        for i, inp in enumerate(node.input):
            if inp in rename:
                node.input[i] = rename[inp]
    onnx.checker.check_model(model)
    onnx.save(model, path)


def export_lstm_step(path):
    model = LstmStep(seeded_lstm_lm()).eval()
    tokens = torch.randint(0, 256, (1, 1), dtype=torch.int64)
    h0 = torch.zeros(1, 1, 128)
    c0 = torch.zeros(1, 1, 128)
    torch.onnx.export(model, (tokens, h0, c0), path, opset_version=13,
                      input_names=["tokens", "h0", "c0"], output_names=["h1", "c1"],
                      dynamic_axes={"tokens": {0: "batch", 1: "seq"}, "h0": {1: "batch"}, "c0": {1: "batch"},
                                    "h1": {1: "batch"}, "c1": {1: "batch"}})
    rename_generated(path, {("LSTM", 1): "lstm.W", ("LSTM", 2): "lstm.R", ("LSTM", 3): "lstm.B"})


def export_lstm_output(path):
    model = LstmOutput(seeded_lstm_lm()).eval()
    h = torch.zeros(1, 1, 128)
    torch.onnx.export(model, (h,), path, opset_version=13, input_names=["h"], output_names=["logits"],
                      dynamic_axes={"h": {1: "batch"}, "logits": {1: "batch"}})
    rename_generated(path, {("MatMul", 1): "head.weight_t"})


MODELS = {
    "resnet18": lambda p: export_torchvision("resnet18", p),
    "mobilenet_v2": lambda p: export_torchvision("mobilenet_v2", p),
    "squeezenet1_1": lambda p: export_torchvision("squeezenet1_1", p),
    "lstm_lm": export_lstm,
    "resnet18_backbone": lambda p: export_resnet18_part("backbone", p),
    "resnet18_head": lambda p: export_resnet18_part("head", p),
    "lstm_step": export_lstm_step,
    "lstm_output": export_lstm_output,
}


def main():
    # The exporter's advice about LSTM batch sizes and constant shapes does not apply here.
    warnings.filterwarnings("ignore")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--only", nargs="*", default=None, choices=sorted(MODELS))
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    for name in args.only or MODELS:
        path = os.path.join(args.out_dir, name + ".onnx")
        if os.path.exists(path):
            continue
        tmp = path + ".tmp"
        MODELS[name](tmp)
        os.replace(tmp, path)
        print(f"exported {path} ({os.path.getsize(path) / 1e6:.1f} MB)", file=sys.stderr)


if __name__ == "__main__":
    main()
