#!/bin/bash
# run164 (4-GPU host), issue 32: GPU signals without a multiprocessor (never-reset signal windows
# written by cuStreamWriteValue64 from a host shadow; other windows keep the add kernel).
# 1. tests/rma.rs's GPU tests on the new code (GPU 3), among them the new
#    gpu_signal_lands_while_an_application_kernel_holds_every_sm; the same test built with its
#    signal window registered without NEVER_RESET (so the add kernel: rma_kernelpath, GPU 2),
#    expected to fail; the one-queue refusal.
# 2. NCCL 2.30.7 (built here), GIN alltoall_perf -R 2 -D 3 8 B-256 MiB -c 1 with NCCL_TCPXR_STATS=1,
#    before (dist/old: 0bc821a) and after, alternated: 2 ranks (GPUs 0,1) once each, 4 ranks twice
#    each; put_signal 8 B-256 MiB at 2 and 4 ranks after.
# 3. MPS on: the MPS refusal test.
cd "$(dirname "$0")/.."; A=/tmp/run164; source dist/common.sh
export CUDA_VISIBLE_DEVICES=0,1,2,3
fin(){ tar cJf $R/run164.tar.xz -C /tmp run164; }; trap fin EXIT
{ date -u; uname -r; nvidia-smi -L; nproc; cat dist/commit.txt dist/old/commit.txt; } > $A/machine.txt 2>&1
(JOBS=48 timeout 300 bash dist/build_nccl.sh dist/nccl-src/v2.30.7-1 /tmp/nccl-2.30.7 > $A/nccl-2.30.7-build.txt 2>&1; el "NCCL 2.30.7 build rc=$?") &
BUILD=$!
T(){ local name=$1 bin=$2 gpu=$3; shift 3; ( export TCPXR_REQUIRE_GPU=1 NCCL_TCPXR_IFNAME=lo CUDA_VISIBLE_DEVICES=$gpu "$@"; timeout 200 dist/deps/$bin --include-ignored --test-threads=1 --nocapture ${TESTS:-} ) > $A/$name.txt 2>&1; el "$name rc=$? $(grep -h 'test result' $A/$name.txt) $(grep -h -o 'panicked at.*' $A/$name.txt | head -2 | tr '\n' ' ')"; }
( T rma-default rma 3; TESTS=one_hardware_queue_means_no_rma_device_and_a_warn_saying_why T rma-1queue rma 3 CUDA_DEVICE_MAX_CONNECTIONS=1 ) &
P1=$!
( TESTS=gpu_signal_lands_while_an_application_kernel_holds_every_sm T rma-kernelpath-wide rma_kernelpath 2; grep -h -A3 "panicked" $A/rma-kernelpath-wide.txt | head -8 >> $A/steps.txt ) &
P2=$!
wait $BUILD
build_tests_in /tmp/nt-2.30.7 /tmp/nccl-2.30.7 48
gcc -O2 -o /tmp/put_signal ncclTests/gin/put_signal.c -I/tmp/nccl-2.30.7/include -I/usr/local/cuda/include -L/tmp/nccl-2.30.7/lib -L/usr/local/cuda/lib64 -lnccl -lcudart; el "put_signal build rc=$?"
wait $P1 $P2
genv(){ local lib=$1; GENV=(NCCL_NET_PLUGIN=$lib NCCL_RMA_PLUGIN=$lib NCCL_TCPXR_RMA=1 NCCL_GIN_TYPE=2 NCCL_TCPXR_STATS=1 NCCL_SOCKET_IFNAME=lo NCCL_TCPXR_IFNAME=lo NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV LD_LIBRARY_PATH=/tmp/nccl-2.30.7/lib:$LD_LIBRARY_PATH); XS=(); for kv in "${GENV[@]}"; do XS+=(-x "$kv"); done; }
ginrun(){ local name=$1 lib=$2 np=$3 vis=$4; genv $lib
  timeout 200 mpirun --allow-run-as-root --bind-to none -np $np -x CUDA_VISIBLE_DEVICES=$vis "${XS[@]}" sh -c 'NCCL_HOSTID="g${OMPI_COMM_WORLD_RANK}" exec "$@"' sh /tmp/nt-2.30.7/build/alltoall_perf -b 8 -e 256M -f 4 -R 2 -D 3 -c 1 -n 10 -w 3 -g 1 > $A/$name.log 2>&1
  el "$name rc=$? $(grep -a -h 'Out of bounds' $A/$name.log | awk '{print $7,$8}') | $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$name.log) | $(grep -a -h -o 'GIN/Plugin: Assigned[^,]*' $A/$name.log | sort -u | tr '\n' ';')"; }
OLD=$PWD/dist/old/libnccl-net-tcpxr.so; NEW=$PWD/dist/libnccl-net-tcpxr.so
ginrun gin2-old $OLD 2 0,1; ginrun gin2-new $NEW 2 0,1
for i in 1 2; do ginrun gin4-old-$i $OLD 4 0,1,2,3; ginrun gin4-new-$i $NEW 4 0,1,2,3; done
genv $NEW
for np in 2 4; do rm -f /tmp/ps.id; for r in $(seq 0 $((np-1))); do env "${GENV[@]}" CUDA_VISIBLE_DEVICES=$r NCCL_HOSTID=g$r timeout 200 /tmp/put_signal $r $np /tmp/ps.id $((256<<20)) 5 > $A/put_signal-$np.$r.log 2>&1 & done; wait
  el "put_signal $np ranks: $(grep -a -h 'PASS\|FAIL' $A/put_signal-$np.*.log | cut -c1-200 | tr '\n' ' ') | $(grep -a -h 'from put' $A/put_signal-$np.0.log | awk '{printf "%s:%s ", $3, $5}')"; done
mps_on
( export TCPXR_REQUIRE_GPU=1 TCPXR_EXPECT_MPS=1 NCCL_TCPXR_IFNAME=lo CUDA_VISIBLE_DEVICES=0; timeout 100 dist/deps/rma --include-ignored --test-threads=1 --nocapture gpu_rma_is_refused_under_mps ) > $A/rma-mps.txt 2>&1; el "rma-mps rc=$? $(grep -h 'test result' $A/rma-mps.txt)"
mps_off
for f in $A/gin*.log; do echo "== $(basename $f)"; grep -a -h -o "RMA stats.*" $f | grep -v "sent 0 puts (0 bytes" | sed 's/.*requests until/requests until/'; done > $A/rma-stats.txt
el done
