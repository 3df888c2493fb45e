#!/bin/bash
# run401 (one H200, session 49): tcpxr's pinned host memory as VMM host pages (gpu/host.rs;
# dist/c83 = main c54d21fb + the change, uncommitted), after run 400 found that cuMemFreeHost and
# cuMemHostUnregister wait for every running kernel of the device.
#  1. tests/gpu_close_held.rs against main's library (dist/c80: expected to fail, the closes
#     waiting for the held kernel) and against the change.
#  2. The GPU test binaries on c83 (default, CUDA_DEVICE_MAX_CONNECTIONS=1, MPS; rma, the
#     device_unpack tests and gpu_close_held by default) and the correctness set (checks).
#  3. GPU buffers' speed, c80 against c83: 2 ranks on GPU 0 under MPS, sendrecv and all_reduce,
#     and 4 ranks all_reduce, 8-128 MiB, -n 20 -w 5, passes ABBA.
cd "$(dirname "$0")/.."; A=/tmp/run401; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "main: $(cat dist/c80/commit.txt)" >> $A/machine.txt
for c in c80 c83; do
  TCPXR_REQUIRE_GPU=1 timeout 120 dist/$c/deps/gpu_close_held --include-ignored --nocapture > $A/close-held-$c.txt 2>&1
  el "gpu_close_held on $c rc=$? $(grep -h '^test result\|closing took' $A/close-held-$c.txt | tr '\n' ' ')"
done
gpu_tests dist/c83
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
checks dist/c83
el "backing: $(grep -rh 'pinned host memory' $A/check-*/ 2>/dev/null | sed 's/.*NET\/tcpxr : //' | sort | uniq -c | head -5 | tr '\n' ' ')"
rm -rf $A/check-*/logs
el "wrong: $(grep -h 'Out of bounds values' $A/check-*/*.txt 2>/dev/null | awk '{print $7}' | sort | uniq -c | tr '\n' ' ')"
mps_on
launch(){ local c=$1 np=$2 op=$3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$c/libnccl-net-tcpxr.so NCCL_NET_GDR_LEVEL=SYS NCCL_TCPXR_GPU_BUFFERS=1)
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 120 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b 8M -e 128M -f 2 -n 20 -w 5 -c 1 -g 1; }
for pass in 1 2; do
  case $pass in 1) vs="c80 c83";; 2) vs="c83 c80";; esac
  for shape in 2:sendrecv 2:all_reduce 4:all_reduce; do np=${shape%%:*}; op=${shape#*:}
    for c in $vs; do tag=gpu-$np-$op-$c-r$pass
      launch $c $np $op > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done
done
mps_off
el done
