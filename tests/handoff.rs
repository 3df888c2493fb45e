//! The socket stripes' hardest path: chunks above 64 KiB go to the I/O pool whole, smaller ones
//! and small backlogs stay with NCCL's thread (NCCL_TCPXR_HANDOFF_BYTES=64K), messages mix both
//! (a 1 MiB + 1 message is two pool chunks and a 1-byte proxy chunk), and the socket buffers are
//! small, so chunks move in many partial writes and reads and the stripes pass between NCCL's
//! thread and the I/O threads over and over, with 8 messages in flight on each of several
//! connections. Every byte must arrive in place.
mod common;
use common::*;

#[test]
fn messages_passed_between_the_proxy_and_the_io_threads_arrive_intact() {
    // Read once, at the first init in this process (this binary has no other test).
    set_env(&[("NCCL_TCPXR_HANDOFF_BYTES", "64K")]);
    set_env(STRIPED_THROUGH_SMALL_BUFFERS);
    let net = v12();
    let pairs: Vec<Pair> = (0..3).map(|_| Pair::new(&net)).collect();
    const IN_FLIGHT: usize = 8;
    let mut seed = 0;
    for size in [1usize, 4095, (64 << 10) + 3, 512 << 10, (1 << 20) + 1, 3 << 20] {
        round_trip_in_flight(&net, &pairs, size, IN_FLIGHT, &mut seed);
    }
}
