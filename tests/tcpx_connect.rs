//! Connecting over TCPX (the emulator), whose connect completes only once the peer's accept has
//! answered it: a peer that accepts late is waited for, beyond the handshake timeout; a peer that
//! dies after its welcome is ncclRemoteError at once, though TCPX goes on retrying its refused
//! connection for 20 s; and a connect abandoned while TCPX's was under way does not leak the
//! connection TCPX makes for it (engine/setup.rs, transport/tcpx).
//!
//! Its own test binary: a 300 ms handshake timeout (NCCL_TCPXR_HANDSHAKE_TIMEOUT_MS), after which
//! connects NCCL stopped polling are swept; and a case that runs in a child process of it. The
//! tests run one at a time (they count this process's sockets).
mod common;
use common::*;
use nccl_net_tcpxr::abi::ncclResult_t;
use nccl_net_tcpxr::engine::wire::{self, ListenHandle};
use nccl_net_tcpxr::transport::{InnerHandle, INNER_HANDLE_BYTES};
use std::io::{BufReader, Read, Write};
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const HANDSHAKE: Duration = Duration::from_millis(300);
const CASE: &str = "TCPXR_TCPX_CONNECT_CASE";

before_main! {
    // The child inherits this process's settings.
    run_child_case(CASE, |case| match case {
        "welcome-then-wait" => welcome_then_wait(),
        other => panic!("unknown case {other}"),
    });
    select_tcpx(&[("NCCL_TCPXR_HANDSHAKE_TIMEOUT_MS", "300")]);
}

/// The child: a peer whose TCPX listener is gone (connections to it are refused, as to a dead
/// peer's) and whose control listener welcomes the connector with that listener's handles, then
/// keeps the control connection open until it is killed.
fn welcome_then_wait() {
    let net = v12();
    // The handles of a TCPX listener, from a listen comm's welcome; that listen closed.
    let (l, h, ctrl, inner) = welcomed_raw_peer(&net);
    drop(ctrl);
    assert_eq!(net.close_listen(l), OK);
    let inner: Vec<InnerHandle> = inner
        .chunks_exact(INNER_HANDLE_BYTES)
        .map(|c| c.try_into().unwrap())
        .collect();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut handle = [0u8; 128];
    ListenHandle {
        ctrl: listener.local_addr().unwrap(),
        ..h.clone()
    }
    .write(&mut handle);
    println!("HANDLE {}", hex(&handle));
    let _ = std::io::stdout().flush();
    let (mut c, _) = listener.accept().unwrap();
    let mut hello = [0u8; wire::HELLO_BYTES];
    c.read_exact(&mut hello).unwrap();
    c.write_all(&wire::welcome(h.stripes, h.chunk_bytes, &inner)).unwrap();
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn a_connect_waits_for_a_peer_whose_accept_comes_long_after_the_handshake_timeout() {
    let _one = one_at_a_time();
    let net = v12();
    assert_eq!(net.init(), OK);
    let mut handle = [0u8; 128];
    let mut l = null();
    assert_eq!(net.listen(0, &mut handle, &mut l), OK);
    let mut s = null();
    let start = Instant::now();
    while start.elapsed() < 4 * HANDSHAKE {
        assert_eq!(net.connect(0, &mut handle, &mut s), OK, "after {:?}", start.elapsed());
        assert!(s.is_null(), "TCPX's connect completed before the peer's accept");
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut r = null();
    while s.is_null() || r.is_null() {
        if s.is_null() {
            assert_eq!(net.connect(0, &mut handle, &mut s), OK);
        }
        if r.is_null() {
            assert_eq!(net.accept(l, &mut r), OK);
        }
        assert!(start.elapsed() < DEADLINE, "connect/accept did not complete");
    }
    assert_eq!(net.close_listen(l), OK);
    let pair = Pair {
        net: &net,
        send: s,
        recv: r,
    };
    let mut data = pattern(3 << 20, 31);
    assert!(pair.transfer(&mut data, 3 << 20) == data);
}

#[test]
fn a_peer_killed_after_its_welcome_fails_the_connect_with_remote_error_at_once() {
    let _one = one_at_a_time();
    let net = v12();
    assert_eq!(net.init(), OK);
    let mut child = child_case(CASE, "welcome-then-wait")
        .env(nccl_net_tcpxr::testlog::FILE_VAR, "")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut handle = unhex(&read_line(&mut child, &mut out, "HANDLE "));
    // The welcome comes at once; TCPX's connect to the peer's listener is refused and retried.
    // While the peer lives, that is a connect still under way, however long it takes.
    let mut s = null();
    let start = Instant::now();
    while start.elapsed() < 2 * HANDSHAKE {
        assert_eq!(net.connect(0, &mut handle, &mut s), OK, "after {:?}", start.elapsed());
        assert!(s.is_null());
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let killed = Instant::now();
    let result = loop {
        let r = net.connect(0, &mut handle, &mut s);
        if r != OK || !s.is_null() || killed.elapsed() > Duration::from_secs(5) {
            break r;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let took = killed.elapsed();
    assert!(s.is_null());
    assert_eq!(result, ncclResult_t::ncclRemoteError, "after {took:?}");
    assert!(took < Duration::from_secs(1), "took {took:?}");
    expect_log("peer gone after its welcome");
}

#[test]
fn the_tcpx_comm_of_a_connect_abandoned_while_tcpx_connected_is_closed_once_tcpx_returns_it() {
    let _one = one_at_a_time();
    let net = v12();
    assert_eq!(net.init(), OK);
    let before = socket_fds().len();
    let mut handle = [0u8; 128];
    let mut l = null();
    assert_eq!(net.listen(0, &mut handle, &mut l), OK);
    // Connect until the welcome is in and the stripe's TCPX connect is under way (it waits for the
    // peer's accept), then abandon the connect, as NCCL's abort does.
    let mut s = null();
    for _ in 0..10 {
        assert_eq!(net.connect(0, &mut handle, &mut s), OK);
        assert!(s.is_null());
        std::thread::sleep(Duration::from_millis(20));
    }
    // Once it is older than the handshake timeout, any close sweeps it away.
    std::thread::sleep(HANDSHAKE + Duration::from_millis(100));
    let (mut other_handle, mut other) = ([0u8; 128], null());
    assert_eq!(net.listen(0, &mut other_handle, &mut other), OK);
    assert_eq!(net.close_listen(other), OK);
    // The peer accepts now, which answers the TCPX connect still under way (and proves it was).
    let mut r = null();
    let start = Instant::now();
    while r.is_null() {
        assert_eq!(net.accept(l, &mut r), OK);
        assert!(
            start.elapsed() < DEADLINE,
            "the abandoned connect's stripe never reached the peer"
        );
    }
    // These closes sweep again: TCPX's connect returns its comm, which is closed.
    assert_eq!(net.close_recv(r), OK);
    assert_eq!(net.close_listen(l), OK);
    let start = Instant::now();
    while socket_fds().len() > before && start.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(
        socket_fds().len(),
        before,
        "a socket of the abandoned connect is still open"
    );
}
