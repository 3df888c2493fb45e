#!/bin/bash
# run385 (one H200, session 47): run 384's test with the release and rank 0's download timed, by
# default, with rank 1 sleeping 500 ms before its release (DIAG_SLEEP), and with rank 0's
# download only after the release (DIAG_LATE).
cd "$(dirname "$0")/.."; A=/tmp/run385; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
for v in plain DIAG_SLEEP DIAG_LATE; do
  env $( [ $v != plain ] && echo $v=1 ) TCPXR_REQUIRE_GPU=1 timeout 60 dist/c76/deps/rma --include-ignored --test-threads=1 --nocapture gpu_a_groups_held_stream > $A/$v.txt 2>&1
  el "$v rc=$? $(grep -h '^test result' $A/$v.txt)"; grep -h "DIAG\|panicked at\|gave up" $A/$v.txt | tee -a $A/steps.txt
done
el done
