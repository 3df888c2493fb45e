#!/bin/bash
# run441 (one H200, session 55): what NCCL-side settings tcpxr gives cost small sendrecv, and a
# probe of item 2. Run 440 found main (dist/c104 = 483bc747) 1-4 % slower than Socket at
# sendrecv of 8-128 B even best-of-four against best-of-four; run 102's 131072-byte p2p chunk had
# been faster there. Variants of main: +ck128 (NCCL_P2P_NET_CHUNKSIZE=131072, NCCL's own, instead
# of tcpxr's 512 KiB) and +ch2 (NCCL_MAX_NCHANNELS=2, so tcpxr sets no channel minimum: Socket's
# 2 channels); against Socket default and 1x1. Sendrecv 8 B-2 KiB (-n 1000 -w 200): 10 rounds at
# 2 ranks, 6 at 4; sendrecv 128 KiB-64 MiB at 2 ranks (-n 20 -w 5), 4 rounds of main, +ck128 and
# Socket 1x1. Then item 2: all_reduce 4-32 MiB at 2 ranks (-n 20 -w 5), 6 rounds of main,
# +nt512 (NCCL_NTHREADS=512, the Simple ring's threads before the 10 Gb/s report), Socket 1x1
# and 2x2. Each round one launch of each in rotated order; GPU 0 under MPS, host buffers, -c 1.
cd "$(dirname "$0")/.."; A=/tmp/run441; source dist/common.sh
start_run; export CUDA_VISIBLE_DEVICES=0; echo "c104: $(cat dist/c104/commit.txt)" >> $A/machine.txt
NT=/tmp/nt-2.28.3/build; [ -x $NT/all_reduce_perf ] || build_tests_in /tmp/nt-2.28.3 /usr 16
mps_on
launch(){ local v=$1 np=$2 op=$3; shift 3
  local env=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_TESTS_DEVICE=0 NCCL_NVLS_ENABLE=0 NCCL_DEBUG=WARN)
  case $v in socket) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none);;
    s[124]x[124]) env+=(NCCL_NET=Socket NCCL_NET_PLUGIN=none NCCL_SOCKET_NTHREADS=${v:1:1} NCCL_NSOCKS_PERTHREAD=${v:3:1});;
    c104*) env+=(NCCL_NET=tcpxr NCCL_NET_PLUGIN=$PWD/dist/c104/libnccl-net-tcpxr.so NCCL_TCPXR_GPU_BUFFERS=0)
      case $v in *+ck128) env+=(NCCL_P2P_NET_CHUNKSIZE=131072);; *+ch2) env+=(NCCL_MAX_NCHANNELS=2);; *+nt512) env+=(NCCL_NTHREADS=512);; esac;; esac
  local xs=(); for kv in "${env[@]}"; do xs+=(-x "$kv"); done
  timeout 60 mpirun --allow-run-as-root --bind-to none -np $np "${xs[@]}" sh -c 'NCCL_HOSTID="h${OMPI_COMM_WORLD_RANK}" exec "$@"' sh \
    $NT/${op}_perf -c 1 -g 1 "$@"; }
# rounds NP N OP TAGSUFFIX "VARIANTS" ARGS...: N rounds, each one launch of every variant, rotated.
rounds(){ local np=$1 n=$2 op=$3 sfx=$4 all=($5) round k vs v tag; shift 5
  for round in $(seq 1 $n); do
    k=$(( (round - 1) % ${#all[@]} )); vs="${all[@]:$k} ${all[@]:0:$k}"; [ $((round % 2)) = 0 ] && vs=$(echo $vs | tr ' ' '\n' | tac | tr '\n' ' ')
    for v in $vs; do tag=$np-$op$sfx-$v-r$round
      launch $v $np $op "$@" > $A/$tag.log 2>&1
      el "$tag rc=$? wrong=$(awk '/^ +[0-9]+ +[0-9]+ /{w+=$9} END{print w+0}' $A/$tag.log) $(awk '/^ +[0-9]+ +[0-9]+ /{printf "%s:%s ", $1, $6}' $A/$tag.log)"
    done
  done; }
small="c104 socket c104+ck128 s1x1 c104+ch2"
rounds 2 10 sendrecv "" "$small" -b 8 -e 2K -f 4 -n 1000 -w 200
rounds 4 6 sendrecv "" "$small" -b 8 -e 2K -f 4 -n 1000 -w 200
rounds 2 4 sendrecv _bulk "c104 c104+ck128 s1x1" -b 128K -e 64M -f 4 -n 20 -w 5
rounds 2 6 all_reduce _bulk "c104 s1x1 c104+nt512 s2x2" -b 4M -e 32M -f 2 -n 20 -w 5
mps_off
el done
