"""busbw vs message size, one subplot per op, one line per config.

matplotlib (PNG) when importable; otherwise a small built-in SVG plotter.
"""

import math
import os
from xml.sax.saxutils import escape

from report import human_size

COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]


def _series(results, op, config):
    points = sorted(results[op].get(config, {}).items())
    return [(s, v["busbw"]) for s, v in points if v and v.get("busbw") is not None]


def plot_busbw(results, configs, path_png, title="", use_matplotlib=True):
    """Write the plot; return (path written, note).  The SVG goes next to
    path_png with a .svg suffix when matplotlib is not importable."""
    ops = [op for op in results if any(_series(results, op, c) for c in configs)]
    if not ops:
        return None, "no data to plot"
    if use_matplotlib:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            pass
        else:
            fig, axes = plt.subplots(1, len(ops), figsize=(6.5 * len(ops), 4.5), squeeze=False)
            for ax, op in zip(axes[0], ops):
                for i, c in enumerate(configs):
                    pts = _series(results, op, c)
                    if pts:
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".",
                                color=COLORS[i % len(COLORS)], label=c)
                ax.set_xscale("log", base=2)
                sizes = sorted({s for c in configs for s, _ in _series(results, op, c)})
                lo, hi = math.log2(sizes[0]), math.log2(sizes[-1])
                ticks = [2 ** e for e in range(math.ceil(lo), math.floor(hi) + 1, max(1, math.ceil((hi - lo) / 7)))]
                ax.set_xticks(ticks)
                ax.set_xticklabels([human_size(t) for t in ticks])
                ax.set_xlabel("message size (bytes)")
                ax.set_ylabel("busbw (GB/s)")
                ax.set_title(op)
                ax.grid(True, alpha=0.3)
                ax.legend()
            if title:
                fig.suptitle(title)
            fig.tight_layout()
            fig.savefig(path_png, dpi=120)
            plt.close(fig)
            return path_png, "plotted with matplotlib"
    path_svg = os.path.splitext(path_png)[0] + ".svg"
    with open(path_svg, "w") as fh:
        fh.write(_svg(results, configs, ops, title))
    return path_svg, "matplotlib not importable: wrote an SVG with the built-in plotter"


def _nice_step(top):
    raw = top / 5
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


def _svg(results, configs, ops, title):
    pw, ph, ml, mr, mt, mb = 460, 320, 60, 20, 50, 60
    width, height = pw * len(ops), ph + 10 + 18 * len(configs)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    if title:
        out.append(f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="14">{escape(title)}</text>')
    for k, op in enumerate(ops):
        x0, x1, y0, y1 = k * pw + ml, (k + 1) * pw - mr, ph - mb, mt
        series = {c: _series(results, op, c) for c in configs}
        sizes = [s for pts in series.values() for s, _ in pts]
        lo, hi = math.log2(min(sizes)), math.log2(max(sizes))
        hi = hi if hi > lo else lo + 1
        top = max([b for pts in series.values() for _, b in pts] + [0.01]) * 1.1
        step = _nice_step(top)

        def sx(s):
            return x0 + (math.log2(s) - lo) / (hi - lo) * (x1 - x0)

        def sy(b):
            return y0 - b / top * (y0 - y1)

        out.append(f'<text x="{(x0 + x1) / 2}" y="{y1 - 12}" text-anchor="middle" font-size="13">{escape(op)}</text>')
        out.append(f'<rect x="{x0}" y="{y1}" width="{x1 - x0}" height="{y0 - y1}" fill="none" stroke="black"/>')
        t = 0.0
        while t <= top:
            out.append(f'<line x1="{x0}" y1="{sy(t):.1f}" x2="{x1}" y2="{sy(t):.1f}" stroke="#ddd"/>')
            out.append(f'<text x="{x0 - 4}" y="{sy(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
            t += step
        tick_every = max(1, math.ceil((hi - lo) / 7))
        for e in range(math.ceil(lo), math.floor(hi) + 1, tick_every):
            out.append(f'<text x="{sx(2 ** e):.1f}" y="{y0 + 15}" text-anchor="middle">{human_size(2 ** e)}</text>')
        out.append(f'<text x="{(x0 + x1) / 2}" y="{y0 + 35}" text-anchor="middle">message size (log2)</text>')
        out.append(f'<text x="{x0 - 45}" y="{(y0 + y1) / 2}" transform="rotate(-90 {x0 - 45} {(y0 + y1) / 2})" '
                   f'text-anchor="middle">busbw (GB/s)</text>')
        for i, (c, pts) in enumerate(series.items()):
            if pts:
                coords = " ".join(f"{sx(s):.1f},{sy(b):.1f}" for s, b in pts)
                out.append(f'<polyline fill="none" stroke="{COLORS[i % len(COLORS)]}" stroke-width="2" '
                           f'points="{coords}"><title>{escape(c)}</title></polyline>')
    for i, c in enumerate(configs):
        y = ph + 18 * i
        out.append(f'<line x1="{ml}" y1="{y}" x2="{ml + 24}" y2="{y}" stroke="{COLORS[i % len(COLORS)]}" stroke-width="3"/>')
        out.append(f'<text x="{ml + 30}" y="{y + 4}">{escape(c)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
