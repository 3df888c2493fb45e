"""Every setting that produced a run, written beside its output as <name>.settings.txt.

A figure is only worth what is known about how it was made, so each run records: the machine
(host, date, GPUs from `nvidia-smi -L`), the tool's own command line, the facts of the run
(flags, launch mode, MPS, --env extras, --one-gpu's NCCL_HOSTID), the exact command, every
variable the run set on top of the caller's environment, and the caller's own variables that
can change the result (NCCL_*, CUDA_*, TCPX_*, LD_*, OMPI_*), which the run inherited.
"""

import datetime
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys

_RELEVANT = ("NCCL_", "CUDA_", "TCPX_", "LD_", "OMPI_", "PMIX_")


def machine(base_env=None):
    """{"host", "date", "gpus"}: gpus is `nvidia-smi -L`'s output, or why there is none."""
    base_env = os.environ if base_env is None else base_env
    smi = shutil.which("nvidia-smi", path=base_env.get("PATH", os.defpath))
    if not smi:
        gpus = "(nvidia-smi not found)"
    else:
        try:
            r = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
            gpus = r.stdout.strip() if r.returncode == 0 else f"(nvidia-smi -L failed: {r.stderr.strip()})"
        except (OSError, subprocess.SubprocessError) as e:
            gpus = f"(nvidia-smi -L failed: {e})"
    return {"host": socket.gethostname(), "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "gpus": gpus}


def gpu_count(machine_info, base_env=None):
    """GPUs this host gives a process: the `GPU n:` lines of nvidia-smi -L, no more than
    CUDA_VISIBLE_DEVICES names; None when nvidia-smi gave no list."""
    base_env = os.environ if base_env is None else base_env
    listed = [ln for ln in machine_info.get("gpus", "").splitlines() if re.match(r"GPU \d+:", ln.strip())]
    if not listed:
        return None
    visible = base_env.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return min(len(listed), len([d for d in visible.split(",") if d.strip()]))
    return len(listed)


def caller_vars(base_env, overridden):
    """The caller's variables that can change a result and that the run did not set itself."""
    return {k: v for k, v in sorted(base_env.items()) if k.startswith(_RELEVANT) and k not in overridden}


def extras_text(extra_env):
    return " ".join(f"{k}={v}" for k, v in extra_env.items()) if extra_env else "none"


def _block(lines):
    return [f"  {ln}" for ln in lines] or ["  (none)"]


def render(*, output, machine_info, facts, command, overrides, base_env, forwarded=None, argv=None):
    """The text of a settings file. facts: [(name, value)]; command: argv list or a description."""
    argv = sys.argv if argv is None else argv
    lines = [f"# settings of {output}", f"date: {machine_info['date']}", f"host: {machine_info['host']}",
             "gpus:"] + _block(machine_info["gpus"].splitlines())
    lines += [f"tool: {shlex.join([sys.executable] + list(argv))}", f"cwd: {os.getcwd()}"]
    lines += [f"{name}: {value}" for name, value in facts]
    lines.append("command: " + (shlex.join(command) if isinstance(command, (list, tuple)) else command))
    if forwarded is not None:
        lines.append("forwarded by mpirun -x: " + " ".join(sorted(forwarded)))
    lines.append("set by this run, on top of the caller's environment:")
    lines += _block(f"{k}={shlex.quote(v)}" for k, v in sorted(overrides.items()))
    lines.append("from the caller's environment (" + ", ".join(p + "*" for p in _RELEVANT)
                 + "; inherited by the processes started on this host):")
    lines += _block(f"{k}={shlex.quote(v)}" for k, v in caller_vars(base_env, overrides).items())
    return "\n".join(lines) + "\n"


def write(path, **fields):
    """Write render(**fields) to path; return the path."""
    with open(path, "w") as fh:
        fh.write(render(**fields))
    return path
