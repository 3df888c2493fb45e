//! The stall report (NCCL_TCPXR_STALL_SECONDS): a comm with requests outstanding that makes no
//! progress says so, with what it waits for, then says when it moves again. Each case runs in a
//! child process of this binary with NCCL_TCPXR_STALL_SECONDS=1 (played by its constructor, before
//! the test harness, see common::run_child_case), whose log (stderr) the parent reads: a receiver
//! that holds its receive back, and a peer process stopped with SIGSTOP.
mod common;

use common::*;
use std::ffi::c_void;
use std::time::{Duration, Instant};

const CHILD: &str = "TCPXR_STALL_CHILD";

// Before main: in a child, play its case and exit.
before_main! {
    run_child_case(CHILD, |name| match name {
        "held_back" => held_back(),
        "peer_stopped" => peer_stopped(),
        other => panic!("no case {other}"),
    });
}

/// Runs case `name` in a child process; returns its stderr (tcpxr's log).
fn child(name: &str) -> String {
    let out = child_case(CHILD, name)
        .env("NCCL_TCPXR_STALL_SECONDS", "1")
        .env("TCPXR_LOG", "warn")
        // Its log on its stderr, which this reads.
        .env(nccl_net_tcpxr::testlog::FILE_VAR, "")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{name} failed:\n{}{err}",
        String::from_utf8_lossy(&out.stdout)
    );
    err
}

fn lines<'a>(log: &'a str, what: &str) -> Vec<&'a str> {
    log.lines().filter(|l| l.contains(what)).collect()
}

#[test]
fn a_sender_whose_receiver_holds_back_reports_the_stall_and_its_end() {
    let log = child("held_back");
    let stalled = lines(&log, "send comm with ");
    let first = stalled
        .iter()
        .find(|l| l.contains("no progress for"))
        .unwrap_or_else(|| panic!("no stall report:\n{log}"));
    for part in [
        "1 sends outstanding",
        "posted ",
        "control connection",
        "s0: ",
        "bytes done",
    ] {
        assert!(first.contains(part), "{part:?} missing from: {first}");
    }
    assert!(
        stalled.iter().any(|l| l.contains("(still)")),
        "reported again while it lasts:\n{log}"
    );
    assert!(
        stalled.iter().any(|l| l.contains("moving again after")),
        "no line when it moved again:\n{log}"
    );
    assert!(
        lines(&log, "receive comm with").is_empty(),
        "the receiver had nothing outstanding:\n{log}"
    );
}

/// Case: the receiver posts its receive 2.6 s late.
fn held_back() {
    let net = v12();
    let pair = Pair::new(&net);
    let n = 64 << 20;
    let mut data = pattern(n, 5);
    let mut sq = null();
    assert_eq!(
        net.isend(pair.send, data.as_mut_ptr() as *mut c_void, n, null(), &mut sq),
        OK
    );
    // The receiver posts nothing for 2.6 s: the sender fills the sockets and stops moving.
    let (mut done, mut size) = (0, 0);
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(2600) {
        assert_eq!(net.test(sq, &mut done, &mut size), OK);
        assert_eq!(done, 0, "64 MiB cannot all fit in socket buffers");
    }
    let mut out = vec![0u8; n];
    let mut rq = null();
    assert_eq!(
        net.irecv(pair.recv, out.as_mut_ptr() as *mut c_void, n, null(), &mut rq),
        OK
    );
    wait_both(&net, rq, sq);
    assert!(out == data);
    // Enough passes for the watch to notice the movement.
    let mut more = pattern(1000, 6);
    assert!(pair.transfer(&mut more, 1000) == more);
}

#[test]
fn a_sender_whose_peer_process_is_stopped_reports_the_stall_and_its_end() {
    let log = child("peer_stopped");
    let stalled = lines(&log, "send comm with");
    assert!(
        stalled
            .iter()
            .any(|l| l.contains("no progress for") && l.contains("sends outstanding")),
        "no stall report:\n{log}"
    );
    assert!(
        stalled.iter().any(|l| l.contains("moving again after")),
        "no line when it moved again:\n{log}"
    );
}

/// Case: the receiving peer process is stopped for 3 s mid-stream.
fn peer_stopped() {
    let net = v12();
    assert_eq!(net.init(), OK);
    let (mut peer, _out, s) = recv_peer(&net, "4M");
    let mut buf = pattern(4 << 20, 3);
    let send = |buf: &mut Vec<u8>, limit: Duration| {
        let mut req = null();
        assert_eq!(
            net.isend(s, buf.as_mut_ptr() as *mut c_void, buf.len(), null(), &mut req),
            OK
        );
        wait_result(&net, req, limit)
    };
    for _ in 0..2 {
        assert_eq!(send(&mut buf, DEADLINE).0, OK);
    }
    let pid = peer.id() as i32;
    // SAFETY: a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    // The peer's kernel still takes data until its buffers fill, then the sends stop moving; the
    // peer's kernel answers window probes, so TCP does not give up.
    let stopped = Instant::now();
    let mut req = null();
    let mut done = 1;
    while stopped.elapsed() < Duration::from_millis(3000) {
        if done != 0 {
            assert_eq!(
                net.isend(s, buf.as_mut_ptr() as *mut c_void, buf.len(), null(), &mut req),
                OK
            );
            assert!(!req.is_null());
            done = 0;
        }
        let mut size = 0;
        assert_eq!(net.test(req, &mut done, &mut size), OK);
    }
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    assert_eq!(wait_result(&net, req, DEADLINE).0, OK);
    assert_eq!(send(&mut buf, DEADLINE).0, OK);
    drop(peer.stdin.take());
    let _ = peer.kill();
    let _ = peer.wait();
    assert_eq!(net.close_send(s), OK);
}
