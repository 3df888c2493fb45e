"""hazard/v5_shim.c: it exports only ncclNetPlugin_v5, and that table is tcpxr's, byte for byte."""
import ctypes
import os
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TCPXR = os.path.join(HERE, "..", "target", "release", "libnccl-net-tcpxr.so")


class V5Shim(unittest.TestCase):
    def setUp(self):
        if not shutil.which("cc") or not shutil.which("nm"):
            self.skipTest("no C compiler or nm")
        self.tmp = tempfile.TemporaryDirectory()
        self.lib = os.path.join(self.tmp.name, "libnccl-net-tcpxr-v5.so")
        subprocess.run(["cc", "-O2", "-Wall", "-Werror", "-fPIC", "-shared", "-o", self.lib,
                        os.path.join(HERE, "hazard", "v5_shim.c"), "-ldl"], check=True)

    def tearDown(self):
        self.tmp.cleanup()

    def test_it_exports_only_the_v5_table_of_128_bytes(self):
        out = subprocess.run(["nm", "-D", "-S", "--defined-only", self.lib],
                             capture_output=True, text=True, check=True).stdout
        tables = [line.split() for line in out.splitlines() if "ncclNet" in line]
        self.assertEqual([t[-1] for t in tables], ["ncclNetPlugin_v5"])
        self.assertEqual(int(tables[0][1], 16), 128)

    def test_its_table_is_a_copy_of_tcpxrs(self):
        if not os.path.exists(TCPXR):
            self.skipTest("tcpxr not built (cargo build --release)")
        os.environ["TCPXR_SHIM_TARGET"] = os.path.abspath(TCPXR)
        try:
            shim = ctypes.CDLL(self.lib, mode=os.RTLD_LOCAL)
        finally:
            del os.environ["TCPXR_SHIM_TARGET"]
        tcpxr = ctypes.CDLL(os.path.abspath(TCPXR), mode=os.RTLD_LOCAL)
        copy = ctypes.string_at(ctypes.addressof(ctypes.c_char.in_dll(shim, "ncclNetPlugin_v5")), 128)
        orig = ctypes.string_at(ctypes.addressof(ctypes.c_char.in_dll(tcpxr, "ncclNetPlugin_v5")), 128)
        self.assertEqual(copy, orig)
        self.assertNotIn(b"\0" * 8, [copy[i:i + 8] for i in range(0, 128, 8)])


if __name__ == "__main__":
    unittest.main()
