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
use super::{cli, human, interface, parse_or_exit, read_or_exit, usage};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

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
             \x20   from the previous rank; messages dealt round-robin over the connections, sent from buffers\n\
             \x20   written beforehand; each reader fills its share of {bufs} receive buffers in turn (as many as\n\
             \x20   tcpxr's receives use: one buffer per connection would stay in cache).\n",
            bufs = s.channels * s.inflight
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

mod rank;
pub use rank::rank;

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
