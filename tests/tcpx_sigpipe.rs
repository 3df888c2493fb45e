//! SIGPIPE from TCPX's sends (transport/tcpx/sigpipe.rs). TCPX sends without MSG_NOSIGNAL, and its
//! test sends the control messages it could not send again from the calling thread at every
//! call, so the test after its peer reset the connection sends on a reset socket: EPIPE, and
//! SIGPIPE on NCCL's thread, whose default action ends the process. The emulator does the same
//! with TCPX_EMU_SIGPIPE=1. tcpxr blocks SIGPIPE in the threads that call TCPX (and so in the
//! threads TCPX starts from them), never changing the process's dispositions: the process lives
//! and the send fails with an error.
//!
//! The case runs in a child process of this binary with SIGPIPE's default action (Rust's runtime
//! ignores it; a C++ program such as nccl-tests does not).
mod common;
use common::*;
use std::process::Stdio;

const CASE: &str = "TCPXR_TCPX_SIGPIPE_CASE";

before_main! {
    // The child inherits this process's settings.
    run_child_case(CASE, |case| match case {
        "send-after-the-peer-closed" => send_after_the_peer_closed(),
        other => panic!("unknown case {other}"),
    });
    select_tcpx(&[("NCCL_TCPXR_STRIPES", "2")]);
}

fn sigpipe_pending() -> bool {
    // SAFETY: an all-zero sigset_t is a valid set for sigpending to overwrite.
    let mut set = unsafe { std::mem::zeroed::<libc::sigset_t>() };
    // SAFETY: `set` is valid; sigismember reads what sigpending wrote.
    unsafe { libc::sigpending(&mut set) == 0 && libc::sigismember(&set, libc::SIGPIPE) == 1 }
}

/// The child: a pair moves a message, its receive end closes (the peer is gone), and the send end
/// sends until a send fails, with SIGPIPE's default action in force.
fn send_after_the_peer_closed() {
    // SAFETY: before main, with no other thread: SIGPIPE back to its default action, as in a C
    // program (the test's choice for this process, not tcpxr's).
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let net = v12();
    let pair = Pair::new(&net);
    let mut data = pattern(1 << 20, 7);
    assert!(pair.transfer(&mut data, 1 << 20) == data);
    assert_eq!(net.close_recv(pair.recv), OK);
    let mut big = pattern(8 << 20, 9);
    let result = send_until_error(&net, pair.send, &mut big);
    println!("RESULT {result:?}");
    println!("PENDING {}", sigpipe_pending());
    // The send comm stays open: the process ends here.
    std::mem::forget(pair);
}

#[test]
fn a_send_on_a_connection_its_peer_reset_fails_without_a_sigpipe_ending_the_process() {
    let out = child_case(CASE, "send-after-the-peer-closed")
        .env("TCPX_EMU_SIGPIPE", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = assert_lived_with_a_failed_send(&out);
    // The SIGPIPE the failed send raised was taken, not left pending on the thread.
    assert!(stdout.contains("PENDING false"), "{stdout}");
    // The send the emulator made from NCCL's thread met the reset socket (without the block this
    // is where the child dies).
    expect_log("sent again from the calling thread failed: Broken pipe");
    nccl_net_tcpxr::testlog::allow("connection closed by remote peer");
    nccl_net_tcpxr::testlog::allow("peer gone");
    nccl_net_tcpxr::testlog::allow("closed by peer");
    nccl_net_tcpxr::testlog::allow("(remote error)");
}
