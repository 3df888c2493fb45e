#!/bin/bash
# run387 (one H200, session 47): the cross-group rma test with its reader made before the hold,
# alone, then every rma test.
cd "$(dirname "$0")/.."; A=/tmp/run387; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
TCPXR_REQUIRE_GPU=1 timeout 60 dist/c76/deps/rma --include-ignored --test-threads=1 --nocapture gpu_a_groups_held_stream > $A/one.txt 2>&1
el "one rc=$? $(grep -h '^test result' $A/one.txt)"; grep -h "panicked at" -A1 $A/one.txt | tee -a $A/steps.txt
TCPXR_REQUIRE_GPU=1 timeout 150 dist/c76/deps/rma --include-ignored --test-threads=1 > $A/rma-all.txt 2>&1
el "rma all rc=$? $(grep -h '^test result' $A/rma-all.txt)"; grep -h "FAILED\|panicked" -A1 $A/rma-all.txt | head -8 | tee -a $A/steps.txt
el done
