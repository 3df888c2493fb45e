#!/bin/bash
# run242 (one H200, 16 cores; 2026-11-27, twenty-eighth session). 1) dist/c7 (ce59fa9, copies chunk
# by chunk, with each receive's event recorded right behind its own last chunk's copy): GPU tests
# with one queue and under MPS, the correctness set, sendrecv 1-512 MiB under MPS against c4
# (623727a), two passes. 2) Where NCCL's sendrecv time goes with GPU buffers (c4): per-thread CPU
# (top -H, 1 s samples) during 40 iterations of 512 MiB, host and GPU buffers; and c4 with
# NCCL_P2P_NET_CHUNKSIZE=2M (a quarter of the receives: a per-receive cost shrinks, a per-byte one not).
cd "$(dirname "$0")/.."; A=/tmp/run242; source dist/common.sh
L=dist/c7
{ date -u; uname -r; nvidia-smi -L; nproc; echo "new: $(cat dist/c7/commit.txt)"; echo "old: $(cat dist/c4/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run242.tar.xz -C /tmp run242" EXIT
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
rn(){ timeout ${2:-200} python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --one-gpu --mps --ops sendrecv --warmup 3 --timeout 60 --out $A/$1 "${@:3}" > $A/$1.txt 2>&1
  el "$1 rc=$? $(grep -c ' ok, ' $A/$1.txt) ok"; }
for p in 1 2; do
  rn new-$p 200 --plugin-dir dist/c7 --min 1M --max 512M --iters 10 --configs tcpxr-host,tcpxr-gpu
  rn old-$p 200 --plugin-dir dist/c4 --min 1M --max 512M --iters 10 --configs tcpxr-gpu,tcpxr-gpu+p2m,tcpxr-host+p2m --variant p2m:NCCL_P2P_NET_CHUNKSIZE=2097152
done
for cfg in tcpxr-host tcpxr-gpu; do
  (sleep 3; top -H -b -d 1 -n 12 -w 250 > $A/top-$cfg.txt 2>&1) & TP=$!
  rn prof-$cfg 100 --plugin-dir dist/c4 --min 512M --max 512M --iters 40 --configs $cfg
  wait $TP
done
grep -r -h 'stats receive copies' $A/new-*/logs $A/old-*/logs $A/prof-*/logs 2>/dev/null | sort | uniq > $A/copy-counters.txt
grep -r -h 'NET/tcpxr stats' $A/prof-*/logs 2>/dev/null | sort | uniq > $A/prof-stats.txt
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
