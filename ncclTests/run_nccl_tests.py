#!/usr/bin/env python3
"""Compare tcpxr with NCCL's own Socket transport using nccl-tests.

For every (op, config) it runs <nccl-tests>/<op>_perf with identical flags
(-b MIN -e MAX -f 2 -n ITERS -w WARMUP -c 1), saves stdout+stderr to
OUT/<op>.<config>.txt and the NCCL INFO logs to OUT/logs/, checks the results
(#wrong, exit status, missing rows) and which network NCCL really used, then
writes OUT/summary.md, OUT/summary.csv, OUT/busbw.png (or .svg) and OUT/run.json.
Beside each output, OUT/<op>.<config>.settings.txt records every setting of that run.
With --mps a private CUDA MPS daemon runs for the whole invocation (mps.py).
Any problem prints a FAILED line and makes the exit status 1.
"""

import argparse
import datetime
import glob
import json
import os
import shlex
import shutil
import signal
import socket
import resource
import subprocess
import sys
import time

import configs
import mps
import parse
import procs
import plotting
import report
import settings

HERE = os.path.dirname(os.path.abspath(__file__))
EPILOG = """\
single host (2 GPUs, MPI=0 build, one process):
  %(prog)s --nccl-tests ~/nccl-tests/build --plugin-dir target/release
single host, two processes (MPI=1 build), each its own NCCL host:
  %(prog)s --nccl-tests ~/nccl-tests/build --plugin-dir target/release --mpirun
single host, 4 processes on GPUs 0-3 (MPI=1 build), NCCL's ring forced:
  %(prog)s --nccl-tests ~/nccl-tests/build --plugin-dir target/release --mpirun --ranks 4 --algo Ring
one GPU, two processes sharing it as two NCCL hosts (MPI=1 build; under MPS the ranks run
concurrently and the figures are speeds; without --mps they take turns: correctness only):
  %(prog)s --nccl-tests ~/nccl-tests/build --plugin-dir target/release --one-gpu --mps
  %(prog)s --nccl-tests ~/nccl-tests/build --plugin-dir target/release --one-gpu --mps \\
      --env CUDA_DEVICE_MAX_CONNECTIONS=1 --configs tcpxr-host,tcpxr-gpu
one GPU, 3 ranks as 3 NCCL hosts under MPS, NCCL's tree forced, a short correctness sweep:
  %(prog)s --nccl-tests ~/nccl-tests/build --plugin-dir target/release --one-gpu --mps --ranks 3 \\
      --algo Tree --configs tcpxr-host,tcpxr-gpu --max 32M --iters 2 --warmup 1
several hosts (MPI=1 build, one rank per GPU; the plugin path must exist on every host):
  %(prog)s --nccl-tests ~/nccl-tests/build --plugin-dir /opt/tcpxr --hostfile hosts --np 16 \\
      --configs socket,tcpxr-gpu --env NCCL_SOCKET_IFNAME=eth1,eth2,eth3,eth4
configs: """ + "; ".join(f"{n}: {d}" for n, d in configs.DESCRIPTIONS.items())


def add_launch_args(p, *, several_hosts=True):
    """The options that say how nccl-tests is launched (shared with soak.py)."""
    p.add_argument("--nccl-tests", required=True, metavar="DIR",
                   help="nccl-tests build directory (all_reduce_perf, sendrecv_perf, ...)")
    p.add_argument("--plugin-dir", required=True, metavar="DIR",
                   help=f"directory holding {configs.PLUGIN_FILE}")
    p.add_argument("--mpirun", action="store_true",
                   help="one process per rank via mpirun with -g 1, rank r on GPU r and its own NCCL host "
                        "(NCCL_HOSTID; needs an MPI=1 build) instead of one process with -g N")
    p.add_argument("--ranks", type=int, metavar="N",
                   help="ranks on this host (default 2): with --one-gpu N processes on GPU 0, with --mpirun N "
                        "processes on GPUs 0..N-1, each its own NCCL host; else one process with -g N (one NCCL "
                        "host with N GPUs)")
    p.add_argument("--algo", metavar="NAME",
                   help="force NCCL's algorithm: NCCL_ALGO=NAME for every run (Ring, Tree, ^PAT, ...; NCCL's "
                        "syntax); named in the settings files, summary.md, the plot's title and run.json "
                        "(default: NCCL's own choice)")
    if several_hosts:
        p.add_argument("--hostfile", help="several hosts: mpirun --hostfile FILE (implies --mpirun; needs --np)")
        p.add_argument("--np", type=int, help="number of ranks = GPUs in all (with --hostfile)")
    p.add_argument("--one-gpu", action="store_true",
                   help="N processes (--ranks) via mpirun on GPU 0, each told it is its own host (NCCL_HOSTID), so NCCL "
                        "accepts them and routes their traffic over the network (needs an MPI=1 build); "
                        "with --mps they run concurrently, without it they take turns (correctness only)")
    p.add_argument("--mps", action="store_true",
                   help="run a private CUDA MPS daemon (nvidia-cuda-mps-control -d, own pipe and log directories) "
                        "for all runs, so that processes sharing a GPU run concurrently; stopped at the end")
    p.add_argument("--mpirun-args", default="", help="extra mpirun arguments, one shell-quoted string")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                   help="extra environment variable for every run (repeatable), e.g. CUDA_DEVICE_MAX_CONNECTIONS=1")


def check_launch_args(p, a):
    """Validate add_launch_args()'s options; sets a.extra_env (with --algo's NCCL_ALGO), a.mpirun
    and a.nranks."""
    a.hostfile, a.np = getattr(a, "hostfile", None), getattr(a, "np", None)
    try:
        a.extra_env = configs.parse_env(a.env)
    except ValueError as e:
        p.error(str(e))
    if a.one_gpu and a.hostfile:
        p.error("--one-gpu runs on one host: leave out --hostfile")
    if a.hostfile or a.one_gpu:
        a.mpirun = True
    if a.hostfile and not a.np:
        p.error("--hostfile needs --np (total number of ranks, one per GPU)")
    if a.hostfile and a.ranks is not None and a.ranks != a.np:
        p.error("with --hostfile the number of ranks is --np: leave out --ranks")
    if a.ranks is not None and a.ranks < 2:
        p.error("--ranks: at least 2 (one rank sends nothing over the network)")
    a.nranks = a.np if a.hostfile else (a.ranks or 2)
    if a.algo is not None:
        if not a.algo.strip():
            p.error("--algo: name an algorithm (Ring, Tree, ...)")
        if a.extra_env.get("NCCL_ALGO", a.algo) != a.algo:
            p.error(f"--algo {a.algo} and --env NCCL_ALGO={a.extra_env['NCCL_ALGO']} disagree: give one")
        a.extra_env["NCCL_ALGO"] = a.algo


def algo_text(a, base_env=None):
    """Which algorithm NCCL was told to use, in words (NCCL_ALGO of --algo/--env, else the caller's)."""
    base_env = os.environ if base_env is None else base_env
    if "NCCL_ALGO" in a.extra_env:
        how = "--algo" if getattr(a, "algo", None) else "--env"
        return f"NCCL_ALGO={a.extra_env['NCCL_ALGO']} (forced by {how})"
    if base_env.get("NCCL_ALGO"):
        return f"NCCL_ALGO={base_env['NCCL_ALGO']} (from your environment)"
    return "NCCL's own choice (NCCL_ALGO unset)"


def algo_tag(a, base_env=None):
    """A short name of the forced algorithm for titles ("NCCL_ALGO=Ring"), or "" for NCCL's choice."""
    base_env = os.environ if base_env is None else base_env
    value = a.extra_env.get("NCCL_ALGO") or base_env.get("NCCL_ALGO")
    return f"NCCL_ALGO={value}" if value else ""


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_launch_args(p)
    p.add_argument("--configs", default=",".join(configs.DEFAULT_CONFIGS),
                   help=f"comma-separated, from {','.join(configs.CONFIGS)}, or BASE+LABEL: BASE with "
                        f"the settings --variant gives LABEL (default: %(default)s)")
    p.add_argument("--variant", action="append", default=[], metavar="LABEL:KEY=VALUE",
                   help="one setting of the variant LABEL (repeatable); e.g. --configs tcpxr-host,tcpxr-host+w "
                        "--variant w:NCCL_TCPXR_UNREAD_BYTES=256K compares tcpxr with and without it in one call")
    p.add_argument("--ops", default="all_reduce,sendrecv", help="nccl-tests ops, <op>_perf (default: %(default)s)")
    p.add_argument("--min", default="8", help="smallest size, K/M/G = binary units (default: %(default)s)")
    p.add_argument("--max", default="1G", help="largest size (default: %(default)s)")
    p.add_argument("--iters", type=int, default=20, help="timed iterations, -n (default: %(default)s)")
    p.add_argument("--warmup", type=int, default=5, help="warm-up iterations, -w (default: %(default)s)")
    p.add_argument("--out", help="output directory (default: ncclTests/out/nccl-tests-<date>)")
    p.add_argument("--timeout", type=int, default=900, help="seconds per run before it is killed (default: %(default)s)")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="run every op and config N times, each pass in rK/, pass k starting with the k-th "
                        "config, odd passes in reverse order (so no config always follows the same other); "
                        "the tables give each size's median pass "
                        "(default: %(default)s)")
    p.add_argument("--cycles", type=int, default=1, metavar="N",
                   help="run the size sweep N times in each process (nccl-tests -N); with N > 1 the tables "
                        "leave each process's first cycle out: there every size runs first in a fresh "
                        "communicator (NCCL connects an algorithm's channels at its first use), the later "
                        "cycles are the steady state of an application repeating its collectives, each "
                        "size after the larger ones (default: %(default)s)")
    a = p.parse_args(argv)
    a.configs = [c for c in a.configs.split(",") if c]
    a.ops = [o for o in a.ops.split(",") if o]
    try:
        configs.check_names(configs.add_variants(a.configs, a.variant))
        a.min_bytes, a.max_bytes = report.parse_size(a.min), report.parse_size(a.max)
        report.doubling(a.min_bytes, a.max_bytes)
    except ValueError as e:
        p.error(str(e))
    if a.repeat < 1:
        p.error(f"--repeat {a.repeat}: at least 1 pass")
    if a.cycles < 1:
        p.error(f"--cycles {a.cycles}: at least 1 cycle")
    check_launch_args(p, a)
    check_ops_for_algo(p, a)
    return a


def check_ops_for_algo(p, a):
    """Refuse --ops that NCCL would refuse under the forced algorithm (after check_launch_args)."""
    refusal = configs.tree_refusal(a.extra_env.get("NCCL_ALGO"), a.ops, "--ops")
    if refusal:
        p.error(refusal)


def pass_order(configs_in_order, k):
    """The configs of pass k (0-based), starting with the k-th, in the given order on even passes
    and in reverse on odd ones. A rotation alone keeps the cyclic order, and the ops of a pass run
    one after another, so each config would always run right after the same other one (in runs
    281a-283 tcpxr always followed a Socket tuning); reversing every other pass gives it the
    config on its other side too, and no config is always first on a fresh host."""
    if not configs_in_order:
        return []
    first = configs_in_order[k % len(configs_in_order)]
    seq = list(reversed(configs_in_order)) if k % 2 else list(configs_in_order)
    n = seq.index(first)
    return seq[n:] + seq[:n]


def median_results(runs, ops, *, steady=False):
    """{op: {config: {size: out_of_place row}}} over every pass that ran without a problem: at each
    size the row of the median time (the lower median for an even count), a row that was measured,
    not an average of several, so its time and busbw stay one pass's pair. `steady` (--cycles N > 1):
    over the later cycles of every pass, each process's first cycle left out."""
    seen = {op: {} for op in ops}
    for r in runs:
        if r["problems"]:
            continue
        for row in r["result"]["rows"]:
            if steady and row["cycle"] == 0:
                continue
            seen[r["op"]].setdefault(r["config"], {}).setdefault(row["size"], []).append(row["out_of_place"])
    return {op: {c: {size: sorted(rows, key=lambda x: x["time_us"])[(len(rows) - 1) // 2]
                     for size, rows in sizes.items()}
                 for c, sizes in by_config.items()}
            for op, by_config in seen.items()}


# A later cycle that took at least this many times the fastest cycle of the same process at
# that size is listed under the tables (run 381: one pass's cycles 5-10x the first, Socket's and
# tcpxr's alike, an instance's hiccup that a median of the later cycles keeps).
CYCLE_JUMP = 2.0


def cycle_jumps(runs, factor=CYCLE_JUMP):
    """(op, config, pass, size, time_us, fastest_us) for every later cycle (nccl-tests -N: cycle 1
    on) of a run without problems that took at least `factor` x the fastest cycle of the same
    process at that size. The first cycle is never listed: it is slow by nature (each size's
    first run in the process), and the tables leave it out anyway."""
    jumps = []
    for r in runs:
        if r["problems"]:
            continue
        by_size = {}
        for row in r["result"]["rows"]:
            t = row["out_of_place"]["time_us"]
            if t is not None:
                by_size.setdefault(row["size"], []).append((row["cycle"], t))
        for size, cycles in sorted(by_size.items()):
            fastest = min(t for _, t in cycles)
            jumps += [(r["op"], r["config"], r.get("pass"), size, t, fastest)
                      for c, t in cycles if c > 0 and fastest > 0 and t >= factor * fastest]
    return jumps


def jumps_note(jumps, with_pass, most=12):
    """The summary's line for `cycle_jumps`, or None when there are none."""
    if not jumps:
        return None
    items = [f"{op} {config}" + (f" (pass {p})" if with_pass and p else "")
             + f" {report.human_size(size)} {t:.1f} us against {fastest:.1f}"
             for op, config, p, size, t, fastest in jumps]
    more = f"; and {len(items) - most} more" if len(items) > most else ""
    return (f"later cycles that took at least {CYCLE_JUMP:g}x the same process's fastest at that size "
            "(kept in the medians; several configs of one pass at once is the instance, not a "
            "transport): " + "; ".join(items[:most]) + more)


def test_flags(a):
    cycles = ["-N", str(a.cycles)] if a.cycles > 1 else []
    return ["-b", str(a.min_bytes), "-e", str(a.max_bytes), "-f", "2",
            "-n", str(a.iters), "-w", str(a.warmup), "-c", "1"] + cycles


# --one-gpu: NCCL refuses two ranks of one host on one GPU ("Duplicate GPU detected"), but it
# compares GPUs only within a host, and NCCL_HOSTID names the host. Each rank gets its own name
# from its MPI rank (OpenMPI, else MPICH/PMI), and NCCL_TESTS_DEVICE keeps nccl-tests on GPU 0.
# --mpirun on one host: the same per-rank NCCL_HOSTID, so that NCCL sees N one-GPU hosts (as on a
# cluster: its tree, PAT and grouped receives across hosts); nccl-tests picks GPU r for rank r
# from the real host name, which NCCL_HOSTID does not change.
ONE_GPU_ENV = {"NCCL_TESTS_DEVICE": "0"}
HOSTID_WRAPPER = 'NCCL_HOSTID="{prefix}${{OMPI_COMM_WORLD_RANK:-${{PMI_RANK:?no MPI rank}}}}" exec "$@"'
ONE_GPU_HOSTID = HOSTID_WRAPPER.format(prefix="tcpxr-one-gpu-rank")
RANK_HOSTID = HOSTID_WRAPPER.format(prefix="tcpxr-rank")


def hostid_script(a):
    """The shell line that gives each MPI rank its own NCCL_HOSTID, or None (one process, or a
    hostfile: real hosts)."""
    if a.one_gpu:
        return ONE_GPU_HOSTID
    if a.mpirun and not a.hostfile:
        return RANK_HOSTID
    return None


def rank_wrapper(a):
    """What runs each rank's binary under mpirun: nothing, or the per-rank NCCL_HOSTID."""
    script = hostid_script(a)
    return ["sh", "-c", script, "sh"] if script else []


def command(a, binary, env_keys, flags=None, launcher=()):
    """The command line of one run; env_keys are forwarded with mpirun -x. flags: nccl-tests
    flags (default test_flags(a)); launcher: what runs the binary (e.g. stdbuf -oL)."""
    flags = test_flags(a) if flags is None else flags
    if not a.mpirun:
        return list(launcher) + [binary] + flags + ["-g", str(a.nranks)]
    cmd = ["mpirun", "--allow-run-as-root", "--bind-to", "none", "-np", str(a.nranks)]
    if a.hostfile:
        cmd += ["--hostfile", a.hostfile]
    cmd += shlex.split(a.mpirun_args)
    for key in sorted(env_keys):
        cmd += ["-x", key]
    return cmd + rank_wrapper(a) + list(launcher) + [binary] + flags + ["-g", "1"]


def mode_text(a):
    """How the ranks are launched, in words."""
    n = a.nranks
    mps_text = ", under MPS" if a.mps else ""
    if a.hostfile:
        return f"mpirun -np {n} --hostfile {a.hostfile}, -g 1"
    if a.one_gpu:
        return f"mpirun -np {n} on GPU 0, one NCCL_HOSTID per rank, -g 1" + mps_text
    if a.mpirun:
        return f"mpirun -np {n}, rank r on GPU r (GPUs 0-{n - 1}), one NCCL_HOSTID per rank, -g 1" + mps_text
    return f"one process, -g {n} (GPUs 0-{n - 1}, one NCCL host)" + mps_text


def ranks_in_words(n):
    return "both ranks" if n == 2 else f"all {n} ranks"


def one_gpu_note(a):
    """What --one-gpu figures mean, or None without --one-gpu."""
    if not a.one_gpu:
        return None
    who = ranks_in_words(a.nranks)
    if a.mps:
        return (f"--one-gpu under MPS: {who} share GPU 0 and run concurrently through the MPS server, so the "
                f"figures are speeds (of {a.nranks} ranks sharing one GPU, not of {a.nranks} GPUs)")
    return (f"--one-gpu without MPS: {who} share GPU 0 and take turns on it (time-slicing), so these figures "
            "check correctness; they are not speeds")


def run_facts(a, flags, daemon):
    """The settings of a run that are not environment variables, for its settings file."""
    facts = [("nccl-tests", f"{os.path.abspath(a.nccl_tests)}, flags {' '.join(flags)}"),
             ("launch", mode_text(a)), ("ranks", str(a.nranks)), ("NCCL algorithm", algo_text(a)),
             ("MPS", daemon.describe()), ("--env extras", settings.extras_text(a.extra_env))]
    if a.one_gpu:
        facts.append(("--one-gpu", f"{' '.join(f'{k}={v}' for k, v in ONE_GPU_ENV.items())} for every rank; "
                                   f"each rank's NCCL_HOSTID is set by the rank wrapper of the command: "
                                   f"{ONE_GPU_HOSTID}"))
    elif hostid_script(a):
        facts.append(("NCCL_HOSTID", f"one per rank, set by the rank wrapper of the command: {RANK_HOSTID}"))
    return facts


def prepare(a, op, config, out_dir, base_env, tool_env=None, flags=None, launcher=()):
    """Everything one run of <op>_perf in `config` needs: {"binary", "cmd", "env" (complete),
    "over" (what the run sets on top of base_env), "forwarded", "txt", "log_prefix"}.
    tool_env: variables of the tool itself for every run (the MPS directories)."""
    binary = os.path.join(a.nccl_tests, f"{op}_perf")
    log_prefix = os.path.join(out_dir, "logs", f"{op}.{config}.nccl")
    for old in glob.glob(log_prefix + ".*"):
        os.remove(old)
    over = configs.overrides(config, a.plugin_dir, log_prefix, single_host=not a.hostfile,
                             base_env=base_env, extra=a.extra_env)
    if a.one_gpu:
        over.update(ONE_GPU_ENV)
    over.update(tool_env or {})
    env = dict(base_env, **over)
    forwarded = set(over) | set(configs.inherited_nccl_vars([config], a.plugin_dir, base_env))
    forwarded |= {"LD_LIBRARY_PATH"} & set(env)
    cmd = command(a, binary, forwarded, flags, launcher)
    return {"binary": binary, "cmd": cmd, "env": env, "over": over, "forwarded": sorted(forwarded),
            "txt": os.path.join(out_dir, f"{op}.{config}.txt"), "log_prefix": log_prefix}


def write_settings(a, spec, flags, daemon, machine_info, base_env, more_facts=()):
    """<op>.<config>.settings.txt beside the run's output."""
    path = spec["txt"][: -len(".txt")] + ".settings.txt"
    return settings.write(path, output=os.path.basename(spec["txt"]), machine_info=machine_info,
                          facts=run_facts(a, flags, daemon) + list(more_facts), command=spec["cmd"],
                          overrides=spec["over"],
                          base_env=base_env, forwarded=spec["forwarded"] if a.mpirun else None)


# Ops whose per-rank count nccl-tests rounds down to whole 16 bytes (its <op>GetCollByteCount):
# a row's size is then that count times the ranks.
PER_RANK_OPS = {"all_gather", "reduce_scatter", "alltoall"}


def expected_sizes(a, op="all_reduce"):
    """Row sizes nccl-tests prints for float data (counts are size // 4); sizes an op cannot split
    over the ranks print as 0 and are not expected."""
    n = a.nranks
    def printed(s):
        count = s // 4
        return ((count // n) & ~3) * n * 4 if op in PER_RANK_OPS else count * 4
    return sorted({printed(s) for s in report.doubling(a.min_bytes, a.max_bytes)} - {0})


def problems_of(result, rc, sizes, nranks, log_text, n_logs, config, *, allow_intra=False, timeout=None):
    """Everything wrong with one run, as short sentences (empty list = pass)."""
    problems = []
    if rc is None:
        problems.append(f"timed out after {timeout} s (killed)")
    elif rc != 0:
        problems.append(f"exit status {rc}" + (f" ({result['errors'][0]})" if result["errors"] else ""))
    got = {r["size"] for r in result["rows"]}
    missing = [s for s in sizes if s not in got]
    if not got:
        problems.append("no result rows")
    elif missing:
        problems.append(f"missing rows: {', '.join(report.human_size(s) for s in missing[:6])}"
                        + (f" and {len(missing) - 6} more" if len(missing) > 6 else ""))
    bad = parse.wrong_rows(result)
    if bad:
        problems.append("#wrong > 0: " + ", ".join(f"{report.human_size(s)} {w.replace('_', '-')} {n}"
                                                   for s, w, n in bad[:6]))
    if result["out_of_bounds"] is None:
        problems.append("no 'Out of bounds values' footer (run did not finish)")
    elif result["out_of_bounds"]:
        problems.append(f"Out of bounds values: {result['out_of_bounds']}")
    ranks = {r["rank"] for r in result["ranks"]}
    if result["ranks"] and len(ranks) != nranks:
        problems.append(f"nccl-tests ran {len(ranks)} rank(s), expected {nranks}"
                        " (with --mpirun the binary must be built with MPI=1)")
    more, evidence = transport_problems(log_text, n_logs, config, allow_intra=allow_intra)
    return problems + more, evidence


def transport_problems(log_text, n_logs, config, *, allow_intra=False):
    """([problem], evidence) of the NCCL logs of one run in `config`."""
    if not n_logs:
        return ["no NCCL debug log written (NCCL_DEBUG_FILE)"], ""
    ok, evidence = parse.check_transport(log_text, **configs.expectations(config), allow_intra=allow_intra)
    return ([] if ok else ["transport: " + evidence]), evidence


def read_logs(log_prefix):
    """(paths, text) of the NCCL logs of one run."""
    logs = sorted(glob.glob(log_prefix + ".*"))
    return logs, "".join(_read(p) for p in logs)


def _read(path):
    with open(path, errors="replace") as fh:
        return fh.read()


def _children_cpu_seconds():
    """User + system CPU time of this script's waited-for children so far (with -g 2 one
    nccl-tests process holds both ranks, NCCL's proxy threads and the plugin's threads)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_one(a, op, config, out_dir, base_env, daemon, machine_info):
    spec = prepare(a, op, config, out_dir, base_env, daemon.env)
    write_settings(a, spec, test_flags(a), daemon, machine_info, base_env)
    start = time.monotonic()
    cpu_before = _children_cpu_seconds()
    proc = None
    with open(spec["txt"], "w") as fh:
        try:
            with procs.held_interrupts():     # an interrupt waits until proc is known to the finally
                proc = subprocess.Popen(spec["cmd"], stdout=fh, stderr=subprocess.STDOUT, env=spec["env"],
                                        start_new_session=True)
            rc = proc.wait(timeout=a.timeout)
        except subprocess.TimeoutExpired:
            rc = None
        finally:
            if proc is not None and proc.poll() is None:   # timed out, or Ctrl-C/SIGTERM reached this script:
                ranks = procs.signal_family(proc.pid, signal.SIGKILL)  # end this run's processes (mpirun and
                proc.wait()                                    # each rank: OpenMPI 4 gives each its own group)
                procs.wait_gone(ranks, 10)                     # before MPS is told to quit
    seconds = time.monotonic() - start
    cpu_seconds = _children_cpu_seconds() - cpu_before
    result = parse.parse_nccl_tests(_read(spec["txt"]))
    logs, log_text = read_logs(spec["log_prefix"])
    problems, evidence = problems_of(result, rc, expected_sizes(a, op), a.nranks, log_text, len(logs), config,
                                     allow_intra=bool(a.hostfile), timeout=a.timeout)
    warns = [ln.strip() for ln in log_text.splitlines() if "NCCL WARN" in ln][:5]
    stats = parse.stats_summary(parse.tcpxr_stats(log_text), parse.copy_stats(log_text))
    return {"op": op, "config": config, "command": spec["cmd"], "env": spec["over"], "output": spec["txt"],
            "logs": logs, "stats": stats, "rc": rc, "seconds": round(seconds, 1),
            "cpu_cores": round(cpu_seconds / max(seconds, 1e-9), 2), "problems": problems, "evidence": evidence,
            "warnings": warns, "result": result, "nccl_version": parse.nccl_version(log_text)}


def preflight(a):
    """Fatal setup errors, as messages."""
    errors = []
    for op in a.ops:
        binary = os.path.join(a.nccl_tests, f"{op}_perf")
        if not os.access(binary, os.X_OK):
            errors.append(f"{binary} not found or not executable (build nccl-tests first, see ncclTests/README.md)")
    if any(configs.uses_plugin(c) for c in a.configs) and not os.path.isfile(configs.plugin_path(a.plugin_dir)):
        errors.append(f"{configs.plugin_path(a.plugin_dir)} not found (cargo build --release)")
    if a.mpirun and not shutil.which("mpirun"):
        errors.append("mpirun not on PATH")
    if a.mps and not shutil.which(mps.CONTROL):
        errors.append(f"--mps: {mps.CONTROL} not found on PATH (it comes with the NVIDIA driver's utilities)")
    return errors


def gpu_problems(a, machine_info, base_env):
    """One rank per GPU on this host needs as many GPUs: a setup error when nvidia-smi -L (or
    CUDA_VISIBLE_DEVICES) shows fewer. Nothing when the count is unknown, with --one-gpu or a hostfile."""
    if a.one_gpu or a.hostfile:
        return []
    have = settings.gpu_count(machine_info, base_env)
    if have is None or have >= a.nranks:
        return []
    return [f"{a.nranks} ranks one per GPU need {a.nranks} GPUs, this host shows {have} "
            f"(--one-gpu puts every rank on GPU 0)"]


def main(argv=None):
    a = parse_args(argv)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = os.path.abspath(a.out or os.path.join(HERE, "out", f"nccl-tests-{stamp}"))
    os.makedirs(os.path.join(out_dir, "logs"), exist_ok=True)
    base_env = dict(os.environ)

    machine_info = settings.machine(base_env)
    errors = preflight(a) + gpu_problems(a, machine_info, base_env)
    if errors:
        for e in errors:
            print(f"FAILED setup: {e}")
        return 1
    runnable = []
    for c in a.configs:
        try:
            configs.overrides(c, a.plugin_dir, "probe", base_env=base_env)
            runnable.append(c)
        except configs.ConfigUnavailable as e:
            print(f"SKIPPED {e}")
    inherited = configs.inherited_nccl_vars(runnable, a.plugin_dir, base_env, single_host=not a.hostfile,
                                            extra=a.extra_env)
    if inherited:
        print("note: from your environment, applied to every config: "
              + " ".join(f"{k}={v}" for k, v in inherited.items()))
    mode = mode_text(a)
    print(f"output: {out_dir}\nflags: {' '.join(test_flags(a))} ({mode}); {a.nranks} ranks; "
          f"algorithm: {algo_text(a, base_env)}")

    runs, total = [], a.repeat * len(a.ops) * len(runnable)
    daemon = mps.Daemon(a.mps, os.path.join(out_dir, "mps-log"), base_env=base_env)
    try:
        with procs.interrupt_on_sigterm(), daemon:
            if a.mps:
                print(f"MPS daemon started: {daemon.describe()}")
            for k, op, c in ((k, op, c) for k in range(a.repeat) for op in a.ops for c in pass_order(runnable, k)):
                pass_dir = out_dir if a.repeat == 1 else os.path.join(out_dir, f"r{k + 1}")
                os.makedirs(os.path.join(pass_dir, "logs"), exist_ok=True)
                in_pass = f" (pass {k + 1} of {a.repeat})" if a.repeat > 1 else ""
                print(f"[{len(runs) + 1}/{total}] {op} {c}{in_pass}", flush=True)
                run = run_one(a, op, c, pass_dir, base_env, daemon, machine_info)
                run["pass"] = k + 1
                runs.append(run)
                status = "FAILED: " + "; ".join(run["problems"]) if run["problems"] else f"ok, {run['evidence']}"
                print(f"    {status} ({run['seconds']} s, {run['cpu_cores']} CPU cores busy on average, "
                      f"avg busbw {run['result']['avg_busbw']})")
                if run["stats"]:
                    print(f"    tcpxr stats: {parse.stats_line(run['stats'])}")
                for w in run["warnings"]:
                    print(f"    {w}")
    except mps.MpsError as e:
        print(f"FAILED setup: {e}")
        return 1
    if a.mps:
        print("MPS daemon stopped" if not daemon.problems else "MPS daemon: " + "; ".join(daemon.problems))

    results = median_results(runs, a.ops, steady=a.cycles > 1)
    failures = [f"{r['op']} {r['config']}" + (f" (pass {r['pass']})" if a.repeat > 1 else "") + f": {p}"
                for r in runs for p in r["problems"]]
    failures += [f"MPS: {p}" for p in daemon.problems]
    versions = sorted({f"nccl-tests {r['result']['nccl_tests_version']}, NCCL library "
                       f"{parse.library_version(r['result']['nccl_library'])}"
                       for r in runs if r["result"]["nccl_library"]})
    versions += sorted({f"NCCL {r['nccl_version']} (from the INFO log)" for r in runs if r["nccl_version"]})
    forcing = dict(configs.COMMON_ENV, **({} if a.hostfile else configs.SINGLE_HOST_ENV))
    notes = versions + [
        f"nccl-tests flags: {' '.join(test_flags(a))} ({mode})",
        f"ranks: {a.nranks}; NCCL algorithm: {algo_text(a, base_env)}",
        "env of every run: " + " ".join(f"{k}={v}" for k, v in forcing.items()),
        f"--env extras (every run): {settings.extras_text(a.extra_env)}",
        f"MPS: {daemon.describe()}",
        "every setting of each run (environment, command, host, GPUs): <op>.<config>.settings.txt",
    ] + [f"{c}: {configs.DESCRIPTIONS[c]}" for c in runnable]
    if a.repeat > 1:
        notes.append(f"each figure: the median of {a.repeat} passes at that size (the lower median for an even "
                     f"count; a failed run's pass left out), pass k starting with the k-th config, odd passes in "
                     f"reverse order; each "
                     f"pass's own outputs and settings in r1/ ... r{a.repeat}/")
    if a.cycles > 1:
        notes.append(f"each process ran the sweep {a.cycles} times (-N {a.cycles}); each figure is the median of "
                     f"the later {a.cycles - 1} cycles" + (" of every pass" if a.repeat > 1 else "")
                     + ", the first cycle (each size's first run in the process) left out; it stays in the "
                     "raw outputs")
        jumps = jumps_note(cycle_jumps(runs), a.repeat > 1)
        if jumps:
            notes.append(jumps)
    if a.one_gpu:
        notes.append(one_gpu_note(a))
    if inherited:
        notes.append("inherited: " + " ".join(f"{k}={v}" for k, v in inherited.items()))
    notes.append("CPU cores busy, averaged over each whole run (the nccl-tests process: its own polling "
                 "threads, NCCL's proxy threads, the transport's threads): "
                 + ", ".join(f"{r['op']} {r['config']} {r['cpu_cores']}" for r in runs))
    with_stats = [r for r in runs if r["stats"]]
    if with_stats:
        notes.append("tcpxr's own counters (NCCL_TCPXR_STATS, over each run's connections; stripes' I/O busy "
                     "time over their lifetime; queued ahead: chunks already on a stripe when the next was "
                     "posted, near 0 = waiting for NCCL, near the window = the stripe is the limit; spread "
                     "cut: messages below the chunk that NCCL_TCPXR_SPREAD_PIECE_BYTES's rule cut, of those it "
                     "looked at; chunks done / seen: a chunk's time from its post to done on its stripe, and "
                     "from done to NCCL's thread seeing it, chunk-weighted; copies into GPU memory: the copy "
                     "engine's placements of large receives, the time NCCL's thread spent queuing each and from "
                     "queued to seen done): "
                     + " | ".join(f"{r['op']} {r['config']}: {parse.stats_line(r['stats'])}" for r in with_stats))
    if failures:
        notes.append("failed runs are left out of the tables; their raw output is in "
                     + ("r<pass>/" if a.repeat > 1 else "") + "<op>.<config>.txt")
    title = (f"tcpxr vs NCCL Socket, nccl-tests on {socket.gethostname()}, {stamp}, {a.nranks} ranks"
             + (f", {algo_tag(a, base_env)}" if algo_tag(a, base_env) else ""))
    text = report.write_summary(out_dir, results, runnable, title, notes, failures)
    plot, note = plotting.plot_busbw(results, runnable, os.path.join(out_dir, "busbw.png"), title)
    with open(os.path.join(out_dir, "run.json"), "w") as fh:
        json.dump({"argv": sys.argv, "out": out_dir, "machine": machine_info, "mps": daemon.describe(),
                   "ranks": a.nranks, "launch": mode, "algo": algo_text(a, base_env), "repeat": a.repeat,
                   "cycles": a.cycles, "extra_env": a.extra_env, "runs": runs, "failures": failures}, fh, indent=1)

    print("\n" + text)
    print(f"plot: {plot} ({note})" if plot else f"plot: none ({note})")
    print(f"summary: {os.path.join(out_dir, 'summary.md')}")
    for f in failures:
        print(f"FAILED {f}")
    print(f"{len(failures)} problem(s)" if failures else "ALL OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
