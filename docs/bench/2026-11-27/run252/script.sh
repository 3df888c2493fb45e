#!/bin/bash
# run252 (one H200, 16 cores; 2026-11-27, twenty-eighth session): the tuner's pool cap (dist/c14,
# 5d7d4c9: 2 channels where a process's I/O pool has 2-3 threads, 4 where it has 4-7) against
# dist/c13 (51a4acd, before it), alternated twice, host buffers under MPS: four ranks on GPU 0
# (2 I/O threads a rank) all_reduce and all_gather 1-256 MiB; two ranks (6 threads) all_reduce
# 16-512 MiB. 10 iterations, -c 1. The tuner's log line about the cap, from the new runs' logs.
cd "$(dirname "$0")/.."; A=/tmp/run252; source dist/common.sh
{ date -u; uname -r; nvidia-smi -L; nproc; echo "new: $(cat dist/c14/commit.txt)"; echo "old: $(cat dist/c13/commit.txt)"; uptime; } > $A/machine.txt 2>&1
trap "tar cJf $R/run252.tar.xz -C /tmp run252" EXIT
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
rn(){ local name=$1 lib=$2 ranks=$3 ops=$4 min=$5 max=$6
  timeout 200 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --one-gpu --mps --ranks $ranks --ops $ops --warmup 3 --timeout 90 --plugin-dir $lib --min $min --max $max --iters 10 --configs tcpxr-host --out $A/$name > $A/$name.txt 2>&1
  el "$name rc=$? $(grep -c ' ok, ' $A/$name.txt) ok"; }
for p in 1 2; do
  rn r4-old-$p dist/c13 4 all_reduce,all_gather 1M 256M
  rn r4-new-$p dist/c14 4 all_reduce,all_gather 1M 256M
  rn r2-new-$p dist/c14 2 all_reduce 16M 512M
  rn r2-old-$p dist/c13 2 all_reduce 16M 512M
done
grep -rh "tuner: the I/O pool" $A/r*-new-*/logs 2>/dev/null | sed 's/^[^ ]* //' | sort | uniq -c > $A/cap-lines.txt
el "wrong: $(grep -h 'Out of bounds values' $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
