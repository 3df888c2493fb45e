//! A message sent while its connection is nearly idle is cut into NCCL_TCPXR_IDLE_CHUNK_BYTES
//! chunks, a streaming one into NCCL_TCPXR_CHUNK_BYTES chunks, and the receiver cuts each the way
//! its header says. Here the idle chunk is 12 KiB (not a power of two) over 3 stripes, through
//! 64 KiB socket buffers and the I/O pool, so a lone message is many small chunks dealt from
//! wherever the cursor stands, and a round of 4 messages in flight mixes both cuttings on one
//! connection. A receiver cutting differently from its sender fails the stripes' frame check
//! ("stripe out of step"); every byte must arrive in place.
mod common;
use common::*;

#[test]
fn idle_messages_cut_finer_and_streaming_ones_arrive_intact_side_by_side() {
    // Read once, at the first init in this process (this binary has no other test).
    set_env(&[
        ("NCCL_TCPXR_IDLE_CHUNK_BYTES", "12K"),
        ("NCCL_TCPXR_STRIPES", "3"),
        ("NCCL_TCPXR_IO_THREADS", "2"),
        ("NCCL_TCPXR_HANDOFF_BYTES", "0"),
    ]);
    set_env(STRIPED_THROUGH_SMALL_BUFFERS);
    let net = v12();
    let pair = Pair::new(&net);
    // Lone messages, each into a receive larger than itself (its header gives the size).
    for (i, n) in [1usize, 12 << 10, (12 << 10) + 1, 100_000, 524_288, (3 << 20) + 5]
        .into_iter()
        .enumerate()
    {
        let mut data = pattern(n, i as u64 + 1);
        assert!(
            pair.transfer(&mut data, n + 4096) == data,
            "{n} bytes sent alone arrived different"
        );
    }
    // Four in flight: the first two go out while the connection is idle, the others streaming.
    let mut seed = 100;
    for size in [40_000usize, 524_288, (1 << 20) + 1] {
        round_trip_in_flight(&net, std::slice::from_ref(&pair), size, 4, &mut seed);
    }
}
