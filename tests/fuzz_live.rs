//! Hostile bytes on live sockets, through the plugin's exported table as NCCL drives it:
//! * garbage, cut-short and oversized hellos sent to a listen port are each dropped with a WARN
//!   (or counted in a summary line, beyond tcpxr's limit of such lines), while a real peer still
//!   connects and moves data;
//! * the same on the stripe listeners, with this test as the connecting peer, speaking the wire
//!   format from raw sockets;
//! * hostile bytes on an established control connection end that comm with a clean error, never a
//!   hang or a crash;
//! * a hostile listener (garbage, cut-short or contradictory welcomes, unusable stripe handles)
//!   fails connect cleanly.
//!
//! The tests that count WARN lines run their body in a child process of this binary, whose stderr
//! (tcpxr's log, TCPXR_LOG=warn) the parent reads. Rounds scale with TCPXR_FUZZ_CASES.
mod common;
mod fuzzing;

use common::*;
use fuzzing::{hostile, Rng};
use nccl_net_tcpxr::abi::ncclResult_t;
use nccl_net_tcpxr::engine::wire::{self, ListenHandle, MsgHeader, HELLO_BYTES, MSG_HEADER_BYTES, WELCOME_HEAD_BYTES};
use nccl_net_tcpxr::transport::socket;
use nccl_net_tcpxr::transport::INNER_HANDLE_BYTES;
use std::ffi::c_void;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

/// Names the test a child process runs.
const CHILD: &str = "TCPXR_FUZZ_LIVE_CHILD";
/// Connections that have not completed their hello are dropped after this long in the children.
const HANDSHAKE_MS: u64 = 200;

/// In the parent: runs `test` of this binary in a child with `env` and returns (succeeded, stdout,
/// stderr). In the child (None): the caller runs the test's body.
fn in_child(test: &str, env: &[(&str, &str)]) -> Option<(bool, String, String)> {
    if std::env::var(CHILD).is_ok_and(|t| t == test) {
        return None;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads", "1"])
        .env(CHILD, test)
        .env("TCPXR_LOG", "warn")
        // Empty: the child's tcpxr log goes to its stderr, which this process reads.
        .env(nccl_net_tcpxr::testlog::FILE_VAR, "")
        .env("NCCL_TCPXR_HANDSHAKE_TIMEOUT_MS", HANDSHAKE_MS.to_string())
        .envs(env.iter().copied())
        .output()
        .unwrap();
    Some((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// Repeats the child's summary lines ("hostile ...") in the parent's output (seen with
/// --nocapture).
fn summary(stderr: &str) {
    for l in stderr.lines().filter(|l| l.starts_with("hostile ")) {
        eprintln!("{l}");
    }
}

/// The child's `EXPECT name=n` lines.
fn expected(stdout: &str, name: &str) -> usize {
    stdout
        .lines()
        // The harness may print the test's name on the same line first.
        .filter_map(|l| l.split_once("EXPECT ").map(|(_, kv)| kv))
        .filter_map(|kv| kv.split_once('='))
        .filter(|(k, _)| *k == name)
        .map(|(_, v)| v.trim().parse::<usize>().unwrap())
        .sum()
}

/// WARN lines of tcpxr's log that contain every one of `parts`.
fn warns(stderr: &str, parts: &[&str]) -> usize {
    stderr
        .lines()
        .filter(|l| l.contains("WARN") && parts.iter().all(|p| l.contains(p)))
        .count()
}

/// Strangers of kind `kind` ("refused", "with a cut-short hello") that tcpxr counted instead of
/// logging one by one (beyond its limit of WARN lines), from its summary lines.
fn summarised(stderr: &str, kind: &str) -> usize {
    stderr
        .lines()
        .filter(|l| l.contains("WARN") && l.contains("more connections to tcpxr's listen ports"))
        .filter_map(|l| {
            let before = l.split_once(&format!(" {kind},"))?.0;
            before
                .rsplit(|c: char| !c.is_ascii_digit())
                .next()?
                .parse::<usize>()
                .ok()
        })
        .sum()
}

fn rounds(min: u64, max: u64) -> u64 {
    (fuzzing::cases() / 50_000).clamp(min, max)
}

/// What a hostile connection does after connecting.
#[derive(Clone, Copy, Debug)]
enum Stray {
    /// 16 bytes or more that are not the hello: refused at once (WARN).
    Garbage,
    /// Some bytes of a hello, then close: dropped at once (WARN, truncated).
    CutShortClosed,
    /// Some bytes of a hello, then silence: dropped at the handshake deadline (WARN).
    CutShortOpen,
    /// Not a hello, followed by 64 KiB more: refused after the first 16 bytes (WARN).
    Oversized,
    /// Connects and says nothing: dropped at the deadline (INFO only).
    Silent,
}

const STRAYS: [Stray; 5] = [
    Stray::Garbage,
    Stray::CutShortClosed,
    Stray::CutShortOpen,
    Stray::Oversized,
    Stray::Silent,
];

/// Opens a stray connection to `at` that sends a hostile variant of `valid` (a hello); returns the
/// socket when it stays open. A "garbage" variant that happens to equal the hello is made wrong.
fn stray(rng: &mut Rng, at: SocketAddr, valid: &[u8], kind: Stray) -> Option<TcpStream> {
    let mut c = TcpStream::connect(at).unwrap();
    let not_the_hello = |rng: &mut Rng| loop {
        let mut b = hostile(rng, valid, &[], Some(HELLO_BYTES));
        b.truncate(HELLO_BYTES);
        if b != valid {
            return b;
        }
    };
    match kind {
        Stray::Garbage => c.write_all(&not_the_hello(rng)).unwrap(),
        Stray::CutShortClosed | Stray::CutShortOpen => {
            let n = 1 + rng.below(HELLO_BYTES - 1);
            c.write_all(&valid[..n]).unwrap();
        }
        Stray::Oversized => {
            let mut b = not_the_hello(rng);
            b.extend(rng.bytes(64 << 10));
            // The listener refuses after 16 bytes and may reset the rest: ignore that.
            let _ = c.write_all(&b);
        }
        Stray::Silent => {}
    }
    match kind {
        Stray::CutShortOpen | Stray::Silent => Some(c),
        _ => None,
    }
}

/// The WARNs a stray earns: (refused, cut short).
fn earns(kind: Stray) -> (usize, usize) {
    match kind {
        Stray::Garbage | Stray::Oversized => (1, 0),
        Stray::CutShortClosed | Stray::CutShortOpen => (0, 1),
        Stray::Silent => (0, 0),
    }
}

/// Calls accept until `until` says stop or `limit` passes; returns the receive comm if one came.
fn accept_for(net: &V12, l: *mut c_void, limit: Duration, mut until: impl FnMut(*mut c_void) -> bool) -> *mut c_void {
    let start = Instant::now();
    let mut r = null();
    while start.elapsed() < limit {
        if r.is_null() {
            assert_eq!(net.accept(l, &mut r), OK);
        }
        if until(r) {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    r
}

/// What a child that sent hostile hellos to `listener` must show: it passed, it counted some
/// refused and some cut-short hellos, each was logged as a WARN, and nothing panicked.
fn every_hostile_hello_was_logged(ok: bool, stdout: &str, stderr: &str, listener: &str) {
    assert!(ok, "child failed:\n{stdout}\n{stderr}");
    let (refused, cut) = (expected(stdout, "refused"), expected(stdout, "cut_short"));
    assert!(refused > 0 && cut > 0, "{stdout}");
    // Each logged one by one, or (beyond tcpxr's limit of such lines) counted in a summary.
    let got_refused = warns(stderr, &[&format!("{listener}: refused connection from")]) + summarised(stderr, "refused");
    let got_cut =
        warns(stderr, &[&format!("{listener}: dropped"), "of 16 bytes"]) + summarised(stderr, "with a cut-short hello");
    assert!(
        got_refused >= refused,
        "{got_refused} refusals logged, {refused} expected:\n{stderr}"
    );
    assert!(
        got_cut >= cut,
        "{got_cut} cut-short hellos logged, {cut} expected:\n{stderr}"
    );
    assert!(
        !stderr.contains("internal error") && !stderr.contains("panicked"),
        "{stderr}"
    );
    summary(stderr);
}

// --- hostile hellos at the control listener --------------------------------------------------

#[test]
fn hostile_hellos_to_the_listen_port_are_dropped_with_a_warn_and_the_real_peer_connects() {
    let test = "hostile_hellos_to_the_listen_port_are_dropped_with_a_warn_and_the_real_peer_connects";
    if let Some((ok, stdout, stderr)) = in_child(test, &[]) {
        every_hostile_hello_was_logged(ok, &stdout, &stderr, "tcpxr listener");
        return;
    }
    let net = v12();
    assert_eq!(net.init(), OK);
    let mut rng = Rng::new(fuzzing::seed());
    let (mut refused, mut cut, mut strays) = (0, 0, 0);
    let total = rounds(5, 100);
    for round in 0..total {
        let mut handle = [0u8; 128];
        let mut l = null();
        assert_eq!(net.listen(0, &mut handle, &mut l), OK);
        let h = ListenHandle::read(&handle).unwrap();
        let valid = wire::hello(h.nonce);
        let mut open = Vec::new();
        // Phase 1 (first rounds: it waits out the handshake deadline): strays alone; each is dealt
        // with while accept is called (refused at once, or dropped at the deadline), and none
        // becomes the comm.
        if round < 2 {
            for k in 0..10 {
                let kind = STRAYS[(round as usize + k) % STRAYS.len()];
                open.extend(stray(&mut rng, h.ctrl, &valid, kind));
                let (r, c) = earns(kind);
                (refused, cut) = (refused + r, cut + c);
            }
            let r = accept_for(&net, l, Duration::from_millis(HANDSHAKE_MS * 2 + 200), |_| false);
            assert!(r.is_null(), "a stray became the receive comm");
        }
        // Phase 2: more strays, and the real peer among them: it connects at once.
        for _ in 0..10 {
            let kind = STRAYS[rng.below(STRAYS.len())];
            open.extend(stray(&mut rng, h.ctrl, &valid, kind));
        }
        strays += if round < 2 { 20 } else { 10 };
        let (mut s, mut r) = (null(), null());
        let start = Instant::now();
        while s.is_null() || r.is_null() {
            if s.is_null() {
                assert_eq!(net.connect(0, &mut handle, &mut s), OK);
            }
            if r.is_null() {
                assert_eq!(net.accept(l, &mut r), OK);
            }
            assert!(
                start.elapsed() < Duration::from_secs(3),
                "round {round}: the real peer was delayed"
            );
        }
        let pair = Pair {
            net: &net,
            send: s,
            recv: r,
        };
        let mut data = pattern(100_000, round);
        assert!(pair.transfer(&mut data, 100_000) == data);
        drop(pair);
        assert_eq!(net.close_listen(l), OK);
        drop(open);
    }
    eprintln!("hostile hellos: {strays} strays at {total} listen ports, the real peer connected every time");
    println!("EXPECT refused={refused}");
    println!("EXPECT cut_short={cut}");
}

// --- this test as the connecting peer, from raw sockets -------------------------------------

/// The connecting side of tcpxr's handshake from raw sockets (the format of engine::wire and the
/// socket transport): the control connection and one socket per stripe, each past its hello.
struct RawPeer {
    ctrl: TcpStream,
    stripes: Vec<TcpStream>,
}

/// Connects to listen comm `l` (whose handle is `handle`) from raw sockets, calling accept as
/// NCCL would; before each stripe's real hello, `before_stripe` may throw strays at that stripe's
/// listener (accept is called for a while after). Returns the raw peer and the receive comm.
fn raw_connect(
    net: &V12,
    l: *mut c_void,
    handle: &[u8; 128],
    mut before_stripe: impl FnMut(SocketAddr, u64),
) -> (RawPeer, *mut c_void) {
    let h = ListenHandle::read(handle).unwrap();
    let mut ctrl = TcpStream::connect(h.ctrl).unwrap();
    ctrl.write_all(&wire::hello(h.nonce)).unwrap();
    ctrl.set_nonblocking(true).unwrap();
    let mut welcome = vec![0u8; WELCOME_HEAD_BYTES + h.inner_handle_bytes()];
    let mut got = 0;
    let start = Instant::now();
    while got < welcome.len() {
        let mut r = null();
        assert_eq!(net.accept(l, &mut r), OK);
        assert!(r.is_null(), "a receive comm before any stripe connected");
        match ctrl.read(&mut welcome[got..]) {
            Ok(0) => panic!("the listener closed the control connection"),
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(1)),
            Err(e) => panic!("reading the welcome: {e}"),
        }
        assert!(start.elapsed() < DEADLINE, "no welcome");
    }
    let head: [u8; WELCOME_HEAD_BYTES] = welcome[..WELCOME_HEAD_BYTES].try_into().unwrap();
    assert_eq!(wire::read_welcome_head(&head, &h).unwrap(), (h.stripes, h.chunk_bytes));
    let mut stripes = Vec::new();
    for inner in welcome[WELCOME_HEAD_BYTES..].chunks_exact(INNER_HANDLE_BYTES) {
        let (token, at) = socket::decode_stripe_handle(inner.try_into().unwrap()).unwrap();
        before_stripe(at, token);
        let mut s = TcpStream::connect(at).unwrap();
        s.write_all(&socket::stripe_hello(token)).unwrap();
        stripes.push(s);
    }
    let r = accept_for(net, l, DEADLINE, |r| !r.is_null());
    assert!(!r.is_null(), "the listener never produced the receive comm");
    (RawPeer { ctrl, stripes }, r)
}

/// Polls a receive until it is done or fails; None when it did neither within `limit`.
fn outcome(net: &V12, req: *mut c_void, limit: Duration) -> Option<Result<i32, ncclResult_t>> {
    let start = Instant::now();
    let (mut done, mut size) = (0, 0);
    while start.elapsed() < limit {
        let r = net.test(req, &mut done, &mut size);
        if r != OK {
            return Some(Err(r));
        }
        if done != 0 {
            return Some(Ok(size));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    None
}

/// A valid control stream for one message: header (sequence 0) and, inline, its payload; now and
/// then larger than the receive posted for it (`capacity`).
fn valid_message(rng: &mut Rng, capacity: usize) -> Vec<u8> {
    let inline = rng.chance(70);
    let size = if inline {
        rng.below(2048)
    } else {
        1 + rng.below(capacity * 3 / 2)
    };
    // Striped messages are sometimes cut finer than the comm's chunks, as an idle one is.
    let chunk = if !inline && rng.chance(30) {
        4096 * (1 + rng.below(32)) as u32
    } else {
        0
    };
    let mut b = MsgHeader {
        size: size as u64,
        seq: 0,
        inline,
        chunk,
    }
    .encode()
    .to_vec();
    if inline {
        b.extend(rng.bytes(size));
    }
    b
}

#[test]
fn hostile_stripe_hellos_are_dropped_and_hostile_control_bytes_end_the_comm_cleanly() {
    let test = "hostile_stripe_hellos_are_dropped_and_hostile_control_bytes_end_the_comm_cleanly";
    if let Some((ok, stdout, stderr)) = in_child(test, &[("NCCL_TCPXR_STRIPES", "2")]) {
        every_hostile_hello_was_logged(ok, &stdout, &stderr, "tcpxr stripe listener");
        return;
    }
    let net = v12();
    assert_eq!(net.init(), OK);
    let mut rng = Rng::new(fuzzing::seed());
    let (mut refused, mut cut) = (0usize, 0usize);
    let (mut while_open, mut at_close, mut completed) = (0, 0, 0);
    let capacity = 64 << 10;
    let mut buf = vec![0u8; capacity];
    for round in 0..rounds(10, 400) {
        let mut handle = [0u8; 128];
        let mut l = null();
        assert_eq!(net.listen(0, &mut handle, &mut l), OK);
        // Strays at every stripe listener in the first rounds (they cost a handshake deadline).
        let strays_now = round < 3;
        let (peer, r) = raw_connect(&net, l, &handle, |at, token| {
            if !strays_now {
                return;
            }
            let valid = socket::stripe_hello(token);
            let mut open = Vec::new();
            for kind in STRAYS {
                open.extend(stray(&mut rng, at, &valid, kind));
                let (a, b) = earns(kind);
                (refused, cut) = (refused + a, cut + b);
            }
            // Accept is not called here: the stripe listeners see these strays on the next
            // accept calls, before this stripe's real hello, and deal with them then.
            std::thread::sleep(Duration::from_millis(HANDSHAKE_MS + 100));
            drop(open);
        });
        assert_eq!(net.close_listen(l), OK);
        // Hostile bytes where the message header belongs: a variant of a valid message stream.
        let valid = valid_message(&mut rng, capacity);
        let other = valid_message(&mut rng, capacity);
        let bytes = hostile(&mut rng, &valid, &other, None);
        // Less than a header, or a plausible one: the receive may wait for more from the peer.
        let may_wait = bytes.len() < MSG_HEADER_BYTES
            || MsgHeader::decode(&bytes[..MSG_HEADER_BYTES].try_into().unwrap()).is_ok_and(|h| h.seq == 0);
        let RawPeer { mut ctrl, stripes } = peer;
        ctrl.set_nonblocking(false).unwrap();
        let _ = ctrl.write_all(&bytes);
        let mut req = null();
        // irecv reads the control connection too, so it may be the call that fails.
        let posted = net.irecv(r, buf.as_mut_ptr() as *mut c_void, capacity, null(), &mut req);
        assert!(posted != OK || !req.is_null());
        // A header that cannot be one fails the receive while the peer is still connected.
        let first = match posted {
            OK => outcome(&net, req, Duration::from_millis(if may_wait { 300 } else { 5000 })),
            code => Some(Err(code)),
        };
        let end = match first {
            Some(end) => {
                while_open += 1;
                end
            }
            None => {
                assert!(
                    may_wait,
                    "round {round}: a corrupt header did not fail the receive: {bytes:02x?}"
                );
                // A plausible header waiting for more: the peer goes, and the receive must end.
                drop(ctrl);
                drop(stripes);
                at_close += 1;
                outcome(&net, req, Duration::from_secs(5))
                    .unwrap_or_else(|| panic!("round {round}: the receive outlived its peer: {bytes:02x?}"))
            }
        };
        match end {
            Ok(size) => {
                assert!(may_wait && size as usize <= capacity, "round {round}: {size} bytes");
                completed += 1;
            }
            Err(code) => assert!(
                matches!(
                    code,
                    ncclResult_t::ncclRemoteError | ncclResult_t::ncclInternalError | ncclResult_t::ncclInvalidUsage
                ),
                "round {round}: {code:?}"
            ),
        }
        // Closing a comm that failed is clean too.
        assert_eq!(net.close_recv(r), OK);
    }
    eprintln!("hostile control bytes: {while_open} receives ended while connected, {at_close} at close, {completed} completed");
    println!("EXPECT refused={refused}");
    println!("EXPECT cut_short={cut}");
}

/// A header that cuts its message into chunks larger than the comm's (whose landing memory is sized
/// by them) fails the receive with ncclRemoteError naming both sizes; nothing is written.
#[test]
fn a_header_with_chunks_larger_than_the_comms_fails_the_receive() {
    let net = v12();
    assert_eq!(net.init(), OK);
    let mut handle = [0u8; 128];
    let mut l = null();
    assert_eq!(net.listen(0, &mut handle, &mut l), OK);
    let (RawPeer { mut ctrl, stripes }, r) = raw_connect(&net, l, &handle, |_, _| {});
    assert_eq!(net.close_listen(l), OK);
    let comm_chunk = ListenHandle::read(&handle).unwrap().chunk_bytes;
    let header = MsgHeader {
        size: 4096,
        seq: 0,
        inline: false,
        chunk: comm_chunk + 4096,
    };
    ctrl.set_nonblocking(false).unwrap();
    ctrl.write_all(&header.encode()).unwrap();
    let mut buf = vec![0x5au8; 8192];
    let mut req = null();
    let posted = net.irecv(r, buf.as_mut_ptr() as *mut c_void, buf.len(), null(), &mut req);
    let end = match posted {
        OK => outcome(&net, req, DEADLINE).expect("the receive neither failed nor completed"),
        code => Err(code),
    };
    assert_eq!(end, Err(ncclResult_t::ncclRemoteError));
    expect_log(&format!(
        "peer cut message 0 into {}-byte chunks; this connection's are at most {comm_chunk}",
        comm_chunk + 4096
    ));
    assert!(buf.iter().all(|&b| b == 0x5a), "nothing is written");
    assert_eq!(net.close_recv(r), OK);
    drop((ctrl, stripes));
}

// --- a hostile listener -------------------------------------------------------------------------

/// What the hostile listener answers a hello with.
fn hostile_welcome(rng: &mut Rng, h: &ListenHandle, closed_port: u16) -> Vec<u8> {
    let stripe_at = |port| SocketAddr::new(h.ctrl.ip(), port);
    let inner: Vec<[u8; INNER_HANDLE_BYTES]> = (0..h.stripes)
        .map(|_| socket::encode_stripe_handle(rng.next(), &stripe_at(closed_port)))
        .collect();
    let valid = wire::welcome(h.stripes, h.chunk_bytes, &inner);
    let other = wire::welcome(1 + h.stripes % 4, 4096, &inner[..1]);
    match rng.below(4) {
        // Oversized: a valid head, then far more than the inner handles.
        0 => {
            let mut b = valid[..WELCOME_HEAD_BYTES].to_vec();
            b.extend(rng.bytes(1 << 20));
            b
        }
        _ => hostile(rng, &valid, &other, None),
    }
}

#[test]
fn a_hostile_listener_fails_connect_cleanly() {
    let test = "a_hostile_listener_fails_connect_cleanly";
    if let Some((ok, stdout, stderr)) = in_child(test, &[]) {
        assert!(ok, "child failed:\n{stdout}\n{stderr}");
        assert!(
            !stderr.contains("internal error") && !stderr.contains("panicked"),
            "{stderr}"
        );
        summary(&stderr);
        return;
    }
    let net = v12();
    assert_eq!(net.init(), OK);
    let mut rng = Rng::new(fuzzing::seed() ^ 0x11);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    // A port nothing listens on, for stripe handles that lead nowhere.
    let closed_port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (mut failed, mut connected) = (0, 0);
    for round in 0..rounds(10, 400) {
        let h = ListenHandle {
            ctrl: listener.local_addr().unwrap(),
            stripes: 1 + rng.below(4) as u16,
            chunk_bytes: 512 << 10,
            inline_bytes: 16 << 10,
            nonce: rng.next(),
        };
        let mut handle = [0u8; 128];
        h.write(&mut handle);
        let answer = hostile_welcome(&mut rng, &h, closed_port);
        let close_after = rng.chance(50);
        let (mut s, mut conn, mut hello, mut written) = (null(), None::<TcpStream>, Vec::new(), 0usize);
        let start = Instant::now();
        let code = loop {
            let code = net.connect(0, &mut handle, &mut s);
            if code != OK || !s.is_null() {
                break code;
            }
            if conn.is_none() {
                if let Ok((c, _)) = listener.accept() {
                    c.set_nonblocking(true).unwrap();
                    conn = Some(c);
                }
            }
            if let Some(c) = conn.as_mut() {
                let mut b = [0u8; HELLO_BYTES];
                if hello.len() < HELLO_BYTES {
                    if let Ok(n) = c.read(&mut b[..HELLO_BYTES - hello.len()]) {
                        hello.extend_from_slice(&b[..n]);
                    }
                } else if written < answer.len() {
                    match c.write(&answer[written..]) {
                        Ok(n) => written += n,
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                        Err(_) => written = answer.len(),
                    }
                } else if close_after {
                    conn = None;
                }
            }
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "round {round}: connect neither failed nor completed against {answer:02x?}"
            );
            std::thread::sleep(Duration::from_micros(200));
        };
        if hello.len() == HELLO_BYTES {
            assert_eq!(hello, wire::hello(h.nonce), "the connector's hello");
        }
        if code == OK {
            // Only a welcome that is one, with stripe handles that lead to a listening port (a
            // mutation may name one), can complete.
            let head: [u8; WELCOME_HEAD_BYTES] = answer[..WELCOME_HEAD_BYTES].try_into().unwrap();
            assert!(
                wire::read_welcome_head(&head, &h).is_ok(),
                "round {round}: {answer:02x?}"
            );
            for inner in answer[WELCOME_HEAD_BYTES..][..h.inner_handle_bytes()].chunks_exact(INNER_HANDLE_BYTES) {
                assert!(socket::decode_stripe_handle(inner.try_into().unwrap()).is_ok());
            }
            connected += 1;
            assert_eq!(net.close_send(s), OK);
        } else {
            assert!(s.is_null());
            assert!(
                matches!(code, ncclResult_t::ncclRemoteError | ncclResult_t::ncclInternalError),
                "round {round}: {code:?}"
            );
            failed += 1;
        }
    }
    eprintln!("hostile listener: {failed} connects failed cleanly, {connected} completed");
}
