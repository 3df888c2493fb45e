"""Tests of parse.py on the fixtures in recorded/ (python3 -m unittest)."""

import os
import unittest

import parse

RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recorded")


def fixture(name):
    with open(os.path.join(RECORDED, name)) as fh:
        return fh.read()


class NcclTestsOutput(unittest.TestCase):
    def setUp(self):
        self.ar = parse.parse_nccl_tests(fixture("all_reduce.socket.synthetic.txt"))
        self.sr = parse.parse_nccl_tests(fixture("sendrecv.socket-4x4.synthetic.txt"))
        self.bad = parse.parse_nccl_tests(fixture("all_reduce.tcpxr-host.wrong.synthetic.txt"))

    def test_row_count(self):
        # -b 8 -e 1G -f 2: 8, 16, ..., 2^30 = 28 sizes
        for result in (self.ar, self.sr, self.bad):
            self.assertEqual(len(result["rows"]), 28)
            self.assertEqual(result["rows"][0]["size"], 8)
            self.assertEqual(result["rows"][-1]["size"], 1 << 30)

    def test_rows_of_size_zero_measure_nothing(self):
        # all_gather on 2 ranks from 8 B: nccl-tests prints 8 and 16 B as size 0.
        row = "{:>12} {:>12}     float    none      -1     0.91    0.00    0.00       0     0.66    0.00    0.00       0"
        text = "\n".join([row.format(0, 0), row.format(0, 0), row.format(32, 8)])
        self.assertEqual([r["size"] for r in parse.parse_nccl_tests(text)["rows"]], [32])

    def test_rows_count_the_cycles_of_their_size(self):
        # nccl-tests -N 2 prints the sweep twice: each row says which cycle it came from.
        row = "{:>12} {:>12}     float     sum      -1     {}    0.00    0.00       0     0.66    0.00    0.00       0"
        text = "\n".join([row.format(8, 2, 9.5), row.format(16, 4, 9.6), row.format(8, 2, 7.5), row.format(16, 4, 7.6)])
        rows = parse.parse_nccl_tests(text)["rows"]
        self.assertEqual([(r["size"], r["cycle"], r["out_of_place"]["time_us"]) for r in rows],
                         [(8, 0, 9.5), (16, 0, 9.6), (8, 1, 7.5), (16, 1, 7.6)])

    def test_known_row(self):
        row = next(r for r in self.ar["rows"] if r["size"] == 1 << 30)
        self.assertEqual((row["count"], row["type"], row["redop"], row["root"]), (268435456, "float", "sum", -1))
        self.assertEqual(row["out_of_place"], {"time_us": 312325.0, "algbw": 3.44, "busbw": 3.44, "wrong": 0})
        self.assertEqual(row["in_place"], {"time_us": 316185.0, "algbw": 3.40, "busbw": 3.40, "wrong": 0})
        first = self.ar["rows"][0]
        self.assertEqual(first["out_of_place"]["time_us"], 22.90)
        self.assertEqual(first["in_place"]["time_us"], 23.15)

    def test_sendrecv_in_place_not_checked(self):
        for row in self.sr["rows"]:
            self.assertIsNone(row["in_place"]["wrong"])
            self.assertEqual(row["out_of_place"]["wrong"], 0)
        self.assertEqual(parse.wrong_rows(self.sr), [])
        row = next(r for r in self.sr["rows"] if r["size"] == 1 << 30)
        self.assertEqual(row["in_place"]["busbw"], 6.04)

    def test_wrong_detection(self):
        self.assertEqual(parse.wrong_rows(self.ar), [])
        self.assertEqual(parse.wrong_rows(self.bad), [
            (4096, "out_of_place", 3), (1 << 20, "in_place", 17), (1 << 29, "out_of_place", 134218000)])
        self.assertEqual(self.bad["out_of_bounds"], 3)
        self.assertFalse(self.bad["out_of_bounds_ok"])
        self.assertTrue(any("Test failure" in e for e in self.bad["errors"]))

    def test_exponent_formats(self):
        row = next(r for r in self.bad["rows"] if r["size"] == 1 << 30)
        self.assertEqual(row["out_of_place"]["time_us"], 1.2e7)  # "1.2e+07"
        self.assertEqual(parse._num("1e+03"), 1000.0)
        self.assertIsNone(parse._num("N/A"))
        self.assertNotEqual(parse._num("-nan"), parse._num("-nan"))  # NaN

    def test_footer_and_header(self):
        self.assertEqual(self.ar["out_of_bounds"], 0)
        self.assertTrue(self.ar["out_of_bounds_ok"])
        self.assertEqual(self.ar["avg_busbw"], 1.73541)
        # the footer is the mean of all printed busbw (both placements)
        busbw = [r[p]["busbw"] for r in self.sr["rows"] for p in ("out_of_place", "in_place")]
        self.assertAlmostEqual(self.sr["avg_busbw"], sum(busbw) / len(busbw), delta=0.01)
        self.assertTrue(self.ar["concluded"])
        self.assertEqual(self.ar["program"], "all_reduce_perf")
        self.assertEqual(self.sr["program"], "sendrecv_perf")
        self.assertEqual(self.ar["nccl_tests_version"], "2.19.6")
        self.assertEqual(parse.library_version(self.ar["nccl_library"]), "2.28.3")
        self.assertEqual(self.ar["params"]["iters"], 20)
        self.assertEqual(self.ar["params"]["max_bytes"], 1 << 30)
        self.assertEqual([r["rank"] for r in self.ar["ranks"]], [0, 1])
        self.assertEqual(self.ar["ranks"][1]["name"], "NVIDIA H200")

    def test_truncated_output(self):
        text = fixture("all_reduce.socket.synthetic.txt")
        cut = text[: text.index("     1048576 ")]
        result = parse.parse_nccl_tests(cut + "NCCL failure common.cu:1005 'remote process exited'\n")
        self.assertEqual(len(result["rows"]), 17)
        self.assertIsNone(result["out_of_bounds"])
        self.assertIsNone(result["avg_busbw"])
        self.assertFalse(result["concluded"])
        self.assertEqual(len(result["errors"]), 1)

    def test_nccl_version_line(self):
        out = "h200-host:1:1 [0] NCCL INFO NCCL version 2.28.3+cuda13.0\n" + fixture("all_reduce.socket.synthetic.txt")
        self.assertEqual(parse.parse_nccl_tests(out)["nccl_version"], "2.28.3+cuda13.0")
        self.assertIsNone(self.ar["nccl_version"])
        self.assertEqual(parse.nccl_version(fixture("nccl-debug.tcpxr-gpu.synthetic.txt")), "2.28.3+cuda13.0")


class Transport(unittest.TestCase):
    def setUp(self):
        self.tcpxr = fixture("nccl-debug.tcpxr-gpu.synthetic.txt")
        self.socket = fixture("nccl-debug.socket.synthetic.txt")
        self.fallback = fixture("nccl-debug.tcpxr-fallback.synthetic.txt")

    def test_tcpxr_used(self):
        ok, ev = parse.check_transport(self.tcpxr, "tcpxr")
        self.assertTrue(ok, ev)
        self.assertIn("tcpxr (v11)", ev)
        self.assertTrue(parse.check_transport(self.tcpxr, "TCPXR", gdr=True)[0])

    def test_socket_used(self):
        ok, ev = parse.check_transport(self.socket, "Socket")
        self.assertTrue(ok, ev)
        self.assertIn("Using network Socket x2", ev)

    def test_mismatch(self):
        ok, ev = parse.check_transport(self.socket, "tcpxr")
        self.assertFalse(ok)
        self.assertIn("used Socket instead of tcpxr", ev)
        self.assertFalse(parse.check_transport(self.tcpxr, "Socket")[0])

    def test_silent_fallback_is_failure(self):
        ok, ev = parse.check_transport(self.fallback, "tcpxr")
        self.assertFalse(ok)
        self.assertIn("Failed to initialize NET plugin tcpxr", ev)
        self.assertIn("used Socket instead of tcpxr", ev)

    def test_either_line_is_proof(self):
        loaded = "x [0] NCCL INFO NET/Plugin: Loaded net plugin tcpxr (v11)\n"
        using = "x [0] NCCL INFO Using network tcpxr\n"
        via = "x [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/tcpxr/0\n"
        self.assertTrue(parse.check_transport(loaded + using, "tcpxr")[0])
        self.assertTrue(parse.check_transport(loaded + via, "tcpxr")[0])
        ok, ev = parse.check_transport(using + via, "tcpxr")  # no plugin load line
        self.assertFalse(ok)
        self.assertIn("Loaded net plugin tcpxr", ev)
        self.assertFalse(parse.check_transport(loaded, "tcpxr")[0])  # loaded but never used
        self.assertFalse(parse.check_transport("", "Socket")[0])

    def test_failed_to_initialize_any(self):
        log = ("x [0] NCCL INFO NET/Plugin: Loaded net plugin tcpxr (v11)\n"
               "x [0] NCCL INFO Failed to initialize NET plugin tcpxr\n"
               "x [0] NCCL WARN Failed to initialize any NET plugin\n")
        ok, ev = parse.check_transport(log, "tcpxr")
        self.assertFalse(ok)
        self.assertIn("Failed to initialize any NET plugin", ev)

    def test_gdr(self):
        host = self.tcpxr.replace("/GDRDMA", "")
        self.assertTrue(parse.check_transport(host, "tcpxr", gdr=False)[0])
        ok, ev = parse.check_transport(host, "tcpxr", gdr=True)
        self.assertFalse(ok)
        self.assertIn("host buffers", ev)
        self.assertFalse(parse.check_transport(self.tcpxr, "tcpxr", gdr=False)[0])

    def test_device_unpack(self):
        """GPU buffers through NCCL's device unpack: NCCL logs it at INIT when the plugin reports
        NCCL_NET_DEVICE_UNPACK version 7 (synthetic sample, NCCL 2.28's wording)."""
        unpack = fixture("nccl-debug.tcpxr-gpu-unpack.synthetic.txt")
        ok, ev = parse.check_transport(unpack, "tcpxr", gdr=True, device_unpack=True)
        self.assertTrue(ok, ev)
        self.assertIn("device unpack v7 x2", ev)
        self.assertIn("tcpxr mentions device unpack", ev)
        # tcpxr's own wording is never required
        quiet = unpack.replace("GPU buffers by device unpack (v7)", "GPU buffers")
        ok, ev = parse.check_transport(quiet, "tcpxr", gdr=True, device_unpack=True)
        self.assertTrue(ok, ev)
        self.assertNotIn("mentions", ev)
        # without NCCL's line (a plugin that unpacks with its own kernel): fails
        ok, ev = parse.check_transport(self.tcpxr, "tcpxr", gdr=True, device_unpack=True)
        self.assertFalse(ok)
        self.assertIn("device unpack expected but no 'Using NCCL_NET_DEVICE_UNPACK net plugin version 7'", ev)
        self.assertTrue(parse.check_transport(self.tcpxr, "tcpxr", gdr=True)[0])  # not asked: not checked
        # another version, or NCCL refusing it
        ok, ev = parse.check_transport(unpack.replace("plugin version 7", "plugin version 8"), "tcpxr",
                                       gdr=True, device_unpack=True)
        self.assertFalse(ok)
        self.assertIn("device unpack v8", ev)
        refused = unpack + "x [0] NCCL WARN NCCL_DEVICE_UNPACK plugin has incompatible version 8, this NCCL build " \
                           "is compatible with 7, not using it\n"
        ok, ev = parse.check_transport(refused, "tcpxr", gdr=True, device_unpack=True)
        self.assertFalse(ok)
        self.assertIn("refused the plugin's device unpack version 8", ev)

    def test_intra_node_bypass(self):
        p2p = self.socket + "x [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
        ok, ev = parse.check_transport(p2p, "Socket")
        self.assertFalse(ok)
        self.assertIn("bypassed the network", ev)
        self.assertTrue(parse.check_transport(p2p, "Socket", allow_intra=True)[0])

    def test_proxy_rank_form(self):
        log = ("x [0] NCCL INFO Assigned NET plugin tcpxr to comm\n"
               "x [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/tcpxr/3(1)/GDRDMA\n")
        ok, ev = parse.check_transport(log, "tcpxr", gdr=True)
        self.assertTrue(ok, ev)


class TcpxrStats(unittest.TestCase):
    # Lines as tcpxr logs them through NCCL (the send lines' figures from tcpxr-bench with
    # NCCL_TCPXR_STATS=1 on 2026-11-23, given NCCL's log prefix; the receive lines are a tcpx
    # connection's, whose transport does not time its I/O). Another thread's lines come between.
    LOG = (
        "vm:1:2 [0] NCCL INFO NET/tcpxr stats send: 1220 messages (0 inline), 1976.0 MB in 1.47 s; "
        "window stalls 0; 2 stripes; sizes up to 256 KiB: 1220; others out at a post avg 0.4 max 3; "
        "spread cut 588 of 1220, moving comms avg 2.0 max 2\n"
        "vm:1:3 [1] NCCL INFO NET/tcpxr stats receive: 7 messages (3 inline), 12.5 MB in 0.20 s; "
        "window stalls 1; 2 stripes\n"
        "vm:1:2 [0] NCCL INFO NET/tcpxr stats send s0: 494.4 MB in 943 chunks 28% busy, queued ahead avg 1.7 "
        "max 7, 2757 grant waits avg 448.0 us, done avg 1118.2 us after its post and seen by NCCL's thread "
        "5.9 us later\n"
        "vm:1:3 [1] NCCL INFO NET/tcpxr stats receive s0: 0.0 MB in 0 chunks\n"
        "vm:1:2 [0] NCCL INFO some other line\n"
        "vm:1:2 [0] NCCL INFO NET/tcpxr stats send s1: 493.9 MB in 942 chunks 25% busy, queued ahead avg 1.4 "
        "max 7\n"
        "vm:1:3 [1] NCCL INFO NET/tcpxr stats receive s1: 12.5 MB in 4 chunks, queued ahead avg 2.0 max 3, "
        "window grew 3 times to at most 1024 KiB\n"
    )

    def test_lines(self):
        st = parse.tcpxr_stats(self.LOG)
        self.assertEqual([c["dir"] for c in st], ["send", "receive"])
        self.assertEqual((st[0]["messages"], st[0]["inline"], st[0]["mb"], st[0]["seconds"]), (1220, 0, 1976.0, 1.47))
        self.assertEqual(st[0]["stripes"][1], {"mb": 493.9, "chunks": 942, "busy": 25, "queued_avg": 1.4,
                                               "queued_max": 7})
        self.assertEqual(st[1]["stripes"][0], {"mb": 0.0, "chunks": 0, "busy": None, "queued_avg": None,
                                               "queued_max": None})
        self.assertEqual(st[1]["stalls"], 1)
        self.assertEqual([len(c["stripes"]) for c in st], [2, 2])

    def test_summary(self):
        summary = parse.stats_summary(parse.tcpxr_stats(self.LOG))
        self.assertEqual(summary["send"], {"comms": 1, "mb": 1976.0, "busy_pct": 26.5,
                                           "queued_avg": round((1.7 * 943 + 1.4 * 942) / 1885, 2),
                                           "queued_max": 7, "stalls": 0, "spread_cut": 588,
                                           "spread_looked": 1220, "done_us": 1118.2, "seen_us": 5.9})
        self.assertEqual(summary["receive"]["busy_pct"], None)
        self.assertEqual(summary["receive"]["queued_avg"], 2.0)
        line = parse.stats_line(summary)
        self.assertIn("window stalls 0, spread cut 588 of 1220, chunks done 1118.2 us after their post, seen by "
                      "NCCL's thread 5.9 us later; receive: 1 conns", line)
        self.assertTrue(line.endswith("receive: 1 conns, 12.5 MB, stripes ? busy, queued ahead 2.0 (max 3), "
                                      "window stalls 1"), line)
        self.assertEqual(parse.stats_summary([]), {})
        self.assertEqual(parse.stats_line({}), "")

    def test_copies(self):
        log = ("h:1:2 [0] NCCL INFO stats receive copies: 100 copies into GPU memory, 52.4 MB, queuing avg 5.0 us, "
               "queued to seen done avg 60.0 us max 300.0 us\n"
               "h:1:3 [1] NCCL INFO stats receive copies: 300 copies into GPU memory, 157.3 MB, queuing avg 7.0 us, "
               "queued to seen done avg 80.0 us max 420.5 us\n")
        copies = parse.copy_stats(log)
        self.assertEqual(copies, {"copies": 400, "mb": 209.7, "queue_us": 6.5, "done_us": 75.0, "done_max_us": 420.5})
        self.assertIsNone(parse.copy_stats(self.LOG))
        summary = parse.stats_summary(parse.tcpxr_stats(self.LOG), copies)
        self.assertTrue(parse.stats_line(summary).endswith(
            "copies into GPU memory: 400, 209.7 MB, queuing avg 6.5 us, queued to seen done avg 75.0 us (max 420.5)"))
        self.assertNotIn("copies", parse.stats_summary(parse.tcpxr_stats(self.LOG), None))


class RealRecordings(unittest.TestCase):
    """Outputs recorded on the 2x H200 host on 2026-11-22 (device run 4, docs/BENCHMARKS.md)."""

    def test_all_reduce_tcpxr_host(self):
        r = parse.parse_nccl_tests(fixture("all_reduce.tcpxr-host.2026-11-22.h200x2.txt"))
        self.assertEqual(r["nccl_tests_version"], "2.19.6")
        self.assertEqual(r["nccl_library"], 22803)
        self.assertEqual(len(r["rows"]), 27)  # 8 B .. 512 MiB
        last = r["rows"][-1]
        self.assertEqual(last["size"], 512 << 20)
        self.assertEqual(last["out_of_place"], {"time_us": 36230.9, "algbw": 14.82, "busbw": 14.82, "wrong": 0})
        self.assertTrue(r["out_of_bounds_ok"])
        self.assertEqual(len(r["ranks"]), 2)
        self.assertTrue(all(row["out_of_place"]["wrong"] == 0 for row in r["rows"]))

    def test_socket_4x4_and_tcpxr_rows_line_up(self):
        a = parse.parse_nccl_tests(fixture("all_reduce.socket-4x4.2026-11-22.h200x2.txt"))
        b = parse.parse_nccl_tests(fixture("all_reduce.tcpxr-host.2026-11-22.h200x2.txt"))
        self.assertEqual([row["size"] for row in a["rows"]], [row["size"] for row in b["rows"]])

    def test_gpu_buffer_log_proves_tcpxr_with_gdr(self):
        log = fixture("nccl-debug.tcpxr-gpu.2026-11-22.h200x2.txt")
        ok, evidence = parse.check_transport(log, "tcpxr", gdr=True)
        self.assertTrue(ok, evidence)
        self.assertIn("/GDRDMA", evidence)
        self.assertFalse(parse.check_transport(log, "Socket")[0])
        self.assertFalse(parse.check_transport(log, "tcpxr", gdr=False)[0])

    def test_gpu_buffer_log_of_2026_11_22_predates_device_unpack(self):
        """That run unpacked with tcpxr's own kernel: the device-unpack check must reject it."""
        log = fixture("nccl-debug.tcpxr-gpu.2026-11-22.h200x2.txt")
        ok, evidence = parse.check_transport(log, "tcpxr", gdr=True, device_unpack=True)
        self.assertFalse(ok)
        self.assertIn("NCCL_NET_DEVICE_UNPACK", evidence)


if __name__ == "__main__":
    unittest.main()
