//! The I/O pool's two ways to a worker, mixed: with spinning workers every striped chunk is
//! handed to one through the pool's hand-off queue, and once the spinners have gone to sleep
//! (a pause longer than the spin) through the epoll set; small socket buffers make workers re-arm
//! their sockets mid-chunk, so stripes pass between the queue, the epoll set and NCCL's thread over
//! and over, with 8 messages in flight on each of several connections. Every byte must arrive in
//! place, and no hand-off may be lost (a lost one hangs its message past the deadline).
mod common;
use common::*;
use std::time::Duration;

#[test]
fn messages_handed_to_spinning_and_sleeping_workers_arrive_intact() {
    // Read once, at the first init in this process (this binary has no other test).
    set_env(&[
        ("NCCL_TCPXR_IO_THREADS", "2"),
        ("NCCL_TCPXR_IO_SPIN_US", "2000"),
        ("NCCL_TCPXR_IO_SPIN_THREADS", "2"),
        ("NCCL_TCPXR_HANDOFF_BYTES", "0"),
        ("NCCL_TCPXR_CHUNK_BYTES", "64K"),
    ]);
    set_env(STRIPED_THROUGH_SMALL_BUFFERS);
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
        round_trip_in_flight(&net, &pairs, size, IN_FLIGHT, &mut seed);
    }
}
