//! With the stripes' window on (NCCL_TCPXR_UNREAD_BYTES), a frozen peer (SIGSTOP, a debugger) is
//! waited for, as NCCL's Socket transport waits, however long past NCCL_TCPXR_PEER_TIMEOUT_MS; the
//! same peer killed is ncclRemoteError within seconds. The receiver's window
//! (transport/socket/grant.rs) keeps what the stopped peer has not read in the sender's memory, so
//! its TCP window never closes and TCP_USER_TIMEOUT, which Linux applies to a zero window too, has
//! nothing to time (tests/frozen_peer.rs: without the window it does). Its own test binary: the
//! settings are read once per process, and the peer process inherits them.
mod common;
use common::*;
use nccl_net_tcpxr::abi::ncclResult_t;
use std::ffi::c_void;
use std::time::{Duration, Instant};

const PEER_TIMEOUT_MS: u64 = 1000;

before_main! {
    // Sound: before main, so before this process has a second thread.
    std::env::set_var("NCCL_TCPXR_PEER_TIMEOUT_MS", PEER_TIMEOUT_MS.to_string());
    std::env::set_var("NCCL_TCPXR_UNREAD_BYTES", "256K");
}

#[test]
fn with_a_window_a_receiver_frozen_past_the_peer_timeout_is_waited_for_and_a_killed_one_is_an_error() {
    let net = v12();
    assert_eq!(net.init(), OK);
    let (mut peer, _out, s) = recv_peer(&net, "4M");
    let mut buf = pattern(4 << 20, 9);
    let isend = |buf: &mut Vec<u8>| {
        let mut req = null();
        assert_eq!(
            net.isend(s, buf.as_mut_ptr() as *mut c_void, buf.len(), null(), &mut req),
            OK
        );
        assert!(!req.is_null());
        req
    };
    for _ in 0..2 {
        let req = isend(&mut buf);
        assert_eq!(wait_result(&net, req, DEADLINE).0, OK);
    }
    let pid = peer.id() as i32;
    // SAFETY: a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    // Three peer timeouts: the send waits, neither done nor failed.
    let req = isend(&mut buf);
    let frozen = Duration::from_millis(3 * PEER_TIMEOUT_MS);
    let (result, _) = wait_result(&net, req, frozen);
    assert_eq!(result, OK, "a frozen peer is not a dead one");
    let (mut done, mut size) = (0, 0);
    assert_eq!(net.test(req, &mut done, &mut size), OK);
    assert_eq!(done, 0, "4 MiB cannot have reached a stopped receiver");
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    assert_eq!(wait_result(&net, req, DEADLINE).0, OK);
    // Stopped again, then killed with a send waiting on it.
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let req = isend(&mut buf);
    std::thread::sleep(Duration::from_millis(200));
    let killed = Instant::now();
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let _ = peer.wait();
    let (result, _) = wait_result(&net, req, Duration::from_secs(20));
    let took = killed.elapsed();
    assert_eq!(result, ncclResult_t::ncclRemoteError, "after {took:?}");
    assert!(took < Duration::from_secs(5), "declared dead after {took:?}");
    let line = expect_peer_gone_log();
    eprintln!("killed peer declared dead after {took:?}: {line}");
    assert_eq!(net.close_send(s), OK);
}
