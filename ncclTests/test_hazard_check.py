"""hazard_check.py: what each run's outcome means, and the arguments it gives the runner."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hazard_check  # noqa: E402


class Outcome(unittest.TestCase):
    def test_a_run_is_passed_hung_or_failed(self):
        self.assertEqual(hazard_check.outcome([]), "passed")
        self.assertEqual(hazard_check.outcome(["all_reduce tcpxr-gpu: timed out after 40 s (killed)",
                                               "all_reduce tcpxr-gpu: no result rows"]), "hung")
        self.assertEqual(hazard_check.outcome(["sendrecv tcpxr-gpu: 3 wrong"]), "failed")


class Verdict(unittest.TestCase):
    def runs(self, newest, contrast):
        return {("v7+", "1queue"): newest, ("v7+", "mps"): "passed", ("v6", "1queue"): contrast, ("v6", "mps"): "hung"}

    def test_passes_only_when_device_unpack_completes_and_the_contrast_hangs(self):
        self.assertEqual(hazard_check.verdict(self.runs("passed", "hung"))[0], 0)

    def test_a_failing_device_unpack_run_fails_the_check(self):
        status, lines = hazard_check.verdict(self.runs("hung", "hung"))
        self.assertEqual(status, 1)
        self.assertIn("FAILED", lines[-1])

    def test_a_contrast_that_does_not_hang_is_inconclusive(self):
        for contrast in ("passed", "failed"):
            status, lines = hazard_check.verdict(self.runs("passed", contrast))
            self.assertEqual(status, 2)
            self.assertIn("INCONCLUSIVE", lines[-1])


class RunnerArgs(unittest.TestCase):
    def test_v6_runs_load_the_shim_and_point_it_at_tcpxr(self):
        a = hazard_check.argparse.Namespace(nccl_tests="/nt", plugin_dir="/p", ops="all_reduce", max="8M", timeout=40,
                                            ranks=2, algo=None)
        argv = hazard_check.runner_argv(a, "v6", "mps", "/o", "/o/shim.so")
        self.assertIn("NCCL_NET_PLUGIN=/o/shim.so", argv)
        self.assertIn("TCPXR_SHIM_TARGET=/p/libnccl-net-tcpxr.so", argv)
        self.assertIn("--mps", argv)
        argv = hazard_check.runner_argv(a, "v7+", "1queue", "/o", "/o/shim.so")
        self.assertNotIn("NCCL_NET_PLUGIN=/o/shim.so", argv)
        self.assertIn("CUDA_DEVICE_MAX_CONNECTIONS=1", argv)
        self.assertEqual(argv[argv.index("--configs") + 1], "tcpxr-gpu")


    def test_ranks_and_algo_reach_the_runner(self):
        a = hazard_check.argparse.Namespace(nccl_tests="/nt", plugin_dir="/p", ops="all_reduce", max="8M", timeout=40,
                                            ranks=4, algo="Tree")
        argv = hazard_check.runner_argv(a, "v7+", "mps", "/o", "/o/shim.so")
        self.assertEqual(argv[argv.index("--ranks") + 1], "4")
        self.assertEqual(argv[argv.index("--algo") + 1], "Tree")
        runner = hazard_check.run_nccl_tests.parse_args(argv)   # the runner accepts them
        self.assertEqual((runner.nranks, runner.extra_env["NCCL_ALGO"], runner.one_gpu), (4, "Tree", True))
        a.algo = None
        self.assertNotIn("--algo", hazard_check.runner_argv(a, "v6", "1queue", "/o", "/o/shim.so"))


class Shim(unittest.TestCase):
    def test_the_shim_builds_and_exports_only_the_v6_table(self):
        import shutil
        import subprocess
        import tempfile
        if not shutil.which("cc") or not shutil.which("nm"):
            self.skipTest("no C compiler or nm")
        with tempfile.TemporaryDirectory() as d:
            lib = hazard_check.build_shim(d)
            out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
            names = [line.split()[-1] for line in out.splitlines()]
            self.assertEqual([n for n in names if n.startswith("ncclNet")], ["ncclNetPlugin_v6"])


if __name__ == "__main__":
    unittest.main()
