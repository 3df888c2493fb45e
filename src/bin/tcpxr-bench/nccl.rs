//! `tcpxr-bench nccl`: traffic shaped the way NCCL drives a net plugin, without a GPU.
//!
//! Several connections at once (NCCL's channels), up to 8 messages in flight on each, messages of
//! 128 KiB (NCCL's point-to-point chunk) or 512 KiB (a Simple-protocol step), and on each side one
//! thread that serves every connection of that side in a tight loop, posting and testing the
//! oldest request of each in turn, as NCCL's proxy thread does. Reports the aggregate rate, the CPU
//! cores the process kept busy, and how many threads the process had (tcpxr's own among them).
//! Beside each size, the ceiling: plain TCP with one connection per two of tcpxr's threads, one
//! blocking thread per end, so that as many threads copy as tcpxr's pool has; GB/s per busy core
//! is the figure to compare (tcpxr's includes its two polling threads; docs/BENCHMARKS.md section
//! 30 has the GPU host's).
//!
//!   tcpxr-bench nccl [--comms 4] [--sizes 128K,512K] [--inflight 8] [--seconds 1] [--no-baseline]
//!
//! The stripe count and every other tcpxr setting come from the environment (NCCL_TCPXR_*).
use super::{
    baseline, check, cli, connect_pair, cpu_seconds, human, init, parse_or_exit, pattern, read_or_exit, Slot, Window,
    NET,
};
use std::ffi::c_void;
use std::time::Instant;

pub fn run(args: &[String]) -> i32 {
    let known = [
        cli::value("--comms"),
        cli::value("--inflight"),
        cli::value("--seconds"),
        cli::value("--sizes"),
        cli::switch("--no-baseline"),
    ];
    let a = parse_or_exit!("nccl", args, &known);
    let comms = read_or_exit!(a, "--comms", "4", |s| cli::int_in(s, 1, 256)) as usize;
    let inflight = read_or_exit!(a, "--inflight", "8", |s| cli::int_in(s, 1, 32)) as usize;
    let seconds = read_or_exit!(a, "--seconds", "1", |s| cli::seconds_up_to(s, 3600.0));
    let sizes = read_or_exit!(a, "--sizes", "128K,512K", |s| cli::list(s, |x| cli::size_in(
        x,
        1,
        cli::MAX_SIZE
    )));
    init();
    let pairs: Vec<(usize, usize)> = (0..comms)
        .map(|_| {
            let (s, r) = connect_pair();
            (s as usize, r as usize)
        })
        .collect();
    let stripes = std::env::var("NCCL_TCPXR_STRIPES").unwrap_or_else(|_| "default".into());
    println!(
        "{comms} connections, {inflight} messages in flight on each, one polling thread per side, \
         NCCL_TCPXR_STRIPES={stripes}"
    );
    println!(
        "{:>10} {:>8} {:>8} {:>8} {:>10} {:>10} {:>10}",
        "size", "path", "GB/s", "cores", "GB/s/core", "threads", "tcpxr thr"
    );
    let row = |n: usize, path: &str, gbps: f64, cores: f64, threads: usize, ours: usize| {
        println!(
            "{:>10} {path:>8} {gbps:>8.2} {cores:>8.2} {:>10.2} {threads:>10} {ours:>10}",
            human(n),
            gbps / cores.max(1e-9)
        )
    };
    for &n in &sizes {
        // Per connection, `inflight` buffers on each side; the sender's carry distinct patterns.
        let mut sbufs: Vec<Vec<Vec<u8>>> = (0..comms)
            .map(|c| (0..inflight).map(|i| pattern(n, c * inflight + i)).collect())
            .collect();
        let mut rbufs: Vec<Vec<Vec<u8>>> = (0..comms).map(|_| vec![vec![0u8; n]; inflight]).collect();
        let slots = |bufs: &mut Vec<Vec<Vec<u8>>>| -> Vec<Vec<Slot>> {
            bufs.iter_mut()
                .map(|c| c.iter_mut().map(|b| (b.as_mut_ptr() as usize, 0)).collect())
                .collect()
        };
        let (sslots, rslots) = (slots(&mut sbufs), slots(&mut rbufs));
        let sends: Vec<usize> = pairs.iter().map(|p| p.0).collect();
        let recvs: Vec<usize> = pairs.iter().map(|p| p.1).collect();
        // Both sides move `iters` messages per connection; returns the slower side's seconds and
        // the process's thread counts sampled by the receiving side near the end.
        let both = |iters: usize| {
            let (rs, rc) = (rslots.clone(), recvs.clone());
            let t = std::thread::spawn(move || serve(false, &rc, &rs, n, iters));
            let (sent, _) = serve(true, &sends, &sslots, n, iters);
            let (got, threads) = t.join().unwrap();
            (sent.max(got), threads)
        };
        both(inflight);
        if rbufs != sbufs {
            eprintln!("tcpxr-bench nccl: received data differs from what was sent at {n} bytes");
            return 4;
        }
        let (probe, _) = both(inflight * 4);
        let per_msg = probe / (inflight * 4) as f64;
        let iters = ((seconds / per_msg.max(1e-7)) as usize).clamp(inflight, 1_000_000);
        let cpu0 = cpu_seconds();
        let (secs, (threads, ours)) = both(iters);
        let cores = (cpu_seconds() - cpu0) / secs;
        let gbps = (n * iters * comms) as f64 / secs / 1e9;
        row(n, "tcpxr", gbps, cores, threads, ours);
        if !a.has("--no-baseline") {
            let connections = (ours / 2).max(1);
            // Warmed up as tcpxr's connections are above: inflight + 4 x inflight messages.
            let b = baseline(n, seconds, connections, 5 * inflight);
            row(n, &format!("tcp-x{connections}"), b.gbps, b.cores, 2 * connections, 0);
        }
    }
    for (s, r) in pairs {
        // SAFETY: comms from connect_pair with nothing outstanding.
        unsafe {
            check(NET.closeSend.unwrap()(s as *mut c_void), "closeSend");
            check(NET.closeRecv.unwrap()(r as *mut c_void), "closeRecv");
        }
    }
    0
}

/// One side, as NCCL's proxy thread: every pass keeps each connection's window full and tests its
/// oldest request once. Returns the seconds taken and (threads, tcpxr threads) of the process
/// seen when half the messages were done.
fn serve(send: bool, comms: &[usize], slots: &[Vec<Slot>], n: usize, iters: usize) -> (f64, (usize, usize)) {
    let mut windows: Vec<Window> = comms
        .iter()
        .zip(slots)
        .map(|(&comm, slots)| Window::new(send, comm as *mut c_void, slots, n, iters, "tcpxr-bench nccl"))
        .collect();
    let mut threads = (0, 0);
    let start = Instant::now();
    while windows.iter().any(|w| !w.finished()) {
        for (c, w) in windows.iter_mut().enumerate() {
            if !w.finished() && w.pass() && c == 0 && w.done == iters / 2 {
                threads = thread_counts();
            }
        }
    }
    (start.elapsed().as_secs_f64(), threads)
}

/// Threads of this process, and those of them that are tcpxr's (named "tcpxr-…"; the bench's own
/// threads carry the program's name, "tcpxr-bench").
fn thread_counts() -> (usize, usize) {
    let mut all = 0;
    let mut ours = 0;
    for task in std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten() {
        all += 1;
        let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if name.starts_with("tcpxr-") && name.trim_end() != "tcpxr-bench" {
            ours += 1;
        }
    }
    (all, ours)
}
