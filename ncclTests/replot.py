#!/usr/bin/env python3
"""Draws a run_nccl_tests.py record again: busbw and tcpxr's ratio to the best Socket tuning per
collective, from the <op>.<config>.txt outputs of one run's folder (e.g. unpacked from
docs/bench/<date>/raw.tar.xz).

  python3 ncclTests/replot.py DIR OUT.svg [--title TEXT]

Writes an SVG with the built-in plotter (no matplotlib needed), so the picture is the same on
every machine; the README shows these.
"""
import argparse
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import configs  # noqa: E402
import parse  # noqa: E402
import plotting  # noqa: E402


def results_of(directory):
    """{op: {config: {size: out_of_place}}} from DIR/<op>.<config>.txt, and the configs in order."""
    results, seen = {}, []
    for path in sorted(glob.glob(os.path.join(directory, "*.txt"))):
        name = os.path.basename(path)[: -len(".txt")]
        if name.endswith(".settings") or "." not in name:
            continue
        op, config = name.split(".", 1)
        with open(path, errors="replace") as fh:
            rows = parse.parse_nccl_tests(fh.read())["rows"]
        if rows:
            results.setdefault(op, {})[config] = {r["size"]: r["out_of_place"] for r in rows}
            if config not in seen:
                seen.append(config)
    known = list(configs.CONFIGS)
    return results, sorted(seen, key=lambda c: known.index(c) if c in known else len(known))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("out", help="the SVG to write")
    p.add_argument("--title", default="")
    a = p.parse_args(argv)
    results, runnable = results_of(a.dir)
    if not results:
        p.error(f"no nccl-tests outputs (<op>.<config>.txt) in {a.dir}")
    path, _ = plotting.plot_busbw(results, runnable, os.path.splitext(a.out)[0] + ".png", a.title,
                                  use_matplotlib=False)
    if path != a.out:
        os.replace(path, a.out)
    print(a.out)


if __name__ == "__main__":
    main()
