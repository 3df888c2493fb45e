"""docs/bench/compact.py's `show --median` (and `--spread`, `--pool`) over a small results table:
passes of run_nccl_tests.py (parts rN) and a run script's launches (RANKS-OP-VARIANT-rN.log) each
fold into every config's median pass, with the best Socket tuning's time over each tcpxr config's."""
import contextlib
import csv
import io
import lzma
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "bench"))
import compact  # noqa: E402

COLUMNS = ["run", "part", "op", "config", "size", "time_us", "busbw", "ip_time_us", "ip_busbw", "wrong"]


def rows():
    """Run 1: passes r1-r3 of run_nccl_tests.py. Run 2: a script's launches in three rounds at 2
    ranks and one at 4, the Socket tunings named as the scripts name them."""
    out = []
    for p, (host, sock) in enumerate([(10, 12), (30, 11), (20, 13)], 1):
        out += [("1", f"r{p}", "all_reduce", "tcpxr-host", 8, host), ("1", f"r{p}", "all_reduce", "socket", 8, sock)]
    for n, (mine, default, s2x2) in enumerate([(27, 26, 25), (25, 28, 29), (29, 27, 24)], 1):
        for v, t in [("c101", mine), ("socket", default), ("s2x2", s2x2)]:
            out.append(("2", "", "sendrecv", f"2-sendrecv-{v}-r{n}.log", 8, t))
    out += [("2", "", "sendrecv", "4-sendrecv-c101-r1.log", 8, 40), ("2", "", "sendrecv", "4-sendrecv-socket-r1.log", 8, 36)]
    # Run 3: one library under two names (c1, c1b) beside two tunings, three rounds.
    for v, ts in [("c1", (20, 21, 40)), ("c1b", (30, 31, 32)), ("socket", (25, 27, 29)), ("s2x2", (23, 31, 26))]:
        out += [("3", "", "sendrecv", f"2-sendrecv-{v}-r{n}.log", 8, t) for n, t in enumerate(ts, 1)]
    return out


class ShowMedian(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        with lzma.open(os.path.join(self.dir.name, compact.TABLE), "wt", newline="") as f:
            w = csv.writer(f)
            w.writerow(COLUMNS)
            for run, part, op, config, size, t in rows():
                w.writerow([run, part, op, config, size, f"{t:.2f}", "0", f"{t:.2f}", "0", "0"])

    def tearDown(self):
        self.dir.cleanup()

    def show(self, run, median):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(compact.show(self.dir.name, run, None, None, median=median), 0)
        return out.getvalue()

    def table(self, text, title):
        """{config: value} of the 8 B row of the table whose title contains `title`."""
        block = text.split(title, 1)[1].split("\n\n", 1)[0].splitlines()
        head, row = block[1].split(), next(line.split() for line in block if line.split()[:1] == ["8"])
        return dict(zip(head[1:], map(float, row[1:])))

    def test_passes_of_run_nccl_tests_fold_into_each_configs_median(self):
        t = self.table(self.show("1", True), "r* all_reduce")
        self.assertEqual((t["tcpxr-host"], t["socket"]), (20.0, 12.0))
        self.assertAlmostEqual(t["tcpxr-host/best"], 0.6)

    def test_a_scripts_launches_fold_per_variant_and_rank_count_against_the_best_tuning(self):
        text = self.show("2", True)
        two = self.table(text, "r* sendrecv at 2 ranks")
        self.assertEqual((two["c101"], two["socket"], two["s2x2"]), (27.0, 27.0, 25.0))
        self.assertAlmostEqual(two["c101/best"], 25 / 27, places=2)  # printed to 2 places
        four = self.table(text, "r* sendrecv at 4 ranks")
        self.assertAlmostEqual(four["c101/best"], 0.9)
        self.assertNotIn("s2x2", four, "a 4-rank table holds only 4-rank launches")

    def test_spread_gives_each_passs_ratio_as_lowest_highest(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(compact.show(self.dir.name, "2", None, None, median=True, spread=True), 0)
        two = out.getvalue().split("r* sendrecv at 2 ranks", 1)[1].split("\n\n", 1)[0]
        self.assertIn("c101/best per pass", two)
        # Rounds 1-3: best tuning 25, 28, 24 us over c101's 27, 25, 29.
        row = next(line.split() for line in two.splitlines() if line.split()[:1] == ["8"])
        self.assertEqual(row[-1], "0.83-1.12")

    def test_pool_gives_best_against_best_and_every_launch_pooled(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            self.assertEqual(compact.show(self.dir.name, "3", None, None, median=True, pool=["c1", "c1b"]), 0)
        block = out.getvalue().split("as one library", 1)[1].splitlines()
        row = next(line.split() for line in block if line.split()[:1] == ["8"])
        # Medians: c1 21, c1b 31, socket 27, s2x2 26. Pooled (lower medians of six): c1 and c1b's
        # 20 21 30 31 32 40 -> 30; the tunings' 23 25 26 27 29 31 -> 26.
        self.assertEqual(row[1:], ["21.00", "26.00", "1.24", "30.00", "26.00", "0.87"])

    def test_without_median_each_launch_stays_its_own_config(self):
        t = self.table(self.show("2", False), "sendrecv")
        self.assertIn("2-sendrecv-c101-r2.log", t)
        self.assertNotIn("c101/best", t)

    def test_pass_groups(self):
        self.assertEqual([compact.pass_group(p) for p in ["r2", "table/r10", "s3", "table", "run"]],
                         ["r*", "table/r*", "s*", "table", "run"])
        self.assertEqual(compact.as_launch({"config": "4-all_reduce-s1x1-r7.log", "part": ""}), ("r7", "s1x1", "4"))
        self.assertIsNone(compact.as_launch({"config": "socket", "part": "r1"}))


if __name__ == "__main__":
    unittest.main()
