//! A message sent while its connection is nearly idle is cut into NCCL_TCPXR_IDLE_CHUNK_BYTES
//! chunks, a streaming one into NCCL_TCPXR_CHUNK_BYTES chunks, and the receiver cuts each the way
//! its header says. Here the idle chunk is 12 KiB (not a power of two) over 3 stripes, through
//! 64 KiB socket buffers and the I/O pool, so a lone message is many small chunks dealt from
//! wherever the cursor stands, and a round of 4 messages in flight mixes both cuttings on one
//! connection. A receiver cutting differently from its sender fails the stripes' frame check
//! ("stripe out of step"); every byte must arrive in place. With NCCL_TCPXR_STATS=1 each side's
//! counters at close give every message's size class and the pipeline's depth at each post.
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
        ("NCCL_TCPXR_STATS", "1"),
        // The counters are INFO lines: into this process's captured log.
        ("TCPXR_LOG", "info"),
    ]);
    set_env(STRIPED_THROUGH_SMALL_BUFFERS);
    let net = v12();
    let pair = Pair::new(&net);
    let mut sizes = vec![];
    // Lone messages, each into a receive larger than itself (its header gives the size).
    for (i, n) in [1usize, 12 << 10, (12 << 10) + 1, 100_000, 524_288, (3 << 20) + 5]
        .into_iter()
        .enumerate()
    {
        sizes.push(n);
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
        sizes.extend([size; 4]);
    }
    drop(pair);
    // 18 messages: 1 B; 12 KiB and one more byte (up to 16 KiB); 4 of 40,000 B (up to 64 KiB);
    // 100,000 B; 1 + 4 of 512 KiB; 4 of 1 MiB + 1 (up to 2 MiB); 3 MiB + 5 (up to 4 MiB). Each
    // round posted its 4 with 0, 1, 2, 3 others out, a lone message with none: 18 / 18 = 1.0.
    assert_eq!(sizes.len(), 18);
    let counted = "18 messages";
    let classes = "sizes up to 1 B: 1, up to 16 KiB: 2, up to 64 KiB: 4, up to 128 KiB: 1, up to 512 KiB: 5, \
                   up to 2 MiB: 4, up to 4 MiB: 1; others out at a post avg 1.0 max 3";
    for side in ["stats send: ", "stats receive: "] {
        let line = expect_log(side);
        assert!(line.contains(counted) && line.contains(classes), "{line}");
    }
}
