#!/bin/bash
# run419 (one H200, session 52), main's head dist/c91 = 7ec6e02f, ranks on GPU 0 under MPS, host
# buffers:
#  tree:  item 2 at 2 ranks, all_reduce 4-32 MiB (8-16 MiB stand at 1.41-1.48, run 416). NCCL's
#         ring at 2 ranks runs an 8 MiB all_reduce as one loop a channel (a 1 MiB chunk each way,
#         no pipeline to fill); its tree cuts a channel's share into 128 KiB-1 MiB chunks and runs
#         up and down at once. tcpxr default vs NCCL_ALGO=Tree vs NCCL_ALGO=Ring, against Socket
#         1x1 and 2x2 (NCCL's choice) and Socket 2x2 with Tree; 20 iterations, -N 2, two passes
#         rotated; TUNING log of pass 1.
#  grants: where the window's grants wait: all_gather 32 MiB, 2 ranks, NCCL_TCPXR_STATS=1, with
#         and without the growing window (UNREAD 256K, MAX 4M); the stats lines kept.
#  gpu:   the GPU test binaries of c91 (34336a36, getProperties by one macro, not yet on a GPU).
cd "$(dirname "$0")/.."; A=/tmp/run419; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
timeout 300 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c91 --one-gpu --mps --ranks 2 --ops all_reduce --min 4M --max 32M --iters 20 --warmup 3 --cycles 2 --timeout 60 --repeat 2 \
  --configs tcpxr-host,tcpxr-host+tree,tcpxr-host+ring,socket-1x1,socket-2x2,socket-2x2+tree --env NCCL_DEBUG_SUBSYS=INIT,NET,TUNING \
  --variant tree:NCCL_ALGO=Tree --variant ring:NCCL_ALGO=Ring --out $A/tree > $A/tree.txt 2>&1
el "tree rc=$? $(grep -c ' ok, ' $A/tree.txt) ok, $(grep -c FAILED $A/tree.txt) failed"
for f in $A/tree/r1/logs/all_reduce.*; do echo "$f"; done | sed 's#.*/all_reduce\.\([^.]*\)\..*#\1#' | sort -u | while read c; do
  echo "$c: $(grep -h 'AllReduce:' $A/tree/r1/logs/all_reduce.$c.* | sed 's/^.*NCCL INFO //' | sort -u | head -40 | paste -sd';')"
done > $A/tuning.txt
timeout 120 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c91 --one-gpu --mps --ranks 2 --ops all_gather --min 32M --max 32M --iters 20 --warmup 3 --cycles 2 --timeout 60 \
  --configs tcpxr-host+st,tcpxr-host+win --variant st:NCCL_TCPXR_STATS=1 --variant win:NCCL_TCPXR_STATS=1 --variant win:NCCL_TCPXR_UNREAD_BYTES=262144 --variant win:NCCL_TCPXR_UNREAD_MAX_BYTES=4194304 --out $A/grants > $A/grants.txt 2>&1
el "grants rc=$? $(grep -c ' ok, ' $A/grants.txt) ok, $(grep -c FAILED $A/grants.txt) failed"
grep -rh "stats \|pool" $A/grants/logs $A/grants/*/logs 2>/dev/null | sed 's/^[^ ]* //' > $A/grant-stats.txt; el "stats lines $(wc -l < $A/grant-stats.txt)"
ls -R $A/grants | head -20 > $A/grants-tree.txt
rm -rf $A/*/r*/logs $A/*/logs
gpu_tests dist/c91
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
