//! NCCL 2.12, the oldest caller of the v5 table, sets up a ring's connections on every rank in one
//! order: its send side's connect, called until it completes, and only then its receive side's
//! accept (transport.cc). Every rank connects first, so a connect that needs the peer's accept to
//! have run can never complete there. These tests drive the v5 table in that order.
mod common;
use common::*;
use std::ffi::c_void;
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// Longer than a connect takes on loopback, far shorter than the handshake timeout (10 s) after
/// which a connect that waits for the peer's accept gives up.
const CONNECT_WITHIN: Duration = Duration::from_secs(3);

#[test]
fn every_rank_connects_before_it_accepts_as_nccl_2_12_does_and_data_flows() {
    const RANKS: usize = 3;
    let net = v5();
    assert_eq!(net.init(), OK);
    // Each rank listens and publishes its handle (NCCL's bootstrap exchange).
    let mut handles = [[0u8; 128]; RANKS];
    let mut listens = [0usize; RANKS];
    for r in 0..RANKS {
        let mut l = null();
        assert_eq!(net.listen(0, &mut handles[r], &mut l), OK);
        listens[r] = l as usize;
    }
    let barrier = Barrier::new(RANKS);
    std::thread::scope(|scope| {
        for r in 0..RANKS {
            let (net, barrier, handles, listens) = (&net, &barrier, &handles, &listens);
            scope.spawn(move || {
                // Rank r sends to the next rank of the ring and receives from the previous one.
                let mut next = handles[(r + 1) % RANKS];
                let mut send = null();
                let start = Instant::now();
                while send.is_null() {
                    assert_eq!(net.connect(0, &mut next, &mut send), OK, "rank {r}: connect");
                    assert!(
                        start.elapsed() < CONNECT_WITHIN,
                        "rank {r}: connect did not complete without the peer's accept"
                    );
                }
                let listen = listens[r] as *mut c_void;
                let mut recv = null();
                while recv.is_null() {
                    assert_eq!(net.accept(listen, &mut recv), OK, "rank {r}: accept");
                    assert!(start.elapsed() < DEADLINE, "rank {r}: accept did not complete");
                }
                assert_eq!(net.close_listen(listen), OK);
                barrier.wait();
                for (round, n) in [0usize, 7, 100 << 10, (3 << 20) + 5].into_iter().enumerate() {
                    let mut data = pattern(n, (r * 10 + round) as u64);
                    let mut got = vec![0u8; n];
                    let (mut rq, mut sq) = (null(), null());
                    assert_eq!(net.irecv(recv, got.as_mut_ptr() as *mut c_void, n, null(), &mut rq), OK);
                    assert_eq!(
                        net.isend(send, data.as_mut_ptr() as *mut c_void, n, null(), &mut sq),
                        OK
                    );
                    let (rsize, ssize) = wait_both(net, rq, sq);
                    assert_eq!((rsize as usize, ssize as usize), (n, n), "rank {r}, {n} bytes");
                    let prev = (r + RANKS - 1) % RANKS;
                    assert!(
                        got == pattern(n, (prev * 10 + round) as u64),
                        "rank {r}: {n} bytes from rank {prev}"
                    );
                    barrier.wait();
                }
                assert_eq!(net.close_send(send), OK);
                assert_eq!(net.close_recv(recv), OK);
            });
        }
    });
    // The thread that answered the hellos before accept stops once no listen comm waits.
    let start = Instant::now();
    while threads_named("tcpxr-answer") > 0 && start.elapsed() < Duration::from_secs(1) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        threads_named("tcpxr-answer"),
        0,
        "the answering thread outlived the listen comms"
    );
}
