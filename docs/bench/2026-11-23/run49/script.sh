#!/bin/bash
# GPU run N on one GPU (nvidia-h200): tcpxr's profiler events under stock NCCL 2.28.3. NCCL's
# example profiler plugin (ext-profiler/example of NCCL v2.28.3, built here from dist/profiler-src,
# never committed) records every event type (NCCL_PROFILE_EVENT_MASK=4095) while nccl-tests runs
# all_reduce and sendrecv over tcpxr-host and over NCCL Socket (two ranks as two NCCL hosts, MPS).
cd "$(dirname "$0")/.."
R=${OUT:-/tmp/out}; A=/tmp/runN; rm -rf $A; mkdir -p $A
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T0=$(date +%s); el(){ echo "[$(( $(date +%s)-T0 )) s] $*" | tee -a $A/steps.txt; }
left(){ echo $(( $1 - ($(date +%s)-T0) )); }
fin(){ tar czf $R/runN.tgz -C /tmp runN; cat $A/steps.txt; grep -h -E "ALL OK|FAILED|problem" $A/*.log | head -40; }
trap fin EXIT
{ date -u; nvidia-smi -L; nproc; cat dist/commit.txt; } > $A/machine.txt 2>&1
# (here the script built nccl-tests on the machine, in the git-ignored ncclTests/nccl-tests, with
# MPI=1 for sm_90, logging to nccl-tests-build.txt; that step is left out of this copy: the project
# commits no script that builds nccl-tests. ncclTests/README.md says how to build it.)
B=$!
g++ -O2 -Idist/profiler-src/nccl -I/usr/local/cuda/include -fPIC -shared -o /tmp/libnccl-profiler-example.so dist/profiler-src/*.cc > $A/profiler-build.txt 2>&1; el "profiler build rc=$?"
wait $B; el "$(tail -1 $A/nccl-tests-build.txt)"
NT=ncclTests/nccl-tests/build; P=dist
run(){ out=$1; shift; CUDA_VISIBLE_DEVICES=0 timeout $(left $1) python3 ncclTests/run_nccl_tests.py --one-gpu --mps --nccl-tests $NT --plugin-dir $P --iters 3 --warmup 1 --timeout 60 --out $A/$out "${@:2}" > $A/$out.log 2>&1; el "$out rc=$?"; }
for c in tcpxr-host socket; do
  mkdir -p $A/trace-$c
  run prof-$c $((120 + 60 * ${#c})) --configs $c --min 8 --max 4M --env NCCL_PROFILER_PLUGIN=/tmp/libnccl-profiler-example.so --env NCCL_PROFILE_EVENT_MASK=4095 --env NCCL_PROFILE_DUMP_FILE=$A/trace-$c/trace
  { echo "== $c: trace files"; ls -la $A/trace-$c; echo "== NET_SOCK events (begin records) per file"; grep -c '"cat": "NET_SOCK", "ph": "b"' $A/trace-$c/* ; echo "== first 6"; grep -h '"cat": "NET_SOCK", "ph": "b"' $A/trace-$c/* | head -6; echo "== sizes seen (op, size: count)"; grep -h '"cat": "NET_SOCK", "ph": "b"' $A/trace-$c/* | sed -E 's/.*"op": ([0-9]+), "size": ([0-9]+).*/op \1 size \2/' | sort | uniq -c | sort -k5,5n | head -40; } > $A/summary-$c.txt 2>&1
done
grep -h "NET/tcpxr\|Profiler\|PROFILER" $A/prof-tcpxr-host/logs/* 2>/dev/null | sort | uniq -c | head -20 > $A/profiler-lines.txt
