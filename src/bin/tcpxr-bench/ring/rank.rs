//! One rank of `tcpxr-bench ring`: a process the parent started (`--ring-rank`), which answers the
//! parent's lines on stdin (see the parent, ring/mod.rs) and moves its messages to the next rank
//! and from the previous one, through tcpxr's table or over plain TCP.
use super::MAX_CHANNELS;
use crate::{
    check, cli, cpu_seconds, hex_handle, init, parse_or_exit, pattern, read_or_exit, usage, Slot, Window, NET,
};
use nccl_net_tcpxr::abi::NCCL_PTR_HOST;
use std::ffi::c_void;
use std::io::{BufRead, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

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
        Some(c) => tcp_rank(n, c, channels, sends, &expected, &mut stdin),
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

/// tcpxr's I/O threads in this process (named `tcpxr-io<i>`).
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
    channels: usize,
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
    // As many receive buffers as tcpxr's ring receives into (its channels' k each, the memory
    // NCCL's staging buffers span), dealt out among the connections: one buffer per connection
    // would stay in cache and copy faster than any ring NCCL runs.
    let per_connection = (channels * k / c).max(1);
    let mut recvs: Vec<Vec<Vec<u8>>> = (0..c)
        .map(|_| (0..per_connection).map(|_| vec![0u8; n]).collect())
        .collect();
    // Message m travels on connection m % c, into that connection's buffers in turn; returns the
    // seconds taken, or the first message received wrong when `verify`.
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
                .map(|(i, (mut inp, bufs))| {
                    scope.spawn(move || {
                        for (j, m) in (i..messages).step_by(c).enumerate() {
                            let buf = &mut bufs[j % per_connection];
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
