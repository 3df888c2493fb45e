#!/bin/bash
# run384 (one H200, session 47): run 383's failing rma test again with timings (DIAG lines), alone
# and then beside the other rma tests, to see where rank 0's 30 s went.
cd "$(dirname "$0")/.."; A=/tmp/run384; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
for i in 1 2; do
  TCPXR_REQUIRE_GPU=1 timeout 120 dist/c76/deps/rma --include-ignored --test-threads=1 --nocapture gpu_a_groups_held_stream > $A/one-$i.txt 2>&1
  el "one $i rc=$? $(grep -h '^test result' $A/one-$i.txt)"; grep -h "DIAG\|panicked\|gave up" $A/one-$i.txt | tee -a $A/steps.txt
done
TCPXR_REQUIRE_GPU=1 CUDA_DEVICE_MAX_CONNECTIONS=32 timeout 120 dist/c76/deps/rma --include-ignored --test-threads=1 --nocapture gpu_a_groups_held_stream > $A/one-32.txt 2>&1
el "one CDMC=32 rc=$? $(grep -h '^test result' $A/one-32.txt)"; grep -h "DIAG\|panicked\|gave up" $A/one-32.txt | tee -a $A/steps.txt
el done
