#!/bin/bash
# run386 (one H200, session 47): run 385's plain case, the test reading rank 1's held signal
# (by a copy on the GPU's persistent stream) when rank 0's put is done.
cd "$(dirname "$0")/.."; A=/tmp/run386; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
for v in plain; do
  env $( [ $v != plain ] && echo $v=1 ) TCPXR_REQUIRE_GPU=1 timeout 60 dist/c76/deps/rma --include-ignored --test-threads=1 --nocapture gpu_a_groups_held_stream > $A/$v.txt 2>&1
  el "$v rc=$? $(grep -h '^test result' $A/$v.txt)"; grep -h "DIAG\|panicked at\|gave up" $A/$v.txt | tee -a $A/steps.txt
done
el done
