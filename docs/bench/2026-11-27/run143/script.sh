#!/bin/bash
# run143: issue 29. 63c4898 (dist/old) against the arena fix (dist/new): GPU buffers at 2-4 ranks on
# GPU 0 under MPS, NCCL's algorithm, Ring and Tree forced; host buffers too. nccl-tests -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run143; source dist/common.sh
fin(){ tar czf $R/run143.tgz -C /tmp run143; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
build_tests; mps_on
nt old-3-gpu-default dist/old 3 all_reduce gpu -
nt old-3-gpu-tree dist/old 3 all_reduce gpu Tree
for np in 3 4 2; do for algo in - Ring Tree; do
  nt new-$np-gpu-$algo dist/new $np all_reduce gpu $algo
done; done
for np in 3 4; do for algo in - Tree; do nt new-$np-host-$algo dist/new $np all_reduce host $algo; done; done
mps_off
