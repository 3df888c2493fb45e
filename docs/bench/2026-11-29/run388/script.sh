#!/bin/bash
# run388 (one H200, session 47): the new cross-group rma test against main's library before the
# change (dist/c72 = b76f06ec, every group on the GPU's one persistent stream): it must fail.
cd "$(dirname "$0")/.."; A=/tmp/run388; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0
TCPXR_REQUIRE_GPU=1 timeout 90 dist/c72/deps/rma_new --include-ignored --test-threads=1 gpu_a_groups_held_stream > $A/old.txt 2>&1
el "old rc=$? $(grep -h '^test result' $A/old.txt)"; grep -h "panicked at" -A1 $A/old.txt | head -6 | tee -a $A/steps.txt
el done
