#!/bin/bash
# run398 (CPU host of the repository, 2 cores, kernel 6.18, session 49): delayed ACKs on the
# receiving control connection (TCP_QUICKACK=0, "pingpong" mode), the last note's "next" item 4.
# Built from main 8a386356 + pingpong.patch (NCCL_TCPXR_EXP_PINGPONG_US: re-arm period; unset:
# off). Each bench runs 3 s; `ss -tin` snapshots of its sockets 1 s apart give, per receiving
# control socket (data_segs_out 0), the messages in (data_segs_in) and pure ACKs out (segs_out)
# per second. Alternated three times.
#   latency: tcpxr-bench latency --size 8 --ahead 8 (one message each way in turn, NCCL's
#            one-step shape: one small message a step per connection)
#   stream:  tcpxr-bench nccl --sizes 64 (4 connections, 8 messages in flight on each)
B=${B:-target/release/tcpxr-bench}
snap(){ ss -tinp 2>/dev/null | grep -A1 tcpxr-bench | grep -o 'segs_out:[0-9]* segs_in:[0-9]* data_segs_out:[0-9]* data_segs_in:[0-9]*' \
  | awk '{split($1,a,":");split($3,c,":");split($4,d,":"); if (c[2] < 10 && d[2] > 1000) print a[2], d[2]}' | sort -n; }
for pass in 1 2 3; do
  for shape in latency stream; do
    for v in off 10000; do
      case $shape in latency) args=(latency --size 8 --iters 400000 --ahead 8);; stream) args=(nccl --sizes 64 --seconds 4 --no-baseline);; esac
      if [ $v = off ]; then $B "${args[@]}" > /dev/null 2>&1 & else NCCL_TCPXR_EXP_PINGPONG_US=$v $B "${args[@]}" > /dev/null 2>&1 & fi
      sleep 1; s1=$(snap); sleep 1; s2=$(snap); wait
      paste <(echo "$s1") <(echo "$s2") | awk -v t="$shape pingpong=$v r$pass" '{m+=$4-$2; k+=$3-$1} END{printf "%s: %d messages/s, %d ACKs/s, %.3f ACKs a message\n", t, m, k, k/m}'
    done
  done
done
