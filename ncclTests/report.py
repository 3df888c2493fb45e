"""Sizes, and the side-by-side comparison written as summary.md / summary.csv.

Results are kept as  results[op][config][size_bytes] = {"busbw": GB/s, "time_us": us}
(out-of-place numbers for nccl-tests).  Socket configurations ("socket", "socket-*") are the
baselines (and their variants, "socket+LABEL").  Every tcpxr-* config is compared, at each size, with the best baseline of the same
run at that size: the one with the lowest time, which is also the one with the highest busbw
(same size and op), but stays exact at small sizes where nccl-tests prints busbw as 0.00.
Ratio = best Socket time / tcpxr time = tcpxr busbw / best Socket busbw: > 1 means tcpxr is
faster.  summary.csv also keeps one busbw ratio column per (tcpxr, Socket) pair.
"""

import csv
import os
import re

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


def baselines(configs):
    """NCCL Socket configurations among `configs`, in their order."""
    # A variant (BASE+LABEL) is classed by its base: socket+x is a Socket tuning too.
    return [c for c in configs if c.partition("+")[0] == "socket" or c.startswith("socket-")]


def tcpxr_configs(configs):
    return [c for c in configs if c.startswith("tcpxr")]


def ratio_pairs(configs):
    return [(t, b) for t in tcpxr_configs(configs) for b in baselines(configs)]


def _ratio(a, b):
    return a / b if a is not None and b and a > 0 else None


def best_baseline(time_us, configs):
    """The Socket configuration with the lowest time at one size (the first in `configs` on a
    tie), or None."""
    timed = [(time_us[c], c) for c in baselines(configs) if time_us.get(c)]
    return min(timed, key=lambda tc: tc[0])[1] if timed else None


def comparison(results, configs):
    """{op: [{"size", "busbw": {cfg: v}, "time_us": {cfg: v}, "ratios": {"t/b": busbw ratio},
              "best": best Socket config or None, "vs_best": {tcpxr cfg: ratio to it}}]}"""
    table = {}
    for op, per_config in results.items():
        sizes = sorted({s for c in configs for s in per_config.get(c, {})})
        rows = []
        for size in sizes:
            cell = {c: per_config.get(c, {}).get(size) for c in configs}
            busbw = {c: (v["busbw"] if v else None) for c, v in cell.items()}
            time_us = {c: (v["time_us"] if v else None) for c, v in cell.items()}
            ratios = {f"{t}/{b}": _ratio(busbw[t], busbw[b]) for t, b in ratio_pairs(configs)}
            best = best_baseline(time_us, configs)
            vs_best = {t: _ratio(time_us[best], time_us[t]) if best else None for t in tcpxr_configs(configs)}
            rows.append({"size": size, "busbw": busbw, "time_us": time_us, "ratios": ratios,
                         "best": best, "vs_best": vs_best})
        table[op] = rows
    return table


def ratio_series(results, configs):
    """What the ratio plot draws: {op: {tcpxr config: [(size, best Socket time / tcpxr time)]}},
    at every size where both were measured, the best Socket configuration chosen at each size
    (best_baseline(); > 1 = tcpxr faster). Empty when the run has no Socket or no tcpxr config."""
    if not (baselines(configs) and tcpxr_configs(configs)):
        return {}
    out = {}
    for op, rows in comparison(results, configs).items():
        series = {t: [(r["size"], r["vs_best"][t]) for r in rows if r["vs_best"][t] is not None]
                  for t in tcpxr_configs(configs)}
        series = {t: pts for t, pts in series.items() if pts}
        if series:
            out[op] = series
    return out


def _f(v, fmt="{:.2f}"):
    return "-" if v is None else fmt.format(v)


def markdown(results, configs, title, notes=(), failures=()):
    lines = [f"# {title}", ""] + [f"{n}  " for n in notes] + [""]
    ours = tcpxr_configs(configs)
    compare = bool(ours and baselines(configs))
    for op, rows in comparison(results, configs).items():
        if not rows:
            continue
        lines += [f"## {op}: out-of-place busbw (GB/s)", ""]
        if compare:
            lines += ["tcpxr/best: against the best Socket configuration at that size in this run (named in "
                      "'best Socket'; lowest time = highest busbw), > 1 = tcpxr faster.", ""]
        head = ["size"] + list(configs) + (["best Socket"] + [f"{t}/best" for t in ours] if compare else [])
        lines += ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
        for r in rows:
            cells = [human_size(r["size"])] + [_f(r["busbw"][c]) for c in configs]
            if compare:
                cells += [r["best"] or "-"] + [_f(r["vs_best"][t]) for t in ours]
            lines.append("| " + " | ".join(cells) + " |")
        first = rows[0]
        times = ", ".join(f"{c} {_f(first['time_us'][c])}" for c in configs)
        rel = ""
        if compare and first["best"]:
            rel = (f" (time ratios to the best Socket, {first['best']}, < 1 = tcpxr faster: "
                   + ", ".join(f"{t} {_f(_ratio(first['time_us'][t], first['time_us'][first['best']]))}"
                               for t in ours) + ")")
        lines += ["", f"{human_size(first['size'])} time (us): {times}{rel}", ""]
    if failures:
        lines += ["## FAILED", ""] + [f"- {f}" for f in failures] + [""]
    return "\n".join(lines)


def write_csv(path, results, configs):
    """One row per (op, size): busbw and time of every config, the busbw ratio of every
    (tcpxr, Socket) pair ("tcpxr-host/socket-4x4"), the best Socket config at that size
    ("best_socket") and each tcpxr config's ratio to it ("tcpxr-host/best_socket")."""
    pairs = [f"{t}/{b}" for t, b in ratio_pairs(configs)]
    ours = tcpxr_configs(configs) if baselines(configs) else []
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["op", "size_bytes"] + [f"busbw_{c}" for c in configs]
                   + [f"time_us_{c}" for c in configs] + pairs
                   + (["best_socket"] + [f"{t}/best_socket" for t in ours] if ours else []))
        for op, rows in comparison(results, configs).items():
            for r in rows:
                w.writerow([op, r["size"]] + [_f(r["busbw"][c], "{}") for c in configs]
                           + [_f(r["time_us"][c], "{}") for c in configs]
                           + [_f(r["ratios"][p], "{:.4f}") for p in pairs]
                           + ([r["best"] or "-"] + [_f(r["vs_best"][t], "{:.4f}") for t in ours] if ours else []))


def write_summary(out_dir, results, configs, title, notes=(), failures=()):
    """Write summary.md and summary.csv; return the markdown text."""
    text = markdown(results, configs, title, notes, failures)
    with open(os.path.join(out_dir, "summary.md"), "w") as fh:
        fh.write(text)
    write_csv(os.path.join(out_dir, "summary.csv"), results, configs)
    return text
