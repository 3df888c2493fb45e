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

# nvidia-smi -L
NVIDIA_SMI = r'''#!/bin/sh
echo "GPU 0: NVIDIA H200 (UUID: GPU-00000000-1111-2222-3333-444444444444)"
'''

# mpirun: takes the options the runner passes, starts -np copies of the program at once with
# OMPI_COMM_WORLD_RANK set, and gives them only the -x variables (plus PATH and FAKE_*), so a
# variable the runner forgets to forward is missing, as it would be on another host.
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
ranks = [subprocess.Popen(args, env=dict(base, OMPI_COMM_WORLD_RANK=str(r))) for r in range(np)]
sys.exit(max(p.wait() for p in ranks))
'''


def install(directory, name, source):
    path = os.path.join(directory, name)
    with open(path, "w") as fh:
        fh.write(source.replace("#!PYTHON", "#!" + sys.executable, 1))
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path
