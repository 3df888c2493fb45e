//! A frozen peer (SIGSTOP, a debugger) is declared dead after about NCCL_TCPXR_PEER_TIMEOUT_MS,
//! as its documentation says, with the stripes' window off (NCCL_TCPXR_UNREAD_BYTES=0, the
//! default; tests/frozen_peer_window.rs: with it on, the peer is waited for): Linux applies TCP_USER_TIMEOUT to a zero window too, so once the
//! stopped peer's buffers are full, the unanswered window probes end the connection. (A peer
//! stopped for less than that resumes: tests/stall.rs.) Its own test binary: the budget is read
//! once per process, and the peer process inherits it.
mod common;
use common::*;
use nccl_net_tcpxr::abi::ncclResult_t;
use std::ffi::c_void;
use std::time::{Duration, Instant};

const PEER_TIMEOUT_MS: u64 = 1000;

before_main! {
    // Sound: before main, so before this process has a second thread.
    std::env::set_var("NCCL_TCPXR_PEER_TIMEOUT_MS", PEER_TIMEOUT_MS.to_string());
}

#[test]
fn a_receiver_frozen_longer_than_the_peer_timeout_is_declared_dead() {
    let net = v12();
    assert_eq!(net.init(), OK);
    let (mut peer, _out, s) = recv_peer(&net, "4M");
    let mut buf = pattern(4 << 20, 9);
    let mut req = null();
    for _ in 0..2 {
        assert_eq!(
            net.isend(s, buf.as_mut_ptr() as *mut c_void, buf.len(), null(), &mut req),
            OK
        );
        assert_eq!(wait_result(&net, req, DEADLINE).0, OK);
    }
    let pid = peer.id() as i32;
    // SAFETY: a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let frozen = Instant::now();
    // Keep data coming at it until the connection gives up.
    let mut result = OK;
    while result == OK && frozen.elapsed() < Duration::from_secs(20) {
        result = net.isend(s, buf.as_mut_ptr() as *mut c_void, buf.len(), null(), &mut req);
        if result == OK && !req.is_null() {
            result = wait_result(&net, req, Duration::from_secs(20)).0;
        }
    }
    let took = frozen.elapsed();
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let _ = peer.wait();
    assert_eq!(result, ncclResult_t::ncclRemoteError, "after {took:?}");
    // The budget runs from the first unanswered probe, once the peer's buffers are full.
    assert!(
        took >= Duration::from_millis(PEER_TIMEOUT_MS) && took < Duration::from_secs(10),
        "declared dead after {took:?} with NCCL_TCPXR_PEER_TIMEOUT_MS={PEER_TIMEOUT_MS}"
    );
    let line = expect_log("timed out");
    eprintln!("frozen peer declared dead after {took:?}: {line}");
    assert_eq!(net.close_send(s), OK);
}
