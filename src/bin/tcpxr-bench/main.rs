//! tcpxr-bench: moves data between two endpoints over loopback through tcpxr's own NCCL table
//! (`ncclNetPlugin_v12`, called exactly as NCCL's proxy calls it), sweeping message sizes and
//! stripe counts, beside a plain single-TCP-connection baseline measured in the same run.
//!
//!   tcpxr-bench [--sizes 4K:1G] [--stripes 1,2,4,8] [--seconds 0.5] [--csv FILE] [--no-baseline]
//!   tcpxr-bench interference [--sizes 512K,4M]   (GEMM beside tcpxr traffic on GPU 0)
//!   tcpxr-bench peer --role recv|send [--size N] [--handle HEX]   (a peer process, for tests)
//!
//! Each stripe count runs in a child process of its own, because tcpxr reads its configuration
//! (NCCL_TCPXR_STRIPES) once per process, as it does inside NCCL.
use nccl_net_tcpxr::abi::*;
pub(crate) use nccl_net_tcpxr::export::ncclNetPlugin_v12 as NET;
use std::ffi::{c_int, c_void};
use std::io::{BufRead, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

mod gpu;
mod interference;
mod latency;
mod nccl;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        Some("peer") => peer(&args[1..]),
        Some("--worker") => worker(&args[1..]),
        Some("gpu") => gpu::run(&args[1..]),
        Some("latency") => latency::run(&args[1..]),
        Some("nccl") => nccl::run(&args[1..]),
        Some("interference") => interference::run(&args[1..]),
        Some("-h") | Some("--help") => {
            println!("{}", HELP);
            0
        }
        _ => sweep(&args),
    };
    std::process::exit(code);
}

const HELP: &str = "tcpxr-bench: two endpoints over loopback through tcpxr's NCCL table (no GPU needed)
  tcpxr-bench [--sizes MIN:MAX] [--stripes 1,2,4,8] [--seconds S] [--csv FILE] [--no-baseline]
      sizes double from MIN to MAX (K/M/G suffixes, default 4K:1G); each point runs about S seconds
      (default 0.3) after a warm-up; every received message of the first round is checked byte for byte.
  tcpxr-bench latency [--size 8] [--iters 20000]
      small-message ping-pong between two threads: one-way latency, median and p99
  tcpxr-bench gpu [--mib 64]
      the unpack kernel on GPU 0: against cudaMemcpy D2D, batched vs per-chunk vs naive, latency;
      last, the same fragments placed by the copy engines (cuMemcpyBatchAsync, CUDA 12.8+)
  tcpxr-bench interference [--sizes 512K,4M] [--period 0.3] [--cycles 4] [--gemm 8192] [--buffers host,gpu]
      a bf16 GEMM on GPU 0 (cuBLAS) running throughout while tcpxr traffic GPU 0 -> GPU 0 in this
      process is switched on and off in turns; host buffers (the control) and GPU buffers (staging
      copies and unpack kernels)
  tcpxr-bench peer --role recv|send [--size N] [--handle HEX]
      a long-running peer process used by tcpxr's fault tests";

pub(crate) fn opt<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(String::as_str)
}

pub(crate) fn parse_size(s: &str) -> usize {
    let s = s.trim();
    let (num, mul) = match s.chars().last() {
        Some('K' | 'k') => (&s[..s.len() - 1], 1 << 10),
        Some('M' | 'm') => (&s[..s.len() - 1], 1 << 20),
        Some('G' | 'g') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<usize>().unwrap_or_else(|_| panic!("bad size {s}")) * mul
}

fn sizes(args: &[String]) -> Vec<usize> {
    let spec = opt(args, "--sizes").unwrap_or("4K:1G");
    let (lo, hi) = spec.split_once(':').unwrap_or((spec, spec));
    let (mut s, hi) = (parse_size(lo).max(1), parse_size(hi));
    let mut v = vec![];
    while s <= hi {
        v.push(s);
        s *= 2;
    }
    v
}

pub(crate) fn check(r: ncclResult_t, what: &str) {
    if r != ncclResult_t::ncclSuccess {
        eprintln!("tcpxr-bench: {what} failed: {r:?}");
        std::process::exit(2);
    }
}

/// The parent: one child per stripe count, then the baseline, then the table and the CSV.
fn sweep(args: &[String]) -> i32 {
    let stripes: Vec<usize> = opt(args, "--stripes")
        .unwrap_or("1,2,4,8")
        .split(',')
        .map(|s| s.trim().parse().expect("--stripes"))
        .collect();
    let seconds = opt(args, "--seconds").unwrap_or("0.3");
    let sizes_arg = opt(args, "--sizes").unwrap_or("4K:1G").to_string();
    let exe = std::env::current_exe().unwrap();
    // Per configuration: (size, GB/s, CPU cores busy) rows.
    let mut columns: Vec<(String, Vec<Row>)> = vec![];
    for s in &stripes {
        let label = format!("tcpxr x{s}");
        eprintln!("running {label} ...");
        let out = Command::new(&exe)
            .args(["--worker", "--sizes", &sizes_arg, "--seconds", seconds])
            .env("NCCL_TCPXR_STRIPES", s.to_string())
            .stderr(Stdio::inherit())
            .output()
            .expect("spawn worker");
        if !out.status.success() {
            eprintln!("tcpxr-bench: worker for {s} stripes failed ({})", out.status);
            return 1;
        }
        columns.push((label, parse_results(&String::from_utf8_lossy(&out.stdout))));
    }
    if !args.iter().any(|a| a == "--no-baseline") {
        eprintln!("running tcp x1 baseline ...");
        let secs: f64 = seconds.parse().unwrap_or(0.3);
        let rows = sizes(args)
            .into_iter()
            .map(|n| {
                let (cpu0, t0) = (cpu_seconds(), Instant::now());
                let gbps = baseline(n, secs);
                (n, gbps, (cpu_seconds() - cpu0) / t0.elapsed().as_secs_f64())
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
    if let Some(path) = opt(args, "--csv") {
        let mut f = std::fs::File::create(path).expect("create csv");
        writeln!(f, "size_bytes,config,gbps,cpu_cores").unwrap();
        for (label, rows) in &columns {
            for (n, gbps, cores) in rows {
                writeln!(f, "{n},{label},{gbps:.3},{cores:.2}").unwrap();
            }
        }
        eprintln!("wrote {path}");
    }
    0
}

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
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
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
        // SAFETY: valid out-pointers; the table is tcpxr's own.
        unsafe {
            check(
                NET.listen.unwrap()(std::ptr::null_mut(), 0, handle.as_mut_ptr() as *mut c_void, &mut l),
                "listen",
            );
            tx.send(handle).unwrap();
            let mut r: *mut c_void = std::ptr::null_mut();
            let mut dh = std::ptr::null_mut();
            while r.is_null() {
                check(NET.accept.unwrap()(l, &mut r, &mut dh), "accept");
            }
            check(NET.closeListen.unwrap()(l), "closeListen");
            r as usize
        }
    });
    let mut handle = rx.recv().unwrap();
    let mut s: *mut c_void = std::ptr::null_mut();
    let mut dh = std::ptr::null_mut();
    while s.is_null() {
        // SAFETY: as above.
        unsafe {
            check(
                NET.connect.unwrap()(
                    std::ptr::null_mut(),
                    0,
                    handle.as_mut_ptr() as *mut c_void,
                    &mut s,
                    &mut dh,
                ),
                "connect",
            )
        };
    }
    (s, recv.join().unwrap() as *mut c_void)
}

pub(crate) fn init() {
    let mut ctx = std::ptr::null_mut();
    // SAFETY: valid out-pointer; a NULL logger makes tcpxr log to stderr (TCPXR_LOG).
    unsafe { check(NET.init.unwrap()(&mut ctx, 0, std::ptr::null_mut(), None, None), "init") };
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

/// Runs `iters` messages of `n` bytes, one per slot in flight, the oldest tested first (as NCCL's
/// proxy does); returns the seconds taken.
pub(crate) fn run_side(send: bool, comm: *mut c_void, slots: &[Slot], n: usize, iters: usize) -> f64 {
    let depth = slots.len();
    let mut reqs: Vec<*mut c_void> = vec![std::ptr::null_mut(); depth];
    let (mut posted, mut done) = (0usize, 0usize);
    let start = Instant::now();
    while done < iters {
        while posted < iters && posted - done < depth {
            let (data, mh) = slots[posted % depth];
            let req = post(send, comm, data as *mut c_void, n, mh as *mut c_void);
            if req.is_null() {
                break;
            }
            reqs[posted % depth] = req;
            posted += 1;
        }
        let (mut flag, mut size) = (0, 0);
        // SAFETY: reqs[done % depth] is a live request.
        check(
            unsafe { NET.test.unwrap()(reqs[done % depth], &mut flag, &mut size) },
            "test",
        );
        if flag != 0 {
            if size as usize != n {
                eprintln!("tcpxr-bench: test reported {size} bytes, expected {n}");
                std::process::exit(3);
            }
            done += 1;
        }
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
    init();
    let seconds: f64 = opt(args, "--seconds").unwrap_or("0.3").parse().unwrap_or(0.3);
    let (send_comm, recv_comm) = connect_pair();
    let (send_comm, recv_comm) = (send_comm as usize, recv_comm as usize);
    for n in sizes(args) {
        let depth = ((256usize << 20) / n).clamp(1, 4);
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
        // Timed: enough iterations for about `seconds`, estimated from the warm-up.
        let probe = both(depth * 2) / (depth * 2) as f64;
        let iters = ((seconds / probe.max(1e-7)) as usize).clamp(depth, 200_000);
        let cpu_before = cpu_seconds();
        let secs = both(iters);
        let gbps = (n * iters) as f64 / secs / 1e9;
        let cores = (cpu_seconds() - cpu_before) / secs;
        println!("RESULT {n} {gbps:.4} {iters} {secs:.6} {cores:.3}");
        eprintln!(
            "  {:>8}: {iters} messages in {secs:.3} s = {gbps:.2} GB/s, {cores:.2} CPU cores busy",
            human(n)
        );
        drop(recvs);
        drop(sends);
    }
    // SAFETY: comms from connect/accept, no request outstanding.
    unsafe {
        check(NET.closeSend.unwrap()(send_comm as *mut c_void), "closeSend");
        check(NET.closeRecv.unwrap()(recv_comm as *mut c_void), "closeRecv");
    }
    0
}

/// Plain TCP, one connection, one thread per side: the baseline tcpxr is compared against.
fn baseline(n: usize, seconds: f64) -> f64 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let rx = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut buf = vec![0u8; n];
        let mut total = 0u64;
        loop {
            match s.read(&mut buf) {
                Ok(0) | Err(_) => return total,
                Ok(k) => total += k as u64,
            }
        }
    });
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_nodelay(true).unwrap();
    let buf = pattern(n, 1);
    let start = Instant::now();
    let mut sent = 0u64;
    while start.elapsed() < Duration::from_secs_f64(seconds) {
        s.write_all(&buf).unwrap();
        sent += n as u64;
    }
    drop(s);
    let got = rx.join().unwrap();
    got.min(sent) as f64 / start.elapsed().as_secs_f64() / 1e9
}

/// A long-running peer for the fault tests: it is killed while a transfer is under way.
fn peer(args: &[String]) -> i32 {
    init();
    let size = opt(args, "--size").map(parse_size).unwrap_or(8 << 20);
    let mut buf = vec![7u8; size];
    let role = opt(args, "--role").unwrap_or("recv");
    let comm = match role {
        "recv" => {
            let mut handle = [0u8; 128];
            let mut l = std::ptr::null_mut();
            // SAFETY: valid out-pointers.
            unsafe {
                check(
                    NET.listen.unwrap()(std::ptr::null_mut(), 0, handle.as_mut_ptr() as *mut c_void, &mut l),
                    "listen",
                )
            };
            let hex: String = handle.iter().map(|b| format!("{b:02x}")).collect();
            println!("HANDLE {hex}");
            std::io::stdout().flush().unwrap();
            let mut r: *mut c_void = std::ptr::null_mut();
            let mut dh = std::ptr::null_mut();
            while r.is_null() {
                // SAFETY: l is our listen comm.
                unsafe { check(NET.accept.unwrap()(l, &mut r, &mut dh), "accept") };
                std::thread::sleep(Duration::from_millis(1));
            }
            r
        }
        _ => {
            let hex = opt(args, "--handle").expect("--handle");
            let mut handle = [0u8; 128];
            for (i, b) in handle.iter_mut().enumerate() {
                *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex handle");
            }
            let mut s: *mut c_void = std::ptr::null_mut();
            let mut dh = std::ptr::null_mut();
            while s.is_null() {
                // SAFETY: valid handle buffer and out-pointers.
                unsafe {
                    check(
                        NET.connect.unwrap()(
                            std::ptr::null_mut(),
                            0,
                            handle.as_mut_ptr() as *mut c_void,
                            &mut s,
                            &mut dh,
                        ),
                        "connect",
                    )
                };
                std::thread::sleep(Duration::from_millis(1));
            }
            s
        }
    };
    println!("CONNECTED");
    std::io::stdout().flush().unwrap();
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
