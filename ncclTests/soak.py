#!/usr/bin/env python3
"""Soak tcpxr under nccl-tests: hours of traffic in minutes, with every cycle checked.

Every (op, config) is one job, and all jobs run at once for --duration seconds: nccl-tests'
own repeat option, -N 0, makes each job sweep MIN..MAX (-c 1: every size of every cycle is
checked) again and again in one process, over many comms (NCCL_MIN_NCHANNELS=16 by default).
Every --interval seconds each rank process's VmRSS, threads (/proc/<pid>/status) and open fds
(/proc/<pid>/fd) are sampled, with the cycles each job has completed. At the end the jobs are
stopped (SIGTERM to each job's session) and the verdict is written:

  OUT/soak.csv    time_s, job, pid, rss_kb, threads, fds, cycles
  OUT/soak.md     per job: exit status, cycles, #wrong, transport; per rank: first, after
                  warm-up, last and max of each figure; the criteria and PASS or FAIL
  OUT/<op>.<config>.txt / .settings.txt, OUT/logs/   as run_nccl_tests.py writes them

PASS needs, for every job: it ran until the end (no exit of its own), no row with #wrong > 0
and no error line, the transport check of run_nccl_tests.py (device unpack for tcpxr-gpu),
complete cycles after warm-up and never more than --max-gap seconds without one, the expected
number of rank processes in every sample after warm-up; and for every rank process: threads
and open fds at the last sample equal to those at the end of warm-up, and RSS grown by at most
--max-rss-growth-mb since then. Warm-up ends at --warmup-seconds or after the job's first
complete cycle, whichever is later. The soak stops early, FAIL, at the first job that exits,
reports a wrong element or prints an error. Launch options are run_nccl_tests.py's.
"""

import argparse
import csv
import datetime
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import configs
import mps
import parse
import procs
import report
import run_nccl_tests as runner
import settings

HERE = os.path.dirname(os.path.abspath(__file__))
FIELDS = ("time_s", "job", "pid", "rss_kb", "threads", "fds", "cycles")
FIGURES = ("rss_kb", "threads", "fds")
STOP_GRACE_S = 30


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="one GPU, two ranks as two hosts under MPS:\n"
                                       "  %(prog)s --one-gpu --mps --nccl-tests ncclTests/nccl-tests/build --plugin-dir dist\n"
                                       "one GPU, four ranks as four hosts under MPS, NCCL's ring forced:\n"
                                       "  %(prog)s --one-gpu --mps --ranks 4 --algo Ring --nccl-tests "
                                       "ncclTests/nccl-tests/build --plugin-dir dist\n"
                                       "two GPUs, two processes:\n"
                                       "  %(prog)s --mpirun --nccl-tests ncclTests/nccl-tests/build --plugin-dir dist")
    runner.add_launch_args(p, several_hosts=False)
    p.add_argument("--configs", default="tcpxr-host,tcpxr-gpu", help="configs, one job per op each (default: %(default)s)")
    p.add_argument("--ops", default="all_reduce,sendrecv", help="nccl-tests ops (default: %(default)s)")
    p.add_argument("--min", default="8", help="smallest size (default: %(default)s)")
    p.add_argument("--max", default="64M", help="largest size (default: %(default)s)")
    p.add_argument("--iters", type=int, default=10, help="iterations per size and cycle, -n (default: %(default)s)")
    p.add_argument("--warmup", type=int, default=2, help="nccl-tests warm-up iterations, -w (default: %(default)s)")
    p.add_argument("--min-channels", type=int, default=16,
                   help="NCCL_MIN_NCHANNELS, for many connections (0: NCCL's choice; an --env value wins) "
                        "(default: %(default)s)")
    p.add_argument("--duration", type=float, default=600, help="seconds of traffic (default: %(default)s)")
    p.add_argument("--interval", type=float, default=10, help="seconds between samples (default: %(default)s)")
    p.add_argument("--warmup-seconds", type=float, default=60,
                   help="figures are compared from the end of warm-up on (default: %(default)s)")
    p.add_argument("--max-rss-growth-mb", type=float, default=16,
                   help="most RSS growth of a rank process after warm-up, MiB (default: %(default)s)")
    p.add_argument("--max-gap", type=float, default=120,
                   help="most seconds without a complete cycle after warm-up (default: %(default)s)")
    p.add_argument("--out", help="output directory (default: ncclTests/out/soak-<date>)")
    a = p.parse_args(argv)
    a.configs = [c for c in a.configs.split(",") if c]
    a.ops = [o for o in a.ops.split(",") if o]
    try:
        configs.check_names(a.configs)
        a.min_bytes, a.max_bytes = report.parse_size(a.min), report.parse_size(a.max)
        report.doubling(a.min_bytes, a.max_bytes)
        if not a.ops:
            raise ValueError("--ops: name at least one")
        if min(a.duration, a.interval) <= 0 or a.warmup_seconds >= a.duration:
            raise ValueError("need --duration > --warmup-seconds >= 0 and --interval > 0")
    except ValueError as e:
        p.error(str(e))
    runner.check_launch_args(p, a)
    runner.check_ops_for_algo(p, a)
    if a.min_channels and "NCCL_MIN_NCHANNELS" not in a.extra_env:
        a.extra_env["NCCL_MIN_NCHANNELS"] = str(a.min_channels)
    return a


def soak_flags(a):
    """nccl-tests flags of every job: -N 0 repeats the sweep until the process is stopped."""
    return ["-b", str(a.min_bytes), "-e", str(a.max_bytes), "-f", "2", "-n", str(a.iters),
            "-w", str(a.warmup), "-c", "1", "-N", "0"]


# ---------------------------------------------------------------------------
# Pure parts: progress of a job's output, the verdict over recorded samples

def progress(text, last_size):
    """What a job's output shows so far: complete cycles (rows at the largest size: nccl-tests
    prints one row per size per cycle; for the ops that split over the ranks that size is
    runner.expected_sizes(a, op)[-1]), rows, rows with #wrong > 0 and error lines."""
    text = text[: text.rfind("\n") + 1]      # a line still being written is not read
    r = parse.parse_nccl_tests(text)
    return {"cycles": sum(1 for row in r["rows"] if row["size"] == last_size), "rows": len(r["rows"]),
            "wrong": parse.wrong_rows(r), "errors": r["errors"]}


def _longest_gap(points, until):
    """Longest time without a new complete cycle, over (time, cycles) points, up to `until`."""
    gap, since, last = 0.0, None, None
    for t, cycles in sorted(points):
        if since is None or cycles > last:
            if since is not None:
                gap = max(gap, t - since)
            since, last = t, cycles
    return max(gap, until - since) if since is not None else None


def judge(samples, ticks, jobs, *, warmup_s, nranks, max_rss_growth_kb, max_gap_s):
    """PASS or FAIL over recorded samples. samples: dicts with FIELDS; ticks: one per sampling,
    {"time_s", "cycles": {job: complete cycles}}; jobs: {name: {"ended_early", "rc", "end_s",
    "cycles", "rows", "wrong", "errors", "transport"}}. Returns (ok, problems, per_job, per_rank):
    per_rank maps (job, pid) to each figure's first, warm (end of warm-up), last and max."""
    problems, per_job, per_rank = [], {}, {}
    end_t = ticks[-1]["time_s"] if ticks else 0.0
    for name, job in jobs.items():
        def say(text, name=name):
            problems.append(f"{name}: {text}")

        points = [(k["time_s"], k["cycles"].get(name, 0)) for k in ticks]
        cycled = [t for t, c in points if c >= 1]
        warm_t = max(warmup_s, cycled[0]) if cycled else None   # warm-up: time, and one whole cycle
        info = per_job[name] = {"warm_s": warm_t, "gap_s": None, "cycles_warm": None}
        known = len(problems)
        if job["ended_early"]:
            say(f"exited by itself after {job['end_s']:.0f} s with status {job['rc']}")
        if job["wrong"]:
            more = len(job["wrong"]) - 10
            say(f"#wrong > 0 {len(job['wrong'])} time(s) (size, placement, #wrong): "
                + ", ".join(f"{report.human_size(s)} {w.replace('_', '-')} {n}" for s, w, n in job["wrong"][:10])
                + (f" and {more} more (see the job's .txt)" if more > 0 else ""))
        if job["errors"]:
            say(f"error lines in the output: {job['errors'][0]}")
        problems.extend(f"{name}: {p}" for p in job["transport"])
        if warm_t is None:
            say("no complete cycle in any sample")
            continue
        after = [(t, c) for t, c in points if t >= warm_t]
        if len(after) < 2:
            if len(problems) == known:       # not when the soak stopped early for this job's failure
                say(f"fewer than two samples after warm-up (it ends at {warm_t:.0f} s): run longer")
            continue
        info["cycles_warm"], info["gap_s"] = after[0][1], _longest_gap(after, end_t)
        if after[-1][1] <= after[0][1]:
            say("no complete cycle after warm-up (hung?)")
        elif info["gap_s"] > max_gap_s:
            say(f"{info['gap_s']:.0f} s without a complete cycle after warm-up (limit {max_gap_s:g} s)")
        mine = [s for s in samples if s["job"] == name]
        for t, _ in after:
            found = sum(1 for s in mine if s["time_s"] == t)
            if found != nranks:
                say(f"{found} rank process(es) found at {t:.0f} s, expected {nranks}")
                break
        for pid in sorted({s["pid"] for s in mine}):
            series = sorted((s for s in mine if s["pid"] == pid), key=lambda s: s["time_s"])
            warm = next((s for s in series if s["time_s"] >= warm_t), None)
            if warm is None:
                continue                     # a process that ended during warm-up (counted above)
            last = series[-1]
            per_rank[(name, pid)] = {f: {"first": series[0][f], "warm": warm[f], "last": last[f],
                                         "max": max(s[f] for s in series if s["time_s"] >= warm_t)}
                                     for f in FIGURES}
            for f in ("threads", "fds"):
                if last[f] != warm[f]:
                    say(f"pid {pid}: {f} {warm[f]} at the end of warm-up, {last[f]} at the end")
            growth = last["rss_kb"] - warm["rss_kb"]
            if growth > max_rss_growth_kb:
                say(f"pid {pid}: RSS grew {growth / 1024:.1f} MiB after warm-up "
                    f"(limit {max_rss_growth_kb / 1024:g} MiB)")
    return not problems, problems, per_job, per_rank


def criteria_text(a, nranks):
    return (f"PASS needs, for every job: it ran until the end, #wrong 0 in every row and no error line, the "
            f"transport check, a complete cycle after warm-up and never more than {a.max_gap:g} s without one, "
            f"{nranks} rank process(es) in every sample after warm-up; for every rank process: threads and open "
            f"fds at the end equal to those at the end of warm-up, RSS grown by at most {a.max_rss_growth_mb:g} MiB "
            f"since then. Warm-up ends at {a.warmup_seconds:g} s or after the job's first complete cycle, "
            "whichever is later.")


def markdown(title, ok, problems, criteria, notes, jobs, per_job, per_rank):
    lines = [f"# {title}", "", f"**{'PASS' if ok else 'FAIL'}**", "", criteria, ""]
    lines += [f"{n}  " for n in notes] + ["", "## Jobs", "",
              "| job | exit | cycles | after warm-up | rows | #wrong > 0 (times) | error lines | transport | warm-up ends (s) "
              "| longest gap (s) |", "|---|---|---:|---:|---:|---:|---:|---|---:|---:|"]
    for name, job in jobs.items():
        info = per_job.get(name, {})
        exit_ = (f"{job['rc']} (exited by itself at {job['end_s']:.0f} s)" if job["ended_early"]
                 else f"{job['rc']} (stopped by the soak)")
        after = "-" if info.get("cycles_warm") is None else job["cycles"] - info["cycles_warm"]
        transport = "; ".join(job["transport"]) or f"ok ({job['evidence']})"
        lines.append(f"| {name} | {exit_} | {job['cycles']} | {after} | {job['rows']} | {len(job['wrong'])} | "
                     f"{len(job['errors'])} | {transport} | {_n(info.get('warm_s'))} | {_n(info.get('gap_s'))} |")
    lines += ["", "## Rank processes (first / after warm-up / last / max after warm-up)", "",
              "| job | pid | RSS (KiB) | RSS growth after warm-up (KiB) | threads | open fds |",
              "|---|---:|---|---:|---|---|"]
    for (name, pid), fig in sorted(per_rank.items()):
        cells = {f: " / ".join(str(fig[f][k]) for k in ("first", "warm", "last", "max")) for f in FIGURES}
        lines.append(f"| {name} | {pid} | {cells['rss_kb']} | {fig['rss_kb']['last'] - fig['rss_kb']['warm']} | "
                     f"{cells['threads']} | {cells['fds']} |")
    if problems:
        lines += ["", "## Problems", ""] + [f"- {p}" for p in problems]
    return "\n".join(lines) + "\n"


def _n(v):
    return "-" if v is None else f"{v:.0f}"


# ---------------------------------------------------------------------------
# Running

def _read(path):
    try:
        with open(path, errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def start_jobs(a, out_dir, base_env, daemon, machine_info, jobs):
    """Launch every (op, config) job at once, into `jobs` ({name: job}) as each starts."""
    flags = soak_flags(a)
    stdbuf = shutil.which("stdbuf", path=base_env.get("PATH", os.defpath))
    launcher = [stdbuf, "-oL"] if stdbuf else []   # rows reach the file as they are printed
    for op in a.ops:
        for config in a.configs:
            spec = runner.prepare(a, op, config, out_dir, base_env, daemon.env, flags, launcher)
            runner.write_settings(a, spec, flags, daemon, machine_info, base_env, [
                ("soak", f"{a.duration:g} s, samples every {a.interval:g} s, warm-up {a.warmup_seconds:g} s, "
                         f"all {len(a.ops) * len(a.configs)} jobs at once"),
                ("output buffering", "stdbuf -oL" if stdbuf else "stdbuf not found: nccl-tests' own")])
            with open(spec["txt"], "w") as fh, procs.held_interrupts():   # started = recorded for stop_jobs
                proc = subprocess.Popen(spec["cmd"], stdout=fh, stderr=subprocess.STDOUT, env=spec["env"],
                                        start_new_session=True)
                jobs[f"{op}.{config}"] = {"op": op, "config": config, "spec": spec, "proc": proc,
                                          "name": os.path.basename(spec["binary"]), "end_s": None, "stop_at": None}


def stop_jobs(jobs, sig=signal.SIGTERM, grace_s=STOP_GRACE_S):
    """Signal every job's processes (procs.signal_family: its session leader's group and each
    rank); SIGKILL what outlives the grace time. What a job prints after this (a rank seeing
    its peer go first) is not held against it."""
    members = {}
    for name, job in jobs.items():
        if job["proc"].poll() is None:
            job["stop_at"] = len(_read(job["spec"]["txt"]))
            members[name] = procs.signal_family(job["proc"].pid, sig)
    deadline = time.monotonic() + grace_s
    for name, job in jobs.items():
        try:
            job["proc"].wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            procs.signal_family(job["proc"].pid, signal.SIGKILL)
            job["proc"].wait()
        for pid in procs.wait_gone(members.get(name, ()), max(0.0, deadline - time.monotonic())):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def cycle_ends(a):
    """{op: the size of the last row of each cycle}: all_gather, reduce_scatter and alltoall print
    their size rounded to whole 16 bytes a rank, so at 3 ranks their last row is not MAX."""
    return {op: runner.expected_sizes(a, op)[-1] for op in a.ops}


def job_progress(job, cycle_end):
    text = _read(job["spec"]["txt"])
    return progress(text if job["stop_at"] is None else text[: job["stop_at"]], cycle_end[job["op"]])


def sample(jobs, t, cycles, proc_root=procs.PROC):
    """One sample of every rank process of every job, as rows of FIELDS; cycles: {job: cycles}."""
    rows = []
    for name, job in jobs.items():
        for pid in procs.named(job["proc"].pid, job["name"], proc_root):
            figures = procs.sample(pid, proc_root)
            if figures:
                rows.append(dict(figures, time_s=round(t, 1), job=name, pid=pid, cycles=cycles[name]))
    return rows


def soak(a, jobs, csv_path, cycle_end, proc_root=procs.PROC):
    """Sample until --duration has passed or a job fails; returns (samples, ticks).
    cycle_end: {op: size of a cycle's last row} (cycle_ends())."""
    samples, ticks = [], []
    start, next_t = time.monotonic(), 0.0
    with open(csv_path, "w", newline="") as fh:
        out = csv.DictWriter(fh, FIELDS)
        out.writeheader()
        while True:
            t = time.monotonic() - start
            for job in jobs.values():
                if job["end_s"] is None and job["proc"].poll() is not None:
                    job["end_s"] = round(t, 1)
            if t >= next_t or t >= a.duration:
                now = {name: job_progress(job, cycle_end) for name, job in jobs.items()}
                cycles = {name: p["cycles"] for name, p in now.items()}
                rows = sample(jobs, t, cycles, proc_root)
                samples += rows
                ticks.append({"time_s": round(t, 1), "cycles": cycles})
                out.writerows(rows)
                fh.flush()
                next_t += a.interval
                print(f"    {t:6.0f} s: " + ", ".join(f"{n} {p['cycles']} cycles" for n, p in now.items()), flush=True)
                failing = [n for n, p in now.items() if jobs[n]["end_s"] is not None or p["wrong"] or p["errors"]]
                if failing:
                    print(f"    stopping early: {', '.join(failing)} failed at {t:.0f} s", flush=True)
                    break
            if t >= a.duration:
                break
            time.sleep(min(0.5, max(0.0, min(next_t, a.duration) - t)))
    return samples, ticks


def finish(jobs, cycle_end):
    """Each job's outcome after it was stopped: exit status, output up to the stop, transport."""
    out = {}
    for name, job in jobs.items():
        logs, log_text = runner.read_logs(job["spec"]["log_prefix"])
        transport, evidence = runner.transport_problems(log_text, len(logs), job["config"])
        out[name] = dict(job_progress(job, cycle_end), rc=job["proc"].returncode, ended_early=job["end_s"] is not None,
                         end_s=job["end_s"], transport=transport, evidence=evidence)
    return out


def main(argv=None):
    a = parse_args(argv)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = os.path.abspath(a.out or os.path.join(HERE, "out", f"soak-{stamp}"))
    os.makedirs(os.path.join(out_dir, "logs"), exist_ok=True)
    base_env = dict(os.environ)
    errors = runner.preflight(a)
    if errors:
        for e in errors:
            print(f"FAILED setup: {e}")
        return 1
    for c in a.configs:
        try:
            configs.overrides(c, a.plugin_dir, "probe", base_env=base_env)
        except configs.ConfigUnavailable as e:
            print(f"FAILED setup: {e}")
            return 1
    machine_info = settings.machine(base_env)
    errors = runner.gpu_problems(a, machine_info, base_env)
    if errors:
        for e in errors:
            print(f"FAILED setup: {e}")
        return 1
    cycle_end = cycle_ends(a)
    nranks = a.nranks if a.mpirun else 1    # -g N: one process holds every rank
    print(f"output: {out_dir}\nflags: {' '.join(soak_flags(a))} ({runner.mode_text(a)}), "
          f"{a.nranks} ranks, algorithm: {runner.algo_text(a, base_env)}, "
          f"{a.duration:g} s, a sample every {a.interval:g} s")

    daemon = mps.Daemon(a.mps, os.path.join(out_dir, "mps-log"), base_env=base_env)
    jobs = {}
    try:
        with procs.interrupt_on_sigterm(), daemon:
            if a.mps:
                print(f"MPS daemon started: {daemon.describe()}")
            try:
                start_jobs(a, out_dir, base_env, daemon, machine_info, jobs)
                samples, ticks = soak(a, jobs, os.path.join(out_dir, "soak.csv"), cycle_end)
                stop_jobs(jobs)
            finally:                          # exception or Ctrl-C: end every job's session at once
                stop_jobs(jobs, signal.SIGKILL, grace_s=5)
    except mps.MpsError as e:
        print(f"FAILED setup: {e}")
        return 1
    outcome = finish(jobs, cycle_end)
    ok, problems, per_job, per_rank = judge(samples, ticks, outcome, warmup_s=a.warmup_seconds, nranks=nranks,
                                            max_rss_growth_kb=a.max_rss_growth_mb * 1024, max_gap_s=a.max_gap)
    problems += [f"MPS: {p}" for p in daemon.problems]
    ok = ok and not daemon.problems
    notes = [f"nccl-tests flags: {' '.join(soak_flags(a))} ({runner.mode_text(a)})",
             f"ranks: {a.nranks}; NCCL algorithm: {runner.algo_text(a, base_env)}",
             f"jobs, all at once: {', '.join(jobs)}", f"duration {a.duration:g} s, a sample every {a.interval:g} s",
             f"--env extras (every job): {settings.extras_text(a.extra_env)}", f"MPS: {daemon.describe()}",
             "every setting of each job: <op>.<config>.settings.txt; every sample: soak.csv"]
    if a.one_gpu:
        notes.append(runner.one_gpu_note(a))
    title = (f"tcpxr soak, nccl-tests on {socket.gethostname()}, {stamp}, {a.nranks} ranks"
             + (f", {runner.algo_tag(a, base_env)}" if runner.algo_tag(a, base_env) else ""))
    text = markdown(title, ok, problems, criteria_text(a, nranks), notes, outcome, per_job, per_rank)
    with open(os.path.join(out_dir, "soak.md"), "w") as fh:
        fh.write(text)
    print("\n" + text)
    for p in problems:
        print(f"FAILED {p}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
