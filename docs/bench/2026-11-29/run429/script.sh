#!/bin/bash
# run429 (one H200, session 53): run 428 had c99 (95820c5b) at 4 ranks 1.02-1.35x c97's time for
# all_reduce of 8-512 B by pass (pass 1 the widest) and sendrecv of 8-64 B 0.97-1.08x; the rest
# level or faster. Is that the change or the passes? c97 (340cb0c0), c100 (c9714daa: the control
# connection's write a sendmsg, its read still a readv) and c99 (95820c5b: both), 4 ranks
# all_reduce and sendrecv 8-512 B (x8), -n 2000 -w 200 -c 1, host buffers, GPU 0 under MPS, four
# passes rotated (each variant first, middle and last at least once).
cd "$(dirname "$0")/.."; A=/tmp/run429; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; for c in c97 c100 c99; do echo "$c: $(cat dist/$c/commit.txt)" >> $A/machine.txt; done
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
launch(){ local v=$1 np=$2 op=$3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/$v/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0)
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b 8 -e 512 -f 8 -n 2000 -w 200 -c 1 -g 1; }
for pass in 1 2 3 4; do
  case $pass in 1) vs="c97 c100 c99";; 2) vs="c99 c97 c100";; 3) vs="c100 c99 c97";; 4) vs="c99 c100 c97";; esac
  for shape in 4:all_reduce 4:sendrecv; do np=${shape%%:*}; op=${shape#*:}
    for v in $vs; do tag=$np-$op-$v-r$pass
      launch $v $np $op > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done
done
mps_off
el done
