#!/bin/bash
# run148: after the house refactor (plugin split, one receive mode, settings resolver, tuner table;
# 80f370a): correctness again. GPU test binaries with one hardware queue and under MPS; nccl-tests
# -c 1 with GPU buffers at 2, 3, 4 ranks (NCCL's choice, Ring, Tree for all_reduce; every
# collective at 2 ranks and at 4 with Ring forced); torch exactness at 2, 3, 4 ranks.
cd "$(dirname "$0")/.."; A=/tmp/run148; source dist/common.sh
fin(){ tar czf $R/run148.tgz -C /tmp run148; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
build_tests
gt(){ for t in gpu_hazard gpu gpu_tcpx device_unpack_tcpx device_unpack_peers; do echo "== $t"; timeout 100 dist/deps/$t --include-ignored --test-threads=1 --nocapture; echo "== $t rc=$?"; done; }
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench CUDA_DEVICE_MAX_CONNECTIONS=1; gt ) > $A/gpu-tests-1queue.txt 2>&1
grep -E "^== .*rc=|test result" $A/gpu-tests-1queue.txt | sed 's/^/1queue /' | tee -a $A/steps.txt
ITERS=2 nt q1-3-gpu-tree dist/new 3 all_reduce gpu Tree CUDA_DEVICE_MAX_CONNECTIONS=1
mps_on
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/dist/libtcpx_emu.so TCPXR_BENCH=$PWD/dist/tcpxr-bench; gt ) > $A/gpu-tests-mps.txt 2>&1
grep -E "^== .*rc=|test result" $A/gpu-tests-mps.txt | sed 's/^/mps /' | tee -a $A/steps.txt
for np in 2 3 4; do for algo in - Ring Tree; do nt gpu-$np-$algo dist/new $np all_reduce gpu $algo; done; done
for op in all_gather reduce_scatter broadcast reduce alltoall sendrecv; do nt gpu-2-$op dist/new 2 $op gpu -; nt gpu-4-ring-$op dist/new 4 $op gpu Ring; done
nt host-4-tree dist/new 4 all_reduce host Tree
export NCCL_TCPXR_TCPX_LIB=$PWD/dist/libtcpx_emu.so TCPX_EMU_MODE=gpu
tb(){ local name=$1; shift; timeout 150 python3 ncclTests/torch_bench.py --one-gpu --mps --exact --timeout 100 --out $A/$name "$@" > $A/$name.log 2>&1; el "$name rc=$? $(tail -1 $A/$name.log | tr '\n' ' ')"; }
tb exact-4 --plugin-dir dist --ranks 4
tb exact-3 --plugin-dir dist --ranks 3 --configs tcpxr-gpu,tcpxr-tcpx
for n in 2 3 4; do tb exact-$n-tree --plugin-dir dist --ranks $n --algo Tree --exact-ops all_reduce; done
tb exact-2-ring --plugin-dir dist --ranks 2 --algo Ring --configs tcpxr-host,tcpxr-gpu
tb exact-4-ring --plugin-dir dist --ranks 4 --algo Ring --configs tcpxr-gpu,tcpxr-tcpx
mps_off
