#!/usr/bin/python3
"""FLOPs of one inference of an ONNX model: 2 x the multiply-accumulates of every Conv, Gemm and
MatMul (other operators are not counted), with shapes from ONNX shape inference.

  model_flops.py MODEL.onnx [--shape NAME=1x3x224x224 ...]

--shape fixes an input's dims (symbolic ones, like a batch dim, must be fixed to count). Prints
one JSON line: flops, macs, and per operator type and per node the MACs. Debian's python3-onnx.
"""
import argparse
import json
import math
import sys

import onnx
from onnx import shape_inference


def dims_of(value_info):
    t = value_info.type.tensor_type
    if not t.HasField('shape'):
        return None
    out = []
    for d in t.shape.dim:
        if not d.HasField('dim_value'):
            return None
        out.append(d.dim_value)
    return out


def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def node_macs(node, shape):
    """MACs of one node; shape(name) gives a tensor's dims or None."""
    if node.op_type == 'Conv':
        x, w, y = shape(node.input[0]), shape(node.input[1]), shape(node.output[0])
        if not (x and w and y):
            raise ValueError('Conv %s: unknown shapes' % node.name)
        # every output element: (Cin / group) x kernel MACs; w is [Cout, Cin/group, k...]
        return math.prod(y) * math.prod(w[1:])
    if node.op_type == 'Gemm':
        a, y = shape(node.input[0]), shape(node.output[0])
        if not (a and y):
            raise ValueError('Gemm %s: unknown shapes' % node.name)
        k = a[0] if attr(node, 'transA', 0) else a[1]
        return math.prod(y) * k
    if node.op_type == 'MatMul':
        a, y = shape(node.input[0]), shape(node.output[0])
        if not (a and y):
            raise ValueError('MatMul %s: unknown shapes' % node.name)
        return math.prod(y) * a[-1]
    return 0


def count(path, fixed):
    model = onnx.load(path)
    g = model.graph
    inits = {i.name for i in g.initializer}
    for inp in g.input:
        if inp.name in inits:
            continue
        if inp.name in fixed:
            dims = inp.type.tensor_type.shape.dim
            if len(dims) != len(fixed[inp.name]):
                raise ValueError('--shape %s: rank %d, the model says %d' % (inp.name, len(fixed[inp.name]), len(dims)))
            for d, v in zip(dims, fixed[inp.name]):
                d.Clear()
                d.dim_value = v
    model = shape_inference.infer_shapes(model)
    g = model.graph
    shapes = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        shapes[vi.name] = dims_of(vi)
    for i in g.initializer:
        shapes[i.name] = list(i.dims)
    by_op, by_node, total = {}, [], 0
    for node in g.node:
        m = node_macs(node, shapes.get)
        if m:
            by_op[node.op_type] = by_op.get(node.op_type, 0) + m
            by_node.append({'node': node.name, 'op': node.op_type, 'macs': m})
            total += m
    return {'model': path, 'inputs': {k: v for k, v in fixed.items()}, 'macs': total, 'flops': 2 * total,
            'macs_by_op': by_op, 'nodes': by_node}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('model')
    ap.add_argument('--shape', action='append', default=[])
    a = ap.parse_args()
    fixed = {}
    for s in a.shape:
        name, _, dims = s.partition('=')
        fixed[name] = [int(d) for d in dims.split('x')]
    try:
        r = count(a.model, fixed)
    except (ValueError, onnx.onnx_cpp2py_export.shape_inference.InferenceError) as e:
        print('model_flops: %s: %s' % (a.model, e), file=sys.stderr)
        sys.exit(1)
    print(json.dumps(r))


if __name__ == '__main__':
    main()
