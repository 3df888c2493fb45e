//! Peers that stop half-way through the handshake, with a short NCCL_TCPXR_HANDSHAKE_TIMEOUT_MS:
//! one that dies after its welcome is an error at accept, not a receive comm awaited forever; and
//! silent connections piling onto a stripe port cannot push out a real stripe whose hello waits
//! behind them in the backlog. The peer here is a raw socket speaking tcpxr's wire format.
mod common;
use common::*;
use nccl_net_tcpxr::abi::ncclResult_t;
use nccl_net_tcpxr::engine::wire::ListenHandle;
use nccl_net_tcpxr::net::acceptor::MAX_PENDING;
use nccl_net_tcpxr::transport::socket::{decode_stripe_handle, stripe_hello};
use nccl_net_tcpxr::transport::INNER_HANDLE_BYTES;
use std::ffi::c_void;
use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

const HANDSHAKE: Duration = Duration::from_millis(500);

// Before main: tcpxr reads its configuration once per process.
before_main! {
    set_env(&[
        ("NCCL_TCPXR_TRANSPORT", "socket"),
        ("NCCL_TCPXR_HANDSHAKE_TIMEOUT_MS", "500"),
    ]);
}

/// [`welcomed_raw_peer`], with each stripe's (token, address) from the welcome.
fn welcomed(net: &V12) -> (*mut c_void, ListenHandle, TcpStream, Vec<(u64, std::net::SocketAddr)>) {
    let (l, h, ctrl, inner) = welcomed_raw_peer(net);
    let stripes = inner
        .chunks_exact(INNER_HANDLE_BYTES)
        .map(|c| decode_stripe_handle(c.try_into().unwrap()).unwrap())
        .collect();
    (l, h, ctrl, stripes)
}

/// Calls accept until it returns a comm or an error, DEADLINE at most: (result, comm, time).
fn accept_until_done(net: &V12, l: *mut c_void) -> (ncclResult_t, *mut c_void, Duration) {
    let start = Instant::now();
    loop {
        let mut r = null();
        let code = net.accept(l, &mut r);
        if code != OK || !r.is_null() || start.elapsed() > DEADLINE {
            return (code, r, start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_peer_that_dies_after_its_welcome_fails_accept_within_the_handshake_timeout() {
    let net = v12();
    let (l, h, ctrl, stripes) = welcomed(&net);
    // One stripe connects, then the peer is gone.
    let (token, at) = stripes[0];
    let mut first = TcpStream::connect(at).unwrap();
    first.write_all(&stripe_hello(token)).unwrap();
    drop((first, ctrl));
    let (code, r, took) = accept_until_done(&net, l);
    assert_eq!((code, r), (ncclResult_t::ncclRemoteError, null()), "after {took:?}");
    assert!(took >= HANDSHAKE && took < HANDSHAKE * 4, "{took:?}");
    expect_log(&format!(
        "{} of its {} stripes did not connect within NCCL_TCPXR_HANDSHAKE_TIMEOUT_MS (500 ms)",
        h.stripes - 1,
        h.stripes
    ));
    assert_eq!(net.close_listen(l), OK);
}

#[test]
fn silent_connections_behind_a_real_stripe_do_not_push_it_out() {
    let net = v12();
    let (l, _, ctrl, stripes) = welcomed(&net);
    // Every real stripe connects and says its hello before NCCL calls accept (the order of
    // NCCL 2.12: connects first), then more silent connections than a listener keeps waiting.
    let mut keep = vec![ctrl];
    for &(token, at) in &stripes {
        let mut s = TcpStream::connect(at).unwrap();
        s.write_all(&stripe_hello(token)).unwrap();
        keep.push(s);
        for _ in 0..MAX_PENDING + 1 {
            keep.push(TcpStream::connect(at).unwrap());
        }
    }
    std::thread::sleep(Duration::from_millis(20));
    let (code, r, took) = accept_until_done(&net, l);
    assert_eq!(code, OK);
    assert!(!r.is_null(), "accept did not complete in {took:?}");
    nccl_net_tcpxr::testlog::allow("too many connections without a hello; dropped");
    assert_eq!(net.close_recv(r), OK);
    assert_eq!(net.close_listen(l), OK);
}
