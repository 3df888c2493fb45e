//! `tcpxr-bench latency`: small-message ping-pong through the v12 table, two connections (one each
//! way) between two threads, as two NCCL proxies would drive them. Reports the one-way latency
//! (half a round trip) as median and 99th percentile, beside the same ping-pong over plain TCP
//! (two connections, non-blocking sockets polled in a loop as NCCL's proxy polls test()): the
//! difference is what tcpxr adds per message. `--ahead N` keeps N receives posted on each side, as
//! NCCL's proxy posts them for the steps to come (default 1). With `--rma`, also a put with a strong signal each
//! way through tcpxr's RMA table (rma.rs).
use super::{check, cli, connect_pair, init, parse_or_exit, post, read_or_exit, NET};
use std::ffi::c_void;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Instant;

/// Posts one message on `comm` (send or receive), retrying while tcpxr has no free request.
fn post_taken(send: bool, comm: usize, buf: &mut [u8]) -> *mut c_void {
    let mut req: *mut c_void = std::ptr::null_mut();
    while req.is_null() {
        req = post(
            send,
            comm as *mut c_void,
            buf.as_mut_ptr() as *mut c_void,
            buf.len(),
            std::ptr::null_mut(),
        );
    }
    req
}

/// Polls test() on `req` until it is done.
fn wait(req: *mut c_void) {
    while !done(req) {}
}

/// Tests `req` once: whether it is done (a done request is freed: test it no more).
fn done(req: *mut c_void) -> bool {
    let (mut done, mut size) = (0, 0);
    // SAFETY: req is live until test reports it done, and the caller tests it no more after.
    check(unsafe { NET.test.unwrap()(req, &mut done, &mut size) }, "test");
    done != 0
}

/// Posts one message on `comm` (send or receive) and polls test() until it is done.
fn one(send: bool, comm: usize, buf: &mut [u8]) {
    wait(post_taken(send, comm, buf));
}

/// A receive comm with `ahead` receives kept posted, as NCCL's proxy posts them for the steps
/// to come; `next` waits for the oldest and posts another in its place.
struct Receiver {
    comm: usize,
    bufs: Vec<Vec<u8>>,
    posted: std::collections::VecDeque<*mut c_void>,
    next_buf: usize,
}

impl Receiver {
    fn new(comm: usize, size: usize, ahead: usize) -> Self {
        let mut r = Receiver {
            comm,
            bufs: (0..ahead).map(|_| vec![0u8; size]).collect(),
            posted: std::collections::VecDeque::new(),
            next_buf: 0,
        };
        for _ in 0..ahead {
            r.post_one();
        }
        r
    }

    fn post_one(&mut self) {
        let i = self.next_buf;
        self.next_buf = (i + 1) % self.bufs.len();
        let req = post_taken(false, self.comm, &mut self.bufs[i]);
        self.posted.push_back(req);
    }

    /// Waits for the oldest receive and posts the next in its place.
    fn next(&mut self) {
        wait(self.posted.pop_front().unwrap());
        self.post_one();
    }

    /// Sends the last `ahead` messages on `send_comm` and lets the receives still posted complete
    /// (the peer sends them), so both comms close idle. All are tested together: tcpxr moves a
    /// message's bytes when its request is tested (or while an I/O thread holds its stripe), so
    /// a side waiting on its sends alone leaves its receives untested, and once the messages are
    /// larger than the sockets' buffers each side's send waits for the other's receive until the
    /// peer timeout (512 MiB with the kernel's autotuning, 16 MiB with 256 KiB buffers).
    fn finish(self, send_comm: usize, buf: &mut [u8], ahead: usize) {
        let mut pending: Vec<*mut c_void> = (0..ahead).map(|_| post_taken(true, send_comm, buf)).collect();
        pending.extend(self.posted);
        while !pending.is_empty() {
            pending.retain(|&req| !done(req));
        }
    }
}

pub fn run(args: &[String]) -> i32 {
    let a = parse_or_exit!(
        "latency",
        args,
        &[
            cli::value("--size"),
            cli::value("--iters"),
            cli::value("--ahead"),
            cli::switch("--rma")
        ]
    );
    let size = read_or_exit!(a, "--size", "8", |s| cli::size_in(s, 0, cli::MAX_SIZE));
    let iters = read_or_exit!(a, "--iters", "20000", |s| cli::int_in(s, 1, 100_000_000)) as usize;
    let ahead = read_or_exit!(a, "--ahead", "1", |s| cli::int_in(s, 1, 8)) as usize;
    if a.has("--rma") && std::env::var_os("NCCL_TCPXR_RMA").is_none() {
        // tcpxr offers its RMA table only when asked. Sound: before this process has a second
        // thread (init below starts none yet either).
        std::env::set_var("NCCL_TCPXR_RMA", "1");
    }
    init();
    let (a_to_b_send, a_to_b_recv) = connect_pair();
    let (b_to_a_send, b_to_a_recv) = connect_pair();
    let (ab_s, ab_r, ba_s, ba_r) = (
        a_to_b_send as usize,
        a_to_b_recv as usize,
        b_to_a_send as usize,
        b_to_a_recv as usize,
    );
    let warmup = iters / 10;
    // Each side sends `ahead` more messages than the round trips, so that the receives still
    // posted at the end complete before the comms close.
    let rounds = warmup + iters;
    let pong = std::thread::spawn(move || {
        let mut rx = Receiver::new(ab_r, size, ahead);
        let mut buf = vec![0u8; size];
        for _ in 0..rounds {
            rx.next();
            one(true, ba_s, &mut buf);
        }
        rx.finish(ba_s, &mut buf, ahead);
    });
    let mut rx = Receiver::new(ba_r, size, ahead);
    let mut buf = vec![1u8; size];
    let mut rtt_us = Vec::with_capacity(iters);
    for i in 0..rounds {
        let start = Instant::now();
        one(true, ab_s, &mut buf);
        rx.next();
        if i >= warmup {
            rtt_us.push(start.elapsed().as_secs_f64() * 1e6);
        }
    }
    rx.finish(ab_s, &mut buf, ahead);
    pong.join().unwrap();
    report("tcpxr", size, iters, rtt_us);
    report("plain TCP", size, iters, tcp_round_trips(size, warmup, iters));
    if a.has("--rma") {
        report("tcpxr RMA", size, iters, super::rma::round_trips(size, warmup, iters));
        println!("(tcpxr RMA: a put of that size with a strong signal, host windows, through ncclRmaPlugin_v14)");
    }
    for s in [ab_s, ba_s] {
        // SAFETY: a send comm from connect_pair with nothing outstanding, not used again.
        check(unsafe { NET.closeSend.unwrap()(s as *mut c_void) }, "closeSend");
    }
    for r in [ab_r, ba_r] {
        // SAFETY: a receive comm from connect_pair with nothing outstanding, not used again.
        check(unsafe { NET.closeRecv.unwrap()(r as *mut c_void) }, "closeRecv");
    }
    0
}

fn report(what: &str, size: usize, iters: usize, mut rtt_us: Vec<f64>) {
    rtt_us.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let p = |q: f64| rtt_us[((rtt_us.len() - 1) as f64 * q) as usize] / 2.0;
    println!(
        "{what:>9}: one-way latency, {size} B messages, {iters} round trips: median {:.2} us, p99 {:.2} us, min {:.2} us",
        p(0.5),
        p(0.99),
        rtt_us[0] / 2.0
    );
}

/// Reads exactly `buf.len()` bytes from a non-blocking socket, polling.
fn read_polled(s: &mut TcpStream, buf: &mut [u8]) {
    let mut got = 0;
    while got < buf.len() {
        match s.read(&mut buf[got..]) {
            Ok(0) => panic!("plain TCP baseline: peer closed"),
            Ok(k) => got += k,
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::hint::spin_loop(),
            Err(e) => panic!("plain TCP baseline: {e}"),
        }
    }
}

/// Writes all of `buf` to a non-blocking socket, polling (`write_all` gives up at the first
/// WouldBlock, which a message larger than the socket buffer always meets).
fn write_polled(s: &mut TcpStream, buf: &[u8]) {
    let mut put = 0;
    while put < buf.len() {
        match s.write(&buf[put..]) {
            Ok(0) => panic!("plain TCP baseline: the socket takes nothing"),
            Ok(k) => put += k,
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::hint::spin_loop(),
            Err(e) => panic!("plain TCP baseline: {e}"),
        }
    }
}

/// The same ping-pong over two plain TCP connections (no delay, non-blocking, polled).
fn tcp_round_trips(size: usize, warmup: usize, iters: usize) -> Vec<f64> {
    let pair = || {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        for s in [&a, &b] {
            s.set_nodelay(true).unwrap();
            s.set_nonblocking(true).unwrap();
        }
        (a, b)
    };
    let (mut ab_tx, mut ab_rx) = pair();
    let (mut ba_tx, mut ba_rx) = pair();
    let pong = std::thread::spawn(move || {
        let mut buf = vec![0u8; size];
        for _ in 0..warmup + iters {
            read_polled(&mut ab_rx, &mut buf);
            write_polled(&mut ba_tx, &buf);
        }
    });
    let mut buf = vec![1u8; size];
    let mut rtt_us = Vec::with_capacity(iters);
    for i in 0..warmup + iters {
        let start = Instant::now();
        write_polled(&mut ab_tx, &buf);
        read_polled(&mut ba_rx, &mut buf);
        if i >= warmup {
            rtt_us.push(start.elapsed().as_secs_f64() * 1e6);
        }
    }
    pong.join().unwrap();
    rtt_us
}
