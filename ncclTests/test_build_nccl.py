"""build_nccl.sh: which trees it edits, how it rewrites the calls CUDA 13 changed, and that it
edits once. The trees here are made up (a version file and a few lines of C); EDIT_ONLY=1 stops
the script before it builds."""
import os
import subprocess
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "build_nccl.sh")


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def read(root, rel):
    with open(os.path.join(root, rel)) as f:
        return f.read()


class BuildNccl(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.src = os.path.join(self.tmp.name, "src-tree")
        self.cuda = os.path.join(self.tmp.name, "cuda")
        self.cuda_version(13000)

    def tearDown(self):
        self.tmp.cleanup()

    def cuda_version(self, code):
        write(self.cuda, "include/cuda.h", "#define CUDA_VERSION %d\n" % code)

    def nccl_version(self, minor, patch):
        write(self.src, "makefiles/version.mk",
              "NCCL_MAJOR   := 2\nNCCL_MINOR   := %d\nNCCL_PATCH   := %d\nNCCL_SUFFIX  :=\n" % (minor, patch))

    def run_script(self):
        env = dict(os.environ, CUDA_HOME=self.cuda, EDIT_ONLY="1")
        return subprocess.run(["bash", SCRIPT, self.src, os.path.join(self.tmp.name, "out")],
                              env=env, capture_output=True, text=True)

    def test_newer_releases_and_older_cuda_need_no_edits(self):
        for minor, patch, cuda in ((27, 7, 13000), (28, 3, 13000), (25, 1, 12080)):
            self.nccl_version(minor, patch)
            self.cuda_version(cuda)
            r = self.run_script()
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("no edits needed", r.stdout)

    def test_a_tree_without_the_known_calls_is_refused_and_left_as_it_was(self):
        self.nccl_version(25, 1)
        write(self.src, "src/misc/other.cc", "int f() { return 0; }\n")
        r = self.run_script()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("none of the calls", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.src, ".tcpxr-cuda13-edits")))

    def test_capture_calls_gain_a_null_edge_argument_and_the_tree_is_edited_once(self):
        self.nccl_version(25, 1)
        write(self.src, "src/misc/capture.cc",
              "void g() {\n"
              "  check(cudaStreamGetCaptureInfo_v2(s, &st, &id, f(a, b), nullptr, &n));\n"
              "  check(cudaStreamUpdateCaptureDependencies(s, nodes, n, x ? A : B));\n"
              "  check(cudaStreamUpdateCaptureDependencies(s, nodes, nullptr, n, A));\n"
              "}\n")
        r = self.run_script()
        self.assertEqual(r.returncode, 0, r.stderr)
        text = read(self.src, "src/misc/capture.cc")
        self.assertIn("cudaStreamGetCaptureInfo(s, &st, &id, f(a, b), nullptr, nullptr, &n)", text)
        self.assertIn("cudaStreamUpdateCaptureDependencies(s, nodes, nullptr, n, x ? A : B)", text)
        # a call already in the 5-argument form is left alone
        self.assertEqual(text.count("nullptr, n, A)"), 1)
        r = self.run_script()
        self.assertIn("edits already made", r.stdout)
        self.assertEqual(read(self.src, "src/misc/capture.cc"), text)

    def test_unversioned_driver_pointers_get_the_abi_their_calls_use(self):
        self.nccl_version(23, 4)
        write(self.src, "src/misc/capture.cc", "cudaStreamGetCaptureInfo_v2(s, a, b, c, d, e);\n")
        write(self.src, "src/include/cudawrap.h",
              "#include <cudaTypedefs.h>\n"
              "#define DECLARE_CUDA_PFN_EXTERN(symbol) extern PFN_##symbol pfn_##symbol\n"
              "DECLARE_CUDA_PFN_EXTERN(cuCtxCreate);\nDECLARE_CUDA_PFN_EXTERN(cuCtxGetDevice);\n")
        write(self.src, "src/misc/cudawrap.cc",
              "#define LOAD_SYM(symbol, ignore) \\\n"
              "    res = cudaGetDriverEntryPoint(#symbol, (void **) (&pfn_##symbol), cudaEnableDefault, &driverStatus);\n"
              "LOAD_SYM(cuCtxCreate, 1);\nLOAD_SYM(cuCtxGetDevice, 1);\n")
        r = self.run_script()
        self.assertEqual(r.returncode, 0, r.stderr)
        h = read(self.src, "src/include/cudawrap.h")
        self.assertIn("#define PFN_cuCtxCreate PFN_cuCtxCreate_v11040\n", h)
        self.assertIn("#define PFN_cuCtxGetDevice PFN_cuCtxGetDevice_v2000\n", h)
        self.assertIn("cudaGetDriverEntryPointByVersion(#symbol, (void **) (&pfn_##symbol), "
                      "NCCL_ABI_VERSION_##symbol, cudaEnableDefault, &driverStatus)",
                      read(self.src, "src/misc/cudawrap.cc"))

    def test_a_driver_function_of_unknown_abi_is_refused(self):
        self.nccl_version(23, 4)
        write(self.src, "src/misc/capture.cc", "cudaStreamGetCaptureInfo_v2(s, a, b, c, d, e);\n")
        write(self.src, "src/include/cudawrap.h",
              "#include <cudaTypedefs.h>\n"
              "#define DECLARE_CUDA_PFN_EXTERN(symbol) extern PFN_##symbol pfn_##symbol\n"
              "DECLARE_CUDA_PFN_EXTERN(cuSomethingNew);\n")
        write(self.src, "src/misc/cudawrap.cc", "LOAD_SYM(cuSomethingNew, 1);\n")
        r = self.run_script()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("cuSomethingNew", r.stderr)
        self.assertNotIn("cudaStreamGetCaptureInfo(", read(self.src, "src/misc/capture.cc"))


if __name__ == "__main__":
    unittest.main()
