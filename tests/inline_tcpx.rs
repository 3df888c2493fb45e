//! Which messages travel inline on the control connection and which over the stripes, seen from
//! the inner transport: the TCPX emulator counts every send posted to it, and an inline message
//! posts none. A lone mid-sized message goes inline (NCCL_TCPXR_INLINE_IDLE_BYTES); once more
//! than one other message is in flight the comm is streaming and they go over the stripes. On
//! these connections (made under no point-to-point hint, as a collective's) one of the thread's
//! mid-sized messages at a time goes inline; tests/p2p_inline.rs has the point-to-point rule.
mod common;
use common::*;
use std::ffi::c_void;

before_main! {
    select_tcpx(&[("NCCL_TCPXR_STRIPES", "2")]);
}

#[test]
fn lone_mid_sized_messages_go_inline_and_a_stream_of_them_over_the_stripes() {
    let net = v12();
    let pair = Pair::new(&net);
    let n = 256 << 10; // above NCCL_TCPXR_INLINE_BYTES (16 KiB), within the idle limit (512 KiB)
                       // One at a time: each is alone on the comm.
    for i in 0..10 {
        let mut data = pattern(n, 900 + i);
        assert!(pair.transfer(&mut data, n) == data, "lone message {i} differs");
    }
    // Eight posted before any is tested: the first goes inline; the second finds at most one
    // other in flight, but that one is this thread's mid-sized inline message, still out, so it
    // goes to the stripes (NCCL's thread would copy the two one after the other); the other six
    // find a stream.
    let mut sends: Vec<Vec<u8>> = (0..8).map(|i| pattern(n, 950 + i)).collect();
    let mut recvs: Vec<Vec<u8>> = (0..8).map(|_| vec![0u8; n]).collect();
    let (mut rq, mut sq) = ([null(); 8], [null(); 8]);
    for i in 0..8 {
        assert_eq!(
            net.irecv(pair.recv, recvs[i].as_mut_ptr() as *mut c_void, n, null(), &mut rq[i]),
            OK
        );
    }
    for i in 0..8 {
        assert_eq!(
            net.isend(pair.send, sends[i].as_mut_ptr() as *mut c_void, n, null(), &mut sq[i]),
            OK
        );
        assert!(!sq[i].is_null() && !rq[i].is_null());
    }
    for i in 0..8 {
        let (r, s) = wait_both(&net, rq[i], sq[i]);
        assert_eq!((r as usize, s as usize), (n, n));
        assert!(recvs[i] == sends[i], "streamed message {i} differs");
    }
    // One message on each of two comms, both posted before either is tested (a ring's channels):
    // the first of each round goes inline, the second is striped.
    let pairs = [pair, Pair::new(&net)];
    let mut seed = 970;
    for _ in 0..3 {
        round_trip_in_flight(&net, &pairs, n, 1, &mut seed);
    }
    drop(pairs);
    let comms = assert_tcpx_rules_kept(12);
    let posted: u64 = comms.iter().filter(|c| c.kind == "send").map(|c| c.get("posts")).sum();
    let bytes: u64 = comms.iter().filter(|c| c.kind == "send").map(|c| c.get("bytes")).sum();
    assert_eq!(
        (posted, bytes),
        (10, 10 * n as u64),
        "to the stripes, one chunk each: the burst's second and six streamed messages, and the \
         second of each round: {comms:?}"
    );
}
