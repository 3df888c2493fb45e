//! `tcpxr-bench soak`: a long run anyone can make on a CPU host, checking everything it moves.
//!
//! Several connected pairs through tcpxr's v12 table in this process, as NCCL makes them; on each
//! side one thread serves every pair, as NCCL's proxy thread does, keeping several messages in
//! flight on each. Message k of a pair has a size drawn from (seed, pair, k): 0 B now and then,
//! else any size up to `--max-size` (log-uniform, so small and large sizes are both common); its
//! receive is posted larger than the message a third of the time (tcpxr must report the size
//! sent and write nothing past it); every byte is a function of (seed, pair, k, offset) and is
//! checked on arrival, and so is the posted tail beyond the message, which must still hold the
//! fill it had. Every `--report` seconds a line gives the messages and bytes verified so far and
//! the process's resident memory, threads and open file descriptors; the last line says whether
//! they stayed flat.
//!
//!   tcpxr-bench soak [--pairs 4] [--inflight 4] [--max-size 8M] [--seconds 60] [--report 10] [--seed 1]
//!
//! A wrong byte or size ends the run at once with exit code 4; an error from tcpxr with 2.
use super::{check, cli, connect_pair, human, init, parse_or_exit, post, read_or_exit, NET};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the tail of a receive buffer beyond the message holds before the receive is posted.
const FILL: u8 = 0xEE;

pub fn run(args: &[String]) -> i32 {
    let known = [
        cli::value("--pairs"),
        cli::value("--inflight"),
        cli::value("--max-size"),
        cli::value("--seconds"),
        cli::value("--report"),
        cli::value("--seed"),
    ];
    let a = parse_or_exit!("soak", args, &known);
    let pairs = read_or_exit!(a, "--pairs", "4", |s| cli::int_in(s, 1, 64)) as usize;
    let inflight = read_or_exit!(a, "--inflight", "4", |s| cli::int_in(s, 1, 32)) as usize;
    let max_size = read_or_exit!(a, "--max-size", "8M", |s| cli::size_in(s, 1, 256 << 20));
    let seconds = read_or_exit!(a, "--seconds", "60", |s| cli::seconds_up_to(s, 7.0 * 86400.0));
    let report = read_or_exit!(a, "--report", "10", |s| cli::seconds_up_to(s, 86400.0));
    let seed = read_or_exit!(a, "--seed", "1", |s| cli::int_in(s, 0, u64::MAX));
    let shape = Shape { seed, max_size };
    init();
    let comms: Vec<(usize, usize)> = (0..pairs)
        .map(|_| {
            let (s, r) = connect_pair();
            (s as usize, r as usize)
        })
        .collect();
    println!(
        "soak: {pairs} pairs, {inflight} messages in flight on each, sizes 0 B - {}, receives posted \
         larger a third of the time, seed {seed}, {seconds} s, over {}",
        human(max_size),
        super::interface()
    );
    let shared = Arc::new(Shared {
        sends_posted: (0..pairs).map(|_| AtomicU64::new(0)).collect(),
        stop: AtomicBool::new(false),
        sender_done: AtomicBool::new(false),
        messages: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
        larger: AtomicU64::new(0),
        empty: AtomicU64::new(0),
    });
    let sends: Vec<usize> = comms.iter().map(|c| c.0).collect();
    let recvs: Vec<usize> = comms.iter().map(|c| c.1).collect();
    let sender = {
        let sh = shared.clone();
        std::thread::spawn(move || send_side(&sends, inflight, shape, &sh))
    };
    let receiver = {
        let sh = shared.clone();
        std::thread::spawn(move || recv_side(&recvs, inflight, shape, &sh))
    };
    let start = Instant::now();
    let mut samples: Vec<Sample> = vec![];
    let mut next = report.min(seconds);
    while !receiver.is_finished() {
        let now = start.elapsed().as_secs_f64();
        if now >= next {
            let s = Sample::take(now, &shared);
            println!("{s}");
            samples.push(s);
            if now >= seconds {
                break;
            }
            next = (next + report).min(seconds);
        }
        std::thread::sleep(Duration::from_secs_f64((next - now).clamp(0.001, 0.1)));
    }
    if receiver.is_finished() {
        // Only a wrong message ends the receiving side before the run does. The sending side may
        // wait forever for receives that will not come now: the process exits without it.
        let e = receiver
            .join()
            .unwrap()
            .err()
            .unwrap_or_else(|| "the receiving side ended early".into());
        eprintln!("tcpxr-bench soak: {e}");
        return 4;
    }
    shared.stop.store(true, Ordering::Release);
    sender.join().unwrap();
    if let Err(e) = receiver.join().unwrap() {
        eprintln!("tcpxr-bench soak: {e}");
        return 4;
    }
    for (s, r) in comms {
        // SAFETY: comms from connect_pair with nothing outstanding (both sides finished).
        unsafe {
            check(NET.closeSend.unwrap()(s as *mut c_void), "closeSend");
            check(NET.closeRecv.unwrap()(r as *mut c_void), "closeRecv");
        }
    }
    let last = Sample::take(start.elapsed().as_secs_f64(), &shared);
    println!("{}", verdict(&samples, &last, &shared));
    0
}

/// What decides each message: the seed, and the largest size.
#[derive(Clone, Copy)]
struct Shape {
    seed: u64,
    max_size: usize,
}

impl Shape {
    /// Message `k` of pair `pair`: its size, and how many bytes more its receive is posted with.
    fn message(&self, pair: usize, k: u64) -> (usize, usize) {
        let h = mix(self.seed ^ mix(pair as u64 ^ mix(k)));
        let size = if h % 16 == 0 {
            0
        } else {
            let bits = (h >> 8) % 24;
            let n = (1u64 << bits) + mix(h) % (1u64 << bits);
            (n as usize).min(self.max_size)
        };
        let extra = if (h >> 40) % 3 == 0 {
            1 + (mix(h ^ 1) as usize) % (size / 2 + 4096)
        } else {
            0
        };
        (size, extra)
    }

    /// The key of the bytes of message `k` of pair `pair`.
    fn key(&self, pair: usize, k: u64) -> u64 {
        mix(self.seed.wrapping_add(0x5eed) ^ mix((pair as u64) << 48 ^ k))
    }

    /// The most a receive is posted with.
    fn slot_bytes(&self) -> usize {
        self.max_size + self.max_size / 2 + 4096
    }
}

/// splitmix64's finaliser: a well-mixed 64-bit function.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The word at word offset `i` of the message with `key`.
fn word(key: u64, i: usize) -> u64 {
    mix(key ^ (i as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93))
}

/// Writes the message with `key` into `buf`.
fn fill(buf: &mut [u8], key: u64) {
    let last = word(key, buf.len() / 8).to_le_bytes();
    let mut words = buf.chunks_exact_mut(8);
    for (i, w) in words.by_ref().enumerate() {
        w.copy_from_slice(&word(key, i).to_le_bytes());
    }
    let rest = words.into_remainder();
    let n = rest.len();
    rest.copy_from_slice(&last[..n]);
}

/// The first offset where `got` differs from the message with `key`, if any.
fn first_wrong(got: &[u8], key: u64) -> Option<usize> {
    let mut words = got.chunks_exact(8);
    for (i, w) in words.by_ref().enumerate() {
        let want = word(key, i).to_le_bytes();
        if w != want {
            return Some(i * 8 + w.iter().zip(want).position(|(a, b)| *a != b).unwrap_or(0));
        }
    }
    let rest = words.remainder();
    let last = word(key, got.len() / 8).to_le_bytes();
    rest.iter()
        .zip(last)
        .position(|(a, b)| *a != b)
        .map(|p| got.len() - rest.len() + p)
}

/// Checks a completed receive of message `k` of `pair`: the size tcpxr reported, every byte of
/// the message, and the posted tail beyond it, which must still hold [`FILL`].
fn verify(shape: &Shape, pair: usize, k: u64, buf: &[u8], reported: usize) -> Result<(), String> {
    let (size, extra) = shape.message(pair, k);
    let what = format!(
        "pair {pair} message {k} ({size} B into a receive of {} B)",
        size + extra
    );
    if reported != size {
        return Err(format!("{what}: test reported {reported} B"));
    }
    if let Some(at) = first_wrong(&buf[..size], shape.key(pair, k)) {
        return Err(format!("{what}: wrong byte at offset {at}"));
    }
    if let Some(at) = buf[size..size + extra].iter().position(|b| *b != FILL) {
        return Err(format!("{what}: byte {} past the message was written", size + at));
    }
    Ok(())
}

/// What the two sides and the sampler share.
struct Shared {
    /// Per pair, the sends posted so far: the receiver posts receive k only once send k is posted,
    /// so that when the run stops no receive waits for a message that will never come.
    sends_posted: Vec<AtomicU64>,
    stop: AtomicBool,
    sender_done: AtomicBool,
    /// Messages and bytes received and verified; of those, into larger receives, and of 0 B.
    messages: AtomicU64,
    bytes: AtomicU64,
    larger: AtomicU64,
    empty: AtomicU64,
}

/// One side's message slots on one pair: buffers, and the requests in flight, oldest first.
struct Slots {
    bufs: Vec<Vec<u8>>,
    reqs: std::collections::VecDeque<(*mut c_void, u64)>,
    posted: u64,
}

impl Slots {
    fn new(inflight: usize, bytes: usize) -> Slots {
        Slots {
            bufs: (0..inflight).map(|_| vec![0u8; bytes]).collect(),
            reqs: Default::default(),
            posted: 0,
        }
    }
}

/// Tests `req`; its size when done.
fn done(req: *mut c_void) -> Option<usize> {
    let (mut flag, mut size): (c_int, c_int) = (0, 0);
    // SAFETY: a live request of this table, tested until it is done.
    check(unsafe { NET.test.unwrap()(req, &mut flag, &mut size) }, "test");
    (flag != 0).then_some(size as usize)
}

/// The sending side: keeps `inflight` messages in flight on every pair until told to stop, then
/// lets them finish.
fn send_side(comms: &[usize], inflight: usize, shape: Shape, sh: &Shared) {
    let mut slots: Vec<Slots> = comms.iter().map(|_| Slots::new(inflight, shape.max_size)).collect();
    loop {
        let stopping = sh.stop.load(Ordering::Acquire);
        let mut busy = false;
        for (pair, (&comm, s)) in comms.iter().zip(&mut slots).enumerate() {
            while !stopping && s.reqs.len() < inflight {
                let k = s.posted;
                let (size, _) = shape.message(pair, k);
                let buf = &mut s.bufs[(k % inflight as u64) as usize];
                fill(&mut buf[..size], shape.key(pair, k));
                let req = post(
                    true,
                    comm as *mut c_void,
                    buf.as_mut_ptr() as *mut c_void,
                    size,
                    std::ptr::null_mut(),
                );
                if req.is_null() {
                    break;
                }
                s.reqs.push_back((req, k));
                s.posted += 1;
                sh.sends_posted[pair].store(s.posted, Ordering::Release);
            }
            if let Some(&(req, _)) = s.reqs.front() {
                busy = true;
                if done(req).is_some() {
                    s.reqs.pop_front();
                }
            }
        }
        if stopping && !busy {
            sh.sender_done.store(true, Ordering::Release);
            return;
        }
    }
}

/// The receiving side: posts each pair's receives (once their sends are posted) and checks each
/// message as it completes; returns when the sender is done and every message it sent is in.
fn recv_side(comms: &[usize], inflight: usize, shape: Shape, sh: &Shared) -> Result<(), String> {
    let mut slots: Vec<Slots> = comms.iter().map(|_| Slots::new(inflight, shape.slot_bytes())).collect();
    loop {
        // Read before the pass: if the sender was done then, this pass sees every send it posted.
        let sender_done = sh.sender_done.load(Ordering::Acquire);
        let mut busy = false;
        for (pair, (&comm, s)) in comms.iter().zip(&mut slots).enumerate() {
            while s.reqs.len() < inflight && s.posted < sh.sends_posted[pair].load(Ordering::Acquire) {
                let k = s.posted;
                let (size, extra) = shape.message(pair, k);
                let buf = &mut s.bufs[(k % inflight as u64) as usize];
                buf[size..size + extra].fill(FILL);
                let req = post(
                    false,
                    comm as *mut c_void,
                    buf.as_mut_ptr() as *mut c_void,
                    size + extra,
                    std::ptr::null_mut(),
                );
                if req.is_null() {
                    break;
                }
                s.reqs.push_back((req, k));
                s.posted += 1;
            }
            if let Some(&(req, k)) = s.reqs.front() {
                busy = true;
                if let Some(reported) = done(req) {
                    s.reqs.pop_front();
                    let buf = &s.bufs[(k % inflight as u64) as usize];
                    verify(&shape, pair, k, buf, reported)?;
                    let (size, extra) = shape.message(pair, k);
                    sh.messages.fetch_add(1, Ordering::Relaxed);
                    sh.bytes.fetch_add(size as u64, Ordering::Relaxed);
                    sh.larger.fetch_add((extra > 0) as u64, Ordering::Relaxed);
                    sh.empty.fetch_add((size == 0) as u64, Ordering::Relaxed);
                }
            }
        }
        let all_in = slots
            .iter()
            .enumerate()
            .all(|(pair, s)| s.posted == sh.sends_posted[pair].load(Ordering::Acquire));
        if sender_done && !busy && all_in {
            return Ok(());
        }
    }
}

/// The process as sampled at one moment.
struct Sample {
    secs: f64,
    messages: u64,
    bytes: u64,
    rss_kib: u64,
    threads: usize,
    fds: usize,
}

impl Sample {
    fn take(secs: f64, sh: &Shared) -> Sample {
        let rss_kib = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("VmRSS:"))
                    .and_then(|v| v.split_whitespace().next()?.parse().ok())
            })
            .unwrap_or(0);
        let count = |dir: &str| std::fs::read_dir(dir).map_or(0, |d| d.count());
        Sample {
            secs,
            messages: sh.messages.load(Ordering::Relaxed),
            bytes: sh.bytes.load(Ordering::Relaxed),
            rss_kib,
            threads: count("/proc/self/task"),
            fds: count("/proc/self/fd"),
        }
    }
}

impl std::fmt::Display for Sample {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:>8.1} s: {} messages, {:.2} GB verified ({:.2} GB/s), RSS {:.1} MiB, {} threads, {} fds",
            self.secs,
            self.messages,
            self.bytes as f64 / 1e9,
            self.bytes as f64 / 1e9 / self.secs.max(1e-9),
            self.rss_kib as f64 / 1024.0,
            self.threads,
            self.fds
        )
    }
}

/// The run's last line: what was verified, and how resident memory, threads and descriptors
/// moved between the first sample and the last one taken while the comms were open.
fn verdict(samples: &[Sample], last: &Sample, sh: &Shared) -> String {
    let range = |f: &dyn Fn(&Sample) -> u64| {
        let v: Vec<u64> = samples.iter().map(f).collect();
        (
            v.first().copied().unwrap_or(0),
            v.last().copied().unwrap_or(0),
            v.iter().copied().min().unwrap_or(0),
            v.iter().copied().max().unwrap_or(0),
        )
    };
    let (rss0, rss1, _, rss_max) = range(&|s| s.rss_kib);
    let (thr0, thr1, thr_min, thr_max) = range(&|s| s.threads as u64);
    let (fd0, fd1, fd_min, fd_max) = range(&|s| s.fds as u64);
    format!(
        "soak OK: {:.0} s, {} messages ({} of 0 B, {} into larger receives), {:.2} GB, every byte \
         verified; RSS {:.1} -> {:.1} MiB (max {:.1}), threads {thr0} -> {thr1} (range {thr_min}-{thr_max}), \
         fds {fd0} -> {fd1} (range {fd_min}-{fd_max})",
        last.secs,
        sh.messages.load(Ordering::Relaxed),
        sh.empty.load(Ordering::Relaxed),
        sh.larger.load(Ordering::Relaxed),
        sh.bytes.load(Ordering::Relaxed) as f64 / 1e9,
        rss0 as f64 / 1024.0,
        rss1 as f64 / 1024.0,
        rss_max as f64 / 1024.0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_draw_the_same_messages_and_sizes_span_0_to_the_maximum() {
        let shape = Shape {
            seed: 7,
            max_size: 8 << 20,
        };
        let all: Vec<(usize, usize)> = (0..4000).map(|k| shape.message(1, k)).collect();
        assert_eq!(all, (0..4000).map(|k| shape.message(1, k)).collect::<Vec<_>>());
        assert_ne!(all, (0..4000).map(|k| shape.message(2, k)).collect::<Vec<_>>());
        let sizes: Vec<usize> = all.iter().map(|m| m.0).collect();
        assert!(sizes.contains(&0));
        assert!(sizes.iter().any(|&n| (1..64).contains(&n)));
        assert!(sizes.contains(&(8 << 20)), "the largest size is drawn too");
        assert!(sizes.iter().all(|&n| n <= 8 << 20));
        let larger = all.iter().filter(|m| m.1 > 0).count();
        assert!((1000..1700).contains(&larger), "{larger} of 4000 posted larger");
        assert!(all.iter().all(|&(n, extra)| n + extra <= shape.slot_bytes()));
    }

    #[test]
    fn verification_finds_a_wrong_byte_a_wrong_size_and_a_write_past_the_message() {
        let shape = Shape {
            seed: 3,
            max_size: 1 << 20,
        };
        let (pair, k) = (0..)
            .map(|k| (0, k))
            .find(|&(p, k)| {
                let (n, extra) = shape.message(p, k);
                n > 100 && extra > 0
            })
            .unwrap();
        let (n, extra) = shape.message(pair, k);
        let mut buf = vec![FILL; n + extra];
        fill(&mut buf[..n], shape.key(pair, k));
        assert_eq!(verify(&shape, pair, k, &buf, n), Ok(()));
        assert!(verify(&shape, pair, k, &buf, n - 1).unwrap_err().contains("reported"));
        for at in [0, 7, 8, n / 2, n - 1] {
            buf[at] ^= 1;
            let e = verify(&shape, pair, k, &buf, n).unwrap_err();
            assert!(e.contains(&format!("wrong byte at offset {at}")), "{e}");
            buf[at] ^= 1;
        }
        buf[n + extra - 1] = 0;
        assert!(verify(&shape, pair, k, &buf, n)
            .unwrap_err()
            .contains("past the message"));
        // Another message's bytes are wrong bytes.
        let mut other = vec![0u8; n];
        fill(&mut other, shape.key(pair, k + 1));
        assert!(first_wrong(&other, shape.key(pair, k)).is_some());
    }
}
