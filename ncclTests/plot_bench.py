#!/usr/bin/env python3
"""Plots tcpxr-bench's CSV (size_bytes,config,gbps): bandwidth against message size, one line per
configuration (tcpxr with 1/2/4/8 stripes and the plain one-connection TCP baseline of the same
run), and bandwidth against stripe count at a few sizes.

  target/release/tcpxr-bench --sizes 4K:1G --stripes 1,2,4,8 --csv bench.csv
  python3 ncclTests/plot_bench.py bench.csv bench.png [--title TEXT]
"""

import argparse
import csv
import re
import sys
from collections import defaultdict


def load(path):
    data = defaultdict(dict)
    with open(path) as fh:
        for row in csv.DictReader(fh):
            data[row["config"]][int(row["size_bytes"])] = float(row["gbps"])
    return data


def stripes_of(config):
    m = re.match(r"tcpxr x(\d+)$", config)
    return int(m.group(1)) if m else None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("csv")
    p.add_argument("png")
    p.add_argument("--title", default="tcpxr-bench: two endpoints over loopback through ncclNetPlugin_v12")
    a = p.parse_args(argv)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    data = load(a.csv)
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.5))
    for config, points in sorted(data.items(), key=lambda kv: (stripes_of(kv[0]) or 99, kv[0])):
        sizes = sorted(points)
        left.plot(sizes, [points[s] for s in sizes], marker="o", markersize=3, label=config,
                  linestyle="--" if stripes_of(config) is None else "-")
    left.set_xscale("log", base=2)
    left.set_xlabel("message size (bytes)")
    left.set_ylabel("GB/s, one direction")
    left.set_title("bandwidth against message size")
    left.grid(alpha=0.3)
    left.legend()
    striped = {stripes_of(c): pts for c, pts in data.items() if stripes_of(c)}
    counts = sorted(striped)
    common = sorted(set.intersection(*(set(p) for p in striped.values()))) if striped else []
    for size in [s for s in common if s in (1 << 20, 16 << 20, 256 << 20)] or common[-3:]:
        right.plot(counts, [striped[c][size] for c in counts], marker="o", label=f"{size >> 20} MiB")
    base = data.get("tcp x1")
    if base and common:
        right.axhline(max(base.values()), color="grey", linestyle="--", linewidth=1, label="1 TCP connection (best)")
    right.set_xlabel("stripes per connection")
    right.set_ylabel("GB/s, one direction")
    right.set_xticks(counts)
    right.set_title("bandwidth against stripe count")
    right.grid(alpha=0.3)
    right.legend()
    fig.suptitle(a.title)
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)
    print(f"wrote {a.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
