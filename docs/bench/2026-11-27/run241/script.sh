#!/bin/bash
# run241 (one H200, 16 cores; 2026-11-27, twenty-seventh session): copies into GPU memory chunk by
# chunk as each lands (dist/c6) against whole receives once the last byte is in (dist/c4, 623727a).
# 1) c6's GPU test binaries with one hardware queue and under MPS; the correctness set (checks: 3
# and 4 ranks on GPU 0 under MPS, host and GPU buffers, NCCL's choice, Ring, Tree; 4 ranks GPU
# buffers with one queue; 8 B-32 MiB -c 1). 2) Speed, 2 ranks under MPS, sendrecv 1-512 MiB, 10
# iterations, --repeat 2: c6 host and GPU buffers, each also with 128 KiB chunks
# (NCCL_TCPXR_CHUNK_BYTES=128K: four chunks a 512 KiB receive, copied as they land); c4 GPU buffers.
cd "$(dirname "$0")/.."; A=/tmp/run241; source dist/common.sh
L=dist/c6
{ date -u; uname -r; nvidia-smi -L; nproc; echo "new: $(cat dist/c6/commit.txt)"; echo "old: $(cat dist/c4/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run241.tar.xz -C /tmp run241" EXIT
(build_tests_in /tmp/nt-2.28.3 /usr 14) & BUILD=$!
gt(){ for t in gpu_hazard gpu_copy_in gpu device_unpack_peers; do echo "== $t"; timeout 120 $L/deps/$t --include-ignored --test-threads=1 --nocapture; echo "== $t rc=$?"; done; }
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/$L/libtcpx_emu.so TCPXR_BENCH=$PWD/$L/tcpxr-bench CUDA_DEVICE_MAX_CONNECTIONS=1; gt ) > $A/gpu-tests-1queue.txt 2>&1
el "GPU tests, one queue: $(grep -h '^== .* rc=' $A/gpu-tests-1queue.txt | tr '\n' ' ')"
mps_on
( export TCPXR_REQUIRE_GPU=1 TCPX_EMU_LIB=$PWD/$L/libtcpx_emu.so TCPXR_BENCH=$PWD/$L/tcpxr-bench; gt ) > $A/gpu-tests-mps.txt 2>&1
el "GPU tests, MPS: $(grep -h '^== .* rc=' $A/gpu-tests-mps.txt | tr '\n' ' ')"
mps_off
wait $BUILD; NT=/tmp/nt-2.28.3/build
checks $L
for p in 1 2; do
  timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c6 --one-gpu --mps --ops sendrecv --min 1M --max 512M --iters 10 --warmup 3 --timeout 60 --configs tcpxr-host,tcpxr-gpu,tcpxr-host+c128,tcpxr-gpu+c128 --variant c128:NCCL_TCPXR_CHUNK_BYTES=128K --out $A/new-$p > $A/new-$p.txt 2>&1
  el "new-$p rc=$? $(grep -c ' ok, ' $A/new-$p.txt) ok"
  timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c4 --one-gpu --mps --ops sendrecv --min 1M --max 512M --iters 10 --warmup 3 --timeout 60 --configs tcpxr-gpu --out $A/old-$p > $A/old-$p.txt 2>&1
  el "old-$p rc=$? $(grep -c ' ok, ' $A/old-$p.txt) ok"
done
grep -r -h 'stats receive copies' $A/new-*/logs $A/old-*/logs 2>/dev/null | sort | uniq > $A/copy-counters.txt
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
