#!/bin/bash
# run343 (prepared in session 40, not run; gpu2: 2 ranks one per GPU of a 2x H200, or mps2: 2 ranks
# on GPU 0 under MPS): the one-step collectives' 1.1-2.1 us (all_gather, reduce_scatter of 32-128 B
# at 2 ranks: the ring's LL on channel 0 over both transports, run 335; not the channels built, run
# 337) is per operation rather than per message: all_reduce, two messages a rank, is level or
# faster at those sizes. NCCL's proxy thread takes new operations only every
# NCCL_PROGRESS_APPENDOP_FREQ (8) passes while one is active: with a costlier pass (tcpxr's test)
# the next operation waits longer. Both transports with NCCL_PROGRESS_APPENDOP_FREQ=1 beside their
# defaults, all_gather and reduce_scatter (and all_reduce as the control) 8 B-1 KiB, 200
# iterations, -N 3, three passes alternated; main's head (dist/c53), and beside it the candidate
# dist/c54 (dist/exp-irecv-lazy.patch: irecv without its progress pass, one recv system call
# fewer per receive on NCCL's proxy thread: the one per-operation call tcpxr makes that Socket
# does not; one way 0.2 us faster in tcpxr-bench latency on the CPU host).
cd "$(dirname "$0")/.."; A=/tmp/run343; source dist/common.sh
start_run; echo "c53: $(cat dist/c53/commit.txt); c54: $(cat dist/c54/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/sendrecv_perf ] || tests_228
case ${1:-gpu2} in
  mps2) export CUDA_VISIBLE_DEVICES=0; SHAPE=(--one-gpu --mps --ranks 2);;
  gpu2) export CUDA_VISIBLE_DEVICES=0,1; SHAPE=(--mpirun --ranks 2);;
esac
echo "shape: ${1:-gpu2} ${SHAPE[*]}" >> $A/machine.txt
timeout 420 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c53 "${SHAPE[@]}" --ops all_gather,reduce_scatter,all_reduce --min 8 --max 1K --iters 200 --warmup 20 --cycles 3 --timeout 30 --repeat 3 \
  --configs tcpxr-host,tcpxr-host+lazy,tcpxr-host+af1,socket,socket+af1 --variant af1:NCCL_PROGRESS_APPENDOP_FREQ=1 --variant lazy:NCCL_NET_PLUGIN=$PWD/dist/c54/libnccl-net-tcpxr.so --out $A/af > $A/af.txt 2>&1
el "af rc=$? $(grep -c ' ok, ' $A/af.txt) ok, $(grep -c FAILED $A/af.txt) failed"
rm -rf $A/*/r*/logs $A/*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/*/*/*.txt $A/*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
el done
