"""busbw vs message size, one row per op: busbw (one line per config) and, beside it, the ratio
of the best Socket configuration's time to each tcpxr configuration's time at every size
(report.ratio_series(); > 1 = tcpxr faster, a horizontal line at 1.0). The ratio column is left
out when the run has no Socket or no tcpxr configuration.

matplotlib (PNG) when importable; otherwise a small built-in SVG plotter.
"""

import math
import os
from xml.sax.saxutils import escape

from report import human_size, ratio_series

COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]
RATIO_LABEL = "best Socket time / tcpxr time"


def _series(results, op, config):
    points = sorted(results[op].get(config, {}).items())
    return [(s, v["busbw"]) for s, v in points if v and v.get("busbw") is not None]


def _color(configs, config):
    return COLORS[configs.index(config) % len(COLORS)]


def _size_ticks(sizes):
    lo, hi = math.log2(min(sizes)), math.log2(max(sizes))
    return [2 ** e for e in range(math.ceil(lo), math.floor(hi) + 1, max(1, math.ceil((hi - lo) / 7)))]


def plot_busbw(results, configs, path_png, title="", use_matplotlib=True):
    """Write the plot; return (path written, note).  The SVG goes next to
    path_png with a .svg suffix when matplotlib is not importable."""
    ops = [op for op in results if any(_series(results, op, c) for c in configs)]
    if not ops:
        return None, "no data to plot"
    ratios = ratio_series(results, configs)
    if use_matplotlib:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            pass
        else:
            _matplotlib(plt, results, configs, ops, ratios, path_png, title)
            return path_png, "plotted with matplotlib"
    path_svg = os.path.splitext(path_png)[0] + ".svg"
    with open(path_svg, "w") as fh:
        fh.write(_svg(results, configs, ops, title, ratios))
    return path_svg, "matplotlib not importable: wrote an SVG with the built-in plotter"


def _matplotlib(plt, results, configs, ops, ratios, path_png, title):
    cols = 2 if ratios else 1
    fig, axes = plt.subplots(len(ops), cols, figsize=(6.5 * cols, 4.2 * len(ops)), squeeze=False)
    for row, op in enumerate(ops):
        ax = axes[row][0]
        sizes = []
        for c in configs:
            pts = _series(results, op, c)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", color=_color(configs, c), label=c)
                sizes += [p[0] for p in pts]
        _size_axis(ax, sizes)
        ax.set_ylabel("busbw (GB/s)")
        ax.set_title(f"{op}: busbw")
        ax.legend()
        if cols == 2:
            ax = axes[row][1]
            series = ratios.get(op, {})
            sizes = []
            for c, pts in series.items():
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", color=_color(configs, c),
                        label=f"{c} vs best Socket")
                sizes += [p[0] for p in pts]
            ax.axhline(1.0, color="grey", linestyle="--", linewidth=1)
            if sizes:
                _size_axis(ax, sizes)
                ax.legend()
            ax.set_ylim(bottom=0, top=max([1.2] + [r * 1.1 for pts in series.values() for _, r in pts]))
            ax.set_ylabel(RATIO_LABEL)
            ax.set_title(f"{op}: tcpxr vs the best Socket config at each size (> 1 = tcpxr faster)", fontsize=9)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path_png, dpi=120)
    plt.close(fig)


def _size_axis(ax, sizes):
    ax.set_xscale("log", base=2)
    ticks = _size_ticks(sizes)
    ax.set_xticks(ticks)
    ax.set_xticklabels([human_size(t) for t in ticks])
    ax.set_xlabel("message size (bytes)")
    ax.grid(True, alpha=0.3)


def _nice_step(top):
    raw = top / 5
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


PW, PH, ML, MR, MT, MB = 460, 320, 60, 20, 50, 60     # one SVG panel and its margins


def _svg_panel(out, x_off, y_off, title, series, colors, ylabel, *, hline=None, top_at_least=0.01):
    """One panel: lines {label: [(size, value)]} against log2 size, a horizontal line at `hline`."""
    x0, x1, y0, y1 = x_off + ML, x_off + PW - MR, y_off + PH - MB, y_off + MT
    sizes = [s for pts in series.values() for s, _ in pts]
    out.append(f'<text x="{(x0 + x1) / 2}" y="{y1 - 12}" text-anchor="middle" font-size="13">{escape(title)}</text>')
    out.append(f'<rect x="{x0}" y="{y1}" width="{x1 - x0}" height="{y0 - y1}" fill="none" stroke="black"/>')
    if not sizes:
        return
    lo, hi = math.log2(min(sizes)), math.log2(max(sizes))
    hi = hi if hi > lo else lo + 1
    top = max([v for pts in series.values() for _, v in pts] + [top_at_least]) * 1.1
    step = _nice_step(top)

    def sx(s):
        return x0 + (math.log2(s) - lo) / (hi - lo) * (x1 - x0)

    def sy(b):
        return y0 - b / top * (y0 - y1)

    t = 0.0
    while t <= top:
        out.append(f'<line x1="{x0}" y1="{sy(t):.1f}" x2="{x1}" y2="{sy(t):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{x0 - 4}" y="{sy(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
        t += step
    if hline is not None:
        out.append(f'<line x1="{x0}" y1="{sy(hline):.1f}" x2="{x1}" y2="{sy(hline):.1f}" stroke="grey" '
                   f'stroke-dasharray="6,4"><title>{hline:g}</title></line>')
    tick_every = max(1, math.ceil((hi - lo) / 7))
    for e in range(math.ceil(lo), math.floor(hi) + 1, tick_every):
        out.append(f'<text x="{sx(2 ** e):.1f}" y="{y0 + 15}" text-anchor="middle">{human_size(2 ** e)}</text>')
    out.append(f'<text x="{(x0 + x1) / 2}" y="{y0 + 35}" text-anchor="middle">message size (log2)</text>')
    out.append(f'<text x="{x0 - 45}" y="{(y0 + y1) / 2}" transform="rotate(-90 {x0 - 45} {(y0 + y1) / 2})" '
               f'text-anchor="middle">{escape(ylabel)}</text>')
    for label, pts in series.items():
        if pts:
            coords = " ".join(f"{sx(s):.1f},{sy(v):.1f}" for s, v in pts)
            out.append(f'<polyline fill="none" stroke="{colors[label]}" stroke-width="2" '
                       f'points="{coords}"><title>{escape(label)}</title></polyline>')


def _svg(results, configs, ops, title, ratios=None):
    ratios = ratios or {}
    cols = 2 if ratios else 1
    top_band = 24 if title else 0
    width, height = PW * cols, top_band + PH * len(ops) + 10 + 18 * len(configs)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>']
    if title:
        out.append(f'<text x="{width / 2}" y="16" text-anchor="middle" font-size="14">{escape(title)}</text>')
    colors = {c: _color(configs, c) for c in configs}
    for row, op in enumerate(ops):
        y_off = top_band + PH * row
        _svg_panel(out, 0, y_off, f"{op}: busbw", {c: _series(results, op, c) for c in configs}, colors,
                   "busbw (GB/s)")
        if cols == 2:
            series = {f"{c} / best Socket": pts for c, pts in ratios.get(op, {}).items()}
            ratio_colors = {f"{c} / best Socket": colors[c] for c in configs}
            _svg_panel(out, PW, y_off, f"{op}: tcpxr vs best Socket (> 1 = faster)", series, ratio_colors,
                       RATIO_LABEL, hline=1.0, top_at_least=1.2)
    legend_y = top_band + PH * len(ops)
    for i, c in enumerate(configs):
        y = legend_y + 18 * i
        out.append(f'<line x1="{ML}" y1="{y}" x2="{ML + 24}" y2="{y}" stroke="{colors[c]}" stroke-width="3"/>')
        out.append(f'<text x="{ML + 30}" y="{y + 4}">{escape(c)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
