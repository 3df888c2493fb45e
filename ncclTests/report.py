"""Sizes, and the side-by-side comparison written as summary.md / summary.csv.

Results are kept as  results[op][config][size_bytes] = {"busbw": GB/s, "time_us": us}
(out-of-place numbers for nccl-tests).  Ratios compare every tcpxr-* config with
each baseline present (socket-4x4 first, then socket): > 1 means tcpxr is faster.
"""

import csv
import os
import re

BASELINES = ("socket-4x4", "socket")
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text):
    """"8", "64K", "512M", "1G" (binary units, as nccl-tests' -b/-e) -> bytes."""
    m = re.fullmatch(r"(\d+)\s*([KMG]?)(?:i?B)?", str(text).strip(), re.IGNORECASE)
    if not m:
        raise ValueError(f"bad size {text!r} (use e.g. 8, 64K, 512M, 1G)")
    return int(m.group(1)) * _UNITS[m.group(2).upper()]


def human_size(n):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def doubling(min_bytes, max_bytes):
    """Sizes min, 2*min, ... <= max (nccl-tests -f 2)."""
    if min_bytes <= 0 or max_bytes < min_bytes:
        raise ValueError("need 0 < min <= max")
    out, size = [], min_bytes
    while size <= max_bytes:
        out.append(size)
        size *= 2
    return out


def ratio_pairs(configs):
    return [(t, b) for t in configs if t.startswith("tcpxr") for b in BASELINES if b in configs]


def _ratio(a, b):
    return a / b if a is not None and b and a > 0 else None


def comparison(results, configs):
    """{op: [{"size", "busbw": {cfg: v}, "time_us": {cfg: v}, "ratios": {"t/b": v}}]}"""
    table = {}
    for op, per_config in results.items():
        sizes = sorted({s for c in configs for s in per_config.get(c, {})})
        rows = []
        for size in sizes:
            cell = {c: per_config.get(c, {}).get(size) for c in configs}
            busbw = {c: (v["busbw"] if v else None) for c, v in cell.items()}
            time_us = {c: (v["time_us"] if v else None) for c, v in cell.items()}
            ratios = {f"{t}/{b}": _ratio(busbw[t], busbw[b]) for t, b in ratio_pairs(configs)}
            rows.append({"size": size, "busbw": busbw, "time_us": time_us, "ratios": ratios})
        table[op] = rows
    return table


def _f(v, fmt="{:.2f}"):
    return "-" if v is None else fmt.format(v)


def markdown(results, configs, title, notes=(), failures=()):
    lines = [f"# {title}", ""] + [f"{n}  " for n in notes] + [""]
    pairs = [f"{t}/{b}" for t, b in ratio_pairs(configs)]
    for op, rows in comparison(results, configs).items():
        if not rows:
            continue
        lines += [f"## {op}: out-of-place busbw (GB/s)", ""]
        head = ["size"] + list(configs) + pairs
        lines += ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
        for r in rows:
            cells = [human_size(r["size"])] + [_f(r["busbw"][c]) for c in configs]
            cells += [_f(r["ratios"][p]) for p in pairs]
            lines.append("| " + " | ".join(cells) + " |")
        first = rows[0]
        times = ", ".join(f"{c} {_f(first['time_us'][c])}" for c in configs)
        rel = ", ".join(f"{t}/{b} {_f(_ratio(first['time_us'][t], first['time_us'][b]))}"
                        for t, b in ratio_pairs(configs))
        lines += ["", f"{human_size(first['size'])} time (us): {times}" + (f" (time ratios: {rel})" if rel else ""), ""]
    if failures:
        lines += ["## FAILED", ""] + [f"- {f}" for f in failures] + [""]
    return "\n".join(lines)


def write_csv(path, results, configs):
    pairs = [f"{t}/{b}" for t, b in ratio_pairs(configs)]
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["op", "size_bytes"] + [f"busbw_{c}" for c in configs]
                   + [f"time_us_{c}" for c in configs] + pairs)
        for op, rows in comparison(results, configs).items():
            for r in rows:
                w.writerow([op, r["size"]] + [_f(r["busbw"][c], "{}") for c in configs]
                           + [_f(r["time_us"][c], "{}") for c in configs]
                           + [_f(r["ratios"][p], "{:.4f}") for p in pairs])


def write_summary(out_dir, results, configs, title, notes=(), failures=()):
    """Write summary.md and summary.csv; return the markdown text."""
    text = markdown(results, configs, title, notes, failures)
    with open(os.path.join(out_dir, "summary.md"), "w") as fh:
        fh.write(text)
    write_csv(os.path.join(out_dir, "summary.csv"), results, configs)
    return text
