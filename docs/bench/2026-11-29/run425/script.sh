#!/bin/bash
# run425 (one H200, session 52): dist/c96 = c95 + the header reading in its own module (headers.rs)
# + tcpxr's environment writes as one published array instead of setenv (env.rs). (1) NCCL still
# reads the settings tcpxr gives (its ENV log: NCCL_MIN_NCHANNELS and the rest "set by
# environment"), 2 ranks on GPU 0, all_reduce and sendrecv 8 B-32 MiB -c 1, host and GPU buffers;
# (2) the GPU test binaries of c96.
cd "$(dirname "$0")/.."; A=/tmp/run425; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
for buf in host gpu; do for op in all_reduce sendrecv; do
  NT_TIMEOUT=90 MAXB=32M ITERS=3 nt env-$op-$buf dist/c96 2 $op $buf - NCCL_DEBUG_SUBSYS=INIT,NET,ENV
  grep -h "set by environment\|unset: set to" $A/env-$op-$buf.log | sed 's/^[^ ]* //' | sort | uniq -c | head -12 > $A/env-$op-$buf.txt
  el "  $(wc -l < $A/env-$op-$buf.txt) distinct setting lines: $(grep -o 'NCCL_[A-Z_]* set by environment to [^ ]*' $A/env-$op-$buf.txt | sort -u | paste -sd';')"
done; done
gpu_tests dist/c96
el done
