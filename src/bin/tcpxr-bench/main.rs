//! tcpxr-bench: moves data between two endpoints over loopback through tcpxr's own NCCL table
//! (`ncclNetPlugin_v12`, called exactly as NCCL's proxy calls it), sweeping message sizes and
//! stripe counts, beside a plain single-TCP-connection baseline measured in the same run.
//!
//!   tcpxr-bench [--sizes 4K:1G] [--stripes 1,2,4,8] [--seconds 0.5] [--csv FILE] [--no-baseline]
//!   tcpxr-bench ring [--ranks 4] [--channels 1] ...   (NCCL's ring, a process per rank, beside TCP)
//!   tcpxr-bench soak [--pairs 4] [--seconds 60] ...   (a long run checking every byte, soak.rs)
//!   tcpxr-bench interference [--sizes 512K,4M]   (GEMM beside tcpxr traffic on GPU 0)
//!   tcpxr-bench peer --role recv|send [--size N] [--handle HEX]   (a peer process, for tests)
//!
//! Each stripe count runs in a child process of its own, because tcpxr reads its configuration
//! (NCCL_TCPXR_STRIPES) once per process, as it does inside NCCL. Every subcommand pins tcpxr to
//! the loopback interface (NCCL_TCPXR_IFNAME=lo) unless the user names interfaces
//! (NCCL_TCPXR_IFNAME or NCCL_SOCKET_IFNAME).
//!
//! An unknown option or a bad value is reported on stderr with exit code 2 (see cli.rs).
#![deny(unsafe_op_in_unsafe_fn)]
use cli::Usage;
use nccl_net_tcpxr::abi::*;
pub(crate) use nccl_net_tcpxr::export::ncclNetPlugin_v12 as NET;
use std::ffi::{c_int, c_void};
use std::io::{BufRead, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod cli;
mod gpu;
mod interference;
mod latency;
mod nccl;
mod ring;
mod rma;
mod soak;

fn main() {
    // Two endpoints on one host talk over loopback, never through whatever address the host's
    // first NIC has (tcpxr's default for clusters), unless the user names interfaces.
    if ["NCCL_TCPXR_IFNAME", "NCCL_SOCKET_IFNAME"]
        .iter()
        .all(|v| std::env::var_os(v).is_none())
    {
        // Sound: the first thing main does, before this process has a second thread.
        std::env::set_var("NCCL_TCPXR_IFNAME", "lo");
        let _ = PINNED.set(());
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        Some("peer") => peer(&args[1..]),
        Some("--worker") => worker(&args[1..]),
        Some("gpu") => gpu::run(&args[1..]),
        Some("latency") => latency::run(&args[1..]),
        Some("nccl") => nccl::run(&args[1..]),
        Some("ring") => ring::run(&args[1..]),
        Some("--ring-rank") => ring::rank(&args[1..]),
        Some("soak") => soak::run(&args[1..]),
        Some("interference") => interference::run(&args[1..]),
        Some("-h") | Some("--help") => {
            println!("{}", HELP);
            0
        }
        _ => sweep(&args),
    };
    std::process::exit(code);
}

/// Reports a command-line error; the exit code for it.
pub(crate) fn usage(e: Usage) -> i32 {
    eprintln!("tcpxr-bench: {e}\n(tcpxr-bench --help lists the subcommands and their options)");
    2
}

/// Parses `args` for `cmd`, or returns from the calling subcommand with exit code 2.
macro_rules! parse_or_exit {
    ($cmd:expr, $args:expr, $known:expr) => {
        match $crate::cli::Args::parse($cmd, $args, $known) {
            Ok(a) => a,
            Err(e) => return $crate::usage(e),
        }
    };
}
pub(crate) use parse_or_exit;

/// The value of an option read by `$read`, or a return from the calling subcommand with exit
/// code 2.
macro_rules! read_or_exit {
    ($args:expr, $name:expr, $default:expr, $read:expr) => {
        match $args.read($name, $default, $read) {
            Ok(v) => v,
            Err(e) => return $crate::usage(e),
        }
    };
}
pub(crate) use read_or_exit;

const HELP: &str = "tcpxr-bench: two endpoints over loopback through tcpxr's NCCL table (no GPU needed)
  Every subcommand runs tcpxr on lo (sets NCCL_TCPXR_IFNAME=lo) unless NCCL_TCPXR_IFNAME or
  NCCL_SOCKET_IFNAME names interfaces.
  tcpxr-bench [--sizes MIN:MAX] [--stripes 1,2,4,8] [--seconds S] [--csv FILE] [--no-baseline]
      sizes double from MIN to MAX (K/M/G suffixes, 1 B - 1G, default 4K:1G); stripes 1-16; each
      point runs about S seconds (default 0.3, at most 3600; a point is never fewer messages than
      are kept in flight) after a warm-up; every received message of the first round is checked
      byte for byte. Beside it plain TCP (tcp x1), warmed up and timed the same way; the output
      ends with how each column was measured. --csv writes the figures to FILE (nothing is
      written without it).
  tcpxr-bench nccl [--comms 4] [--sizes 128K,512K] [--inflight 8] [--seconds 1] [--no-baseline]
      traffic shaped as NCCL drives a plugin: several connections, 8 messages in flight on each,
      one polling thread per side; aggregate rate, CPU cores busy, threads of the process; beside
      it plain TCP with as many copying threads as tcpxr's pool (GB/s per busy core compares them)
  tcpxr-bench ring [--ranks 4] [--size 4M] [--inflight 8] [--channels 1] [--seconds 2]
                   [--tcp-connections N,...] [--no-baseline]
      bulk in the shape of NCCL's ring: one process per rank (2-64), rank r sending to r+1 and
      receiving from r-1 at once through tcpxr's table over --channels comms each way (1-32, as
      NCCL's channels), --inflight messages of --size posted on each, the first round checked byte
      for byte; per rank and for the ring: GB/s, CPU seconds, cores busy, GB/s per busy core;
      beside it the same ring over plain TCP with as many copying threads per rank as tcpxr's I/O
      pool, or with each count of connections --tcp-connections names (1-64), the best of which
      is the ceiling (issue 31's bulk goal)
  tcpxr-bench soak [--pairs 4] [--inflight 4] [--max-size 8M] [--seconds 60] [--report 10] [--seed 1]
      a long correctness run: several pairs, messages of 0 B - max-size in flight on each, receives
      posted larger a third of the time, every byte (and the posted tail past it) checked; a line
      every --report seconds with messages verified, resident memory, threads and open fds; exit
      code 4 at the first wrong byte or size
  tcpxr-bench latency [--size 8] [--iters 20000] [--ahead 1] [--rma]
      small-message ping-pong between two threads: one-way latency, median and p99; --ahead N
      keeps N receives posted, as NCCL's proxy does; --rma adds a put with a strong signal each
      way through tcpxr's RMA table (host windows)
  tcpxr-bench gpu [--mib 64]
      the unpack kernel on GPU 0: against cudaMemcpy D2D, batched vs per-chunk vs naive, latency;
      last, the same fragments placed by the copy engines (cuMemcpyBatchAsync, CUDA 12.8+)
  tcpxr-bench interference [--sizes 512K,4M] [--period 0.3] [--cycles 4] [--gemm 8192] [--buffers host,gpu]
      a bf16 GEMM on GPU 0 (cuBLAS) running throughout while tcpxr traffic GPU 0 -> GPU 0 in this
      process is switched on and off in turns; host buffers (the control) and GPU buffers (staging
      copies and unpack kernels)
  tcpxr-bench peer --role recv|send [--size N] [--handle HEX]
      a long-running peer process used by tcpxr's fault tests";

pub(crate) fn check(r: ncclResult_t, what: &str) {
    if r != ncclResult_t::ncclSuccess {
        eprintln!("tcpxr-bench: {what} failed: {r:?}");
        std::process::exit(2);
    }
}

const SWEEP: &[cli::Opt] = &[
    cli::value("--sizes"),
    cli::value("--stripes"),
    cli::value("--seconds"),
    cli::value("--csv"),
    cli::switch("--no-baseline"),
];
const DEFAULT_SIZES: &str = "4K:1G";
const DEFAULT_SECONDS: &str = "0.3";
/// The longest point the bench runs.
const MAX_SECONDS: f64 = 3600.0;

/// The parent: one child per stripe count, then the baseline, then the table and the CSV.
fn sweep(args: &[String]) -> i32 {
    let a = parse_or_exit!("the sweep", args, SWEEP);
    let sizes = read_or_exit!(a, "--sizes", DEFAULT_SIZES, cli::size_range);
    let stripes = read_or_exit!(a, "--stripes", "1,2,4,8", |s| cli::list(s, |x| cli::int_in(x, 1, 16)));
    let secs = read_or_exit!(a, "--seconds", DEFAULT_SECONDS, |s| cli::seconds_up_to(s, MAX_SECONDS));
    let (sizes_arg, seconds) = (
        a.get("--sizes").unwrap_or(DEFAULT_SIZES).to_string(),
        a.get("--seconds").unwrap_or(DEFAULT_SECONDS).to_string(),
    );
    // The CSV file is made before anything runs, so a path that cannot be written fails at once.
    let mut csv = match a.get("--csv") {
        Some(path) => match std::fs::File::create(path) {
            Ok(f) => Some((path.to_string(), f)),
            Err(e) => return usage(format!("--csv {path:?}: cannot create it: {e}")),
        },
        None => None,
    };
    let Ok(exe) = std::env::current_exe() else {
        eprintln!("tcpxr-bench: cannot find its own executable to start the workers");
        return 1;
    };
    // Per configuration: (size, GB/s, CPU cores busy) rows.
    let mut columns: Vec<(String, Vec<Row>)> = vec![];
    for s in &stripes {
        let label = format!("tcpxr x{s}");
        eprintln!("running {label} ...");
        let out = match Command::new(&exe)
            .args(["--worker", "--sizes", &sizes_arg, "--seconds", &seconds])
            .env("NCCL_TCPXR_STRIPES", s.to_string())
            .stderr(Stdio::inherit())
            .output()
        {
            Ok(out) => out,
            Err(e) => {
                eprintln!("tcpxr-bench: cannot start the worker for {s} stripes: {e}");
                return 1;
            }
        };
        if !out.status.success() {
            eprintln!("tcpxr-bench: worker for {s} stripes failed ({})", out.status);
            return 1;
        }
        columns.push((label, parse_results(&String::from_utf8_lossy(&out.stdout))));
    }
    if !a.has("--no-baseline") {
        eprintln!("running tcp x1 baseline ...");
        let rows = sizes
            .iter()
            .map(|&n| {
                let b = baseline(n, secs, 1, warmup_messages(n));
                eprintln!(
                    "  {:>8}: {} messages ({} B) in {:.3} s = {:.2} GB/s, {:.2} CPU cores busy",
                    human(n),
                    b.messages,
                    b.bytes,
                    b.secs,
                    b.gbps,
                    b.cores
                );
                (n, b.gbps, b.cores)
            })
            .collect();
        columns.push(("tcp x1".into(), rows));
    }
    print_table(&columns, "GB/s, one direction, 1 GB = 1e9 B", |r| r.1);
    println!();
    print_table(
        &columns,
        "CPU cores busy: the whole process, both endpoints and their polling threads",
        |r| r.2,
    );
    println!();
    print!("{}", how_measured(secs, !a.has("--no-baseline")));
    if let Some((path, f)) = csv.as_mut() {
        let mut text = String::from("size_bytes,config,gbps,cpu_cores\n");
        for (label, rows) in &columns {
            for (n, gbps, cores) in rows {
                text.push_str(&format!("{n},{label},{gbps:.3},{cores:.2}\n"));
            }
        }
        if let Err(e) = f.write_all(text.as_bytes()) {
            eprintln!("tcpxr-bench: writing {path}: {e}");
            return 1;
        }
        eprintln!("wrote {path}");
    }
    0
}

/// What the sweep's columns are and how each was timed, printed under its tables.
fn how_measured(seconds: f64, baseline: bool) -> String {
    let mut text = format!(
        "How each column was measured (over {}; every point the same way):\n\
         \x20 tcpxr xN: one connection through tcpxr's ncclNetPlugin_v12 table with N stripes\n\
         \x20   (NCCL_TCPXR_STRIPES), a sending and a receiving thread polling it as NCCL's proxy does,\n\
         \x20   4 messages in flight (fewer from 128 MiB); per size, after a warm-up of 3 rounds of\n\
         \x20   messages in flight (the first checked byte for byte), the clock runs for about {seconds} s of\n\
         \x20   whole messages, buffers allocated beforehand.\n",
        interface()
    );
    if baseline {
        text.push_str(
            "  tcp x1: one plain TCP connection on 127.0.0.1 (TCP_NODELAY), a blocking writer thread and a\n\
             \x20   blocking reader thread, the same messages; buffers allocated and written and the same\n\
             \x20   number of warm-up messages moved before the clock starts; then whole messages for the same\n\
             \x20   time, the clock stopping when the reader has the last byte.\n",
        );
    }
    text
}

/// The interfaces tcpxr uses here, as the user reads them.
pub(crate) fn interface() -> String {
    let var = |v: &str| std::env::var(v).ok().map(|value| format!("{v}={value}"));
    match var("NCCL_TCPXR_IFNAME").or_else(|| var("NCCL_SOCKET_IFNAME")) {
        Some(set) if PINNED.get().is_some() => {
            format!("{set}, which the bench sets when neither it nor NCCL_SOCKET_IFNAME is set")
        }
        Some(set) => set,
        None => "tcpxr's default interface".into(),
    }
}

/// Set when the bench pinned tcpxr to the loopback interface itself.
static PINNED: std::sync::OnceLock<()> = std::sync::OnceLock::new();

/// One measured point: size in bytes, GB/s, CPU cores busy meanwhile.
type Row = (usize, f64, f64);

fn parse_results(text: &str) -> Vec<Row> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.strip_prefix("RESULT ")?.split_whitespace().collect();
            Some((
                f.first()?.parse().ok()?,
                f.get(1)?.parse().ok()?,
                f.get(4)?.parse().ok()?,
            ))
        })
        .collect()
}

/// CPU time this process has used so far (user + system, all threads), in seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: rusage is plain old data; all-zero is a valid value.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct it is given, a valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

pub(crate) fn human(n: usize) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} B"),
    }
}

fn print_table(columns: &[(String, Vec<Row>)], unit: &str, value: impl Fn(&Row) -> f64) {
    print!("{:>10}", "size");
    for (label, _) in columns {
        print!(" {label:>10}");
    }
    println!("   ({unit})");
    let sizes: Vec<usize> = columns
        .first()
        .map(|c| c.1.iter().map(|r| r.0).collect())
        .unwrap_or_default();
    for n in sizes {
        print!("{:>10}", human(n));
        for (_, rows) in columns {
            match rows.iter().find(|r| r.0 == n) {
                Some(r) => print!(" {:>10.2}", value(r)),
                None => print!(" {:>10}", "-"),
            }
        }
        println!();
    }
}

/// A connected pair through the table: the receiver's thread listens and accepts while the
/// sender's thread connects, both non-blocking, as two NCCL proxies would.
pub(crate) fn connect_pair() -> (*mut c_void, *mut c_void) {
    let (tx, rx) = mpsc::channel::<[u8; 128]>();
    let recv = std::thread::spawn(move || {
        let mut handle = [0u8; 128];
        let mut l = std::ptr::null_mut();
        // SAFETY: tcpxr's own table, given a 128-byte handle buffer and a valid out-pointer.
        let r = unsafe { NET.listen.unwrap()(std::ptr::null_mut(), 0, handle.as_mut_ptr() as *mut c_void, &mut l) };
        check(r, "listen");
        tx.send(handle).unwrap();
        let mut r: *mut c_void = std::ptr::null_mut();
        let mut dh = std::ptr::null_mut();
        while r.is_null() {
            // SAFETY: `l` is the listen comm just made; valid out-pointers.
            check(unsafe { NET.accept.unwrap()(l, &mut r, &mut dh) }, "accept");
        }
        // SAFETY: `l` is ours and not used again.
        check(unsafe { NET.closeListen.unwrap()(l) }, "closeListen");
        r as usize
    });
    let mut handle = rx.recv().unwrap();
    (connect(&mut handle, false), recv.join().unwrap() as *mut c_void)
}

/// Connects to the peer of `handle` through the table, calling connect until it returns a comm
/// (with a 1 ms pause between calls when `pause`).
fn connect(handle: &mut [u8; 128], pause: bool) -> *mut c_void {
    let mut s: *mut c_void = std::ptr::null_mut();
    let mut dh = std::ptr::null_mut();
    while s.is_null() {
        // SAFETY: tcpxr's own table, given the peer's 128-byte handle (the same buffer on every
        // call) and valid out-pointers.
        let r = unsafe {
            NET.connect.unwrap()(
                std::ptr::null_mut(),
                0,
                handle.as_mut_ptr() as *mut c_void,
                &mut s,
                &mut dh,
            )
        };
        check(r, "connect");
        if pause {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    s
}

pub(crate) fn init() {
    let mut ctx = std::ptr::null_mut();
    // SAFETY: valid out-pointer; a NULL logger makes tcpxr log to stderr (TCPXR_LOG).
    check(
        unsafe { NET.init.unwrap()(&mut ctx, 0, std::ptr::null_mut(), None, None) },
        "init",
    );
}

/// Posts one send or receive of `n` bytes at `data` on `comm`, with registration `mh` (or NULL);
/// returns the request, or NULL when the comm has no free request slot (NCCL then retries).
pub(crate) fn post(send: bool, comm: *mut c_void, data: *mut c_void, n: usize, mh: *mut c_void) -> *mut c_void {
    let mut req = std::ptr::null_mut();
    // SAFETY: tcpxr's table with a live comm; callers keep `data` alive until the request is done.
    let r = unsafe {
        if send {
            NET.isend.unwrap()(comm, data, n, 0, mh, std::ptr::null_mut(), &mut req)
        } else {
            let (mut d, mut sz, mut tg) = ([data], [n], [0 as c_int]);
            let (mut m, mut ph) = ([mh], [std::ptr::null_mut()]);
            NET.irecv.unwrap()(
                comm,
                1,
                d.as_mut_ptr(),
                sz.as_mut_ptr(),
                tg.as_mut_ptr(),
                m.as_mut_ptr(),
                ph.as_mut_ptr(),
                &mut req,
            )
        }
    };
    check(r, if send { "isend" } else { "irecv" });
    req
}

/// A message slot: buffer address and its registration (0 for none), as plain numbers so that
/// slot lists move between threads.
pub(crate) type Slot = (usize, usize);

/// One connection's messages as NCCL's proxy keeps them: up to one per slot posted, the oldest
/// tested once per pass.
pub(crate) struct Window<'a> {
    send: bool,
    comm: *mut c_void,
    slots: &'a [Slot],
    n: usize,
    total: usize,
    reqs: Vec<*mut c_void>,
    posted: usize,
    /// Messages completed so far.
    pub done: usize,
    /// Who says a wrong size ("tcpxr-bench nccl", ...).
    who: &'static str,
}

impl<'a> Window<'a> {
    /// `total` messages of `n` bytes on `comm` (sends, or receives), through `slots`.
    pub(crate) fn new(
        send: bool,
        comm: *mut c_void,
        slots: &'a [Slot],
        n: usize,
        total: usize,
        who: &'static str,
    ) -> Self {
        Window {
            send,
            comm,
            slots,
            n,
            total,
            reqs: vec![std::ptr::null_mut(); slots.len()],
            posted: 0,
            done: 0,
            who,
        }
    }

    pub(crate) fn finished(&self) -> bool {
        self.done == self.total
    }

    /// One pass: fills the window, then tests the oldest request; true when it completed. A size
    /// other than `n` exits with code 3.
    pub(crate) fn pass(&mut self) -> bool {
        let depth = self.slots.len();
        while self.posted < self.total && self.posted - self.done < depth {
            let (data, mh) = self.slots[self.posted % depth];
            let req = post(self.send, self.comm, data as *mut c_void, self.n, mh as *mut c_void);
            if req.is_null() {
                break;
            }
            self.reqs[self.posted % depth] = req;
            self.posted += 1;
        }
        if self.posted == self.done {
            return false;
        }
        let (mut flag, mut size) = (0, 0);
        // SAFETY: the oldest request is live until test reports it done.
        check(
            unsafe { NET.test.unwrap()(self.reqs[self.done % depth], &mut flag, &mut size) },
            "test",
        );
        if flag == 0 {
            return false;
        }
        if size as usize != self.n {
            eprintln!("{}: test reported {size} bytes, expected {}", self.who, self.n);
            std::process::exit(3);
        }
        self.done += 1;
        true
    }
}

/// Runs `iters` messages of `n` bytes, one per slot in flight, the oldest tested first (as NCCL's
/// proxy does); returns the seconds taken.
pub(crate) fn run_side(send: bool, comm: *mut c_void, slots: &[Slot], n: usize, iters: usize) -> f64 {
    let mut w = Window::new(send, comm, slots, n, iters, "tcpxr-bench");
    let start = Instant::now();
    while !w.finished() {
        w.pass();
    }
    start.elapsed().as_secs_f64()
}

/// Unregistered host buffers as slots; the buffers must outlive every use of the slots.
fn slots_of(bufs: &mut [Vec<u8>]) -> Vec<Slot> {
    bufs.iter_mut().map(|b| (b.as_mut_ptr() as usize, 0)).collect()
}

fn pattern(n: usize, seed: usize) -> Vec<u8> {
    (0..n).map(|i| ((i * 131 + seed * 7 + (i >> 12)) % 251) as u8).collect()
}

/// One process, one stripe count: sweep the sizes and print RESULT lines.
fn worker(args: &[String]) -> i32 {
    let a = parse_or_exit!("the worker", args, &[cli::value("--sizes"), cli::value("--seconds")]);
    let sizes = read_or_exit!(a, "--sizes", DEFAULT_SIZES, cli::size_range);
    let seconds = read_or_exit!(a, "--seconds", DEFAULT_SECONDS, |s| cli::seconds_up_to(s, MAX_SECONDS));
    init();
    let (send_comm, recv_comm) = connect_pair();
    let (send_comm, recv_comm) = (send_comm as usize, recv_comm as usize);
    for n in sizes {
        let depth = depth_of(n);
        // Warm-up and check: `depth` messages with distinct patterns, verified byte for byte.
        let sends: Vec<Vec<u8>> = (0..depth).map(|i| pattern(n, i)).collect();
        let mut recvs: Vec<Vec<u8>> = (0..depth).map(|_| vec![0u8; n]).collect();
        let mut sbufs = sends.clone();
        let (sslots, rslots) = (slots_of(&mut sbufs), slots_of(&mut recvs));
        // Both sides move `iters` messages at once; returns the slower side's seconds.
        let both = |iters: usize| {
            let rs = rslots.clone();
            let t = std::thread::spawn(move || run_side(false, recv_comm as *mut c_void, &rs, n, iters));
            let sent = run_side(true, send_comm as *mut c_void, &sslots, n, iters);
            sent.max(t.join().unwrap())
        };
        both(depth);
        if recvs != sends {
            eprintln!("tcpxr-bench: received data differs from what was sent at {n} bytes");
            return 4;
        }
        // Timed: batches until `seconds` are measured. A single estimate from a short probe
        // misjudged small messages several-fold both ways (a probe of 2 x depth messages is
        // dominated by costs a steady stream does not pay: waking the stripes' sleeping threads,
        // starting the receiving thread, the inline path of a nearly idle comm), and the old cap of
        // 200000 messages cut long runs of small ones short. So each batch aims at what is left,
        // but at most at the time measured so far (the first at 1/16 of it, from the probe), and
        // its count comes from the rate measured so far.
        let probe = both(depth * 2) / (depth * 2) as f64;
        let (mut iters, mut secs, mut per) = (0usize, 0f64, probe.max(1e-7));
        let (cpu_before, wall) = (cpu_seconds(), Instant::now());
        while secs < seconds * 0.99 || iters == 0 {
            let aim = (seconds - secs).min(secs.max(seconds / 16.0));
            let batch = ((aim / per) as usize).max(depth);
            secs += both(batch);
            iters += batch;
            per = secs / iters as f64;
        }
        let gbps = (n * iters) as f64 / secs / 1e9;
        let cores = (cpu_seconds() - cpu_before) / wall.elapsed().as_secs_f64();
        println!("RESULT {n} {gbps:.4} {iters} {secs:.6} {cores:.3}");
        eprintln!(
            "  {:>8}: {iters} messages in {secs:.3} s = {gbps:.2} GB/s, {cores:.2} CPU cores busy",
            human(n)
        );
        drop(recvs);
        drop(sends);
    }
    // SAFETY: the send comm from connect_pair, no request outstanding, not used again.
    check(unsafe { NET.closeSend.unwrap()(send_comm as *mut c_void) }, "closeSend");
    // SAFETY: the receive comm from connect_pair, no request outstanding, not used again.
    check(unsafe { NET.closeRecv.unwrap()(recv_comm as *mut c_void) }, "closeRecv");
    0
}

/// Messages of `n` bytes a tcpxr point keeps in flight (and the baseline's warm-up counts in
/// them): 4, fewer from 128 MiB so that the buffers stay within 1 GiB.
fn depth_of(n: usize) -> usize {
    ((256usize << 20) / n).clamp(1, 4)
}

/// Messages each side moves before a point's clock starts: the tcpxr worker's checked round
/// (`depth`) and its rate probe (`2 x depth`); the baseline warms up with as many.
fn warmup_messages(n: usize) -> usize {
    3 * depth_of(n)
}

/// What [`baseline`] measured.
pub(crate) struct Baseline {
    /// GB/s: the bytes received while the clock ran, over its seconds.
    pub gbps: f64,
    /// CPU cores the process kept busy while the clock ran.
    pub cores: f64,
    /// Seconds on the clock.
    pub secs: f64,
    /// Bytes the receivers read while the clock ran, and whole messages the senders wrote meanwhile.
    pub bytes: u64,
    pub messages: u64,
}

/// Plain TCP over `connections` loopback connections (127.0.0.1, TCP_NODELAY), one blocking
/// thread per end of each, sending messages of `n` bytes: the baseline tcpxr is compared against.
/// Measured as tcpxr's points are: connections made, buffers allocated and written and `warmup`
/// messages moved on each connection before the clock starts; then each sender sends whole
/// messages for `seconds` and closes, and the clock stops when every receiver has read the last
/// byte.
pub(crate) fn baseline(n: usize, seconds: f64, connections: usize, warmup: usize) -> Baseline {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // Every sender and receiver, and this thread, which starts the clock and, `seconds` later,
    // tells the senders to stop: one clock for all, so no sender runs shorter than the clock.
    let go = std::sync::Arc::new(std::sync::Barrier::new(2 * connections + 1));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let ends: Vec<_> = (0..connections)
        .map(|_| {
            let tx = std::net::TcpStream::connect(addr).unwrap();
            let (mut rx, _) = listener.accept().unwrap();
            tx.set_nodelay(true).unwrap();
            let ready = go.clone();
            let receiver = std::thread::spawn(move || {
                let mut buf = vec![0u8; n];
                for _ in 0..warmup {
                    rx.read_exact(&mut buf).unwrap();
                }
                ready.wait();
                let mut total = 0u64;
                loop {
                    match rx.read(&mut buf) {
                        Ok(0) | Err(_) => return total,
                        Ok(k) => total += k as u64,
                    }
                }
            });
            let (ready, stop) = (go.clone(), stop.clone());
            let sender = std::thread::spawn(move || {
                let (mut tx, buf) = (tx, pattern(n, 1));
                for _ in 0..warmup {
                    tx.write_all(&buf).unwrap();
                }
                ready.wait();
                // At least one message, however late this thread runs.
                let mut sent = 0u64;
                loop {
                    tx.write_all(&buf).unwrap();
                    sent += 1;
                    if stop.load(std::sync::atomic::Ordering::Acquire) {
                        break;
                    }
                }
                // Closing ends the receiver's stream after the last message.
                sent
            });
            (sender, receiver)
        })
        .collect();
    go.wait();
    let (cpu0, start) = (cpu_seconds(), Instant::now());
    std::thread::sleep(Duration::from_secs_f64(seconds));
    stop.store(true, std::sync::atomic::Ordering::Release);
    let (mut bytes, mut messages) = (0, 0);
    for (sender, receiver) in ends {
        messages += sender.join().unwrap();
        bytes += receiver.join().unwrap();
    }
    let secs = start.elapsed().as_secs_f64();
    Baseline {
        gbps: bytes as f64 / secs / 1e9,
        cores: (cpu_seconds() - cpu0) / secs,
        secs,
        bytes,
        messages,
    }
}

/// A long-running peer for the fault tests: it is killed while a transfer is under way.
fn peer(args: &[String]) -> i32 {
    let a = parse_or_exit!(
        "peer",
        args,
        &[cli::value("--role"), cli::value("--size"), cli::value("--handle")]
    );
    let role = read_or_exit!(a, "--role", "recv", |s| cli::one_of(s, &["recv", "send"]));
    let size = read_or_exit!(a, "--size", "8M", cli::size);
    let handle = match (role, a.get("--handle")) {
        ("send", None) => return usage("peer --role send needs --handle HEX (the receiver's HANDLE line)".into()),
        (_, None) => None,
        (_, Some(_)) => Some(read_or_exit!(a, "--handle", "", hex_handle)),
    };
    init();
    let mut buf = vec![7u8; size];
    let comm = match handle {
        None => {
            let mut handle = [0u8; 128];
            let mut l = std::ptr::null_mut();
            // SAFETY: tcpxr's own table, given a 128-byte handle buffer and a valid out-pointer.
            let r = unsafe { NET.listen.unwrap()(std::ptr::null_mut(), 0, handle.as_mut_ptr() as *mut c_void, &mut l) };
            check(r, "listen");
            let hex: String = handle.iter().map(|b| format!("{b:02x}")).collect();
            println!("HANDLE {hex}");
            let _ = std::io::stdout().flush();
            let mut r: *mut c_void = std::ptr::null_mut();
            let mut dh = std::ptr::null_mut();
            while r.is_null() {
                // SAFETY: `l` is our listen comm; valid out-pointers.
                check(unsafe { NET.accept.unwrap()(l, &mut r, &mut dh) }, "accept");
                std::thread::sleep(Duration::from_millis(1));
            }
            r
        }
        Some(mut handle) => connect(&mut handle, true),
    };
    println!("CONNECTED");
    let _ = std::io::stdout().flush();
    // Move data until killed (or until stdin closes).
    let stdin_closed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stdin_closed.clone();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::stdin().lock().read_line(&mut line);
        flag.store(true, std::sync::atomic::Ordering::Release);
    });
    while !stdin_closed.load(std::sync::atomic::Ordering::Acquire) {
        run_side(role == "send", comm, &slots_of(std::slice::from_mut(&mut buf)), size, 1);
    }
    0
}

/// A handle as the receiving peer prints it: 256 hex digits.
fn hex_handle(s: &str) -> Result<[u8; 128], String> {
    let accepted = || "256 hex digits (the receiving peer's HANDLE line)".to_string();
    let s = s.trim();
    if s.len() != 256 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(accepted());
    }
    let mut h = [0u8; 128];
    for (i, b) in h.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| accepted())?;
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The baseline counts only what moves while its clock runs: what its receivers read then is
    /// exactly the whole messages its senders wrote after the warm-up, and the clock covers at
    /// least the time asked.
    #[test]
    fn the_baseline_times_whole_messages_after_its_warm_up_and_nothing_else() {
        let n = 256 << 10;
        for (connections, warmup) in [(1, 3), (2, 5)] {
            let b = baseline(n, 0.05, connections, warmup);
            assert!(
                b.messages >= connections as u64,
                "each sender sends at least one message"
            );
            assert_eq!(
                b.bytes,
                b.messages * n as u64,
                "warm-up bytes counted, or a message cut"
            );
            assert!(b.secs >= 0.05, "{} s on the clock", b.secs);
            assert!(b.gbps > 0.0 && b.cores > 0.0);
        }
    }

    #[test]
    fn the_sweep_says_how_each_column_was_measured() {
        let text = how_measured(0.3, true);
        for needed in [
            "tcpxr xN",
            "tcp x1",
            "warm-up",
            "0.3 s",
            "127.0.0.1",
            "before the clock starts",
        ] {
            assert!(text.contains(needed), "{needed:?} missing from:\n{text}");
        }
        assert!(!how_measured(0.3, false).contains("tcp x1"));
    }
}
