//! How finely a message is cut, counted by the TCPX emulator (one send post per chunk): with
//! NCCL_TCPXR_IDLE_CHUNK_BYTES=64K set (auto is 0 over tcpx) and 2 stripes, a message sent alone
//! goes out in one piece per stripe (none below 64 KiB), and of four posted at once the first two
//! (at most one other in flight) do while the last two, streaming, keep the comm's 512 KiB chunks.
mod common;
use common::*;

fn send_posts() -> u64 {
    let comms = assert_tcpx_rules_kept(12);
    comms.iter().filter(|c| c.kind == "send").map(|c| c.get("posts")).sum()
}

#[test]
fn lone_messages_are_spread_over_the_stripes_and_streaming_ones_keep_the_comms_chunks() {
    // Read once, at the first init in this process (this binary has no other test).
    select_tcpx(&[
        ("NCCL_TCPXR_STRIPES", "2"),
        ("NCCL_TCPXR_IDLE_CHUNK_BYTES", "64K"),
        ("NCCL_TCPXR_INLINE_IDLE_BYTES", "0"),
    ]);
    let net = v12();
    let size = 300 << 10; // 152 KiB + 148 KiB idle; one 512 KiB chunk streaming
    {
        let pair = Pair::new(&net);
        let mut data = pattern(size, 1);
        assert!(pair.transfer(&mut data, size) == data, "the lone message differs");
    }
    assert_eq!(send_posts(), 2, "a lone 300 KiB message in one piece per stripe");
    {
        let pair = Pair::new(&net);
        let mut seed = 0;
        round_trip_in_flight(&net, std::slice::from_ref(&pair), size, 4, &mut seed);
    }
    assert_eq!(
        send_posts(),
        2 + (2 + 2 + 1 + 1),
        "two idle messages spread, two streaming whole"
    );
    let small = 100 << 10; // alone: 64 KiB + 36 KiB, the idle chunk being the smallest piece
    {
        let pair = Pair::new(&net);
        let mut data = pattern(small, 2);
        assert!(
            pair.transfer(&mut data, small) == data,
            "the small lone message differs"
        );
    }
    assert_eq!(send_posts(), 8 + 2);
}
