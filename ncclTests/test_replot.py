"""replot.py: a run's folder of nccl-tests outputs drawn again, as the README's pictures are."""
import os
import shutil
import tempfile
import unittest

import replot

RECORDED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "recorded")


class Replot(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        for src, dst in [("all_reduce.socket-4x4.2026-11-22.h200x2.txt", "all_reduce.socket-4x4.txt"),
                         ("all_reduce.tcpxr-host.2026-11-22.h200x2.txt", "all_reduce.tcpxr-host.txt")]:
            shutil.copy(os.path.join(RECORDED, src), os.path.join(self.dir, dst))
        with open(os.path.join(self.dir, "all_reduce.tcpxr-host.settings.txt"), "w") as fh:
            fh.write("not an output\n")

    def test_outputs_become_results_per_op_and_config_settings_files_are_skipped(self):
        results, configs = replot.results_of(self.dir)
        self.assertEqual(list(results), ["all_reduce"])
        self.assertEqual(configs, ["socket-4x4", "tcpxr-host"])
        self.assertIn(8, results["all_reduce"]["tcpxr-host"])
        self.assertIn("time_us", results["all_reduce"]["tcpxr-host"][8])

    def test_the_svg_has_the_ratio_panel(self):
        out = os.path.join(self.dir, "pic.svg")
        replot.main([self.dir, out, "--title", "t"])
        with open(out) as fh:
            svg = fh.read()
        self.assertIn("tcpxr vs best Socket", svg)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "pic.png")))


if __name__ == "__main__":
    unittest.main()
