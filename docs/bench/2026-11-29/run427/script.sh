#!/bin/bash
# run427 (one H200, session 53): run 426 timed each sendrecv message of 8 B and found tcpxr's
# message wholly read sooner after the peer's write than Socket's (6.4-8.3 us against 8.1-9.8) but
# the rank's next write later after it (20.3-20.8 us against 19.0): the gap is in what follows a
# receive (NCCL's kernel and proxy), not in the sockets. One difference there is what tcpxr has
# NCCL build: 8 channels (NCCL_MIN_NCHANNELS) where Socket gets 2, and p2p messages of 512 KiB
# (NCCL_P2P_NET_CHUNKSIZE). Each crossed here, sendrecv 8 B-32 KiB (x8), -n 2000 -w 200 -c 1, 2
# and 4 ranks on GPU 0 under MPS, host buffers, three passes rotated:
#   socket   Socket default            sock8    Socket, NCCL_MIN_NCHANNELS=8
#   c97      tcpxr (main 340cb0c0)     c97ch2   tcpxr, NCCL_MAX_NCHANNELS=2 (tcpxr then sets no minimum)
#   c97ck    tcpxr, NCCL_P2P_NET_CHUNKSIZE=131072 (NCCL's default)
# NCCL's channel line (INFO) of each variant is kept from pass 1. Then the rma test binary of
# dist/c98 (the held-stream test waits for its signal) five times, by default.
cd "$(dirname "$0")/.."; A=/tmp/run427; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c97: $(cat dist/c97/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
launch(){ local v=$1 np=$2 op=$3 dbg=$4
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=$dbg NCCL_DEBUG_SUBSYS=INIT)
  case $v in socket|sock8) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);; *) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/c97/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0);; esac
  case $v in sock8) env+=(NCCL_MIN_NCHANNELS=8);; c97ch2) env+=(NCCL_MAX_NCHANNELS=2);; c97ck) env+=(NCCL_P2P_NET_CHUNKSIZE=131072);; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 90 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -b 8 -e 32K -f 8 -n 2000 -w 200 -c 1 -g 1; }
for pass in 1 2 3; do
  case $pass in 1) vs="socket c97 sock8 c97ch2 c97ck";; 2) vs="c97ck c97ch2 sock8 c97 socket";; 3) vs="sock8 c97ck socket c97ch2 c97";; esac
  for shape in 2:sendrecv 4:sendrecv; do np=${shape%%:*}; op=${shape#*:}
    for v in $vs; do tag=$np-$op-$v-r$pass
      dbg=WARN; [ $pass = 1 ] && dbg=INFO
      launch $v $np $op $dbg > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
      [ $pass = 1 ] && el "$tag channels: $(grep -a -m1 -o 'NCCL INFO [0-9]* coll channels.*' $A/$tag.log)"
    done
  done
done
mps_off
for i in 1 2 3 4 5; do
  env TCPXR_REQUIRE_GPU=1 CUDA_VISIBLE_DEVICES=0 timeout 150 dist/c98/deps/rma --include-ignored --test-threads=1 > $A/rma-$i.txt 2>&1
  el "rma $i rc=$? $(grep -h '^test result' $A/rma-$i.txt)"; grep -h 'FAILED\|panicked' $A/rma-$i.txt | head -5 | tee -a $A/steps.txt
done
el done
