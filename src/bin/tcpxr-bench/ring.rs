//! `tcpxr-bench ring`: bulk traffic in the shape of NCCL's ring, one process per rank, beside plain
//! TCP in the same shape: the "ceiling" of issue 31's bulk goal.
//!
//!   tcpxr-bench ring [--ranks 4] [--size 4M] [--inflight 8] [--channels 1] [--seconds 2]
//!                    [--tcp-connections N,...] [--no-baseline]
//!
//! The parent re-executes this binary once per rank (`--ring-rank`, hidden). Rank r sends to rank
//! r+1 and receives from rank r-1 at the same time, over `--channels` connections each way (NCCL
//! gives each of its channels a connection of its own: tcpxr has it build 8 at bulk). Each rank is its own tcpxr process, so its I/O
//! pool sizes itself from the host's cores shared among the ranks, as under NCCL. The parent and
//! its children talk in lines:
//!
//! ```text
//! child:  READY                   initialised (a tcpxr rank has announced itself to the host)
//! parent: LISTEN                  every rank is ready: listen
//! child:  HANDLE <hex...|port>    its listen handles (tcpxr: a 128-byte NCCL handle in hex per
//!                                 channel, space-separated)
//! parent: NEXT <hex...|port>      the next rank's handles
//! child:  CHECKED <k>             connected both ways, the first round of k messages from the
//!                                 previous rank matched byte for byte (exit code 4 if not)
//! parent: GO <messages>           move that many messages each way, starting now
//! child:  RESULT <bytes> <secs> <cpu secs> <threads>
//! parent: END                     close and exit 0
//! ```
//!
//! READY before LISTEN is NCCL's order: every rank initialises its net before any listens (NCCL's
//! bootstrap all-gather lies between), so each rank's first listen, which fixes its I/O pool from
//! the tcpxr processes on the host, sees them all.
//!
//! The parent sends GO three times: a short probe, a calibration of about an eighth of --seconds,
//! then the timed round of about --seconds, whose RESULT lines are the table. A message count the
//! ranks agree on (rather than a clock each rank stops on its own) lets every send meet its receive,
//! so each round ends with nothing in flight.
use super::{
    check, cli, cpu_seconds, hex_handle, human, init, interface, parse_or_exit, pattern, read_or_exit, usage, Slot,
    Window, NET,
};
use nccl_net_tcpxr::abi::NCCL_PTR_HOST;
use std::ffi::c_void;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// Buffers a rank may hold per direction (--size x --inflight x --channels).
const MAX_BUFFERS: usize = 1 << 30;

/// At most NCCL's MAXCHANNELS.
const MAX_CHANNELS: u64 = 32;

/// Plain TCP connections each way per rank, each with a copying thread at both ends.
const MAX_TCP_CONNECTIONS: u64 = 64;

pub fn run(args: &[String]) -> i32 {
    let known = [
        cli::value("--ranks"),
        cli::value("--size"),
        cli::value("--inflight"),
        cli::value("--channels"),
        cli::value("--seconds"),
        cli::value("--tcp-connections"),
        cli::switch("--no-baseline"),
    ];
    let a = parse_or_exit!("ring", args, &known);
    let ranks = read_or_exit!(a, "--ranks", "4", |s| cli::int_in(s, 2, 64)) as usize;
    let size = read_or_exit!(a, "--size", "4M", cli::size);
    let inflight = read_or_exit!(a, "--inflight", "8", |s| cli::int_in(s, 1, 32)) as usize;
    let channels = read_or_exit!(a, "--channels", "1", |s| cli::int_in(s, 1, MAX_CHANNELS)) as usize;
    let seconds = read_or_exit!(a, "--seconds", "2", |s| cli::seconds_up_to(s, 3600.0));
    // None: as many connections as tcpxr's pool has copying threads (below).
    let tcp_connections = match a.get("--tcp-connections") {
        None => None,
        Some(_) => Some(read_or_exit!(a, "--tcp-connections", "", |s| cli::list(s, |x| {
            cli::int_in(x, 1, MAX_TCP_CONNECTIONS).map(|c| c as usize)
        }))),
    };
    if size * inflight * channels > MAX_BUFFERS {
        return usage(format!(
            "--size {} x --inflight {inflight} x --channels {channels}: at most 1 GiB of buffers per direction per rank",
            human(size)
        ));
    }
    let Ok(exe) = std::env::current_exe() else {
        eprintln!("tcpxr-bench ring: cannot find its own executable to start the ranks");
        return 1;
    };
    let stripes = std::env::var("NCCL_TCPXR_STRIPES").unwrap_or_else(|_| "4 (default)".into());
    println!(
        "ring of {ranks} processes over {}: rank r sends to r+1 and receives from r-1 at once, {} messages, \
         {channels} channel(s) each way with {inflight} in flight on each, about {seconds} s; NCCL_TCPXR_STRIPES={stripes}",
        interface(),
        human(size)
    );
    println!(
        "{:>8} {:>5} {:>8} {:>8} {:>8} {:>7} {:>10} {:>8}",
        "path", "rank", "GB/s", "seconds", "CPU s", "cores", "GB/s/core", "threads"
    );
    let shape = Shape {
        ranks,
        size,
        inflight,
        channels,
        seconds,
    };
    let ours = match shape.measure(&exe, Path::Tcpxr) {
        Ok(r) => r,
        Err(code) => return code,
    };
    ours.print("tcpxr");
    let per_rank = inflight * channels;
    let mut checked = format!("tcpxr ({per_rank} messages per rank)");
    let mut connections = vec![];
    if !a.has("--no-baseline") {
        // By default as many copying threads per rank as tcpxr's I/O pool has, half writing, half
        // reading; the ceiling is the best of the counts asked for.
        let pool = ours.ranks.iter().map(|r| r.threads).max().unwrap_or(0);
        connections = tcp_connections.unwrap_or_else(|| vec![(pool / 2).max(1)]);
        let mut best: Option<(String, Rank)> = None;
        for &c in &connections {
            let tcp = match shape.measure(&exe, Path::Tcp(c)) {
                Ok(r) => r,
                Err(code) => return code,
            };
            let label = format!("tcp x{c}");
            tcp.print(&label);
            let (o, t) = (ours.total(), tcp.total());
            println!(
                "tcpxr / {label}: {:.2} of its GB/s, {:.2} of its GB/s per busy core",
                o.gbps() / t.gbps().max(1e-12),
                o.per_core() / t.per_core().max(1e-12)
            );
            checked.push_str(&format!(" and {label} ({per_rank} messages per rank)"));
            if best.as_ref().is_none_or(|(_, b)| t.gbps() > b.gbps()) {
                best = Some((label, t));
            }
        }
        if let (Some((label, t)), true) = (best, connections.len() > 1) {
            println!(
                "ceiling (the best plain TCP ring): {label}, {:.2} GB/s; tcpxr {:.2} of it",
                t.gbps(),
                ours.total().gbps() / t.gbps().max(1e-12)
            );
        }
    }
    println!("verified: every rank's first round from its previous rank matched byte for byte: {checked}");
    println!();
    print!("{}", how_measured(&shape, &connections));
    0
}

/// What `ring` runs: the command line's shape.
struct Shape {
    ranks: usize,
    size: usize,
    /// Messages in flight each way on each channel.
    inflight: usize,
    /// tcpxr connections each way per rank, as NCCL's channels.
    channels: usize,
    seconds: f64,
}

/// Which transport the ranks use: tcpxr's v12 table, or plain TCP with this many connections each way.
#[derive(Clone, Copy)]
enum Path {
    Tcpxr,
    Tcp(usize),
}

/// One rank's RESULT: bytes sent (and as many received), seconds on its clock, CPU seconds of its
/// process meanwhile, threads moving its bytes.
#[derive(Clone, Copy, Default)]
struct Rank {
    bytes: f64,
    secs: f64,
    cpu: f64,
    threads: usize,
}

impl Rank {
    fn gbps(&self) -> f64 {
        self.bytes / self.secs.max(1e-12) / 1e9
    }
    fn cores(&self) -> f64 {
        self.cpu / self.secs.max(1e-12)
    }
    fn per_core(&self) -> f64 {
        self.gbps() / self.cores().max(1e-12)
    }
    fn row(&self, path: &str, rank: &str) {
        println!(
            "{path:>8} {rank:>5} {:>8.2} {:>8.3} {:>8.3} {:>7.2} {:>10.2} {:>8}",
            self.gbps(),
            self.secs,
            self.cpu,
            self.cores(),
            self.per_core(),
            self.threads
        );
    }
}

/// Every rank's RESULT of the timed round.
struct Ring {
    ranks: Vec<Rank>,
}

impl Ring {
    /// The ring as one: all bytes over the longest rank's clock, all CPU seconds over it.
    fn total(&self) -> Rank {
        Rank {
            bytes: self.ranks.iter().map(|r| r.bytes).sum(),
            secs: self.ranks.iter().map(|r| r.secs).fold(0.0, f64::max),
            cpu: self.ranks.iter().map(|r| r.cpu).sum(),
            threads: self.ranks.iter().map(|r| r.threads).sum(),
        }
    }

    fn print(&self, path: &str) {
        for (i, r) in self.ranks.iter().enumerate() {
            r.row(path, &i.to_string());
        }
        self.total().row(path, "all");
    }
}

/// A rank's process as the parent drives it.
struct Proc {
    child: Child,
    out: BufReader<ChildStdout>,
    inp: ChildStdin,
}

impl Proc {
    /// The rest of the next line starting with `tag`, skipping others; None when the child ended.
    fn expect(&mut self, tag: &str) -> Option<String> {
        let mut line = String::new();
        loop {
            line.clear();
            if self.out.read_line(&mut line).ok()? == 0 {
                return None;
            }
            if let Some(rest) = line.trim_end().strip_prefix(tag) {
                return Some(rest.to_string());
            }
        }
    }

    fn say(&mut self, line: &str) -> bool {
        writeln!(self.inp, "{line}").and_then(|_| self.inp.flush()).is_ok()
    }
}

impl Shape {
    /// Runs one ring of `path`; the timed round's results, or the exit code to leave with (that of
    /// the first rank that failed when it is the bench's own: 2, 3 or 4; else 1).
    fn measure(&self, exe: &std::path::Path, path: Path) -> Result<Ring, i32> {
        let label = match path {
            Path::Tcpxr => "tcpxr".to_string(),
            Path::Tcp(c) => format!("tcp x{c}"),
        };
        eprintln!("running the {label} ring of {} ranks ...", self.ranks);
        let mut procs = vec![];
        for r in 0..self.ranks {
            let mut cmd = Command::new(exe);
            cmd.args([
                "--ring-rank",
                "--rank",
                &r.to_string(),
                "--ranks",
                &self.ranks.to_string(),
            ])
            .args([
                "--size",
                &self.size.to_string(),
                "--inflight",
                &self.inflight.to_string(),
                "--channels",
                &self.channels.to_string(),
            ]);
            if let Path::Tcp(c) = path {
                cmd.args(["--tcp", &c.to_string()]);
            }
            match cmd
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
            {
                Ok(mut child) => {
                    let (out, inp) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
                    procs.push(Proc {
                        child,
                        out: BufReader::new(out),
                        inp,
                    });
                }
                Err(e) => {
                    eprintln!("tcpxr-bench ring: cannot start rank {r}: {e}");
                    return Err(fail(procs));
                }
            }
        }
        let result = self.drive(&mut procs, &label);
        match result {
            Ok(ring) => {
                for (r, p) in procs.iter_mut().enumerate() {
                    let _ = p.say("END");
                    match p.child.wait() {
                        Ok(s) if s.success() => {}
                        s => {
                            eprintln!("tcpxr-bench ring: {label} rank {r} ended badly: {s:?}");
                            return Err(fail(procs));
                        }
                    }
                }
                Ok(ring)
            }
            Err(what) => {
                eprintln!("tcpxr-bench ring: {label}: {what}");
                Err(fail(procs))
            }
        }
    }

    /// The conversation with the ranks, up to the timed round's results.
    fn drive(&self, procs: &mut [Proc], label: &str) -> Result<Ring, String> {
        let n = procs.len();
        let gone = |r: usize, stage: &str| format!("rank {r} ended before {stage}");
        for (r, p) in procs.iter_mut().enumerate() {
            p.expect("READY").ok_or_else(|| gone(r, "it was initialised"))?;
        }
        for (r, p) in procs.iter_mut().enumerate() {
            if !p.say("LISTEN") {
                return Err(gone(r, "listening"));
            }
        }
        let mut handles = vec![];
        for (r, p) in procs.iter_mut().enumerate() {
            handles.push(p.expect("HANDLE ").ok_or_else(|| gone(r, "listening"))?);
        }
        for (r, p) in procs.iter_mut().enumerate() {
            if !p.say(&format!("NEXT {}", handles[(r + 1) % n])) {
                return Err(gone(r, "its next rank's handle"));
            }
        }
        for (r, p) in procs.iter_mut().enumerate() {
            p.expect("CHECKED ")
                .ok_or_else(|| gone(r, "its first round was checked"))?;
        }
        // Probe, calibration, timed round: each sized from the one before it.
        let in_flight = self.inflight * self.channels;
        let mut messages = 4 * in_flight;
        let mut last_secs: Vec<f64> = vec![];
        for (round, share) in [(0, 0.0), (1, 0.125), (2, 1.0)] {
            if round > 0 {
                messages = (self.seconds * share / per_message(&last_secs, messages)) as usize;
                messages = messages.clamp(in_flight, 100_000_000);
            }
            for (r, p) in procs.iter_mut().enumerate() {
                if !p.say(&format!("GO {messages}")) {
                    return Err(gone(r, "a round began"));
                }
            }
            let mut ranks = vec![];
            for (r, p) in procs.iter_mut().enumerate() {
                let line = p.expect("RESULT ").ok_or_else(|| gone(r, "a round ended"))?;
                let f: Vec<f64> = line.split_whitespace().filter_map(|w| w.parse().ok()).collect();
                let [bytes, secs, cpu, threads] = f[..] else {
                    return Err(format!("rank {r}: unreadable RESULT {line:?}"));
                };
                ranks.push(Rank {
                    bytes,
                    secs,
                    cpu,
                    threads: threads as usize,
                });
            }
            eprintln!(
                "  {label} round {round}: {messages} messages each way per rank in {:.3} s",
                ranks.iter().map(|r| r.secs).fold(0.0, f64::max)
            );
            last_secs = ranks.iter().map(|r| r.secs).collect();
            if round == 2 {
                return Ok(Ring { ranks });
            }
        }
        unreachable!("the timed round returns")
    }
}

/// Seconds per message of the slowest rank in the last round.
fn per_message(secs: &[f64], messages: usize) -> f64 {
    (secs.iter().copied().fold(0.0, f64::max) / messages as f64).max(1e-8)
}

/// Ends every rank still running (they are this process's children) and picks the exit code.
fn fail(procs: Vec<Proc>) -> i32 {
    let mut code = 1;
    for mut p in procs {
        let status = match p.child.try_wait() {
            Ok(Some(s)) => Some(s),
            _ => {
                let _ = p.child.kill();
                let _ = p.child.wait();
                None
            }
        };
        if let Some(c) = status.and_then(|s| s.code()) {
            if code == 1 && (2..=4).contains(&c) {
                code = c;
            }
        }
    }
    code
}

/// What the ring's columns are and how each was measured, printed under its tables.
fn how_measured(s: &Shape, connections: &[usize]) -> String {
    let mut text = format!(
        "How each column was measured (per rank, over the same timed round; the row \"all\" is the ring):\n\
         \x20 one process per rank (this binary re-executed), rank r sending to r+1 and receiving from r-1\n\
         \x20   at once; the ranks move an agreed number of {size} messages each way, sized from a probe and\n\
         \x20   a calibration round so that the timed round lasts about {sec} s; each rank's clock runs from\n\
         \x20   the parent's go to its last completed send and receive; the first round\n\
         \x20   ({first} messages each way) is checked byte for byte on every rank before anything is timed.\n\
         \x20 tcpxr: tcpxr's ncclNetPlugin_v12 table in each rank (init, listen; connect to the next and\n\
         \x20   accept from the previous interleaved, never blocking either; regMr on every buffer);\n\
         \x20   {ch} comm(s) each way, as NCCL's channels, messages dealt round-robin over them; one thread\n\
         \x20   polling every comm as NCCL's proxy does, {k} sends and {k} receives kept posted on each, the\n\
         \x20   oldest of each tested; tcpxr's I/O pool sizes itself among the {ranks} processes.\n",
        size = human(s.size),
        sec = s.seconds,
        first = s.inflight * s.channels,
        ch = s.channels,
        k = s.inflight,
        ranks = s.ranks,
    );
    for c in connections {
        text.push_str(&format!(
            "  tcp x{c}: plain TCP on 127.0.0.1 (TCP_NODELAY), {c} connection(s) from each rank to the next,\n\
             \x20   one blocking writer thread per connection and one blocking reader thread per connection\n\
             \x20   from the previous rank; messages dealt round-robin over the connections, read into buffers\n\
             \x20   written beforehand.\n"
        ));
    }
    if connections.len() == 1 {
        text.push_str(
            "  (the connections: by default as many copying threads per rank as tcpxr's I/O pool had there,\n\
             \x20   the most threads column of tcpxr's rows, halved, at least 1 each way; --tcp-connections\n\
             \x20   names others, and the best of several is the ceiling)\n",
        );
    }
    text.push_str(
        "  GB/s: bytes sent (= bytes received) over the rank's clock, one direction, 1 GB = 1e9 B; all: every\n\
         \x20   rank's bytes over the longest rank's clock. CPU s: getrusage(RUSAGE_SELF) user + system of the\n\
         \x20   rank's process over its clock (all its threads); all: the sum. cores: CPU s / seconds. GB/s/core:\n\
         \x20   GB/s / cores. threads: tcpxr's I/O threads (tcpxr-io*) in the process / TCP's copying threads.\n",
    );
    text
}

// --- a rank -------------------------------------------------------------------------------------

/// A rank's process: `--ring-rank --rank R --ranks N --size B --inflight K --channels H [--tcp C]`.
pub fn rank(args: &[String]) -> i32 {
    let known = [
        cli::value("--rank"),
        cli::value("--ranks"),
        cli::value("--size"),
        cli::value("--inflight"),
        cli::value("--channels"),
        cli::value("--tcp"),
    ];
    let a = parse_or_exit!("--ring-rank", args, &known);
    let ranks = read_or_exit!(a, "--ranks", "2", |s| cli::int_in(s, 2, 64)) as usize;
    let rank = read_or_exit!(a, "--rank", "0", |s| cli::int_in(s, 0, ranks as u64 - 1)) as usize;
    let n = read_or_exit!(a, "--size", "4M", cli::size);
    let k = read_or_exit!(a, "--inflight", "8", |s| cli::int_in(s, 1, 32)) as usize;
    let channels = read_or_exit!(a, "--channels", "1", |s| cli::int_in(s, 1, MAX_CHANNELS)) as usize;
    let tcp = match a.get("--tcp") {
        None => None,
        Some(_) => Some(read_or_exit!(a, "--tcp", "1", |s| cli::int_in(s, 1, 64)) as usize),
    };
    let prev = (rank + ranks - 1) % ranks;
    // Rank r's i-th buffer carries pattern r*k + i; what rank r receives is its previous rank's.
    let sends: Vec<Vec<u8>> = (0..k).map(|i| pattern(n, rank * k + i)).collect();
    let expected = |i: usize| pattern(n, prev * k + i);
    let mut stdin = std::io::stdin().lock();
    match tcp {
        None => tcpxr_rank(n, channels, sends, &expected, &mut stdin),
        Some(c) => tcp_rank(n, c, sends, &expected, &mut stdin),
    }
}

/// The rest of the next line of stdin starting with `tag`; exits when stdin ends first.
fn next_line(stdin: &mut impl BufRead, tag: &str) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        if stdin.read_line(&mut line).unwrap_or(0) == 0 {
            eprintln!("tcpxr-bench ring rank: stdin ended while waiting for {tag}");
            std::process::exit(1);
        }
        if let Some(rest) = line.trim_end().strip_prefix(tag) {
            return rest.to_string();
        }
    }
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// The commands after the check: runs `go(messages)` (seconds on the clock, threads moving bytes)
/// for every GO and reports it, until END.
fn serve(stdin: &mut impl BufRead, n: usize, mut go: impl FnMut(usize) -> (f64, usize)) {
    loop {
        let mut line = String::new();
        if stdin.read_line(&mut line).unwrap_or(0) == 0 || line.trim() == "END" {
            return;
        }
        let Some(messages) = line.trim().strip_prefix("GO ").and_then(|m| m.parse::<usize>().ok()) else {
            continue;
        };
        let cpu0 = cpu_seconds();
        let (secs, threads) = go(messages);
        let cpu = cpu_seconds() - cpu0;
        say(&format!("RESULT {} {secs:.6} {cpu:.6} {threads}", n * messages));
    }
}

fn tcpxr_rank(
    n: usize,
    channels: usize,
    mut sends: Vec<Vec<u8>>,
    expected: &(dyn Fn(usize) -> Vec<u8> + Sync),
    stdin: &mut impl BufRead,
) -> i32 {
    init();
    say("READY");
    next_line(stdin, "LISTEN");
    // A listen comm per channel: each yields one connection (NCCL listens once per connection).
    let mut listens = vec![];
    let mut mine = vec![];
    for _ in 0..channels {
        let mut handle = [0u8; 128];
        let mut l = std::ptr::null_mut();
        // SAFETY: tcpxr's own table, given a 128-byte handle buffer and a valid out-pointer.
        let r = unsafe { NET.listen.unwrap()(std::ptr::null_mut(), 0, handle.as_mut_ptr() as *mut c_void, &mut l) };
        check(r, "listen");
        listens.push(l);
        mine.push(handle.iter().map(|b| format!("{b:02x}")).collect::<String>());
    }
    say(&format!("HANDLE {}", mine.join(" ")));
    let next = next_line(stdin, "NEXT ");
    let mut handles = match next.split_whitespace().map(hex_handle).collect::<Result<Vec<_>, _>>() {
        Ok(h) if h.len() == channels => h,
        Ok(h) => return usage(format!("NEXT: {channels} handles, got {}", h.len())),
        Err(e) => return usage(format!("NEXT: {e}")),
    };
    // Connect each channel to the next rank and accept each from the previous one, no call
    // blocking: each returns NULL until its comm is ready, as NCCL's non-blocking contract has it.
    let null = std::ptr::null_mut::<c_void>;
    let (mut s, mut r): (Vec<*mut c_void>, Vec<*mut c_void>) = (vec![null(); channels], vec![null(); channels]);
    while s.iter().chain(r.iter()).any(|c| c.is_null()) {
        let mut dh = std::ptr::null_mut();
        for i in 0..channels {
            if s[i].is_null() {
                // SAFETY: the next rank's 128-byte handle for this channel (the same buffer on
                // every call for it), valid out-pointers.
                let rc = unsafe {
                    NET.connect.unwrap()(
                        std::ptr::null_mut(),
                        0,
                        handles[i].as_mut_ptr() as *mut c_void,
                        &mut s[i],
                        &mut dh,
                    )
                };
                check(rc, "connect");
            }
            if r[i].is_null() {
                // SAFETY: this channel's listen comm; valid out-pointers.
                check(unsafe { NET.accept.unwrap()(listens[i], &mut r[i], &mut dh) }, "accept");
            }
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    for l in listens {
        // SAFETY: a listen comm of ours, not used again.
        check(unsafe { NET.closeListen.unwrap()(l) }, "closeListen");
    }
    let k = sends.len();
    // Every channel sends the same k buffers (registered with each send comm) and receives into
    // its own k: a channel's i-th message is the previous rank's i-th buffer.
    let mut recvs: Vec<Vec<Vec<u8>>> = (0..channels).map(|_| (0..k).map(|_| vec![0u8; n]).collect()).collect();
    let register = |comm: *mut c_void, bufs: &mut [Vec<u8>]| -> Vec<Slot> {
        bufs.iter_mut()
            .map(|b| {
                let mut mh = std::ptr::null_mut();
                // SAFETY: a live comm and a host buffer of `n` bytes that outlives its registration.
                let rc = unsafe { NET.regMr.unwrap()(comm, b.as_mut_ptr() as *mut c_void, n, NCCL_PTR_HOST, &mut mh) };
                check(rc, "regMr");
                (b.as_mut_ptr() as usize, mh as usize)
            })
            .collect()
    };
    let sslots: Vec<Vec<Slot>> = s.iter().map(|&c| register(c, &mut sends)).collect();
    let rslots: Vec<Vec<Slot>> = r.iter().zip(recvs.iter_mut()).map(|(&c, b)| register(c, b)).collect();
    move_all(&s, &r, &sslots, &rslots, n, k * channels);
    for (ch, bufs) in recvs.iter().enumerate() {
        if let Some(i) = (0..k).find(|&i| bufs[i] != expected(i)) {
            eprintln!(
                "tcpxr-bench ring rank: received message {i} of channel {ch} differs from what the previous rank sent"
            );
            return 4;
        }
    }
    say(&format!("CHECKED {}", k * channels));
    serve(stdin, n, |messages| {
        (move_all(&s, &r, &sslots, &rslots, n, messages), io_threads())
    });
    for (comms, slots) in [(&s, &sslots), (&r, &rslots)] {
        for (&comm, slots) in comms.iter().zip(slots.iter()) {
            for &(_, mh) in slots.iter() {
                // SAFETY: a live comm with no request outstanding, and a handle regMr gave it,
                // released once.
                check(unsafe { NET.deregMr.unwrap()(comm, mh as *mut c_void) }, "deregMr");
            }
        }
    }
    // SAFETY: the comms made above, nothing outstanding, not used again.
    unsafe {
        for &c in &s {
            check(NET.closeSend.unwrap()(c), "closeSend");
        }
        for &c in &r {
            check(NET.closeRecv.unwrap()(c), "closeRecv");
        }
    }
    0
}

/// `messages` sends over the send comms and as many receives over the receive comms, dealt
/// round-robin over the channels (message m on channel m % channels), from one thread as NCCL's
/// proxy: each pass keeps every window full and tests the oldest request of each. Returns the
/// seconds taken.
fn move_all(
    s: &[*mut c_void],
    r: &[*mut c_void],
    sslots: &[Vec<Slot>],
    rslots: &[Vec<Slot>],
    n: usize,
    messages: usize,
) -> f64 {
    let channels = s.len();
    let share = |ch: usize| (messages + channels - 1 - ch) / channels;
    let mut windows: Vec<Window> = (0..channels)
        .flat_map(|ch| {
            [
                Window::new(true, s[ch], &sslots[ch], n, share(ch), "tcpxr-bench ring rank"),
                Window::new(false, r[ch], &rslots[ch], n, share(ch), "tcpxr-bench ring rank"),
            ]
        })
        .collect();
    let start = Instant::now();
    while windows.iter().any(|w| !w.finished()) {
        for w in windows.iter_mut().filter(|w| !w.finished()) {
            w.pass();
        }
    }
    start.elapsed().as_secs_f64()
}

/// tcpxr's I/O threads in this process (named "tcpxr-io<i>").
fn io_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|name| name.starts_with("tcpxr-io")))
        .count()
}

fn tcp_rank(
    n: usize,
    c: usize,
    sends: Vec<Vec<u8>>,
    expected: &(dyn Fn(usize) -> Vec<u8> + Sync),
    stdin: &mut impl BufRead,
) -> i32 {
    say("READY");
    next_line(stdin, "LISTEN");
    let listener = match TcpListener::bind("127.0.0.1:0") {
        Ok(l) => l,
        Err(e) => {
            eprintln!("tcpxr-bench ring rank: cannot listen on 127.0.0.1: {e}");
            return 1;
        }
    };
    say(&format!(
        "HANDLE {}",
        listener.local_addr().map(|a| a.port()).unwrap_or(0)
    ));
    let port: u16 = match next_line(stdin, "NEXT ").trim().parse() {
        Ok(p) => p,
        Err(_) => return usage("NEXT: a port number".into()),
    };
    // Connections to the next rank (each first says its index), made while this thread accepts
    // the previous rank's.
    let connecting = std::thread::spawn(move || -> std::io::Result<Vec<TcpStream>> {
        (0..c)
            .map(|i| {
                let mut t = TcpStream::connect(("127.0.0.1", port))?;
                t.set_nodelay(true)?;
                t.write_all(&(i as u32).to_le_bytes())?;
                Ok(t)
            })
            .collect()
    });
    let mut ins: Vec<Option<TcpStream>> = (0..c).map(|_| None).collect();
    for _ in 0..c {
        let accepted = listener.accept().and_then(|(mut t, _)| {
            let mut i = [0u8; 4];
            t.read_exact(&mut i)?;
            Ok((u32::from_le_bytes(i) as usize, t))
        });
        match accepted {
            Ok((i, t)) if i < c && ins[i].is_none() => ins[i] = Some(t),
            other => {
                eprintln!(
                    "tcpxr-bench ring rank: a bad connection from the previous rank: {:?}",
                    other.err()
                );
                return 1;
            }
        }
    }
    let ins: Vec<TcpStream> = ins.into_iter().flatten().collect();
    let outs = match connecting.join() {
        Ok(Ok(v)) => v,
        other => {
            eprintln!("tcpxr-bench ring rank: cannot connect to the next rank: {other:?}");
            return 1;
        }
    };
    let k = sends.len();
    let mut recvs: Vec<Vec<u8>> = (0..c).map(|_| vec![0u8; n]).collect();
    // Message m travels on connection m % c; returns the seconds taken, or the first message
    // received wrong when `verify`.
    let mut go = |messages: usize, verify: bool| -> (f64, Option<usize>) {
        let start = Instant::now();
        let wrong = std::thread::scope(|scope| {
            for (i, mut out) in outs.iter().enumerate() {
                let sends = &sends;
                scope.spawn(move || {
                    for m in (i..messages).step_by(c) {
                        out.write_all(&sends[m % k]).expect("write to the next rank");
                    }
                });
            }
            let readers: Vec<_> = ins
                .iter()
                .zip(recvs.iter_mut())
                .enumerate()
                .map(|(i, (mut inp, buf))| {
                    scope.spawn(move || {
                        for m in (i..messages).step_by(c) {
                            inp.read_exact(buf).expect("read from the previous rank");
                            if verify && *buf != expected(m % k) {
                                return Some(m);
                            }
                        }
                        None
                    })
                })
                .collect();
            readers.into_iter().filter_map(|t| t.join().ok().flatten()).min()
        });
        (start.elapsed().as_secs_f64(), wrong)
    };
    if let (_, Some(m)) = go(k, true) {
        eprintln!("tcpxr-bench ring rank: received message {m} differs from what the previous rank sent");
        return 4;
    }
    say(&format!("CHECKED {k}"));
    serve(stdin, n, |messages| (go(messages, false).0, 2 * c));
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_row_is_all_bytes_over_the_longest_clock() {
        let ring = Ring {
            ranks: vec![
                Rank {
                    bytes: 2e9,
                    secs: 1.0,
                    cpu: 1.0,
                    threads: 2,
                },
                Rank {
                    bytes: 2e9,
                    secs: 2.0,
                    cpu: 3.0,
                    threads: 2,
                },
            ],
        };
        let t = ring.total();
        assert_eq!((t.bytes, t.secs, t.cpu, t.threads), (4e9, 2.0, 4.0, 4));
        assert_eq!((t.gbps(), t.cores(), t.per_core()), (2.0, 2.0, 1.0));
    }

    #[test]
    fn the_ring_says_how_each_column_was_measured() {
        let s = Shape {
            ranks: 3,
            size: 64 << 10,
            inflight: 8,
            channels: 2,
            seconds: 0.2,
        };
        let text = how_measured(&s, &[1]);
        for needed in [
            "tcpxr:",
            "tcp x1:",
            "getrusage",
            "byte for byte",
            "0.2 s",
            "64 KiB",
            "3 processes",
            "2 comm(s) each way",
            "(16 messages each way)",
        ] {
            assert!(text.contains(needed), "{needed:?} missing from:\n{text}");
        }
        assert!(!how_measured(&s, &[]).contains("tcp x"));
        let two = how_measured(&s, &[4, 8]);
        assert!(two.contains("tcp x4:") && two.contains("tcp x8:"), "{two}");
    }
}
