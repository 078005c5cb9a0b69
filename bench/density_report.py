#!/usr/bin/python3
"""The table and chart of bench/density.sh from its results.jsonl.

    /usr/bin/python3 bench/density_report.py RESULTS.jsonl --cores N [--chart PNG]

Prints a markdown table: per workload and variant, Weave's capacity and the streams it kept up
with live, per core, the lateness of those streams' frames, and the ONNX Runtime peer's capacity
for the same workload run on every frame; then the lateness of the same classifier streams
without and with batching. The chart (matplotlib, when installed) shows streams
per core side by side.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('results')
    ap.add_argument('--cores', type=int, required=True)
    ap.add_argument('--chart')
    a = ap.parse_args()
    rows = [json.loads(line) for line in open(a.results) if line.strip()]
    peers = {r['workload']: r for r in rows if r['side'] == 'peer'}
    names = {'classify': 'classifier, 30 fps', 'ocr': 'OCR cascade, 5 fps'}
    print(f'| workload | weave | capacity (streams) | kept up live (streams) | per core | '
          f'lateness p50 / p99 (ms) | peer (streams, capacity) | weave live / peer |')
    print('|---|---|---:|---:|---:|---:|---:|---:|')
    bars = []
    for r in rows:
        if r['side'] != 'weave':
            continue
        p = peers.get(r['workload'])
        peer_streams = p['capacity_streams'] if p else None
        ratio = f"{r['live_streams'] / peer_streams:.1f}x" if peer_streams else '-'
        peer_text = f'{peer_streams:.1f}' if peer_streams is not None else '-'
        print(f"| {names.get(r['workload'], r['workload'])} | {r['variant']} | {r['capacity_streams']:.1f} | "
              f"{r['live_streams']} | {r['live_streams'] / a.cores:.1f} | "
              f"{r['late_ms_p50']:.0f} / {r['late_ms_p99']:.0f} | {peer_text} | {ratio} |")
        bars.append((f"{names.get(r['workload'], r['workload'])}\n{r['variant']}", r['live_streams'] / a.cores,
                     peer_streams / a.cores if peer_streams is not None and r['variant'] == 'every frame' else None))
    lat = [r for r in rows if r['side'] == 'latency']
    if lat:
        print()
        print('| classifier streams, live | batch-size | lateness p50 (ms) | lateness p99 (ms) |')
        print('|---:|---:|---:|---:|')
        for r in lat:
            print(f"| {r['streams']} | {r['batch_size']} | {r['late_ms_p50']:.1f} | {r['late_ms_p99']:.1f} |")
    if not a.chart:
        return 0
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        print('density_report: no matplotlib, no chart', file=sys.stderr)
        return 0
    fig, ax = plt.subplots(figsize=(10, 4.2))
    ys = list(range(len(bars)))
    ax.barh([y + 0.2 for y in ys], [b[1] for b in bars], height=0.38, color='#2b6cb0', label='Weave (kept up live)')
    peer_ys = [y - 0.2 for y, b in zip(ys, bars) if b[2] is not None]
    ax.barh(peer_ys, [b[2] for b in bars if b[2] is not None], height=0.38, color='#a0aec0',
            label='ONNX Runtime peer (capacity, every frame)')
    for y, b in zip(ys, bars):
        ax.text(b[1], y + 0.2, f' {b[1]:.1f}', va='center', fontsize=8)
        if b[2] is not None:
            ax.text(b[2], y - 0.2, f' {b[2]:.1f}', va='center', fontsize=8)
    ax.set_yticks(ys)
    ax.set_yticklabels([b[0] for b in bars], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f'1280x720 streams per core ({a.cores} cores)')
    ax.set_title('Camera streams one machine keeps up with (bench/density.sh)')
    ax.legend(loc='lower right', fontsize=8)
    fig.tight_layout()
    fig.savefig(a.chart, dpi=110)
    print(f'chart: {a.chart}', file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
