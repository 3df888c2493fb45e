//! A host message below the comm's chunk, sent while few send comms of the process move data, is
//! spread over the stripes in pieces of at least NCCL_TCPXR_SPREAD_PIECE_BYTES (engine/cut.rs),
//! on a connection NCCL_TCPXR_IDLE_CHUNK_BYTES leaves whole (0 here), and the receiver cuts it as
//! its header says (a receiver cutting otherwise fails the stripes' frame check). One send comm
//! moving and 6 I/O threads counted (TCPXR_TEST_SPREAD_THREADS: the pool itself is capped at the
//! cores this process may use): 6 / (2 x 1) = 3 pieces, one per stripe. The stripes' chunk counts
//! (NCCL_TCPXR_STATS, logged at close) show the cut.
mod common;
use common::*;

#[test]
fn a_message_below_the_chunk_is_spread_over_the_idle_threads_and_arrives_intact() {
    // Read once, at the first init in this process (this binary has no other test).
    set_env(&[
        ("NCCL_TCPXR_IDLE_CHUNK_BYTES", "0"),
        ("NCCL_TCPXR_SPREAD_PIECE_BYTES", "12K"),
        ("NCCL_TCPXR_STRIPES", "3"),
        ("NCCL_TCPXR_IO_THREADS", "2"),
        ("TCPXR_TEST_SPREAD_THREADS", "6"),
        ("NCCL_TCPXR_HANDOFF_BYTES", "0"),
        ("NCCL_TCPXR_STATS", "1"),
        ("TCPXR_LOG", "info"),
    ]);
    set_env(STRIPED_THROUGH_SMALL_BUFFERS);
    let net = v12();
    let pair = Pair::new(&net);
    // (size, chunks): 100,000 B in pieces of 36 KiB (a third, in whole pages); 30,000 B in
    // 12 KiB pieces (a third is 10,000: the piece size wins); 20,000 B in two (12 KiB and the
    // rest); 12 KiB and a whole 512 KiB chunk stay whole; 1 MiB + 1 in the comm's chunks.
    let lone = [
        (100_000usize, 3u64),
        (30_000, 3),
        (20_000, 2),
        (12 << 10, 1),
        (512 << 10, 1),
        ((1 << 20) + 1, 3),
    ];
    for (i, &(n, _)) in lone.iter().enumerate() {
        let mut data = pattern(n, i as u64 + 1);
        assert!(
            pair.transfer(&mut data, n + 4096) == data,
            "{n} bytes sent alone arrived different"
        );
    }
    drop(pair);
    let chunks = |side: &str| -> u64 {
        nccl_net_tcpxr::testlog::claim_all(&format!("stats {side} s"))
            .iter()
            .map(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                let at = words.iter().position(|w| w.starts_with("chunks")).expect(l);
                words[at - 1].parse::<u64>().expect(l)
            })
            .sum()
    };
    let expected: u64 = lone.iter().map(|&(_, c)| c).sum();
    for side in ["send", "receive"] {
        assert_eq!(chunks(side), expected, "{side}: the lone messages' chunks");
    }
    // Several in flight on a second pair: spread or not as the count stands, every byte in place.
    let pair = Pair::new(&net);
    let mut seed = 100;
    for size in [40_000usize, 300_000] {
        round_trip_in_flight(&net, std::slice::from_ref(&pair), size, 4, &mut seed);
    }
}
