"""Parsers for nccl-tests output and NCCL_DEBUG=INFO logs.

parse_nccl_tests(text): the result table, footers and version lines printed by
nccl-tests (v2.19.x format: src/util.cu), e.g. all_reduce_perf, sendrecv_perf.

check_transport(log_text, expected): which network NCCL really used, from the
INFO lines of NCCL 2.28 (src/plugin/net.cc, src/init.cc, src/transport/net.cc):

  NCCL INFO NET/Plugin: Loaded net plugin tcpxr (v11)
  NCCL INFO Assigned NET plugin tcpxr to comm
  NCCL INFO Using network tcpxr
  NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/tcpxr/0/GDRDMA
  NCCL INFO Using NCCL_NET_DEVICE_UNPACK net plugin version 7   (src/plugin/net.cc,
      ncclNetCheckDeviceVersion: the plugin reports NCCL_NET_DEVICE_UNPACK, and NCCL's own
      kernel copies received data out of the plugin's bounce buffers)

tcpxr_stats(log_text) / stats_summary(stats): the counters tcpxr logs for each
connection when it closes with NCCL_TCPXR_STATS=1 (src/engine/mod.rs, Stats::report):

  host:pid:tid [0] NCCL INFO NET/tcpxr stats send: 1220 messages (0 inline), 1976.0 MB in 1.47 s;
    window stalls 0; 2 stripes
  host:pid:tid [0] NCCL INFO NET/tcpxr stats send s0: 494.4 MB in 943 chunks 28% busy, queued ahead
    avg 1.7 max 7, ...
  host:pid:tid [0] NCCL INFO NET/tcpxr stats send s1: ...

  (one line a stripe: NCCL's logger cuts a line near 1 KiB; a stripe's line follows its
  connection's from the same thread). A send comm whose messages the spread rule looked at ends
  its line with "; spread cut X of Y, moving comms avg M max N" (src/engine/stats.rs).

copy_stats(log_text): a receive comm whose large receives the copy engine placed in GPU memory
(NCCL_TCPXR_GPU_COPY_BYTES) logs at close (src/engine/copy_in.rs, CopyCounts::describe):

  ... NCCL INFO stats receive copies: 212 copies into GPU memory, 111.1 MB, queuing avg 5.2 us,
    queued to seen done avg 61.3 us max 390.0 us
"""

import math
import re

_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(-?\d+)\s+(.*)$")
_RANK = re.compile(r"^#\s+Rank\s+(\d+)\s+Group\s+(\d+)\s+Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)"
                   r"\s+\[([^\]]*)\]\s*(.*)$")
_TESTS_VERSION = re.compile(r"# nccl-tests version (\S+) nccl-headers=(\d+) nccl-library=(\d+)")
_NCCL_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+\S*)")
_PARAMS = re.compile(r"# nThread (\d+) nGpus (\d+) minBytes (\d+) maxBytes (\d+) step: (\d+)\((\w+)\)"
                     r" warmup iters: (\d+) iters: (\d+) agg iters: (\d+) validation: (\d+) graph: (\d+)")
_OOB = re.compile(r"^# Out of bounds values\s*:\s*(\d+)\s*(\w*)")
_AVG = re.compile(r"^# Avg bus bandwidth\s*:\s*(\S+)\s*(\w*)")
_ERROR = re.compile(r"Test failure|NCCL failure|CUDA failure|Test NCCL failure|error:|Invalid number of GPUs")


_STATS = re.compile(r"^(\S*) .*stats (send|receive): (\d+) messages \((\d+) inline\), ([\d.]+) MB in ([\d.]+) s; "
                    r"window stalls (\d+); (\d+) stripes")
# _SPREAD, _TIMES and _COPIES are pinned on the Rust side by tests in src/engine/stats.rs
# (the_spread_rule_counts_..., the_lines_give_each_stripes_share_...) and src/engine/copy_in.rs
# (the_copy_counts_read_as_the_runner_parses_them): change both sides together.
_SPREAD = re.compile(r"; spread cut (\d+) of (\d+), moving comms avg ([\d.]+) max (\d+)")
_TIMES = re.compile(r"done avg ([\d.]+) us after its post and seen by NCCL's thread ([\d.]+) us later")
_STRIPE = re.compile(r"^(\S*) .*stats (send|receive) s(\d+): ([\d.]+) MB in (\d+) chunks(?: (\d+)% busy)?"
                     r"(?:, queued ahead avg ([\d.]+) max (\d+))?")


def tcpxr_stats(log_text):
    """Every tcpxr stats report in an NCCL log, one dict per connection, its stripes' lines
    attached to the connection line last logged by the same thread (the log prefix)."""
    out, last = [], {}
    for line in log_text.splitlines():
        m = _STATS.search(line)
        if m:
            conn = {"dir": m.group(2), "messages": int(m.group(3)), "inline": int(m.group(4)),
                    "mb": float(m.group(5)), "seconds": float(m.group(6)), "stripes": [],
                    "stalls": int(m.group(7)), "spread_cut": 0, "spread_looked": 0}
            spread = _SPREAD.search(line)
            if spread:
                conn["spread_cut"], conn["spread_looked"] = int(spread.group(1)), int(spread.group(2))
            out.append(conn)
            last[(m.group(1), m.group(2))] = conn
            continue
        m = _STRIPE.search(line)
        conn = m and last.get((m.group(1), m.group(2)))
        if conn:
            conn["stripes"].append({"mb": float(m.group(4)), "chunks": int(m.group(5)),
                                    "busy": None if m.group(6) is None else int(m.group(6)),
                                    "queued_avg": None if m.group(7) is None else float(m.group(7)),
                                    "queued_max": None if m.group(8) is None else int(m.group(8))})
            times = _TIMES.search(line)
            if times:
                conn["stripes"][-1]["done_us"] = float(times.group(1))
                conn["stripes"][-1]["seen_us"] = float(times.group(2))
    return out


_COPIES = re.compile(r"stats receive copies: (\d+) copies into GPU memory, ([\d.]+) MB, queuing avg ([\d.]+) us, "
                     r"queued to seen done avg ([\d.]+) us max ([\d.]+) us")


def copy_stats(log_text):
    """The receive comms' copies into GPU memory over a whole log: how many, MB, the copy-weighted
    mean time to queue one and from queued to seen done, and the longest; None without copies."""
    rows = [(int(m.group(1)), float(m.group(2)), float(m.group(3)), float(m.group(4)), float(m.group(5)))
            for m in _COPIES.finditer(log_text)]
    n = sum(r[0] for r in rows)
    if not n:
        return None
    return {"copies": n, "mb": round(sum(r[1] for r in rows), 1),
            "queue_us": round(sum(r[0] * r[2] for r in rows) / n, 1),
            "done_us": round(sum(r[0] * r[3] for r in rows) / n, 1),
            "done_max_us": max(r[4] for r in rows)}


def stats_summary(stats, copies=None):
    """Per direction: connections, MB, the stripes' mean I/O busy %, the chunk-weighted mean of
    chunks queued ahead of each new one, the most ever queued, window stalls, and the messages
    the spread rule cut of those it looked at; and `copies` (copy_stats()) when given."""
    out = {}
    for d in ("send", "receive"):
        comms = [c for c in stats if c["dir"] == d]
        if not comms:
            continue
        stripes = [s for c in comms for s in c["stripes"]]
        busy = [s["busy"] for s in stripes if s["busy"] is not None]
        weighted = [(s["queued_avg"], s["chunks"]) for s in stripes if s["queued_avg"] is not None]
        chunks = sum(n for _, n in weighted)
        timed = [(s["done_us"], s["seen_us"], s["chunks"]) for s in stripes if "done_us" in s and s["chunks"]]
        timed_chunks = sum(n for _, _, n in timed)
        out[d] = {
            "comms": len(comms),
            "mb": round(sum(c["mb"] for c in comms), 1),
            "busy_pct": round(sum(busy) / len(busy), 1) if busy else None,
            "queued_avg": round(sum(q * n for q, n in weighted) / chunks, 2) if chunks else None,
            "queued_max": max((s["queued_max"] for s in stripes if s["queued_max"] is not None), default=None),
            "stalls": sum(c["stalls"] for c in comms),
            "spread_cut": sum(c.get("spread_cut", 0) for c in comms),
            "spread_looked": sum(c.get("spread_looked", 0) for c in comms),
            "done_us": round(sum(t * n for t, _, n in timed) / timed_chunks, 1) if timed_chunks else None,
            "seen_us": round(sum(t * n for _, t, n in timed) / timed_chunks, 1) if timed_chunks else None,
        }
    if copies:
        out["copies"] = copies
    return out


def stats_line(summary):
    """One human line from stats_summary(), or "" when there were no stats."""
    parts = []
    for d, v in summary.items():
        if d == "copies":
            parts.append(f"copies into GPU memory: {v['copies']}, {v['mb']} MB, queuing avg {v['queue_us']} us, "
                         f"queued to seen done avg {v['done_us']} us (max {v['done_max_us']})")
            continue
        busy = "?" if v["busy_pct"] is None else f"{v['busy_pct']}%"
        queued = "?" if v["queued_avg"] is None else f"{v['queued_avg']} (max {v['queued_max']})"
        spread = f", spread cut {v['spread_cut']} of {v['spread_looked']}" if v.get("spread_looked") else ""
        times = (f", chunks done {v['done_us']} us after their post, seen by NCCL's thread {v['seen_us']} us later"
                 if v.get("done_us") is not None else "")
        parts.append(f"{d}: {v['comms']} conns, {v['mb']} MB, stripes {busy} busy, "
                     f"queued ahead {queued}, window stalls {v['stalls']}{spread}{times}")
    return "; ".join(parts)


def _num(token):
    """A getFloatStr/%g field: "12.34", "1.2e+03", "1e+06", "inf", "-nan"."""
    token = token.strip()
    if token.upper() == "N/A":
        return None
    try:
        return float(token)
    except ValueError:
        return math.nan if "nan" in token.lower() else None


def _wrong(token):
    value = _num(token)
    return None if value is None else (int(value) if math.isfinite(value) else value)


def _body(tokens):
    return {"time_us": _num(tokens[0]), "algbw": _num(tokens[1]),
            "busbw": _num(tokens[2]), "wrong": _wrong(tokens[3])}


def library_version(code):
    """nccl-tests' nccl-library=22803 -> "2.28.3" (NCCL_VERSION_CODE: X*10000+Y*100+Z)."""
    return f"{code // 10000}.{code // 100 % 100}.{code % 100}"


def parse_nccl_tests(text):
    """Parse the stdout (+stderr) of an nccl-tests binary into a dict."""
    out = {"rows": [], "ranks": [], "params": None, "program": None, "concluded": False,
           "nccl_tests_version": None, "nccl_headers": None, "nccl_library": None,
           "nccl_version": None, "out_of_bounds": None, "out_of_bounds_ok": None,
           "avg_busbw": None, "errors": []}
    cycles = {}  # size -> rows of it so far: nccl-tests -N prints the sweep once per cycle
    for line in text.splitlines():
        if m := _ROW.match(line):
            rest = m.group(6).split()
            # A size of 0 is one the op could not split over the ranks (nccl-tests prints it for
            # all_gather, reduce_scatter and alltoall): nothing was measured.
            if len(rest) < 8 or int(m.group(1)) == 0:
                continue
            size = int(m.group(1))
            cycles[size] = cycles.get(size, 0) + 1
            out["rows"].append({
                "size": size, "cycle": cycles[size] - 1, "count": int(m.group(2)), "type": m.group(3),
                "redop": m.group(4), "root": int(m.group(5)),
                "out_of_place": _body(rest[0:4]), "in_place": _body(rest[4:8]),
            })
        elif m := _RANK.match(line):
            out["ranks"].append({"rank": int(m.group(1)), "group": int(m.group(2)), "pid": int(m.group(3)),
                                 "host": m.group(4), "device": int(m.group(5)), "bus": m.group(6),
                                 "name": m.group(7).strip()})
        elif m := _TESTS_VERSION.search(line):
            out["nccl_tests_version"] = m.group(1)
            out["nccl_headers"], out["nccl_library"] = int(m.group(2)), int(m.group(3))
        elif m := _PARAMS.search(line):
            keys = ("nthreads", "ngpus", "min_bytes", "max_bytes", "step", "step_kind", "warmup",
                    "iters", "agg_iters", "validation", "graph")
            out["params"] = {k: (v if k == "step_kind" else int(v)) for k, v in zip(keys, m.groups())}
        elif m := _OOB.match(line):
            out["out_of_bounds"], out["out_of_bounds_ok"] = int(m.group(1)), m.group(2) == "OK"
        elif m := _AVG.match(line):
            out["avg_busbw"] = _num(m.group(1))
        elif line.startswith("# Collective test starting:"):
            out["program"] = line.split(":", 1)[1].strip()
        elif line.startswith("# Collective test concluded:"):
            out["concluded"] = True
        elif (m := _NCCL_VERSION.search(line)) and out["nccl_version"] is None:
            out["nccl_version"] = m.group(1)
        elif _ERROR.search(line):
            out["errors"].append(line.strip())
    return out


def nccl_version(text):
    """"2.28.3+cuda13.0" from an "NCCL version ..." line (NCCL INFO log or stdout), or None."""
    m = _NCCL_VERSION.search(text)
    return m.group(1) if m else None


def wrong_rows(result):
    """Rows whose out-of-place or in-place check found wrong elements (N/A ignored)."""
    bad = []
    for row in result["rows"]:
        for where in ("out_of_place", "in_place"):
            w = row[where]["wrong"]
            if w is not None and (w != 0):
                bad.append((row["size"], where, w))
    return bad


# ---------------------------------------------------------------------------
# Which transport did NCCL use?

_LOADED = re.compile(r"NET/Plugin: Loaded net plugin (\S+) \(v(\d+)\)")
_ASSIGNED = re.compile(r"Assigned NET plugin (\S+) to comm")
_USING = re.compile(r"NCCL INFO Using network (\S+)")
_VIA_NET = re.compile(r"via NET/([^/\s]+)/\d+(?:\(\d+\))?(/GDRDMA)?")
_VIA_INTRA = re.compile(r"via (P2P|SHM)/\S*")
_FAILED_ANY = re.compile(r"Failed to initialize any NET plugin")
_FAILED_ONE = re.compile(r"Failed to initialize NET plugin (\S+)")
_UNPACK = re.compile(r"Using NCCL_NET_DEVICE_UNPACK net plugin version (\d+)")
_UNPACK_REFUSED = re.compile(r"NCCL_DEVICE_UNPACK plugin has incompatible version (\d+)")
_TCPXR_UNPACK = re.compile(r"NCCL INFO NET/tcpxr.*device unpack", re.IGNORECASE)
UNPACK_VERSION = 7  # NCCL_NET_DEVICE_UNPACK_VERSION, 0x7 from NCCL 2.19 on
_INTERNAL = {"socket", "ib"}


def _counts(names):
    counts = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    return ", ".join(f"{n} x{c}" for n, c in counts.items())


def check_transport(log_text, expected, *, gdr=None, allow_intra=False, device_unpack=None):
    """Decide from NCCL_DEBUG=INFO logs whether NCCL used network `expected`.

    Proof of use: a "Using network <name>" or "... via NET/<name>/<dev>" line.
    Every such line must name `expected` (case-insensitive); for an external
    plugin (anything but Socket/IB) "Loaded net plugin <name>" or "Assigned NET
    plugin <name>" is required as well.  gdr=True requires "/GDRDMA" on the
    via-NET lines (GPU buffers), gdr=False forbids it.  device_unpack=True
    requires "Using NCCL_NET_DEVICE_UNPACK net plugin version 7" (NCCL's kernel
    unpacks received data; tcpxr's own "device unpack" INFO line is mentioned in
    the evidence when present, never required).  Unless allow_intra, a
    "via P2P/..." or "via SHM/..." line (traffic not on the network) fails.
    Returns (ok, evidence): evidence is one line saying what was found.
    """
    want = expected.lower()
    loaded = _LOADED.findall(log_text)
    assigned = _ASSIGNED.findall(log_text)
    using = _USING.findall(log_text)
    via = _VIA_NET.findall(log_text)
    intra = _VIA_INTRA.findall(log_text)
    unpack = _UNPACK.findall(log_text)
    refused = _UNPACK_REFUSED.findall(log_text)

    found = []
    if loaded:
        found.append("loaded " + _counts(f"{n} (v{v})" for n, v in loaded))
    if assigned:
        found.append("assigned " + _counts(assigned))
    if using:
        found.append("Using network " + _counts(using))
    if via:
        n_gdr = sum(1 for _, g in via if g)
        found.append(f"via {_counts('NET/' + n for n, _ in via)} ({n_gdr} with /GDRDMA)")
    if intra:
        found.append("via " + _counts(intra))
    if unpack:
        found.append("device unpack " + _counts(f"v{v}" for v in unpack))
    if _TCPXR_UNPACK.search(log_text):
        found.append("tcpxr mentions device unpack")
    evidence = "; ".join(found) or "no NET lines"

    problems = []
    if _FAILED_ANY.search(log_text):
        problems.append("NCCL: Failed to initialize any NET plugin")
    problems += [f"NCCL: Failed to initialize NET plugin {n}" for n in _FAILED_ONE.findall(log_text)
                 if n.lower() == want]
    used = {n for n in using} | {n for n, _ in via}
    if not used:
        problems.append("no 'Using network' or 'via NET/' line (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET?)")
    other = sorted(n for n in used if n.lower() != want)
    if other:
        problems.append(f"used {', '.join(other)} instead of {expected}")
    if want not in _INTERNAL and not any(n.lower() == want for n in [n for n, _ in loaded] + assigned):
        problems.append(f"no 'Loaded net plugin {expected}' / 'Assigned NET plugin {expected}' line")
    if intra and not allow_intra:
        problems.append(f"traffic bypassed the network: via {', '.join(sorted(set(intra)))}")
    if via and gdr is True and not any(g for _, g in via):
        problems.append("GPU buffers expected but no /GDRDMA on any 'via NET' line (NCCL used host buffers)")
    if gdr is False and any(g for _, g in via):
        problems.append("host buffers expected but 'via NET' lines show /GDRDMA")
    if refused:
        problems.append(f"NCCL refused the plugin's device unpack version {', '.join(sorted(set(refused)))}")
    if device_unpack and str(UNPACK_VERSION) not in unpack:
        problems.append(f"device unpack expected but no 'Using NCCL_NET_DEVICE_UNPACK net plugin version "
                        f"{UNPACK_VERSION}' line (the plugin did not report NCCL_NET_DEVICE_UNPACK, so NCCL's "
                        "kernel does not unpack received data)")

    if problems:
        return False, "; ".join(problems) + f" [{evidence}]"
    return True, evidence
