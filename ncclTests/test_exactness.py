"""exactness.py, without torch: every expected output torch_bench.py --exact compares against is
held against the collective's own definition applied to what every rank sent, at 2, 3 and 4
ranks; the values are exact in bfloat16; and the parent's verdict names the rank and element."""

import unittest

import exactness as ex


def sent_by(op, world, count, salt, part):
    """{rank: {buffer: values}} every rank sends (broadcast: the root only)."""
    out = {}
    for r in range(world):
        bufs = ex.inputs(op, r, world, count, salt, part)
        out[r] = {name: (ex.expand(segs, world) if segs is not None else None) for name, segs in bufs.items()}
    return out


class ExpectedMatchesTheDefinition(unittest.TestCase):
    def check(self, op, world, count, salt=3):
        for part in ex.parts(op, world):
            sent = sent_by(op, world, count, salt, part)
            got = ex.simulate(op, sent, world, count, part)
            for r in range(world):
                want = ex.expand(ex.expected(op, r, world, count, salt, part), world)
                self.assertEqual(got[r], want, f"{op} {part} world {world} count {count} rank {r}")

    def test_every_op_at_2_3_4_ranks(self):
        for world in (2, 3, 4):
            for op in ex.OPS:
                for count in (1, 7, 4097):
                    self.check(op, world, count)

    def test_a_larger_odd_count(self):
        for op in ("reduce_scatter", "all_to_all", "sendrecv"):
            self.check(op, 3, 65537, salt=11)

    def test_output_lengths(self):
        for world in (2, 3, 4):
            for count in (1, 7):
                self.assertEqual(ex.length(ex.expected("all_gather", 0, world, count, 0)), count * world)
                self.assertEqual(ex.length(ex.expected("reduce_scatter", 1, world, count, 0)), count)
                self.assertEqual(ex.length(ex.inputs("reduce_scatter", 1, world, count, 0)["send"]), count * world)
                table = ex.splits(count, world)
                for r in range(world):
                    self.assertEqual(ex.length(ex.expected("all_to_all", r, world, count, 0)),
                                     sum(table[s][r] for s in range(world)))


class Values(unittest.TestCase):
    def test_range_and_formula_on_ints(self):
        vals = {ex.value(i, r, s) for i in range(62) for r in range(4) for s in range(31)}
        self.assertEqual(min(vals), -ex.SPAN)
        self.assertEqual(max(vals), ex.SPAN)
        self.assertEqual(ex.value(0, 0, 0), -15)
        self.assertEqual(ex.value(10, 2, 1), (70 + 26 + 5) % 31 - 15)

    def test_exact_in_bfloat16(self):
        """bfloat16 holds every integer up to 256, and no more: sums over up to 17 ranks are exact."""
        self.assertTrue(all(ex.to_bfloat16(v) == v for v in range(-256, 257)))
        self.assertNotEqual(ex.to_bfloat16(257), 257)
        self.assertEqual(ex.max_ranks("bfloat16"), 17)
        for world in (2, 3, 4, 17):
            worst = max(abs(v) for v in ex.expand(ex.expected("all_reduce", 0, world, 31, 0), world))
            self.assertLessEqual(worst, 256)
            self.assertLess(worst, ex.SENTINEL)           # a result never looks like an untouched output
        self.assertEqual(ex.to_bfloat16(ex.SENTINEL), ex.SENTINEL)

    def test_misplaced_data_is_seen(self):
        """Another rank's data, the other ring direction's, or data shifted by a power of two
        elements differ at every element, so none can pass as the expected result."""
        for i in range(200):
            for r in range(4):
                self.assertNotEqual(ex.value(i, r, ex.SALT_FORWARD), ex.value(i, r, ex.SALT_BACKWARD))
                for other in range(4):
                    if other != r:
                        self.assertNotEqual(ex.value(i, r, 0), ex.value(i, other, 0))
                for shift in (1, 2, 4, 1024, 4096, 131072):
                    self.assertNotEqual(ex.value(i, r, 0), ex.value(i + shift, r, 0))

    def test_splits_are_uneven(self):
        for world in (2, 3, 4):
            for count in (1, 7, 4097):
                table = ex.splits(count, world)
                self.assertGreater(len({sum(row) for row in table}), 1, (world, count))   # senders differ
                self.assertGreater(len({v for row in table for v in row}), 1)
        self.assertIn(0, [v for row in ex.splits(1, 4) for v in row])               # empty splits too

    def test_plan(self):
        checks = ex.plan(world=3)
        self.assertEqual(len(checks), (4 + 3 + 2) * 3 * 6)
        salts = {(c["op"], c["dtype"], c["count"]): c["salt"] for c in checks}
        self.assertEqual(len(salts), 6 * 3 * 6)
        neighbours = list(salts.values())
        self.assertTrue(all(a != b for a, b in zip(neighbours, neighbours[1:])))   # consecutive checks differ
        self.assertEqual([c["part"] for c in checks if c["op"] == "broadcast"][:3], ["root 0", "root 1", "root 2"])
        self.assertEqual(ex.plan(["sendrecv"], ["int32"], [7], 2),
                         [{"op": "sendrecv", "dtype": "int32", "count": 7, "part": "from prev", "salt": 0},
                          {"op": "sendrecv", "dtype": "int32", "count": 7, "part": "from next", "salt": 0}])

    def test_locate(self):
        segs = ex.expected("all_gather", 0, 3, 5, 0)
        self.assertEqual(ex.locate(segs, 0), "from rank 0, its element 0")
        self.assertEqual(ex.locate(segs, 7), "from rank 1, its element 2")
        self.assertEqual(ex.locate(segs, 15), "past the expected end")
        segs = ex.expected("all_to_all", 1, 3, 7, 0)
        table = ex.splits(7, 3)
        first_from_2 = table[0][1] + table[1][1]
        self.assertEqual(ex.locate(segs, first_from_2), f"from rank 2, its element {table[2][0]}")
        self.assertEqual(ex.locate(ex.expected("reduce_scatter", 2, 3, 4, 0), 1), "sum of all ranks, its element 9")
        self.assertEqual(ex.locate(ex.expected("sendrecv", 0, 3, 4, 0, "from prev"), 0),
                         "from rank 2 (its send to next), its element 0")


class Verdict(unittest.TestCase):
    def records(self, checks, world, skip=(), wrong=None):
        out = []
        for c in checks:
            for r in range(world):
                if (c["op"], r) in skip:
                    continue
                rec = dict(c, rank=r, elements=c["count"], wrong=0, first=[])
                if wrong and (c["op"], c["dtype"], c["count"], c["part"], r) == wrong:
                    rec.update(wrong=2, first=[{"index": 4, "where": "from rank 0, its element 4", "got": 1000,
                                                "expected": -3}])
                out.append(rec)
        return out

    def test_all_exact(self):
        checks = ex.plan(["all_reduce", "broadcast"], ["float32"], [1, 7], 2)
        found, table = ex.problems(self.records(checks, 2), checks, 2)
        self.assertEqual(found, [])
        self.assertTrue(all(row["ok"] == [0, 1] for row in table))
        text = ex.markdown("tcpxr-host", table)
        self.assertIn("| op | dtype | part | 1 | 7 |", text)
        self.assertIn("| broadcast | float32 | root 1 | ok | ok |", text)

    def test_a_mismatch_names_rank_element_and_values(self):
        checks = ex.plan(["all_gather"], ["bfloat16", "int32"], [7], 3)
        recs = self.records(checks, 3, wrong=("all_gather", "int32", 7, "result", 2))
        found, table = ex.problems(recs, checks, 3)
        self.assertEqual(found, ["all_gather int32 count 7: rank 2: 2 of 7 elements wrong: [4] (from rank 0, its "
                                 "element 4) got 1000 expected -3"])
        text = ex.markdown("tcpxr-gpu", table)
        self.assertIn("| all_gather | int32 | result | WRONG on rank 2 |", text)
        self.assertIn("- all_gather int32 count 7 result, rank 2: 2 of 7 elements wrong", text)

    def test_missing_ranks(self):
        checks = ex.plan(["all_reduce", "sendrecv"], ["float32"], [1], 4)
        found, table = ex.problems(self.records(checks, 4, skip={("sendrecv", 1), ("sendrecv", 3)}), checks, 4)
        self.assertEqual(found, ["2 of 3 checks not reported by every rank, the first sendrecv float32 count 1 "
                                 "from prev (ranks 1, 3: the worker stopped there?)"])
        self.assertIn("missing on rank 1, 3", ex.markdown("x", table))

    def test_many_problems_are_cut(self):
        checks = ex.plan(["all_reduce"], ["float32"], list(range(1, 31)), 2)
        recs = [dict(c, rank=r, elements=1, wrong=1, first=[]) for c in checks for r in range(2)]
        found, _ = ex.problems(recs, checks, 2, limit=5)
        self.assertEqual(len(found), 6)
        self.assertEqual(found[-1], "and 55 more (exact.md)")


if __name__ == "__main__":
    unittest.main()
