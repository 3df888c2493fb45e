"""What torch_bench.py --exact sends and what each rank must receive, without torch.

Every buffer is described as segments: runs of elements whose values come from one formula,

    value(i, rank, salt) = (7 i + 13 rank + 5 salt) % 31 - 15        (an integer in [-15, 15])

either as rank `src` wrote it (Segment(src=r)) or summed over every rank (Segment(src=SUM)).
`value` uses only +, * and %, so the same function computes a Python int here and an int64
tensor on the GPU (torch's % on tensors is Python's, a remainder with the divisor's sign), and
the worker builds its inputs and its expected outputs from the very segments these tests check.

The values are small integers so that every result is exact in every dtype checked: a sum over
N ranks lies in [-15 N, 15 N], and bfloat16 holds every integer up to 256 exactly, so sums are
exact in bfloat16 up to 17 ranks (float32 and int32 far beyond), whatever order NCCL adds them
in (every partial sum is such an integer too). Results are compared bit for bit.

Each check is (op, dtype, count, part): op one of OPS, count the elements of the op's unit (a
rank's all_reduce or broadcast buffer, a rank's all_gather input or reduce_scatter output, the
mean all_to_all split, each send/recv), part the output checked (broadcast: one per root;
sendrecv: "from prev" and "from next", both ring directions at once).
"""

import struct
from collections import namedtuple

OPS = ("all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "sendrecv")
DTYPES = ("float32", "bfloat16", "int32")
# Odd element counts, a partial page and a partial chunk, up to several MiB (3145729 float32
# elements: 12 MiB a rank; 4 ranks' all_gather: 48 MiB).
COUNTS = (1, 7, 4097, 65537, 1048577, 3145729)
SPAN = 15                     # |value| <= SPAN
MODULUS = 31
SENTINEL = 1000               # outputs start as this: never a valid result (|result| <= 15 N < 1000)
SUM = "sum"                   # Segment.src: the sum over every rank
SALT_FORWARD, SALT_BACKWARD = 1, 2   # sendrecv: what a rank sends to next and to prev (differ mod 31)
EXACT_INTEGERS = {"float32": 1 << 24, "bfloat16": 1 << 8, "int32": (1 << 31) - 1}   # |x| <= this: exact
BITS = {"float32": 32, "bfloat16": 16, "int32": 32}   # the integer view compared bit for bit

Segment = namedtuple("Segment", "length src offset salt label")


def value(i, rank, salt):
    """The element at index i of rank's buffer in a check with this salt (int or int64 tensor)."""
    return (i * 7 + (rank * 13 + salt * 5)) % MODULUS - SPAN


def max_ranks(dtype):
    """The most ranks whose sums stay exact in `dtype`."""
    return EXACT_INTEGERS[dtype] // SPAN


def parts(op, world):
    """The outputs checked for one (op, dtype, count)."""
    if op == "broadcast":
        return [f"root {r}" for r in range(world)]
    if op == "sendrecv":
        return ["from prev", "from next"]
    return ["result"]


def plan(ops=OPS, dtypes=DTYPES, counts=COUNTS, world=2):
    """Every check, in the order every rank runs them: [{"op", "dtype", "count", "part", "salt"}].
    Each (op, dtype, count) has its own salt, so no output can pass with an earlier check's data."""
    checks = []
    for op in ops:
        for dtype in dtypes:
            for count in counts:
                salt = len({(c["op"], c["dtype"], c["count"]) for c in checks}) % MODULUS
                checks += [{"op": op, "dtype": dtype, "count": count, "part": part, "salt": salt}
                           for part in parts(op, world)]
    return checks


def ring(rank, world):
    """(prev, next) of a rank on the ring."""
    return (rank - 1) % world, (rank + 1) % world


def splits(count, world):
    """all_to_all's uneven split sizes: splits[src][dst] elements go from src to dst. They differ
    per pair and per rank (the mean is about count / world + 1.5) and some are 0 when count < world."""
    return [[count // world + (src + 2 * dst + 1) % 4 for dst in range(world)] for src in range(world)]


def _offsets(sizes):
    out, at = [], 0
    for n in sizes:
        out.append(at)
        at += n
    return out


def inputs(op, rank, world, count, salt, part="result"):
    """{buffer name: [Segment]} rank `rank` fills before the op. broadcast's buffer holds the
    root's data on the root and SENTINEL (None here) elsewhere."""
    if op in ("all_reduce", "all_gather"):
        return {"send": [Segment(count, rank, 0, salt, f"rank {rank}")]}
    if op == "reduce_scatter":
        return {"send": [Segment(count * world, rank, 0, salt, f"rank {rank}")]}
    if op == "broadcast":
        root = int(part.split()[1])
        return {"send": [Segment(count, root, 0, salt, f"root {root}")] if rank == root else None}
    if op == "all_to_all":
        return {"send": [Segment(sum(splits(count, world)[rank]), rank, 0, salt, f"rank {rank}")]}
    if op == "sendrecv":
        return {"to next": [Segment(count, rank, 0, SALT_FORWARD + salt, f"rank {rank}")],
                "to prev": [Segment(count, rank, 0, SALT_BACKWARD + salt, f"rank {rank}")]}
    raise ValueError(f"unknown op {op}")


def expected(op, rank, world, count, salt, part="result"):
    """[Segment] of the output `part` on rank `rank` after the op."""
    if op == "all_reduce":
        return [Segment(count, SUM, 0, salt, "sum of all ranks")]
    if op == "all_gather":
        return [Segment(count, src, 0, salt, f"from rank {src}") for src in range(world)]
    if op == "reduce_scatter":
        return [Segment(count, SUM, rank * count, salt, "sum of all ranks")]
    if op == "broadcast":
        root = int(part.split()[1])
        return [Segment(count, root, 0, salt, f"from root {root}")]
    if op == "all_to_all":
        table = splits(count, world)
        return [Segment(table[src][rank], src, _offsets(table[src])[rank], salt, f"from rank {src}")
                for src in range(world)]
    if op == "sendrecv":
        prv, nxt = ring(rank, world)
        if part == "from prev":
            return [Segment(count, prv, 0, SALT_FORWARD + salt, f"from rank {prv} (its send to next)")]
        return [Segment(count, nxt, 0, SALT_BACKWARD + salt, f"from rank {nxt} (its send to prev)")]
    raise ValueError(f"unknown op {op}")


def length(segments):
    return sum(s.length for s in segments)


def expand(segments, world):
    """The values of segments as a list of Python ints (the tests' reference)."""
    out = []
    for s in segments:
        for i in range(s.offset, s.offset + s.length):
            out.append(sum(value(i, r, s.salt) for r in range(world)) if s.src == SUM else value(i, s.src, s.salt))
    return out


def locate(segments, index):
    """Where output element `index` comes from: "from rank 2, its element 45"."""
    at = 0
    for s in segments:
        if index < at + s.length:
            return f"{s.label}, its element {s.offset + index - at}"
        at += s.length
    return "past the expected end"


# ---------------------------------------------------------------------------
# The collectives by their definition, on Python lists: what the tests hold expected() against.

def simulate(op, sent, world, count, part="result"):
    """{rank: output list} from {rank: {buffer: list}} by the op's definition."""
    if op == "all_reduce":
        total = [sum(vals) for vals in zip(*(sent[r]["send"] for r in range(world)))]
        return {r: total for r in range(world)}
    if op == "all_gather":
        return {r: [v for src in range(world) for v in sent[src]["send"]] for r in range(world)}
    if op == "reduce_scatter":
        total = [sum(vals) for vals in zip(*(sent[r]["send"] for r in range(world)))]
        return {r: total[r * count:(r + 1) * count] for r in range(world)}
    if op == "broadcast":
        root = int(part.split()[1])
        return {r: list(sent[root]["send"]) for r in range(world)}
    if op == "all_to_all":
        table = splits(count, world)
        out = {}
        for r in range(world):
            out[r] = []
            for src in range(world):
                start = _offsets(table[src])[r]
                out[r] += sent[src]["send"][start:start + table[src][r]]
        return out
    if op == "sendrecv":
        out = {}
        for r in range(world):
            prv, nxt = ring(r, world)
            out[r] = sent[prv]["to next"] if part == "from prev" else sent[nxt]["to prev"]
        return out
    raise ValueError(f"unknown op {op}")


def to_bfloat16(x):
    """x rounded to bfloat16 (round to nearest even), as a float: exactness checks without torch."""
    bits = struct.unpack("<I", struct.pack("<f", float(x)))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


# ---------------------------------------------------------------------------
# The parent's verdict over every rank's records

def problems(records, checks, world, limit=20):
    """(problems, table) over the records the ranks wrote. records: dicts with "rank", "op",
    "dtype", "count", "part", "wrong", "elements" and "first" (up to 3 mismatches: "index",
    "where", "got", "expected"). A check a rank did not report is a problem too. table: one row
    per check, {"op", "dtype", "count", "part", "ok": [ranks], "wrong": {rank: record},
    "missing": [ranks]}."""
    seen = {(r["op"], r["dtype"], r["count"], r["part"], r["rank"]): r for r in records}
    table, found = [], []
    for c in checks:
        key = (c["op"], c["dtype"], c["count"], c["part"])
        row = {"op": c["op"], "dtype": c["dtype"], "count": c["count"], "part": c["part"], "ok": [], "wrong": {},
               "missing": []}
        for rank in range(world):
            rec = seen.get(key + (rank,))
            if rec is None:
                row["missing"].append(rank)
            elif rec["wrong"]:
                row["wrong"][rank] = rec
            else:
                row["ok"].append(rank)
        table.append(row)
        name = f"{c['op']} {c['dtype']} count {c['count']}" + ("" if c["part"] == "result" else f" {c['part']}")
        for rank, rec in row["wrong"].items():
            found.append(f"{name}: rank {rank}: {mismatch_text(rec)}")
    missing = [row for row in table if row["missing"]]
    if missing:
        first = missing[0]
        who = ("rank " if len(first["missing"]) == 1 else "ranks ") + ", ".join(map(str, first["missing"]))
        found.append(f"{len(missing)} of {len(table)} checks not reported by every rank, the first "
                     f"{first['op']} {first['dtype']} count {first['count']} {first['part']} ({who}: the worker "
                     "stopped there?)")
    if len(found) > limit:
        found = found[:limit] + [f"and {len(found) - limit} more (exact.md)"]
    return found, table


def mismatch_text(rec):
    """One rank's mismatch in words."""
    firsts = "; ".join(f"[{m['index']}] ({m['where']}) got {m['got']} expected {m['expected']}" for m in rec["first"])
    return f"{rec['wrong']} of {rec['elements']} elements wrong: {firsts}"


def markdown(config, table):
    """The exactness table of one config: one line per (op, dtype), counts across."""
    lines = [f"## {config}", "", "| op | dtype | part | " + " | ".join(str(c) for c in _counts(table)) + " |",
             "|---|---|---|" + "---:|" * len(_counts(table))]
    by = {}
    for row in table:
        by.setdefault((row["op"], row["dtype"], row["part"]), {})[row["count"]] = row
    for (op, dtype, part), cells in by.items():
        text = []
        for count in _counts(table):
            row = cells.get(count)
            if row is None:
                text.append("")
            elif row["wrong"]:
                text.append("WRONG on rank " + ", ".join(map(str, row["wrong"])))
            elif row["missing"]:
                text.append("missing on rank " + ", ".join(map(str, row["missing"])))
            else:
                text.append("ok")
        lines.append(f"| {op} | {dtype} | {part} | " + " | ".join(text) + " |")
    wrong = [(row, rank, rec) for row in table for rank, rec in row["wrong"].items()]
    if wrong:
        lines += ["", "Mismatches (each rank's first three):", ""]
        lines += [f"- {row['op']} {row['dtype']} count {row['count']} {row['part']}, rank {rank}: {mismatch_text(rec)}"
                  for row, rank, rec in wrong]
    return "\n".join(lines) + "\n"


def _counts(table):
    return sorted({row["count"] for row in table})
