#!/bin/bash
# run433 (one H200, session 54): EXPERIMENT, a control-writer thread (dist/c101 with
# NCCL_TCPXR_EXP_CTRL_WRITER=1: small inline messages written by a spinning thread of their own
# so NCCL's proxy thread reads its peer's crossing message instead of waiting in its own write)
# against c101 as main and Socket default; 8 B-32 KiB (x4), -n 500 -w 100 -c 1, 2 ranks sendrecv,
# all_reduce, all_gather, 4 ranks sendrecv, all_reduce, host buffers, GPU 0 under MPS, three passes
# rotated. Then the correctness set's shapes with the writer on (3 and 4 ranks, host and GPU
# buffers, NCCL's choice, Ring, Tree; 4 ranks GPU buffers with CUDA_DEVICE_MAX_CONNECTIONS=1).
cd "$(dirname "$0")/.."; A=/tmp/run433; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c101: $(cat dist/c101/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
launch(){ local v=$1 np=$2 op=$3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);;
    c101w) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/c101/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0 NCCL_TCPXR_EXP_CTRL_WRITER=1);;
    *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b 8 -e 32K -f 4 -n 500 -w 100 -c 1 -g 1; }
for pass in 1 2 3; do
  case $pass in 1) vs="c101 c101w socket";; 2) vs="socket c101w c101";; 3) vs="c101w c101 socket";; esac
  for shape in 2:sendrecv 2:all_reduce 2:all_gather 4:sendrecv 4:all_reduce; do np=${shape%%:*}; op=${shape#*:}
    for v in $vs; do tag=$np-$op-$v-r$pass
      launch $v $np $op > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done
done
mps_off
W=(--env NCCL_TCPXR_EXP_CTRL_WRITER=1)
for np in 3 4; do for algo in NCCL Ring Tree; do
  al=(); [ $algo != NCCL ] && al=(--algo $algo)
  timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c101 --one-gpu --mps --ranks $np "${al[@]}" "${W[@]}" --ops all_reduce,sendrecv --configs tcpxr-host,tcpxr-gpu --max 32M --iters 2 --warmup 1 --timeout 60 --out $A/check-$np-$algo > $A/check-$np-$algo.txt 2>&1
  el "check $np ranks $algo rc=$? $(grep -c ' ok, ' $A/check-$np-$algo.txt) ok, $(grep -c FAILED $A/check-$np-$algo.txt) failed"
done; done
timeout 100 python3 ncclTests/run_nccl_tests.py --nccl-tests $NT --plugin-dir dist/c101 --one-gpu --ranks 4 --ops all_reduce,sendrecv --configs tcpxr-gpu --env CUDA_DEVICE_MAX_CONNECTIONS=1 "${W[@]}" --max 32M --iters 2 --warmup 1 --timeout 90 --out $A/check-4-cdmc1 > $A/check-4-cdmc1.txt 2>&1
el "check 4 ranks CUDA_DEVICE_MAX_CONNECTIONS=1 rc=$? $(grep -c ' ok, ' $A/check-4-cdmc1.txt) ok, $(grep -c FAILED $A/check-4-cdmc1.txt) failed"
el done
