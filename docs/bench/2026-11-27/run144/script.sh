#!/bin/bash
# run144: issue 29 after 5ede84b: every nccl-tests collective at 3 and 4 ranks (GPU 0, MPS) with GPU
# buffers (NCCL's algorithm, Ring forced), host buffers, the tcpx emulator; one hardware queue
# without MPS; the GPU test binaries with one queue and under MPS.
cd "$(dirname "$0")/.."; A=/tmp/run144; source dist/common.sh
fin(){ tar czf $R/run144.tgz -C /tmp run144; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
build_tests
gt(){ for t in gpu_hazard gpu gpu_tcpx device_unpack_peers; do echo "== $t"; timeout 100 dist/deps/$t --test-threads=1 --nocapture; echo "== $t rc=$?"; done; }
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench CUDA_DEVICE_MAX_CONNECTIONS=1; gt ) > $A/gpu-tests-1queue.txt 2>&1
grep -E "^== |test result" $A/gpu-tests-1queue.txt | sed 's/^/1queue /' | tee -a $A/steps.txt
EMU=(NCCL_TCPXR_TRANSPORT=tcpx NCCL_TCPXR_TCPX_LIB=$PWD/dist/libtcpx_emu.so)
# one hardware queue, no MPS (ranks time-slice: correctness only)
ITERS=2 nt q1-3-gpu-tree dist/new 3 all_reduce gpu Tree CUDA_DEVICE_MAX_CONNECTIONS=1
ITERS=2 nt q1-4-gpu-alltoall dist/new 4 alltoall gpu - CUDA_DEVICE_MAX_CONNECTIONS=1
ITERS=2 nt q1-3-emu-tree dist/new 3 all_reduce gpu Tree CUDA_DEVICE_MAX_CONNECTIONS=1 "${EMU[@]}"
mps_on
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench; gt ) > $A/gpu-tests-mps.txt 2>&1
grep -E "^== |test result" $A/gpu-tests-mps.txt | sed 's/^/mps /' | tee -a $A/steps.txt
for np in 3 4; do for op in all_gather reduce_scatter broadcast reduce alltoall sendrecv; do
  nt gpu-$np-$op dist/new $np $op gpu -
done; done
for op in all_gather reduce_scatter broadcast reduce alltoall sendrecv; do nt gpu-3-ring-$op dist/new 3 $op gpu Ring; done
for op in all_gather reduce_scatter broadcast reduce alltoall sendrecv; do nt host-4-$op dist/new 4 $op host -; done
nt emu-3-default dist/new 3 all_reduce gpu - "${EMU[@]}"
nt emu-3-tree dist/new 3 all_reduce gpu Tree "${EMU[@]}"
nt emu-4-alltoall dist/new 4 alltoall gpu - "${EMU[@]}"
nt old-4-alltoall dist/old 4 alltoall gpu -
mps_off
