#!/bin/bash
# run248 (one H200, 16 cores; 2026-11-27, twenty-eighth session): NCCL's own settings against GPU
# buffers' sendrecv gap, with dist/c4 (623727a, the data path at HEAD): NCCL_NET_SHARED_BUFFERS=0
# (point-to-point connections get their own buffers instead of the shared pool) and
# NCCL_NCHANNELS_PER_NET_PEER=4 (twice the channels, so twice the receives in flight), each with
# host and GPU buffers. 2 ranks under MPS, sendrecv 8-512 MiB, 10 iterations, -c 1, --repeat 2.
cd "$(dirname "$0")/.."; A=/tmp/run248; source dist/common.sh
{ date -u; uname -r; nvidia-smi -L; nproc; echo "c4: $(cat dist/c4/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run248.tar.xz -C /tmp run248" EXIT
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
timeout 500 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --one-gpu --mps --ops sendrecv --warmup 3 --timeout 60 --plugin-dir dist/c4 --min 8M --max 512M --iters 10 --repeat 2 \
  --configs tcpxr-host,tcpxr-gpu,tcpxr-host+nsb,tcpxr-gpu+nsb,tcpxr-host+ch4,tcpxr-gpu+ch4 --variant nsb:NCCL_NET_SHARED_BUFFERS=0 --variant ch4:NCCL_NCHANNELS_PER_NET_PEER=4 --out $A/ns > $A/ns.txt 2>&1
el "ns rc=$? $(grep -c ' ok, ' $A/ns.txt) ok"
grep -r -h 'stats receive copies' $A/ns/*/logs 2>/dev/null | sort | uniq > $A/copy-counters.txt
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt $A/*/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
