#!/usr/bin/env bash
# build_nccl.sh SRC_DIR OUT_DIR: build an NVIDIA NCCL release from source with CUDA 13 (issue 35).
#
# SRC_DIR is a checkout of an NCCL release tag (v2.12.12-1 ... v2.25.1-1, or any newer one);
# OUT_DIR becomes its BUILDDIR (OUT_DIR/lib/libnccl.so, OUT_DIR/include/nccl.h), the NCCL_HOME
# to build nccl-tests against. Releases from 2.27.7 on build with CUDA 13 as they are. Older
# ones do not: CUDA 13 removed or changed driver/runtime API they use. This script edits the
# checkout in place before it builds (each edit is described where it is made, below); it ships
# no NCCL code and no patch file. The edits are made once: the tree is marked (file
# .tcpxr-cuda13-edits at its root) and a second run only builds (make picks up where a stopped
# build left off). Edits are made only when the CUDA at CUDA_HOME is 13 or newer.
#
# Environment (defaults): CUDA_HOME (/usr/local/cuda), JOBS (16),
#   NVCC_GENCODE (-gencode=arch=compute_90,code=sm_90), EDIT_ONLY (0: 1 makes the edits and
#   stops), BUILD_TIMEOUT (0: seconds after which make is stopped; rerun to go on).
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 SRC_DIR OUT_DIR" >&2
  exit 2
fi
SRC=$(cd "$1" && pwd)
mkdir -p "$2"
OUT=$(cd "$2" && pwd)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
JOBS=${JOBS:-16}
NVCC_GENCODE=${NVCC_GENCODE:--gencode=arch=compute_90,code=sm_90}
EDIT_ONLY=${EDIT_ONLY:-0}
BUILD_TIMEOUT=${BUILD_TIMEOUT:-0}

vmk="$SRC/makefiles/version.mk"
[ -f "$vmk" ] || { echo "build_nccl.sh: $vmk not found: is $SRC an NCCL checkout?" >&2; exit 2; }
field() { sed -n "s/^$1[[:space:]]*:=[[:space:]]*\([0-9]*\).*/\1/p" "$vmk"; }
MAJOR=$(field NCCL_MAJOR); MINOR=$(field NCCL_MINOR); PATCH=$(field NCCL_PATCH)
NCCL_CODE=$((MAJOR * 10000 + MINOR * 100 + PATCH))
CUDA_CODE=$(sed -n 's/^#define CUDA_VERSION[[:space:]]*\([0-9]*\).*/\1/p' "$CUDA_HOME/include/cuda.h" 2>/dev/null || true)
[ -n "$CUDA_CODE" ] || { echo "build_nccl.sh: no CUDA_VERSION in $CUDA_HOME/include/cuda.h" >&2; exit 2; }
echo "build_nccl.sh: NCCL $MAJOR.$MINOR.$PATCH in $SRC, CUDA $CUDA_CODE at $CUDA_HOME, into $OUT"

if [ "$CUDA_CODE" -lt 13000 ] || [ "$NCCL_CODE" -ge 22707 ]; then
  echo "build_nccl.sh: no edits needed"
elif [ -e "$SRC/.tcpxr-cuda13-edits" ]; then
  echo "build_nccl.sh: edits already made ($SRC/.tcpxr-cuda13-edits)"
else
  python3 - "$SRC" <<'PY'
import os, re, sys

src = sys.argv[1]
done = []
edited = {}  # file -> new text, written out only once every edit has been made


def path(rel):
    return os.path.join(src, rel)


def read(rel):
    if rel not in edited:
        with open(path(rel), encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    return edited[rel]


def write(rel, text):
    edited[rel] = text


def fail(msg):
    sys.exit("build_nccl.sh: " + msg + " (an NCCL release this script does not know?)")


def sources():
    """Every host C++ file of the library (the device code needs no edit)."""
    for root, dirs, files in os.walk(path("src")):
        dirs[:] = [d for d in dirs if d != "device"]
        for name in files:
            if name.endswith((".cc", ".h")) and name != "enhcompat.cc":
                yield os.path.relpath(os.path.join(root, name), src)


def split_args(text, start):
    """text[start] is just past '('. Returns (argument strings, index just past ')')."""
    depth, args, cur, i = 0, [], "", start
    while True:
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                args.append(cur)
                return args, i + 1
            depth -= 1
        elif c == "," and depth == 0:
            args.append(cur)
            cur = ""
            i += 1
            continue
        cur += c
        i += 1


def rewrite_calls(name, nargs, change):
    """Rewrites every call name(...) with nargs arguments as change(args) -> (new name, args)."""
    count = 0
    for rel in sources():
        text = read(rel)
        out, pos = "", 0
        for m in re.finditer(r"\b%s\s*\(" % re.escape(name), text):
            if m.start() < pos:
                continue
            args, end = split_args(text, m.end())
            if len(args) != nargs:
                continue
            new_name, new_args = change(args)
            out += text[pos:m.start()] + new_name + "(" + ",".join(new_args) + ")"
            pos = end
            count += 1
        if pos:
            write(rel, out + text[pos:])
    return count


def replace_once(rel, old, new, what):
    text = read(rel)
    if text.count(old) != 1:
        fail("%s: expected one '%s' for %s, found %d" % (rel, old.strip()[:60], what, text.count(old)))
    write(rel, text.replace(old, new))
    done.append("%s: %s" % (rel, what))


# 1. Stream capture. CUDA 13 dropped cudaStreamGetCaptureInfo_v2 (stream, status, id, graph,
# nodes, count): cudaStreamGetCaptureInfo now has that argument list with one more, the edge
# data of each node, before the count. NCCL asked for no edge data, so pass nullptr there: the
# call then behaves as _v2 did (it fails with cudaErrorLossyQuery if some edge carries data).
n = rewrite_calls("cudaStreamGetCaptureInfo_v2", 6,
                  lambda a: ("cudaStreamGetCaptureInfo", a[:5] + [" nullptr"] + a[5:]))
if n:
    done.append("cudaStreamGetCaptureInfo_v2 -> cudaStreamGetCaptureInfo, edge data nullptr (%d calls)" % n)

# 2. cudaStreamUpdateCaptureDependencies (stream, nodes, count, flags) takes the nodes' edge
# data after the node list in CUDA 13. nullptr: plain edges, which is what the old call made.
n = rewrite_calls("cudaStreamUpdateCaptureDependencies", 4,
                  lambda a: ("cudaStreamUpdateCaptureDependencies", a[:2] + [" nullptr"] + a[2:]))
if n:
    done.append("cudaStreamUpdateCaptureDependencies: edge data nullptr (%d calls)" % n)

# 3. Driver entry points (2.21 - 2.25). NCCL declares a pointer per driver function with the
# unversioned typedef PFN_cuX and fills it with cudaGetDriverEntryPoint. CUDA 13's
# cudaTypedefs.h has only the versioned typedefs (PFN_cuX_vNNNNN, the ABI as of CUDA N.N), and
# cudaGetDriverEntryPoint hands out the newest ABI (the one of the CUDA runtime NCCL is built
# with), which for cuCtxCreate (4 arguments since 12.5) and cuCtxGetDevice (2 since 13.0) is not
# the one NCCL's calls were written for. So: name, for each function, the ABI NCCL's call sites
# use (PFN_cuX becomes that versioned typedef) and ask the runtime for exactly that ABI with
# cudaGetDriverEntryPointByVersion (CUDA 12.5 and newer). Pointer type, call sites and the
# function handed out then agree, and no call site needs changing (cuCtxCreate keeps its CUDA
# 11.4 form with the exec-affinity arguments, cuCtxGetDevice its one argument). 2.19 already
# declares versioned pointers and asks cuGetProcAddress for the version; 2.12 has no table.
ABI = {
    "cuDeviceGet": 2000, "cuDeviceGetAttribute": 2000, "cuGetErrorString": 6000,
    "cuGetErrorName": 6000, "cuMemGetAddressRange": 3020, "cuCtxCreate": 11040,
    "cuCtxDestroy": 4000, "cuCtxGetCurrent": 4000, "cuCtxSetCurrent": 4000,
    "cuCtxGetDevice": 2000, "cuPointerGetAttribute": 4000, "cuLaunchKernel": 4000,
    "cuLaunchKernelEx": 11060, "cuMemAddressReserve": 10020, "cuMemAddressFree": 10020,
    "cuMemCreate": 10020, "cuMemGetAllocationGranularity": 10020,
    "cuMemExportToShareableHandle": 10020, "cuMemImportFromShareableHandle": 10020,
    "cuMemMap": 10020, "cuMemRelease": 10020, "cuMemRetainAllocationHandle": 11000,
    "cuMemSetAccess": 10020, "cuMemUnmap": 10020,
    "cuMemGetAllocationPropertiesFromHandle": 10020, "cuMemGetHandleForAddressRange": 11070,
    "cuMulticastAddDevice": 12010, "cuMulticastBindMem": 12010, "cuMulticastBindAddr": 12010,
    "cuMulticastCreate": 12010, "cuMulticastGetGranularity": 12010, "cuMulticastUnbind": 12010,
}
wrap_h, wrap_cc = "src/include/cudawrap.h", "src/misc/cudawrap.cc"
if os.path.exists(path(wrap_h)) and "extern PFN_##symbol pfn_##symbol" in read(wrap_h):
    used = set(re.findall(r"DECLARE_CUDA_PFN_EXTERN\((\w+)\);", read(wrap_h)))
    used |= set(re.findall(r"DECLARE_CUDA_PFN\((\w+)\);", read(wrap_cc)))
    used |= set(re.findall(r"LOAD_SYM\((\w+), [01]\);", read(wrap_cc)))
    unknown = sorted(used - set(ABI))
    if unknown:
        fail("no ABI version known for " + ", ".join(unknown))
    block = ["// build_nccl.sh (tcpxr): the driver ABI each pointer is declared with and asked for."]
    for sym in sorted(used):
        block.append("#define PFN_%s PFN_%s_v%d" % (sym, sym, ABI[sym]))
        block.append("#define NCCL_ABI_VERSION_%s %d" % (sym, ABI[sym]))
    replace_once(wrap_h, "#include <cudaTypedefs.h>\n",
                 "#include <cudaTypedefs.h>\n" + "\n".join(block) + "\n",
                 "PFN_cuX -> PFN_cuX_vNNNN for %d functions" % len(used))
    replace_once(wrap_cc,
                 "cudaGetDriverEntryPoint(#symbol, (void **) (&pfn_##symbol), cudaEnableDefault, &driverStatus)",
                 "cudaGetDriverEntryPointByVersion(#symbol, (void **) (&pfn_##symbol), "
                 "NCCL_ABI_VERSION_##symbol, cudaEnableDefault, &driverStatus)",
                 "LOAD_SYM asks cudaGetDriverEntryPointByVersion for that ABI")

# 4. Multi-device cooperative launch (2.12). CUDA 13 removed struct cudaLaunchParams,
# cudaLaunchCooperativeKernelMultiDevice and its device attribute. NCCL 2.12 keeps its launch
# arguments in struct cudaLaunchParams and defines that struct itself for CUDA < 9: define it
# for CUDA >= 13 too (the same six fields CUDA 12 had). It uses the multi-device launch only in
# its GROUP launch mode (one process driving several GPUs, NCCL_LAUNCH_MODE=GROUP) when the GPUs
# report support; with CUDA 13 skip the query (cgMdLaunch stays 0, as on GPUs without it) and
# the call, so NCCL takes its own fallback, one cudaLaunchKernel per GPU.
comm_h = "src/include/comm.h"
if os.path.exists(path("src/enqueue.cc")) and "cudaLaunchCooperativeKernelMultiDevice(" in read("src/enqueue.cc"):
    replace_once(comm_h, "#if CUDART_VERSION < 9000\nstruct cudaLaunchParams {",
                 "#if CUDART_VERSION < 9000 || CUDART_VERSION >= 13000\nstruct cudaLaunchParams {",
                 "struct cudaLaunchParams defined for CUDA 13")
    replace_once("src/enqueue.cc", "#if CUDART_VERSION >= 9000\n  if (cgMode & 0x01) {",
                 "#if CUDART_VERSION >= 9000 && CUDART_VERSION < 13000\n  if (cgMode & 0x01) {",
                 "no cudaLaunchCooperativeKernelMultiDevice with CUDA 13")
    replace_once("src/init.cc", "#if CUDART_VERSION >= 9000\n    if (*comm->intraCC",
                 "#if CUDART_VERSION >= 9000 && CUDART_VERSION < 13000\n    if (*comm->intraCC",
                 "no cudaDevAttrCooperativeMultiDeviceLaunch query with CUDA 13")

# Anything CUDA 13 lacks that is still called means a release these edits do not cover.
for rel in sources():
    for gone in ("cudaStreamGetCaptureInfo_v2", "cudaLaunchCooperativeKernelMultiDevice("):
        if gone in read(rel) and "CUDART_VERSION < 13000" not in read(rel):
            fail("%s still uses %s" % (rel, gone))

if not done:
    fail("found none of the calls CUDA 13 changed")
for rel, text in edited.items():
    with open(path(rel), "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)
with open(path(".tcpxr-cuda13-edits"), "w") as f:
    f.write("".join(line + "\n" for line in done))
for line in done:
    print("build_nccl.sh: edited " + line)
PY
fi

[ "$EDIT_ONLY" = 1 ] && exit 0

cmd=(make -C "$SRC" -j"$JOBS" src.build NVCC_GENCODE="$NVCC_GENCODE" BUILDDIR="$OUT" CUDA_HOME="$CUDA_HOME")
if [ "$BUILD_TIMEOUT" != 0 ]; then
  cmd=(timeout "$BUILD_TIMEOUT" "${cmd[@]}")
fi
start=$(date +%s)
"${cmd[@]}"
echo "build_nccl.sh: built NCCL $MAJOR.$MINOR.$PATCH in $(( $(date +%s) - start )) s: $OUT/lib"
ls "$OUT/lib"
