#!/usr/bin/env python3
"""Fold docs/bench's raw benchmark output into one results table and one archive per day.

    python3 docs/bench/compact.py [pack]          # pack new raw files, rewrite the tables
    python3 docs/bench/compact.py check           # rebuild the tables from the archives, compare
    python3 docs/bench/compact.py show 136 table  # one run's figures side by side
    python3 docs/bench/compact.py show 327 --median --bands 256,32K,256K,4M  # and each band's ratios
    python3 docs/bench/compact.py show 373 --median --steady --pair A,B  # A / B time in each pass
    python3 docs/bench/compact.py refs README.md docs/BENCHMARKS.md  # cited runs have records

What stays in git, per day (docs/bench/<date>/): every run's script.sh and the other small sources
a figure was made with (*.sh, *.py, *.c, *.cu, *.cpp, *.h, *.rs, *.patch, README.md), and the raw files
code in the repository reads (`KEEP_FILES`); `raw.tar.xz`, everything
else the runs wrote (nccl-tests output, settings, run.json, logs, CSVs, figures), paths relative to
the day's folder (`run136/table/all_reduce.tcpxr-host.txt`). Archives nested in a run's output
(`logs.tar.xz`) are unpacked into the day's archive in place (`run136/table/logs/...`). Built
libraries (*.so) are dropped: they are build output, and the commit that built them is recorded;
so are plots (*.png; the archives kept them until 2026-11-28): ncclTests/replot.py draws them
again from the outputs. A run.json keeps everything but each run's parsed `result`, a copy of the
nccl-tests output beside it (dropped on 2026-11-28: docs/bench went from 10.1 to 9.1 MB).

A new run is added by copying its output folder to docs/bench/<date>/runNN/ and running this
script: the day's archive is unpacked, the new files are laid over it, it is packed again
(deterministically: sorted names, fixed times and owners, xz -9) and the loose raw files are
removed. The tables are rewritten from the archives: `tests.csv.xz`, one row per nccl-tests output
(run, part, op, config, date, settings, machine, commit, ...), and `results.csv.xz`, one row per
message size of each (time, busbw, #wrong); the columns are explained in docs/bench/README.md.
"""
import argparse
import csv
import io
import json
import lzma
import os
import re
import shutil
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
RUN = re.compile(r"^run(\d+[a-z]?)(?:-|$)")
KEEP_EXT = (".sh", ".py", ".c", ".cu", ".cpp", ".h", ".rs", ".patch")
# Built libraries, and plots (ncclTests/replot.py draws a run's plot again from its outputs).
DROP_EXT = (".so", ".png")
ARCHIVE = "raw.tar.xz"
# Both tables are kept compressed: results.csv.xz was 3.2 MB as text on 2026-11-27 (0.3 as xz),
# tests.csv 0.71 MB on 2026-11-28 (0.04 as xz), and docs/bench stays under 10 MB. Each is read
# through this script, xzcat, or a csv reader over lzma.open.
TABLE = "results.csv.xz"
TESTS = "tests.csv.xz"
# tests.csv.xz: one row per nccl-tests output; results.csv.xz: one row per message size of each.
TEST_COLUMNS = [
    "run", "part", "op", "config", "date", "env", "ranks", "gpus", "iters", "cores", "nccl",
    "commit", "machine", "file",
]
RESULT_COLUMNS = [
    "run", "part", "op", "config", "size", "time_us", "busbw", "ip_time_us", "ip_busbw", "wrong",
]
# Runs that kept no machine.txt at their top, with the commit docs/BENCHMARKS.md named for them
# (at 63c4898; run 234 keeps one per part).
KNOWN_COMMITS = {"4": "fb50117", "10": "cfea574", "12": "aa9c6cd", "33a": "cbec443", "33b": "cbec443",
                 "33c": "cbec443", "234": "f243038"}
# One nccl-tests result row: size count type redop root, then out-of-place and in-place
# time algbw busbw #wrong (older builds print no root column).
ROW = re.compile(
    r"^\s*(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+(?:(-?\d+)\s+)?"
    r"(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$"
)


# Raw files that code in the repository reads, kept in git as well as in the archive.
KEEP_FILES = {
    "2026-11-23/run57/topo-dump.xml",  # ncclTests/test_fuse_topology.py's fixture
}


def keep(day, rel):
    """Whether a file of a day's folder stays in git beside the archive."""
    name = os.path.basename(rel)
    return (name.endswith(KEEP_EXT) or name == "README.md" or rel == ARCHIVE
            or f"{day}/{rel}" in KEEP_FILES)


def run_of(rel):
    """(run id, path of the run's folder or "") of a path relative to the day's folder."""
    first = rel.split("/")[0]
    m = RUN.match(first)
    if not m:
        return "", ""
    return m.group(1), (first if "/" in rel else "")


def run_key(run):
    m = re.match(r"(\d+)(.*)", run or "0")
    return int(m.group(1)), m.group(2)


def slim(path):
    """Drops each run's parsed `result` from run_nccl_tests.py's run.json at `path` (the nccl-tests
    output beside it holds the same figures); True if the file changed."""
    with open(path) as fh:
        doc = json.load(fh)
    runs = [r for r in doc.get("runs", []) if isinstance(r, dict) and "result" in r]
    for r in runs:
        del r["result"]
    if runs:
        with open(path, "w") as fh:
            json.dump(doc, fh, indent=1)
    return bool(runs)


def unpack(day_dir, tree):
    """The day's archive, then its loose raw files over it, into `tree`; returns the loose ones
    and whether the archive held what is no longer kept (`DROP_EXT`, a run.json's `result`), to
    pack it again."""
    path = os.path.join(day_dir, ARCHIVE)
    stale = False
    if os.path.exists(path):
        with tarfile.open(path, "r:xz") as t:
            t.extractall(tree, filter="data")
        for root, _, files in os.walk(tree):
            for f in files:
                if f.endswith(DROP_EXT):
                    os.remove(os.path.join(root, f))
                    print(f"  dropped {os.path.relpath(os.path.join(root, f), tree)} from {ARCHIVE}")
                    stale = True
                elif f == "run.json" and slim(os.path.join(root, f)):
                    stale = True
    loose = []
    for root, _, files in os.walk(day_dir):
        for f in files:
            full = os.path.join(root, f)
            rel = os.path.relpath(full, day_dir)
            if rel == ARCHIVE:
                continue
            if not keep(os.path.basename(day_dir), rel):
                loose.append(full)
            if f.endswith(DROP_EXT):
                print(f"  dropped {rel} (a built binary or a plot)")
                continue
            dst = os.path.join(tree, rel)
            if f.endswith(".tar.xz"):
                # A run's own log archive: unpacked in place, one level of archive in all.
                with tarfile.open(full, "r:xz") as t:
                    t.extractall(os.path.dirname(dst), filter="data")
                continue
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(full, dst)
            if f == "run.json":
                slim(dst)
    return loose, stale


def pack(tree, path):
    """Deterministic tar.xz of `tree`: sorted names, fixed time and owner, xz -9."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as t:
        entries = []
        for root, dirs, files in os.walk(tree):
            dirs.sort()
            for f in sorted(files):
                entries.append(os.path.relpath(os.path.join(root, f), tree))
        for rel in sorted(entries):
            info = t.gettarinfo(os.path.join(tree, rel), arcname=rel)
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            info.mode = 0o755 if info.mode & 0o100 else 0o644
            with open(os.path.join(tree, rel), "rb") as fh:
                t.addfile(info, fh)
    data = lzma.compress(buf.getvalue(), preset=9 | lzma.PRESET_EXTREME)
    old = open(path, "rb").read() if os.path.exists(path) else None
    if data != old:
        with open(path, "wb") as fh:
            fh.write(data)
    return len(data)


def text_open(path, mode="r"):
    """A table or raw file as text; `.xz` ones through lzma (written deterministically: xz -9,
    no timestamps in the format)."""
    if path.endswith(".xz"):
        return lzma.open(path, mode + "t", errors="replace", **({"preset": 9} if mode == "w" else {}))
    return open(path, mode, errors="replace")


def read(path):
    with text_open(path) as fh:
        return fh.read()


def machine_of(run_dir):
    """(machine, [commits]) from a run's machine.txt: '2xH200/32c' and the commit lines in order."""
    path = os.path.join(run_dir, "machine.txt")
    if not os.path.exists(path):
        return "", []
    gpus, model, cores, commits = 0, "", "", []
    for line in read(path).splitlines():
        m = re.match(r"GPU \d+: NVIDIA (\S+)", line)
        if m:
            gpus += 1
            model = m.group(1)
        elif re.fullmatch(r"\d+", line.strip()) and not cores:
            cores = line.strip()
        elif h := re.match(r"^(?:[\w-]+: )?([0-9a-f]{7,40})(?:\s|$|(\+))", line):
            # "<hash> <subject>" as commit.txt holds it, or "new: <hash> ..." as scripts label it;
            # "<hash>+<what>": that commit with changes on top, which the run's script describes
            commits.append(h.group(1)[:7] + (h.group(2) or ""))
        elif line.strip().startswith("(uncommitted") and commits:
            commits[-1] += "+"  # built from that commit with changes not yet committed
    machine = f"{gpus}x{model}" if gpus else "cpu"
    return machine + (f"/{cores}c" if cores else ""), commits


def commit_dirs(run_dir):
    """The plugin folders whose commit.txt the run's script printed into machine.txt, in order."""
    path = os.path.join(run_dir, "script.sh")
    if not os.path.exists(path):
        return []
    text = read(path)
    # A part whose script only runs another part's (run260b's: `exec bash "$(dirname "$0")/../
    # run260a/script.sh" b`) printed what that script prints.
    ran = re.search(r'^exec bash "\$\(dirname "\$0"\)/([^"]+/script\.sh)"', text, re.M)
    if ran and os.path.exists(os.path.join(run_dir, ran.group(1))):
        text = read(os.path.join(run_dir, ran.group(1)))
    m = re.search(r"cat ((?:\S*commit\.txt\s*)+)", text)
    found = [os.path.dirname(p) for p in m.group(1).split()] if m else []
    # Several plugin folders, each printed by a `cat` of its own ("new: $(cat a/commit.txt)";
    # "old: $(cat b/commit.txt)"), in the script's order.
    each = [os.path.dirname(p) for p in re.findall(r"\$\(cat (\S*commit\.txt)\)", text)]
    if len(each) > len(found):
        found = each
    # common.sh's start_run writes dist/commit.txt into machine.txt before the script's own lines
    # (where the run carried one: cat's complaint says it did not).
    machine = os.path.join(run_dir, "machine.txt")
    missing = os.path.exists(machine) and "cat: dist/commit.txt: No such file" in read(machine)
    if re.search(r"^start_run\b", text, re.M) and "dist" not in found and not missing:
        found.insert(0, "dist")
    return found


def settings_of(path):
    """(extra env, plugin folder) from run_nccl_tests.py's <op>.<config>.settings.txt."""
    if not os.path.exists(path):
        return "", ""
    env, plugin = [], ""
    for line in read(path).splitlines():
        m = re.match(r"--env extras(?: \(every run\))?:\s*(.*?)\s*$", line)
        if m and m.group(1) != "none":
            env += [e for e in m.group(1).split() if not e.startswith("NCCL_DEBUG_SUBSYS=")]
        m = re.match(r"\s+NCCL_NET_PLUGIN=(\S+)", line)
        if m and m.group(1) != "none":
            plugin = os.path.dirname(m.group(1))
    return " ".join(env), plugin


def cores_of(dirpath):
    """{output file name: CPU cores busy} from run_nccl_tests.py's run.json beside the outputs."""
    path = os.path.join(dirpath, "run.json")
    out = {}
    if os.path.exists(path):
        try:
            for r in json.load(open(path)).get("runs", []):
                if r.get("output") and r.get("cpu_cores") is not None:
                    out[os.path.basename(r["output"])] = r["cpu_cores"]
        except (ValueError, AttributeError):
            pass
    return out


def nccl_of(text):
    m = re.search(r"nccl-library=(\d+)", text)
    if not m:
        return ""
    code = int(m.group(1))
    return f"{code // 10000}.{code // 100 % 100}.{code % 100}"


def parse_output(text):
    """[(op, ranks, gpus, iters, row fields)] of every nccl-tests table in one output."""
    op, ranks, buses, iters, rows = "", 0, set(), "", []
    for line in text.splitlines():
        m = re.search(r"Collective test starting: (\w+?)_perf", line)
        if m:
            op, ranks, buses = m.group(1), 0, set()
            continue
        m = re.search(r"warmup iters: \d+ iters: (\d+)", line)
        if m:
            iters = m.group(1)
            continue
        m = re.match(r"#\s+Rank\s+\d+ .* device\s+\d+ \[([^\]]+)\]", line)
        if m:
            ranks += 1
            buses.add(m.group(1))
            continue
        m = ROW.match(line)
        if m:
            rows.append((op, ranks, len(buses), iters, m.groups()))
    return rows


def table_of(day, tree):
    """(tests, results) rows of one day's unpacked tree."""
    tests, results = [], []
    for root, dirs, files in os.walk(tree):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith((".txt", ".log")) or f.endswith(".settings.txt"):
                continue
            full = os.path.join(root, f)
            rel = os.path.relpath(full, tree)
            text = read(full)
            if "Collective test starting" not in text and "#wrong" not in text:
                continue
            found = parse_output(text)
            if not found:
                continue
            run, run_rel = run_of(rel)
            run_dir = os.path.join(tree, run_rel) if run_rel else ""
            machine, commits = machine_of(run_dir) if run_dir else ("", [])
            dirs_ = commit_dirs(run_dir) if run_dir else []
            part = os.path.dirname(os.path.relpath(rel, run_rel)) if run_rel else ""
            stem = f[: -len(".txt")] if f.endswith(".txt") else f
            env, plugin = settings_of(os.path.join(root, stem + ".settings.txt"))
            if not run_rel:
                stem = RUN.sub("", stem)
            commit = commits[0] if commits else KNOWN_COMMITS.get(run, "")
            if plugin and dirs_ and len(commits) == len(dirs_):
                for d, c in zip(dirs_, commits):
                    if plugin.endswith("/" + d) or plugin == d:
                        commit = c
                if not plugin.endswith("/dist"):
                    env = " ".join(x for x in (env, "plugin=" + plugin.split("/main/")[-1]) if x)
            cores = cores_of(root).get(f, "")
            nccl = nccl_of(text)
            seen = set()
            for op, ranks, gpus, iters, g in found:
                config = stem
                if op and config.startswith(op + "."):
                    config = config[len(op) + 1:]
                key = (run, part, op, config)
                if key not in seen:
                    seen.add(key)
                    if not machine and gpus:
                        model = re.search(r"NVIDIA (\S+)", text)
                        machine_row = f"{gpus}x{model.group(1) if model else 'GPU'}"
                    else:
                        machine_row = machine
                    tests.append({
                        "run": run, "part": part, "op": op, "config": config, "date": day,
                        "env": env, "ranks": ranks, "gpus": gpus, "iters": iters, "cores": cores,
                        "nccl": nccl, "commit": commit, "machine": machine_row, "file": rel,
                    })
                size, _count, _type, _redop, _root, t, _ab, bb, w, it, _iab, ibb, iw = g
                counts = [int(x) for x in (w, iw) if x.lstrip("-").isdigit()]
                results.append({
                    "run": run, "part": part, "op": op, "config": config, "size": size,
                    "time_us": t, "busbw": bb, "ip_time_us": it, "ip_busbw": ibb,
                    "wrong": str(sum(counts)) if counts else "",
                })
    return tests, results


def prune(day_dir, loose):
    for f in loose:
        os.remove(f)
    for root, dirs, files in os.walk(day_dir, topdown=False):
        if root != day_dir and not os.listdir(root):
            os.rmdir(root)


def write_csv(path, columns, rows, check):
    """Write (or with `check` compare) one table; returns whether it matched or was written."""
    out = io.StringIO()
    w = csv.DictWriter(out, columns, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    name = os.path.basename(path)
    if check:
        same = os.path.exists(path) and read(path) == out.getvalue()
        print(f"{name}: {'matches' if same else 'DIFFERS from'} the archives ({len(rows)} rows)")
        return same
    with text_open(path, "w") as fh:
        fh.write(out.getvalue())
    print(f"{name}: {len(rows)} rows, {len(out.getvalue()) / 1e6:.2f} MB ({os.path.getsize(path) / 1e6:.2f} MB on disk)")
    return True


def build(bench, check):
    days = sorted(d for d in os.listdir(bench) if DAY.match(d))
    tests, results = [], []
    for day in days:
        day_dir = os.path.join(bench, day)
        with tempfile.TemporaryDirectory() as tree:
            if check:
                with tarfile.open(os.path.join(day_dir, ARCHIVE), "r:xz") as t:
                    t.extractall(tree, filter="data")
                loose, stale = [], False
            else:
                loose, stale = unpack(day_dir, tree)
            day_tests, day_results = table_of(day, tree)
            tests += day_tests
            results += day_results
            if loose or stale:
                size = pack(tree, os.path.join(day_dir, ARCHIVE))
                prune(day_dir, loose)
                print(f"{day}: {len(loose)} raw files into {ARCHIVE} ({size / 1e6:.2f} MB)")
            print(f"{day}: {len(day_tests)} nccl-tests outputs, {len(day_results)} rows")
    key = lambda r: (run_key(r["run"]), r["part"], r["op"], r["config"])  # noqa: E731
    keys = [key(t) for t in tests]
    if len(set(keys)) != len(keys):
        print("warning: outputs share a (run, part, op, config) key", file=sys.stderr)
    tests.sort(key=key)
    results.sort(key=key)  # stable: sizes keep their order within an output
    ok = write_csv(os.path.join(bench, TESTS), TEST_COLUMNS, tests, check)
    ok &= write_csv(os.path.join(bench, TABLE), RESULT_COLUMNS, results, check)
    return 0 if ok else 1


# A pass of run_nccl_tests.py --repeat (or of a script's own alternations): a part named rN, or
# ending in /rN. `show --median` folds a run's passes into one table ("r*").
PASS = re.compile(r"(?:(.*)/)?[rs]\d+")


# A launch of a run script's own loop (runs 393 on): an output at the run's top named
# RANKS-OP-VARIANT-rN.log (or -sN.log), one launch of VARIANT in round N. `show --median` folds
# them as passes too: config VARIANT, pass rN, one table per rank count.
LAUNCH = re.compile(r"(\d+)-\w+?-(.+)-([rs]\d+)\.log")
# Socket's tunings as run_nccl_tests.py names them (socket, socket-2x2) or run scripts do (s2x2).
SOCKET = re.compile(r"socket.*|s\dx\d")


def as_launch(row):
    """A launch's row as a pass of its variant (see LAUNCH): (part, config, ranks); else None."""
    m = LAUNCH.fullmatch(row["config"])
    if not m:
        return None
    part = (row["part"] + "/" if row["part"] else "") + m.group(3)
    return part, m.group(2), m.group(1)


def pass_group(part):
    """'r2' -> 'r*', 'table/r2' -> 'table/r*', 's3' -> 's*', anything else unchanged."""
    m = PASS.fullmatch(part)
    return part if not m else (m.group(1) + "/" if m.group(1) else "") + part.rsplit("/", 1)[-1][0] + "*"


def human(size):
    """A size as the docs write it: 8 B, 32 KiB, 512 MiB."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift} {unit}"
    return f"{size} B"


def parse_size(text):
    """'256' -> 256, '32K' -> 32768, '4M', '1G': binary units, as run_nccl_tests.py reads them."""
    m = re.fullmatch(r"(\d+)([KMG]?)", text.strip().upper())
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (accepted: digits with K, M or G)")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def band_lines(ratios, tops):
    """The README's band cells for one config's {size: ratio}: each band (sizes up to each of
    `tops`, inclusive, and the rest) as its lowest-highest ratio, and the sizes below 1.0."""
    bands, lo = [], 0
    for top in list(tops) + [None]:
        sizes = [z for z in sorted(ratios) if z > lo and (top is None or z <= top)]
        if sizes:
            rs = [ratios[z] for z in sizes]
            span = human(sizes[0]) if len(sizes) == 1 else f"{human(sizes[0])} - {human(sizes[-1])}"
            low, high = min(rs), max(rs)
            bands.append(f"{span}: {low:.2f}" + (f"-{high:.2f}" if f"{high:.2f}" != f"{low:.2f}" else ""))
        lo = top if top is not None else lo
    # Below 1.0 as the cells print it: 0.997 is 1.00, not a loss.
    below = [f"{human(z)} {r:.2f}" for z, r in sorted(ratios.items()) if z and round(r, 2) < 1.0]
    return bands, below


def show(bench, run, part, op, median=False, steady=False, bands=None, pair=None, spread=False, pool=None):
    """Print one run's results side by side: time per config, and Socket's best / each tcpxr's.
    With `median`, a run's passes (parts rN) are one table of each config's median pass per size
    (the lower median for an even count), as run_nccl_tests.py --repeat tables them. An output
    of several cycles (nccl-tests -N) counts its first cycle only, or with `steady` its later
    cycles only (their lower median; pooled over the passes with `median`), as
    run_nccl_tests.py --cycles tables them. With `bands` (upper sizes, inclusive), each tcpxr
    config's ratios are also summed up per band, as README's tables give them. With `pair`
    (two configs A, B), each size's A / B time in every pass, and in how many passes A took less
    time: what "faster in every pass" in the docs rests on. With `spread` (and Socket tunings in
    the run), each tcpxr config's ratio is also given pass by pass, as its lowest-highest: the
    best Socket tuning's time in that pass over the config's. A run script's launches
    (RANKS-OP-VARIANT-rN.log, see LAUNCH) are passes too under `median`: each variant's median
    launch per size, one table per rank count. With `pool` (configs of one library run under
    several names, as run 440 ran main four times) and Socket tunings in the run: per size, the
    best of those configs' medians against the best tuning's (both the least of several samples),
    and every pass of those configs pooled against every pass of every tuning (only a fair figure
    where the tunings run alike: up to 128 B, NCCL 2.27+ sends inline whatever the tuning)."""
    rows = [r for r in csv.DictReader(text_open(os.path.join(bench, TABLE)))
            if r["run"] == run and (part is None or r["part"] == part)
            and (op is None or r["op"] == op)]
    if not rows:
        print(f"no rows for run {run}" + (f" part {part}" if part is not None else ""))
        return 1
    groups = {}
    for r in rows:
        launch = as_launch(r) if median else None
        if launch:
            r = dict(r, part=launch[0], config=launch[1])
        key = (pass_group(r["part"]) if median else r["part"], r["op"], launch[2] if launch else None)
        groups.setdefault(key, []).append(r)
    for (p, o, ranks), rs in groups.items():
        configs = list(dict.fromkeys(r["config"] for r in rs))
        socket = [c for c in configs if SOCKET.fullmatch(c)]
        others = [c for c in configs if c not in socket]
        times = {}
        for r in rs:
            # Within one output, a size's rows in cycle order (nccl-tests -N prints the sweep once a cycle).
            times.setdefault(int(r["size"]), {}).setdefault(r["config"], {}).setdefault(r["part"], []).append(
                float(r["time_us"]))
        by = {size: {c: lower_median([v for cycles in t.values() for v in counted(cycles, steady)]) if steady
                     else lower_median([counted(cycles, steady)[0] for cycles in t.values()])
                     for c, t in per.items()}
              for size, per in times.items()}
        # In round order: r2 before r10.
        passes = sorted({r["part"] for r in rs},
                        key=lambda q: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", q)])
        # Outputs of one cycle have no later ones: --steady then counts that cycle, and says so.
        several = any(len(cycles) > 1 for per in times.values() for t in per.values() for cycles in t.values())
        print(f"run {run} {p or '.'} {o}" + (f" at {ranks} ranks" if ranks else "") + ": time_us (out of place)"
              + ((", the later cycles of each output (nccl-tests -N)" if several
                  else ", one cycle per output (no later cycles to count)") if steady else "")
              + (f", median of {len(passes)} passes ({', '.join(passes)})" if len(passes) > 1 else "")
              + (f"; ratio = best of {len(socket)} Socket tunings' time / config's time" if socket else ""))
        head = ["size"] + configs + ([f"{c}/best" for c in others] if socket else [])
        if socket and spread:
            head += [f"{c}/best per pass" for c in others]
        print(" ".join(f"{h:>12}" for h in head))
        for size in sorted(by):
            t = by[size]
            cells = [f"{t[c]:12.2f}" if c in t else f"{'-':>12}" for c in configs]
            best = min((t[c] for c in socket if c in t), default=None)
            if socket:
                cells += [f"{best / t[c]:12.2f}" if best and c in t and t[c] else f"{'-':>12}"
                          for c in others]
            if socket and spread:
                cells += [f"{per_pass_range(times[size], socket, c, passes, steady):>12}"
                          for c in others]
            print(f"{size:>12} " + " ".join(cells))
        if socket and bands:
            for c in others:
                ratios = {}
                for size, t in by.items():
                    best = min((t[s] for s in socket if s in t), default=None)
                    if best and t.get(c):
                        ratios[size] = best / t[c]
                cells, below = band_lines(ratios, bands)
                print(f"  {c}/best by band: " + "; ".join(cells))
                print(f"  {c}/best below 1.0: " + (", ".join(below) if below else "none"))
        if pair:
            a, b = pair
            print(f"  {a} / {b}, time per pass ({', '.join(passes)}):")
            for size in sorted(times):
                per = times[size]
                both = [q for q in passes if q in per.get(a, {}) and q in per.get(b, {})]
                rs = [lower_median(counted(per[a][q], steady)) / lower_median(counted(per[b][q], steady)) for q in both]
                if rs:
                    print(f"  {size:>12} " + " ".join(f"{r:.2f}" for r in rs)
                          + f"   less time in {sum(r < 1 for r in rs)} of {len(rs)}")
        if pool and socket:
            mine = [c for c in pool if c in configs]
            print(f"  {', '.join(mine)} as one library against the Socket tunings: the best median over"
                  " the best median, then every pass pooled (lower medians):")
            print(" ".join(f"{h:>12}" for h in ["size", "best", "best Socket", "ratio", "pooled", "pooled Socket",
                                                 "ratio"]))
            for size in sorted(by):
                t = by[size]
                ours = [t[c] for c in mine if c in t]
                theirs = [t[c] for c in socket if c in t]
                p_ours, p_theirs = pooled(times[size], mine, steady), pooled(times[size], socket, steady)
                if not (ours and theirs and p_ours and p_theirs):
                    continue
                cells = [min(ours), min(theirs), min(theirs) / min(ours), p_ours, p_theirs, p_theirs / p_ours]
                print(f"{size:>12} " + " ".join(f"{v:12.2f}" for v in cells))
        print()
    return 0


def lower_median(values):
    """The median of `values`, the lower of the two middle ones for an even count."""
    return sorted(values)[(len(values) - 1) // 2]


def counted(cycles, steady):
    """The cycles of one output a figure counts: the later ones with `steady` (where there are
    any), else the first."""
    return cycles[1:] if steady and len(cycles) > 1 else cycles[:1]


def pooled(per, configs, steady):
    """The lower median of every pass of `configs` at one size (`per`: {config: {pass: cycles}})."""
    values = [v for c in configs for cycles in per.get(c, {}).values() for v in counted(cycles, steady)]
    return lower_median(values) if values else None


def per_pass_range(per, socket, config, passes, steady):
    """'lo-hi' of the best Socket tuning's time over `config`'s in each pass that ran both ('-'
    where none did). `per`: {config: {pass: cycles}} of one size."""
    ratios = []
    for q in passes:
        mine = per.get(config, {}).get(q)
        theirs = [lower_median(counted(per[s][q], steady)) for s in socket if q in per.get(s, {})]
        if mine and theirs and lower_median(counted(mine, steady)):
            ratios.append(min(theirs) / lower_median(counted(mine, steady)))
    if not ratios:
        return "-"
    return f"{min(ratios):.2f}-{max(ratios):.2f}"


def cited_runs(text):
    """Run ids a document cites: 'run 136', 'runs 114, 115 and 117', 'run 33a'; of a range
    ('runs 89-136') its two ends, since not every number between names a run."""
    # A suffix names a rerun (33a-33d, 271a); "x" never does, so "run 357, 2x H200" cites 357 only.
    run_id = r"\d{1,3}[a-w]?(?![\w.])"
    runs = set()
    for m in re.finditer(rf"\bruns? ({run_id}(?:(?:-|, | and | or ){run_id})*)", text):
        for part in re.split(r", | and | or ", m.group(1)):
            runs.update(part.split("-"))
    return runs


def refs(bench, docs):
    """Every run the documents cite, checked for a script (runs 37 on) and archived raw output."""
    days = sorted(d for d in os.listdir(bench) if DAY.match(d))
    archived, scripts = {}, set()
    for day in days:
        with tarfile.open(os.path.join(bench, day, ARCHIVE), "r:xz") as t:
            for name in t.getnames():
                run, _ = run_of(name)
                if run:
                    archived.setdefault(run, day)
        for entry in os.listdir(os.path.join(bench, day)):
            if os.path.exists(os.path.join(bench, day, entry, "script.sh")):
                scripts.add(run_of(entry)[0])
    missing = 0
    for doc in docs:
        for run in sorted(cited_runs(read(doc)), key=run_key):
            lacks = [what for what, ok in (("raw output", run in archived),
                                           ("script.sh", run in scripts or run_key(run)[0] < 37)) if not ok]
            if lacks:
                missing += 1
                print(f"{doc}: run {run} has no {' or '.join(lacks)}")
    print(f"{len(docs)} documents checked; {missing} cited runs lack a record")
    return 1 if missing else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", default=HERE, help="the docs/bench folder")
    sub = ap.add_subparsers(dest="cmd")
    sub.add_parser("pack", help="pack loose raw files into the archives, rewrite the tables (default)")
    sub.add_parser("check", help="rebuild the tables from the archives alone; fail if they differ")
    sh = sub.add_parser("show", help="print one run's results side by side")
    sh.add_argument("run", help="run id, e.g. 136")
    sh.add_argument("part", nargs="?", help="the run's sub-folder, e.g. table ('' for none)")
    sh.add_argument("--op", help="all_reduce, sendrecv, ...")
    sh.add_argument("--median", action="store_true",
                    help="fold the run's passes (parts rN, as run_nccl_tests.py --repeat writes them, or "
                         "a run script's launches RANKS-OP-VARIANT-rN.log) into each config's median "
                         "pass per size")
    sh.add_argument("--steady", action="store_true",
                    help="outputs of several cycles (nccl-tests -N, run_nccl_tests.py --cycles): the median "
                         "of the later cycles instead of the first")
    sh.add_argument("--bands", type=lambda v: [parse_size(x) for x in v.split(",")],
                    help="with Socket tunings in the run: each tcpxr config's ratio per band of sizes, "
                         "the bands ending at these sizes (inclusive) and the rest, e.g. 256,32K,256K,4M; "
                         "and the sizes below 1.0")
    sh.add_argument("--pair", type=lambda v: v.split(","), metavar="A,B",
                    help="two configs: A's time / B's in each pass per size, and in how many passes A "
                         "took less time (with --median, e.g. --pair tcpxr-host,tcpxr-host+off)")
    sh.add_argument("--spread", action="store_true",
                    help="with Socket tunings in the run: each tcpxr config's ratio pass by pass too, as "
                         "its lowest-highest (the best Socket tuning of that pass over the config)")
    sh.add_argument("--pool", type=lambda v: v.split(","), metavar="A,B,...",
                    help="configs of one library under several names (with --median, e.g. --pool "
                         "c104,c104b,c104c,c104d): the best of their medians over the best Socket "
                         "tuning's, and all their passes pooled against all the tunings'")
    rf = sub.add_parser("refs", help="check that every run the documents cite has its record")
    rf.add_argument("docs", nargs="+", help="e.g. README.md docs/BENCHMARKS.md")
    args = ap.parse_args()
    if args.cmd == "refs":
        return refs(args.bench, args.docs)
    if args.cmd == "show":
        if args.pair is not None and len(args.pair) != 2:
            ap.error("--pair takes two configs, A,B")
        return show(args.bench, args.run, args.part, args.op, args.median, args.steady, args.bands, args.pair,
                    args.spread, args.pool)
    return build(args.bench, args.cmd == "check")


if __name__ == "__main__":
    sys.exit(main())
