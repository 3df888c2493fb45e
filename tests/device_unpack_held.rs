//! NCCL's device unpack over the TCPX emulator with chunks too small for the receive window: one
//! stripe, 4 KiB chunks, 2 receive slots. TCPX keeps a receive's pages, and so its chunks' slots,
//! until NCCL consumes it, so a receive of more chunks than one stripe's window would wait forever
//! for a slot only its own consumption frees. Init raises the chunk size for that case
//! (settings::chunk_for_held_receives); here receives of up to NCCL's 4 MiB complete.
mod common;

use common::*;

// Before main: tcpxr reads its configuration once per process. Nothing inline, so every byte
// goes through the stripes and TCPX's pool.
before_main! {
    select_tcpx(&[
        ("NCCL_TCPXR_STRIPES", "1"),
        ("NCCL_TCPXR_CHUNK_BYTES", "4096"),
        ("NCCL_TCPXR_RECV_WINDOW", "2"),
        ("NCCL_TCPXR_INLINE_BYTES", "0"),
        ("NCCL_TCPXR_INLINE_IDLE_BYTES", "0"),
        ("NCCL_TCPXR_INLINE_IDLE_P2P_BYTES", "0"),
    ]);
}

#[test]
fn receives_of_more_chunks_than_the_window_holds_complete_once_init_raised_the_chunk() {
    let p = UnpackPair::connect();
    for (k, n) in [3 * 4096usize, 17 * 4096, 3 << 20, 4 << 20].into_iter().enumerate() {
        let mut sent = pattern(n, k as u64);
        let mut buf = vec![0u8; n];
        let (rq, sq) = p.post(&mut buf, &mut sent);
        assert_eq!(p.wait(rq) as usize, n, "a {n}-byte receive");
        assert_eq!(p.wait(sq) as usize, n);
        p.unpack(k as u64, &mut buf);
        assert!(buf == sent, "the {n}-byte receive's records place it");
        assert_eq!(p.consumed(rq), OK);
    }
    // 4 MiB over 1 stripe of 2 slots: chunks of 2 MiB, and a WARN saying why.
    expect_log("NCCL_TCPXR_CHUNK_BYTES raised to 2097152");
}
