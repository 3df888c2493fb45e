//! Over TCPX (the emulator), a peer that dies while chunks are in flight is ncclRemoteError within
//! seconds although TCPX's test never reports its helper threads' failures, and a peer that is
//! alive, late, or closed normally is never taken for a dead one (engine/liveness.rs).
//!
//! Its own test binary: one 4 MiB chunk per message on one stripe (so a message is one TCPX
//! receive, and no later one exists whose control message TCPX would fail on), sends the
//! emulator reports done 600 ms after their last byte went (TCPX reports a send of GPU memory once
//! the kernel's zero-copy completion arrived, which may be after its receiver closed), and the
//! emulator's connections held to 256 KiB socket buffers each way, so that a 4 MiB message never
//! fits in the kernel's buffers before its receive is posted (autotuned loopback buffers can hold
//! it all: the first test once saw its receive complete while the sender was stopped).
mod common;
use common::*;
use nccl_net_tcpxr::abi::ncclResult_t;
use nccl_net_tcpxr::engine::liveness::{CLOSED_GRACE, LOOK_AFTER};
use std::ffi::c_void;
use std::process::Stdio;
use std::time::{Duration, Instant};

const TX_COMPLETION: Duration = Duration::from_millis(600);

before_main! {
    select_tcpx(&[
        ("NCCL_TCPXR_STRIPES", "1"),
        ("NCCL_TCPXR_CHUNK_BYTES", "4M"),
        ("TCPX_EMU_TX_COMPLETION_MS", "600"),
        ("TCPX_EMU_SOCKET_BUFFER", "262144"),
    ]);
}

/// The look's interval plus the grace after an orderly close, and a second of slack: still below
/// the peer timeout (5 s), so that is not what ends it.
fn peer_gone_detected() -> Duration {
    LOOK_AFTER + CLOSED_GRACE + Duration::from_secs(1)
}

#[test]
fn a_sender_killed_in_the_middle_of_the_only_receive_fails_it_with_remote_error_within_seconds() {
    let net = v12();
    assert_eq!(net.init(), OK);
    let mut cmd = bench_command();
    // The peer's own log goes to its stderr (this file's claims are for this process).
    cmd.env(nccl_net_tcpxr::testlog::FILE_VAR, "")
        .args(["peer", "--role", "send", "--size", "4M"])
        .stderr(Stdio::null());
    let (mut child, _out, l, r) = send_peer_from(&net, cmd);
    // Nothing is received yet: the sender's first message, one 4 MiB chunk, fills the
    // connection's buffers and waits. Freeze the sender there, then receive: what the buffers
    // hold lands, the rest never comes.
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGSTOP) }, 0);
    let mut buf = vec![0u8; 4 << 20];
    let mut req = null();
    assert_eq!(
        net.irecv(r, buf.as_mut_ptr() as *mut c_void, buf.len(), null(), &mut req),
        OK
    );
    let (result, _) = wait_result(&net, req, Duration::from_millis(300));
    let (mut done, mut got) = (0, 0);
    assert_eq!(
        (result, net.test(req, &mut done, &mut got), done),
        (OK, OK, 0),
        "the whole message had been buffered: nothing is left to wait for"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    // The receive is the stripe's only TCPX request: its helper thread's connection closes under
    // it, which TCPX's test never reports. Nothing more is posted.
    let (result, took) = wait_result(&net, req, Duration::from_secs(10));
    assert_eq!(result, ncclResult_t::ncclRemoteError, "after {took:?}");
    assert!(took < peer_gone_detected(), "took {took:?}");
    expect_log("peer gone: the sender at");
    // The emulator's WARN of the helper thread that met the closed connection.
    nccl_net_tcpxr::testlog::allow("connection closed by remote peer");
    assert_eq!(net.close_recv(r), OK);
    assert_eq!(net.close_listen(l), OK);
}

/// A receiver that received everything and closed its comm, while the sender's TCPX reports its
/// last send done only later (the zero-copy completion): the send completes; the receiver's
/// close is no sign of its death.
#[test]
fn a_send_reported_done_after_its_receiver_closed_normally_completes() {
    let net = v12();
    let pair = Pair::new(&net);
    let mut data = pattern(1 << 20, 21);
    let mut got = vec![0u8; 1 << 20];
    let (rq, sq) = pair.post(&mut got, &mut data);
    let sent = Instant::now();
    let (r, _) = wait_result(&net, rq, DEADLINE);
    assert_eq!(r, OK);
    assert!(got == data);
    assert_eq!(net.close_recv(pair.recv), OK);
    let (r, _) = wait_result(&net, sq, DEADLINE);
    let took = sent.elapsed();
    assert_eq!(r, OK, "after {took:?}");
    assert!(
        took >= TX_COMPLETION - Duration::from_millis(100),
        "the emulator's late completion is not in effect ({took:?}): the sender never saw the receiver's close"
    );
    assert_eq!(net.close_send(pair.send), OK);
    std::mem::forget(pair);
}

/// A receiver that is alive but posts its receive late (NCCL's other ranks are slow): the sender
/// waits, however long, and the bytes move once it posts.
#[test]
fn a_send_whose_receiver_posts_late_waits_for_it_without_failing() {
    let net = v12();
    let pair = Pair::new(&net);
    let mut data = pattern(8 << 20, 22);
    let mut sq = null();
    assert_eq!(
        net.isend(pair.send, data.as_mut_ptr() as *mut c_void, data.len(), null(), &mut sq),
        OK
    );
    let (r, waited) = wait_result(&net, sq, LOOK_AFTER + CLOSED_GRACE + Duration::from_millis(500));
    assert_eq!(r, OK);
    let (mut done, mut size) = (0, 0);
    assert_eq!((net.test(sq, &mut done, &mut size), done), (OK, 0), "after {waited:?}");
    let mut got = vec![0u8; 8 << 20];
    let mut rq = null();
    assert_eq!(
        net.irecv(pair.recv, got.as_mut_ptr() as *mut c_void, got.len(), null(), &mut rq),
        OK
    );
    let (rs, ss) = wait_both(&net, rq, sq);
    assert_eq!((rs as usize, ss as usize), (8 << 20, 8 << 20));
    assert!(got == data);
}
