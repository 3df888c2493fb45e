#!/bin/bash
# run394 (one H200, session 48): run 393 again where it left a doubt, with more passes. Exact
# control reads (dist/c79) against main (dist/c78), host buffers, GPU 0 under MPS, four passes in
# ABBA order: 4 ranks sendrecv 128 KiB-8 MiB (-n 100: 512 KiB took 1.08x main's time by the
# medians of run 393, 2 of 3 passes slower), 4 ranks all_reduce 8-512 B and 2 ranks all_gather
# 32-512 B (-n 1000: the gains of run 393).
cd "$(dirname "$0")/.."; A=/tmp/run394; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; for c in c78 c79; do echo "$c: $(cat dist/$c/commit.txt)" >> $A/machine.txt; done
build_tests_in /tmp/nt-2.28.3 /usr 16; NT=/tmp/nt-2.28.3/build
mps_on
launch(){ local v=$1 np=$2 op=$3; shift 3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0)
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf "$@" -c 1 -g 1; }
for pass in 1 2 3 4; do
  case $pass in 1|4) vs="c78 c79";; 2|3) vs="c79 c78";; esac
  for shape in 4:sendrecv 4:all_reduce 2:all_gather; do np=${shape%%:*}; op=${shape#*:}
    case $op in sendrecv) args="-b 128K -e 8M -f 2 -n 100 -w 20";; all_reduce) args="-b 8 -e 512 -f 4 -n 1000 -w 100";; all_gather) args="-b 32 -e 512 -f 4 -n 1000 -w 100";; esac
    for v in $vs; do tag=$np-$op-$v-r$pass
      launch $v $np $op $args > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done
done
mps_off
el done
