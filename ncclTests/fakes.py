"""Stand-ins for the GPU machine's programs, for the unit tests (no GPU, MPS or MPI here).

install(directory, name, source) writes an executable script; the tests put `directory` first
on PATH. Each fake appends what it was asked to do, as one JSON line, to $FAKE_CALLS.
"""

import os
import stat
import sys

# nvidia-cuda-mps-control: "-d" starts a stand-in daemon (a detached process that writes the pid
# file and the control socket's name into $CUDA_MPS_PIPE_DIRECTORY and lives until "quit");
# with no argument it reads a command from stdin. FAKE_MPS=fail: -d fails; stuck: quit is
# ignored (the stand-in still ends by itself after 20 s, so no test leaves it behind).
MPS_CONTROL = r'''#!PYTHON
import json, os, subprocess, sys, time
pipe, log = os.environ["CUDA_MPS_PIPE_DIRECTORY"], os.environ["CUDA_MPS_LOG_DIRECTORY"]
mode = os.environ.get("FAKE_MPS", "ok")
stdin = "" if sys.argv[1:] == ["-d"] else sys.stdin.read()
with open(os.environ["FAKE_CALLS"], "a") as fh:
    fh.write(json.dumps({"prog": "mps", "argv": sys.argv[1:], "stdin": stdin, "pipe": pipe, "log": log}) + "\n")
if sys.argv[1:] == ["-d"]:
    if mode == "fail":
        sys.exit("An instance of this daemon is already running")
    daemon = ("import os, sys, time\n"
              "end = time.time() + 20\n"
              "while not os.path.exists(os.path.join(sys.argv[1], 'quit')) and time.time() < end:\n"
              "    time.sleep(0.02)\n")
    d = subprocess.Popen([sys.executable, "-c", daemon, pipe], start_new_session=True, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(pipe, "nvidia-cuda-mps-control.pid"), "w") as fh:
        fh.write(f"{d.pid}\n")
    with open(os.path.join(log, "control.log"), "a") as fh:
        fh.write("[fake] startup\n")
    open(os.path.join(pipe, "control"), "w").close()
elif stdin.strip() == "quit" and mode != "stuck":
    open(os.path.join(pipe, "quit"), "w").close()
'''

# nvidia-smi -L: $FAKE_GPUS GPUs (default 1)
NVIDIA_SMI = r'''#!/bin/sh
i=0
while [ "$i" -lt "${FAKE_GPUS:-1}" ]; do
    echo "GPU $i: NVIDIA H200 (UUID: GPU-00000000-1111-2222-3333-44444444444$i)"
    i=$((i + 1))
done
'''

# The sizes nccl-tests prints for float data: all_gather, reduce_scatter and alltoall round the
# count a rank holds down to whole 16 bytes (nccl-tests 2.19.6, <op>GetCollByteCount), and print
# that times the ranks.
PRINTED_SIZE = r'''
def printed_size(op, size, nranks):
    count = size // 4
    if op in ("all_gather", "reduce_scatter", "alltoall"):
        return ((count // nranks) & ~3) * nranks * 4
    return count * 4
'''

# mpirun: takes the options the runner passes, starts -np copies of the program at once with
# OMPI_COMM_WORLD_RANK set, and gives them only the -x variables (plus PATH and FAKE_*), so a
# variable the runner forgets to forward is missing, as it would be on another host. Like
# OpenMPI 4.1's mpirun, it puts each rank in a process group of its own, in mpirun's session.
MPIRUN = r'''#!PYTHON
import os, subprocess, sys
args, np, keep = sys.argv[1:], 1, []
while args and args[0].startswith("-"):
    opt = args.pop(0)
    if opt in ("-np", "--bind-to", "-x", "--hostfile", "--mca"):
        value = args.pop(0)
        if opt == "-np":
            np = int(value)
        elif opt == "-x":
            keep.append(value)
        elif opt == "--mca":
            args.pop(0)
base = {k: v for k, v in os.environ.items() if k in keep or k == "PATH" or k.startswith("FAKE_")}
ranks = [subprocess.Popen(args, env=dict(base, OMPI_COMM_WORLD_RANK=str(r), OMPI_COMM_WORLD_SIZE=str(np)),
                          preexec_fn=os.setpgrp)
         for r in range(np)]
sys.exit(max(p.wait() for p in ranks))
'''


# What every fake <op>_perf process does first: records its arguments and NCCL_/CUDA_/OMPI_
# variables in $FAKE_CALLS, and writes an NCCL INFO log that proves the configured transport.
RECORD_AND_LOG = r'''
with open(os.environ["FAKE_CALLS"], "a") as fh:
    fh.write(json.dumps({"argv": args, "pid": os.getpid(), "env": {k: v for k, v in os.environ.items()
                         if k.startswith(("NCCL_", "CUDA_", "OMPI_"))}}) + "\n")
net = os.environ["NCCL_NET"]
gdr = "/GDRDMA" if os.environ.get("NCCL_NET_GDR_LEVEL") == "SYS" else ""
log = os.environ["NCCL_DEBUG_FILE"].replace("%h", socket.gethostname()).replace("%p", str(os.getpid()))
with open(log, "w") as fh:
    if net == "tcpxr":
        fh.write("h:1:1 [0] NCCL INFO NET/Plugin: Loaded net plugin tcpxr (v11)\n")
        if gdr:
            fh.write("h:1:1 [0] NCCL INFO Using NCCL_NET_DEVICE_UNPACK net plugin version 7\n")
    fh.write(f"h:1:1 [0] NCCL INFO Using network {net}\nh:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] "
             f"[send] via NET/{net}/0{gdr}\n")
'''


# <op>_perf for soak.py: honours -b -e -N (0: until stopped), prints one row per size per cycle
# (rank 0 only, flushed at once, as stdbuf -oL makes nccl-tests do) and writes an NCCL INFO log
# that proves the configured transport; row sizes are those nccl-tests prints at the job's rank
# count (OMPI_COMM_WORLD_SIZE x -g). FAKE_MODE: ok; leak (one more open fd per cycle);
# wrong (#wrong 5 in cycle 3); exit (exits with status 3 after cycle 3).
NCCL_TESTS_LOOP = r'''#!PYTHON
import json, os, socket, sys, time
PRINTED_SIZE
args = sys.argv[1:]
opt = lambda flag, default=None: args[args.index(flag) + 1] if flag in args else default
lo, hi, wanted = int(opt("-b")), int(opt("-e")), int(opt("-N", "1"))
op, mode = os.path.basename(sys.argv[0])[: -len("_perf")], os.environ.get("FAKE_MODE", "ok")
rank = os.environ.get("OMPI_COMM_WORLD_RANK", "0")
nranks = int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1")) * int(opt("-g", "1"))
RECORD_AND_LOG
say = (lambda line: print(line, flush=True)) if rank == "0" else (lambda line: None)
say(f"# nccl-tests version 2.19.6 nccl-headers=22803 nccl-library=22803\n# Collective test starting: {op}_perf")
held, cycle = [], 0
while wanted == 0 or cycle < wanted:
    cycle += 1
    size = lo
    while size <= hi:
        wrong = 5 if mode == "wrong" and cycle == 3 and size == lo else 0
        in_place = "N/A" if op == "sendrecv" else wrong
        printed = printed_size(op, size, nranks)
        say(f"{printed:12d}  {printed // 4:12d}     float     sum      -1    10.00    0.00    0.00  {wrong:6d}    "
            f"10.00    0.00    0.00  {in_place:>6}")
        size *= 2
    if mode == "leak":
        held.append(open(os.devnull))
    if mode == "exit" and cycle == 3:
        sys.exit(3)
    time.sleep(0.05)
'''.replace("PRINTED_SIZE", PRINTED_SIZE).replace("RECORD_AND_LOG\n", RECORD_AND_LOG.lstrip("\n"))


# <op>_perf for run_nccl_tests.py at any rank count: honours -b -e -g -N and the MPI world
# (OMPI_COMM_WORLD_SIZE, as mpirun sets it); rank 0 prints nccl-tests' header with one "# Rank"
# line per rank, a row per size and cycle (the sizes nccl-tests prints for the op at that rank
# count; a size's time is 20 + size / 1e4 us, plus 1000 in the first cycle and the cycle's index
# after it) and the footer; every process writes an NCCL INFO log proving the configured transport and records
# its arguments and NCCL_/CUDA_/OMPI_ variables in $FAKE_CALLS. FAKE_MODE=mpi0: each process is a
# job of its own (an MPI=0 build under mpirun).
NCCL_TESTS_SWEEP = r'''#!PYTHON
import json, os, socket, sys
PRINTED_SIZE
args = sys.argv[1:]
opt = lambda flag, default=None: args[args.index(flag) + 1] if flag in args else default
lo, hi, gpus, cycles = int(opt("-b")), int(opt("-e")), int(opt("-g", "1")), int(opt("-N", "1"))
op, mode = os.path.basename(sys.argv[0])[: -len("_perf")], os.environ.get("FAKE_MODE", "ok")
procs = 1 if mode == "mpi0" else int(os.environ.get("OMPI_COMM_WORLD_SIZE", "1"))
rank = 0 if mode == "mpi0" else int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
nranks = procs * gpus
RECORD_AND_LOG
if rank == 0:
    out = ["# nccl-tests version 2.19.6 nccl-headers=22803 nccl-library=22803",
           f"# Collective test starting: {op}_perf", "# Using devices"]
    out += [f"#  Rank {r:2d} Group  0 Pid {os.getpid() + r // gpus:6d} on {socket.gethostname():>10} device "
            f"{r % gpus:2d} [0000:18:00] NVIDIA H200" for r in range(nranks)]
    for cycle in range(cycles):
        size = lo
        while size <= hi:
            printed = printed_size(op, size, nranks)
            in_place = "N/A" if op == "sendrecv" else "0"
            t = 20 + printed / 1e4 + (1000 if cycle == 0 and cycles > 1 else cycle)
            out.append(f"{printed:12d}  {printed // 4:12d}     float     sum      -1    {t:.2f}    "
                       f"1.00    1.00       0    {t:.2f}    1.00    1.00  {in_place:>6}")
            size *= 2
    out += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 1.00 ", "#",
            f"# Collective test concluded: {op}_perf"]
    print("\n".join(out))
'''.replace("PRINTED_SIZE", PRINTED_SIZE).replace("RECORD_AND_LOG\n", RECORD_AND_LOG.lstrip("\n"))


def install(directory, name, source):
    path = os.path.join(directory, name)
    with open(path, "w") as fh:
        fh.write(source.replace("#!PYTHON", "#!" + sys.executable, 1))
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path
