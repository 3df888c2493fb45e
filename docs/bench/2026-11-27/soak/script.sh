#!/bin/bash
# The CPU-host soak (docs/BENCHMARKS.md section 32): tcpxr-bench soak for 10 minutes at its
# defaults (4 pairs, 4 messages in flight on each, sizes 0 B - 8 MiB, a third of the receives
# posted larger, every byte checked), a sample every 30 s. Run from the repository root on the
# 2-core CPU host; writes machine.txt and soak.txt beside this script (or under $OUT).
set -euo pipefail
cd "$(dirname "$0")/../../../.."
D=${OUT:-$(dirname "$0")}
cargo build --release --quiet
{ date -u; uname -r; nproc; lscpu | grep "Model name"; free -m | head -2; git rev-parse --short HEAD; } > "$D/machine.txt" 2>&1
# Other work on the host during the run shows in the load average: the rate is not a figure to
# compare, the checks and the flat counts are the result.
{ echo "load before: $(cat /proc/loadavg)"
  rc=0
  /usr/bin/time -v target/release/tcpxr-bench soak --seconds 600 --report 30 2> "$D/time.txt" || rc=$?
  echo "exit code $rc"
  echo "load after: $(cat /proc/loadavg)"; } > "$D/soak.txt"
grep -E "Maximum resident|Elapsed|Percent of CPU" "$D/time.txt" >> "$D/soak.txt" || true
rm -f "$D/time.txt"
