"""A CUDA MPS control daemon private to one invocation of the tooling (--mps).

Without MPS, processes that share a GPU take turns on it (time slices of a few ms), so the two
ranks of --one-gpu check correctness only. Under MPS (Multi-Process Service) their kernels run
concurrently and the figures are speeds.

Daemon(True, log_dir) starts `nvidia-cuda-mps-control -d` with a fresh pipe directory (a short
temporary one: the daemon's UNIX sockets live there) and a log directory, given to it and to
every run as CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY (`env`). Only processes with the
same pipe directory talk to this daemon, so a system-wide MPS daemon is neither used nor
touched. Leaving the `with` block, on success, exception or Ctrl-C (and SIGTERM, under
procs.interrupt_on_sigterm()), sends `echo quit | nvidia-cuda-mps-control` with the same
variables and waits (bounded) until the daemon and its server are gone; `problems` says if that
failed. Daemon(False, ...) does nothing.

Seen on an H100 host: the daemon writes nvidia-cuda-mps-control.pid and its `control` socket into
the pipe directory, leads a session of its own, starts the MPS server as its child on the first
client, and is gone about 2 s after quit.
"""

import os
import shutil
import subprocess
import tempfile
import time

import procs

CONTROL = "nvidia-cuda-mps-control"
PID_FILE = "nvidia-cuda-mps-control.pid"   # the daemon writes it into its pipe directory
READY = "control"                          # its control socket, there once it accepts commands
COMMAND_TIMEOUT_S = 60                     # one nvidia-cuda-mps-control command


class MpsError(Exception):
    """The MPS daemon could not be started."""


class Daemon:
    def __init__(self, enabled, log_dir, *, base_env=None, wait_s=30.0, proc_root=procs.PROC):
        self.enabled, self.log_dir = enabled, os.path.abspath(log_dir)
        self.base_env = dict(os.environ if base_env is None else base_env)
        self.wait_s, self.proc_root = wait_s, proc_root
        self.pipe_dir, self.pids, self.env, self.problems = None, [], {}, []

    def describe(self):
        if not self.enabled:
            return "off"
        return "on (" + ", ".join(f"{k}={v}" for k, v in self.env.items()) + ")"

    def _path(self):
        path = shutil.which(CONTROL, path=self.base_env.get("PATH", os.defpath))
        if not path:
            raise MpsError(f"--mps: {CONTROL} not found on PATH (it comes with the NVIDIA driver's utilities)")
        return path

    def _control(self, args, stdin=None):
        return subprocess.run([self._path()] + args, input=stdin, env=dict(self.base_env, **self.env),
                              capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)

    def start(self):
        if not self.enabled:
            return self
        self._path()
        self.pipe_dir = tempfile.mkdtemp(prefix="tcpxr-mps-")
        os.makedirs(self.log_dir, exist_ok=True)
        self.env = {"CUDA_MPS_PIPE_DIRECTORY": self.pipe_dir, "CUDA_MPS_LOG_DIRECTORY": self.log_dir}
        try:
            r = self._control(["-d"])
        except subprocess.TimeoutExpired:
            self._forget()
            raise MpsError(f"{CONTROL} -d did not return within {COMMAND_TIMEOUT_S} s")
        if r.returncode != 0:
            self._forget()
            raise MpsError(f"{CONTROL} -d exited with status {r.returncode}: {(r.stderr or r.stdout).strip()}")
        deadline = time.monotonic() + self.wait_s
        while not os.path.exists(os.path.join(self.pipe_dir, READY)):
            if time.monotonic() > deadline:
                self.pids = self._find_pids()
                self.stop()
                raise MpsError(f"the MPS daemon made no {READY} socket in {self.pipe_dir} within {self.wait_s:g} s "
                               f"(its log: {self.log_dir}/control.log)")
            time.sleep(0.05)
        self.pids = self._find_pids()
        return self

    def _find_pids(self):
        """The control daemon's pid, from its pid file, else from the processes that carry our pipe directory."""
        try:
            with open(os.path.join(self.pipe_dir, PID_FILE)) as fh:
                return [int(fh.read().split()[0])]
        except (OSError, ValueError, IndexError):
            pass
        return sorted(pid for pid, st in procs.table(self.proc_root).items()
                      if st["comm"].startswith("nvidia-cuda-mps")
                      and procs.environ(pid, self.proc_root).get("CUDA_MPS_PIPE_DIRECTORY") == self.pipe_dir)

    def _forget(self):
        shutil.rmtree(self.pipe_dir, ignore_errors=True)
        self.pipe_dir = None

    def stop(self):
        """Quit the daemon and wait until it and its MPS server are gone; returns self.problems."""
        if not self.pipe_dir:
            return self.problems
        pids = set(self.pids)
        for pid in self.pids:
            pids |= procs.family(pid, self.proc_root)     # the MPS server it started
        try:
            r = self._control([], stdin="quit\n")
            if r.returncode != 0:
                self.problems.append(f"echo quit | {CONTROL} exited with status {r.returncode}: "
                                     f"{(r.stderr or r.stdout).strip()}")
        except (OSError, subprocess.SubprocessError, MpsError) as e:
            self.problems.append(f"echo quit | {CONTROL} failed: {e}")
        deadline = time.monotonic() + self.wait_s
        while (left := sorted(p for p in pids if procs.alive(p, self.proc_root))) and time.monotonic() < deadline:
            time.sleep(0.1)
        if not pids:
            self.problems.append(f"MPS daemon's pid not found, so its end could not be checked "
                                 f"(pipe directory {self.pipe_dir})")
        elif left:
            self.problems.append(f"MPS daemon still running {self.wait_s:g} s after quit (pids "
                                 f"{' '.join(map(str, left))}); stop it with: CUDA_MPS_PIPE_DIRECTORY="
                                 f"{self.pipe_dir} sh -c 'echo quit | {CONTROL}'")
            return self.problems                          # keep its pipe directory for that command
        self._forget()
        return self.problems

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False
