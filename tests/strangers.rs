//! A port scanner cannot flood NCCL's log: tcpxr logs the first WARN_FREE connections it refuses
//! or drops at its listen ports (per interval, per process) one by one, then counts the rest and
//! logs one summary line (here when the listener closes). Its own test binary: the count is
//! process-wide, and no other test here meets a stranger.
mod common;
use common::*;
use nccl_net_tcpxr::engine::wire::ListenHandle;
use nccl_net_tcpxr::net::acceptor::WARN_FREE;
use nccl_net_tcpxr::testlog;
use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

#[test]
fn forty_junk_connections_to_a_listen_port_give_ten_warn_lines_and_a_summary() {
    let net = v12();
    assert_eq!(net.init(), OK);
    let mut handle = [0u8; 128];
    let mut l = null();
    assert_eq!(net.listen(0, &mut handle, &mut l), OK);
    let at = ListenHandle::read(&handle).unwrap().ctrl;
    for _ in 0..40 {
        let mut junk = TcpStream::connect(at).unwrap();
        junk.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    }
    // accept reads every hello that has come (each one refused) and never returns a comm.
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(300) {
        let mut r = null();
        assert_eq!(net.accept(l, &mut r), OK);
        assert!(r.is_null(), "a stranger became the receive comm");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(net.close_listen(l), OK);
    let summary = expect_log("more connections to tcpxr's listen ports refused or dropped");
    let one_by_one = testlog::claim_all("tcpxr listener: refused connection from");
    assert_eq!(one_by_one.len(), WARN_FREE as usize, "{one_by_one:#?}");
    assert!(
        one_by_one.last().unwrap().contains("further ones in the next"),
        "the last line says what follows: {one_by_one:#?}"
    );
    let counted = 40 - WARN_FREE;
    assert!(
        summary.contains(&format!("{counted} more connections"))
            && summary.contains(&format!("{counted} refused, 0 with a cut-short hello, 0 crowded out"))
            && summary.contains("not a tcpxr hello"),
        "{summary}"
    );
}
