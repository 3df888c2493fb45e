#!/bin/bash
# run145: issue 29 after 8525462 (arena fix + ncclTests --ranks): torch exactness (six collectives,
# fp32/bf16/int32, odd counts) at 2, 3, 4 ranks on GPU 0 under MPS with host and GPU buffers and the
# tcpx emulator, NCCL's algorithm and Ring/Tree forced; 63c4898 beside at 3 ranks; the runner at 3
# and 4 ranks; a short soak at 3 ranks.
cd "$(dirname "$0")/.."; A=/tmp/run145; source dist/common.sh
fin(){ tar czf $R/run145.tgz -C /tmp run145; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
build_tests
export NCCL_TCPXR_TCPX_LIB=$PWD/dist/libtcpx_emu.so TCPX_EMU_MODE=gpu
tb(){ local name=$1; shift; timeout 280 python3 ncclTests/torch_bench.py --one-gpu --mps --exact --timeout 120 --out $A/$name "$@" > $A/$name.log 2>&1; el "$name rc=$? $(grep -h -c -i mismatch $A/$name/exact.md 2>/dev/null) $(tail -2 $A/$name.log | tr '\n' ' ')"; }
tb exact-old-3 --plugin-dir dist/old --ranks 3 --configs tcpxr-gpu --exact-dtypes float32 --exact-counts 7,4097,65537
tb exact-3 --plugin-dir dist --ranks 3
tb exact-4 --plugin-dir dist --ranks 4
tb exact-4-tree --plugin-dir dist --ranks 4 --algo Tree --configs tcpxr-host,tcpxr-gpu,tcpxr-tcpx
tb exact-3-ring --plugin-dir dist --ranks 3 --algo Ring --configs tcpxr-gpu,tcpxr-tcpx
tb exact-2 --plugin-dir dist --ranks 2 --configs tcpxr-host,tcpxr-gpu,tcpxr-tcpx
for n in 3 4; do
 timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist --one-gpu --mps --ranks $n --configs socket,tcpxr-host,tcpxr-gpu,tcpxr-tcpx --ops all_reduce,all_gather,reduce_scatter,broadcast,reduce,alltoall,sendrecv --max 32M --iters 2 --warmup 1 --timeout 60 --out $A/runner$n > $A/runner$n.log 2>&1; el "runner ranks=$n rc=$? $(tail -3 $A/runner$n.log | tr '\n' ' ')"
done
