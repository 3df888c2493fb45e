"""Tests of report.py, plotting.py and the torch-free parts of torch_bench.py."""

import csv
import os
import tempfile
import unittest
import xml.etree.ElementTree as ET

import plotting
import report
import torch_bench


def results():
    def series(bw, lat):
        return {s: {"busbw": bw * s / (s + 1e6), "time_us": lat + s / (bw * 1e3)} for s in report.doubling(8, 1 << 20)}
    return {"all_reduce": {"socket": series(3.4, 22.9), "socket-4x4": series(9.6, 23.0), "tcpxr-gpu": series(20, 18)},
            "sendrecv": {"socket": series(2.0, 27.0), "tcpxr-gpu": series(20, 19)}}


class Sizes(unittest.TestCase):
    def test_parse_size(self):
        self.assertEqual([report.parse_size(s) for s in ("8", "64K", "512M", "1G", "2GiB", "4kb")],
                         [8, 65536, 512 << 20, 1 << 30, 2 << 30, 4096])
        with self.assertRaises(ValueError):
            report.parse_size("1.5G")

    def test_human_and_doubling(self):
        self.assertEqual([report.human_size(s) for s in (8, 1024, 3 << 20, 1 << 30, 1000)],
                         ["8 B", "1 KiB", "3 MiB", "1 GiB", "1000 B"])
        self.assertEqual(len(report.doubling(8, 1 << 30)), 28)
        self.assertEqual(report.doubling(8, 20), [8, 16])


class Summary(unittest.TestCase):
    def test_comparison_and_files(self):
        configs = ["socket", "socket-4x4", "tcpxr-gpu"]
        self.assertEqual(report.baselines(["socket-1x1", "tcpxr-host", "socket", "socket-2x2"]),
                         ["socket-1x1", "socket", "socket-2x2"])
        self.assertEqual(report.ratio_pairs(configs), [("tcpxr-gpu", "socket"), ("tcpxr-gpu", "socket-4x4")])
        table = report.comparison(results(), configs)
        last = table["all_reduce"][-1]
        self.assertAlmostEqual(last["ratios"]["tcpxr-gpu/socket-4x4"], 20 / 9.6, places=6)
        self.assertIsNone(table["sendrecv"][0]["ratios"]["tcpxr-gpu/socket-4x4"])  # no socket-4x4 sendrecv
        with tempfile.TemporaryDirectory() as d:
            text = report.write_summary(d, results(), configs, "t", ["note"], ["sendrecv x: boom"])
            self.assertIn("| size | socket | socket-4x4 | tcpxr-gpu | best Socket | tcpxr-gpu/best |", text)
            self.assertIn("8 B time (us): socket 22.90, socket-4x4 23.00, tcpxr-gpu 18.00 (time ratios to the "
                          "best Socket, socket, < 1 = tcpxr faster: tcpxr-gpu 0.79)", text)
            self.assertIn("- sendrecv x: boom", text)
            with open(os.path.join(d, "summary.csv")) as fh:
                rows = list(csv.DictReader(fh))
            self.assertEqual(len(rows), 2 * 18)
            self.assertEqual(rows[0]["busbw_socket-4x4"] != "-", True)
            self.assertEqual(rows[-1]["busbw_socket-4x4"], "-")
            self.assertEqual(rows[-1]["best_socket"], "socket")  # sendrecv has only socket
            self.assertIn("tcpxr-gpu/socket-4x4", rows[0])      # the pair columns stay for scripts

    def test_best_socket_per_size(self):
        """Each size is compared with the Socket tuning that was fastest at that size, by time,
        which also gives a ratio at small sizes where nccl-tests prints busbw 0.00."""
        res = {"all_reduce": {
            "socket": {8: {"busbw": 0.0, "time_us": 20.0}, 1 << 20: {"busbw": 3.0, "time_us": 350.0}},
            "socket-2x2": {8: {"busbw": 0.0, "time_us": 25.0}, 1 << 20: {"busbw": 6.0, "time_us": 175.0}},
            "socket-4x4": {8: {"busbw": 0.0, "time_us": 30.0}, 1 << 20: {"busbw": 5.0, "time_us": 210.0}},
            "tcpxr-host": {8: {"busbw": 0.0, "time_us": 16.0}, 1 << 20: {"busbw": 12.0, "time_us": 87.5}},
            "tcpxr-gpu": {8: {"busbw": 0.0, "time_us": 40.0}},
        }}
        names = ["socket", "socket-2x2", "socket-4x4", "tcpxr-host", "tcpxr-gpu"]
        small, big = report.comparison(res, names)["all_reduce"]
        self.assertEqual((small["best"], big["best"]), ("socket", "socket-2x2"))
        self.assertEqual(small["vs_best"], {"tcpxr-host": 20 / 16, "tcpxr-gpu": 0.5})
        self.assertEqual(big["vs_best"], {"tcpxr-host": 2.0, "tcpxr-gpu": None})
        self.assertIsNone(small["ratios"]["tcpxr-host/socket"])  # busbw 0.00: no busbw ratio
        with tempfile.TemporaryDirectory() as d:
            text = report.write_summary(d, res, names, "t")
            self.assertIn("| 8 B | 0.00 | 0.00 | 0.00 | 0.00 | 0.00 | socket | 1.25 | 0.50 |", text)
            self.assertIn("| 1 MiB | 3.00 | 6.00 | 5.00 | 12.00 | - | socket-2x2 | 2.00 | - |", text)
            with open(os.path.join(d, "summary.csv")) as fh:
                rows = list(csv.DictReader(fh))
        self.assertEqual([r["best_socket"] for r in rows], ["socket", "socket-2x2"])
        self.assertEqual([r["tcpxr-host/best_socket"] for r in rows], ["1.2500", "2.0000"])
        self.assertEqual(rows[1]["tcpxr-host/socket-4x4"], "2.4000")
        self.assertEqual(report.best_baseline({"tcpxr-host": 1.0}, ["tcpxr-host"]), None)
        text = report.markdown(res, ["tcpxr-host", "tcpxr-gpu"], "t")   # no Socket: no best column
        self.assertNotIn("best", text)

    def test_svg_plot(self):
        svg = "{http://www.w3.org/2000/svg}"
        with tempfile.TemporaryDirectory() as d:
            path, note = plotting.plot_busbw(results(), ["socket", "socket-4x4", "tcpxr-gpu"],
                                             os.path.join(d, "busbw.png"), "title", use_matplotlib=False)
            self.assertTrue(path.endswith("busbw.svg"))
            self.assertIn("built-in", note)
            root = ET.parse(path).getroot()
            names = [p.find(svg + "title").text for p in root.findall(svg + "polyline")]
            # busbw: 3 all_reduce + 2 sendrecv series; beside each op, tcpxr-gpu's ratio to the best Socket
            self.assertEqual(names, ["socket", "socket-4x4", "tcpxr-gpu", "tcpxr-gpu / best Socket",
                                     "socket", "tcpxr-gpu", "tcpxr-gpu / best Socket"])
            ones = [ln for ln in root.findall(svg + "line") if ln.find(svg + "title") is not None]
            self.assertEqual([ln.find(svg + "title").text for ln in ones], ["1", "1"])   # the line at 1.0, per op
            texts = [t.text for t in root.findall(svg + "text")]
            self.assertIn("best Socket time / tcpxr time", texts)
            # no Socket config: busbw only
            path, _ = plotting.plot_busbw(results(), ["tcpxr-gpu"], os.path.join(d, "only.png"), use_matplotlib=False)
            root = ET.parse(path).getroot()
            self.assertEqual(len(root.findall(svg + "polyline")), 2)
            self.assertEqual(root.get("width"), str(plotting.PW))
            self.assertEqual(plotting.plot_busbw({"x": {}}, ["a"], os.path.join(d, "n.png"))[0], None)

    def test_matplotlib_plot(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("matplotlib not installed")
        with tempfile.TemporaryDirectory() as d:
            path, note = plotting.plot_busbw(results(), ["socket", "tcpxr-gpu"], os.path.join(d, "busbw.png"), "t")
            self.assertEqual(note, "plotted with matplotlib")
            with open(path, "rb") as fh:
                self.assertEqual(fh.read(8), b"\x89PNG\r\n\x1a\n")

    def test_ratio_series(self):
        """The ratio plotted beside busbw: best Socket time (the best Socket config at that size) /
        tcpxr time, at every size where both ran; None where there is nothing to compare."""
        res = {"all_reduce": {
            "socket": {8: {"busbw": 0.0, "time_us": 20.0}, 1 << 20: {"busbw": 3.0, "time_us": 350.0}},
            "socket-2x2": {8: {"busbw": 0.0, "time_us": 25.0}, 1 << 20: {"busbw": 6.0, "time_us": 175.0},
                           2 << 20: {"busbw": 6.0, "time_us": 350.0}},
            "tcpxr-host": {8: {"busbw": 0.0, "time_us": 16.0}, 1 << 20: {"busbw": 12.0, "time_us": 87.5},
                           4 << 20: {"busbw": 12.0, "time_us": 350.0}},
            "tcpxr-gpu": {8: {"busbw": 0.0, "time_us": 40.0}, 2 << 20: {"busbw": 3.0, "time_us": 700.0}},
        }, "sendrecv": {"tcpxr-host": {8: {"busbw": 0.0, "time_us": 10.0}}}}
        names = ["socket", "socket-2x2", "tcpxr-host", "tcpxr-gpu"]
        got = report.ratio_series(res, names)
        self.assertEqual(got, {"all_reduce": {
            "tcpxr-host": [(8, 20 / 16), (1 << 20, 2.0)],            # 8 B: socket best; 1 MiB: socket-2x2
            "tcpxr-gpu": [(8, 0.5), (2 << 20, 0.5)],                 # 2 MiB: socket-2x2 alone
        }})                                                          # sendrecv: no Socket run, no ratio
        self.assertEqual(report.ratio_series(res, ["tcpxr-host", "tcpxr-gpu"]), {})
        self.assertEqual(report.ratio_series(res, ["socket", "socket-2x2"]), {})
        # the same numbers as the summary's tcpxr/best column
        rows = report.comparison(res, names)["all_reduce"]
        self.assertEqual([(r["size"], r["vs_best"]["tcpxr-host"]) for r in rows if r["vs_best"]["tcpxr-host"]],
                         got["all_reduce"]["tcpxr-host"])


class TorchBenchPlan(unittest.TestCase):
    def test_formulas(self):
        self.assertEqual(torch_bench.bandwidths("all_reduce", 1 << 30, 0.1, 2), (10.73741824, 10.73741824))
        algbw, busbw = torch_bench.bandwidths("all_reduce", 10 ** 9, 1.0, 8)
        self.assertAlmostEqual(busbw, algbw * 14 / 8)
        self.assertEqual(torch_bench.bandwidths("sendrecv", 10 ** 9, 0.5, 2), (2.0, 2.0))
        # nccl-tests' factors at 3 ranks: all_reduce 2(n-1)/n, all_gather/reduce_scatter/alltoall (n-1)/n
        self.assertAlmostEqual(torch_bench.bus_factor("all_reduce", 3), 4 / 3)
        for op in ("all_gather", "reduce_scatter", "all_to_all"):
            self.assertAlmostEqual(torch_bench.bus_factor(op, 3), 2 / 3)
        self.assertEqual([torch_bench.bus_factor(op, 4) for op in ("broadcast", "sendrecv")], [1.0, 1.0])

    def test_schedule(self):
        self.assertEqual(torch_bench.schedule(8), (5, 20))
        self.assertEqual(torch_bench.schedule(512 << 20), (2, 5))
        self.assertEqual(torch_bench.schedule(128 << 20), (2, 16))
        self.assertEqual(torch_bench.schedule(1 << 30, iters=3, warmup=1), (1, 3))
        steps = torch_bench.plan(8, 512 << 20)
        self.assertEqual(len(steps), 27)
        self.assertTrue(all(s * n <= 4 << 30 for s, _, n in steps))

    def test_time_budget(self):
        # 3 configs over loopback at the slowest measured rate (~2 GB/s) stay well under 4 minutes,
        # leaving ~30 s per config for process start and NCCL setup
        per_config = torch_bench.estimate_seconds(torch_bench.plan(8, 512 << 20), algbw_gbs=2.0)
        self.assertLess(3 * (per_config + 30), 240)

    def test_block_len_exact(self):
        self.assertEqual(torch_bench.block_len(2), 64)
        for world in (2, 3, 4, 6, 8):
            b = torch_bench.block_len(world)
            self.assertGreaterEqual(b, 1)
            top = 250 * world * world ** (b - 1)  # largest value after b all-reduces
            limit = 2 ** 120 if world & (world - 1) == 0 else 2 ** 24
            self.assertLess(top, limit)

    def test_one_gpu(self):
        """--one-gpu: every rank its own NCCL host name, so NCCL's duplicate-GPU check passes."""
        for n in (2, 3, 4):
            names = {torch_bench.one_gpu_env(r)["NCCL_HOSTID"] for r in range(n)}
            self.assertEqual(len(names), n)
            self.assertEqual(len({torch_bench.rank_env(r, False)["NCCL_HOSTID"] for r in range(n)} | names), 2 * n)
        self.assertTrue(torch_bench.parse_args(["--plugin-dir", "p", "--one-gpu"]).one_gpu)
        self.assertFalse(torch_bench.parse_args(["--plugin-dir", "p"]).one_gpu)


if __name__ == "__main__":
    unittest.main()
