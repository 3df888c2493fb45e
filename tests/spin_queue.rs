//! The I/O pool's two ways to a worker, mixed: with spinning workers every striped chunk is
//! handed to one through the pool's hand-off queue, and once the spinners have gone to sleep
//! (a pause longer than the spin) through the epoll set; small socket buffers make workers re-arm
//! their sockets mid-chunk, so stripes pass between the queue, the epoll set and NCCL's thread over
//! and over, with 8 messages in flight on each of several connections. Every byte must arrive in
//! place, and no hand-off may be lost (a lost one hangs its message past the deadline).
mod common;
use common::*;
use std::ffi::c_void;
use std::time::{Duration, Instant};

#[test]
fn messages_handed_to_spinning_and_sleeping_workers_arrive_intact() {
    // Read once, at the first init in this process (this binary has no other test).
    std::env::set_var("NCCL_TCPXR_IO_THREADS", "2");
    std::env::set_var("NCCL_TCPXR_IO_SPIN_US", "2000");
    std::env::set_var("NCCL_TCPXR_IO_SPIN_THREADS", "2");
    std::env::set_var("NCCL_TCPXR_HANDOFF_BYTES", "0");
    std::env::set_var("NCCL_TCPXR_CHUNK_BYTES", "64K");
    std::env::set_var("NCCL_TCPXR_SOCKET_SNDBUF", "64K");
    std::env::set_var("NCCL_TCPXR_SOCKET_RCVBUF", "64K");
    std::env::set_var("NCCL_TCPXR_INLINE_IDLE_BYTES", "0");
    std::env::set_var("NCCL_TCPXR_INLINE_BYTES", "0");
    let net = v12();
    let pairs: Vec<Pair> = (0..3).map(|_| Pair::new(&net)).collect();
    const IN_FLIGHT: usize = 8;
    let mut seed = 0;
    for (round, size) in [1usize, 4095, (64 << 10) + 3, 200 << 10, (1 << 20) + 1, 4095, 1 << 20]
        .into_iter()
        .enumerate()
    {
        if round % 2 == 1 {
            // Longer than the spin: this round's first hand-offs find every worker asleep.
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut sends: Vec<Vec<Vec<u8>>> = pairs
            .iter()
            .map(|_| {
                (0..IN_FLIGHT)
                    .map(|_| {
                        seed += 1;
                        pattern(size, seed)
                    })
                    .collect()
            })
            .collect();
        let mut recvs: Vec<Vec<Vec<u8>>> = pairs.iter().map(|_| vec![vec![0u8; size]; IN_FLIGHT]).collect();
        let mut requests = vec![];
        for (p, pair) in pairs.iter().enumerate() {
            for i in 0..IN_FLIGHT {
                let (mut rq, mut sq) = (null(), null());
                let buf = recvs[p][i].as_mut_ptr() as *mut c_void;
                assert_eq!(net.irecv(pair.recv, buf, size, null(), &mut rq), OK);
                let buf = sends[p][i].as_mut_ptr() as *mut c_void;
                assert_eq!(net.isend(pair.send, buf, size, null(), &mut sq), OK);
                assert!(!rq.is_null() && !sq.is_null());
                requests.push(rq);
                requests.push(sq);
            }
        }
        // Test every request in turn, as NCCL's proxy does, until all are done.
        let start = Instant::now();
        while !requests.is_empty() {
            requests.retain(|&r| {
                let (mut done, mut got) = (0, 0);
                assert_eq!(net.test(r, &mut done, &mut got), OK);
                if done != 0 {
                    assert_eq!(got as usize, size);
                }
                done == 0
            });
            assert!(start.elapsed() < DEADLINE, "{size} B: transfer did not complete");
        }
        for p in 0..pairs.len() {
            for i in 0..IN_FLIGHT {
                assert!(recvs[p][i] == sends[p][i], "{size} B, connection {p}, message {i}");
            }
        }
    }
}
