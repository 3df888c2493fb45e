//! NCCL's device unpack through the v12 table, with this test playing NCCL: accept asks for the
//! receive comm's device handle (NCCL_NET_DEVICE_UNPACK version 7), and once test() reports a
//! receive done the test does what NCCL's kernel does (reads the n-th receive's records from slot
//! n % 16 of the ring the handle points to and copies each fragment from the bounce buffer into
//! place), then calls irecvConsumed. Over the socket (this file) host-memory receives land in place
//! and publish no records; tests/device_unpack_tcpx.rs runs the same scenarios over the TCPX
//! emulator, where every receive lands in the emulator's pool and only the records bring it home.
mod common;

use common::*;
use std::ffi::{c_int, c_void};

#[test]
pub fn receives_are_placed_from_the_ring_slot_of_their_number_and_released_by_irecv_consumed() {
    let p = UnpackPair::connect();
    // Sizes around the inline limit and the chunk size, one empty, one smaller than posted; more
    // receives than ring slots, eight in flight as NCCL keeps them.
    let sizes: Vec<usize> = (0..40)
        .map(|i| [0, 1, 4096, 70_000, 600_000, 2 << 20][i % 6] + i)
        .collect();
    let capacity = (2 << 20) + 64;
    let depth = 8;
    let mut sent: Vec<Vec<u8>> = sizes.iter().enumerate().map(|(i, &n)| pattern(n, i as u64)).collect();
    let mut bufs: Vec<Vec<u8>> = (0..sizes.len()).map(|_| vec![0u8; capacity]).collect();
    let mut reqs = vec![(null(), null()); sizes.len()];
    let mut records = 0;
    for i in 0..sizes.len() + depth {
        if i < sizes.len() {
            let (rq, sq) = &mut reqs[i];
            assert_eq!(
                p.net
                    .irecv(p.recv, bufs[i].as_mut_ptr() as *mut c_void, capacity, null(), rq),
                OK
            );
            assert_eq!(
                p.net
                    .isend(p.send, sent[i].as_mut_ptr() as *mut c_void, sizes[i], null(), sq),
                OK
            );
            assert!(!rq.is_null() && !sq.is_null(), "eight in flight fit");
        }
        // NCCL's order: the oldest receive completes, its kernel places it, then it is consumed.
        if i >= depth {
            let k = i - depth;
            let (rq, sq) = reqs[k];
            assert_eq!(p.wait(rq) as usize, sizes[k]);
            assert_eq!(p.wait(sq) as usize, sizes[k]);
            let published = p.published(k as u64);
            if published > 0 {
                assert!(
                    bufs[k].iter().all(|b| *b == 0),
                    "receive {k} has records, yet tcpxr placed bytes itself"
                );
            }
            records += p.unpack(k as u64, &mut bufs[k]);
            assert!(bufs[k][..sizes[k]] == sent[k][..], "receive {k} of {} bytes", sizes[k]);
            assert!(
                bufs[k][sizes[k]..].iter().all(|b| *b == 0),
                "nothing beyond the size sent"
            );
            assert_eq!(p.consumed(rq), OK);
            if k == 0 {
                assert_ne!(p.consumed(rq), OK, "a receive is consumed once");
                expect_log("irecvConsumed of a request that is not a completed, unconsumed receive");
            }
        }
    }
    eprintln!("{records} records placed by the test's kernel stand-in");
    // Over the socket host receives land in place; over TCPX's pool only the records place them.
    if std::env::var("NCCL_TCPXR_TRANSPORT").as_deref() == Ok("tcpx") {
        assert!(records > sizes.iter().sum::<usize>() / 4096, "{records} records");
    } else {
        assert_eq!(records, 0);
    }
}

#[test]
fn consumes_out_of_order_and_a_seventeenth_unconsumed_receive_are_refused() {
    let p = UnpackPair::connect();
    let n = 64;
    let mut sent: Vec<Vec<u8>> = (0..17).map(|i| pattern(n, 50 + i)).collect();
    let mut bufs = vec![vec![0u8; n]; 17];
    let mut rqs = vec![];
    for i in 0..16 {
        let (mut rq, mut sq) = (null(), null());
        assert_eq!(
            p.net
                .irecv(p.recv, bufs[i].as_mut_ptr() as *mut c_void, n, null(), &mut rq),
            OK
        );
        assert_eq!(
            p.net
                .isend(p.send, sent[i].as_mut_ptr() as *mut c_void, n, null(), &mut sq),
            OK
        );
        assert!(!rq.is_null());
        assert_eq!(p.wait(rq), n as c_int);
        assert_eq!(p.wait(sq), n as c_int);
        rqs.push(rq);
    }
    let mut rq = null();
    assert_eq!(
        p.net
            .irecv(p.recv, bufs[16].as_mut_ptr() as *mut c_void, n, null(), &mut rq),
        OK
    );
    assert!(rq.is_null(), "16 receives unconsumed fill the ring: busy, not an error");
    assert_ne!(p.consumed(rqs[1]), OK, "receive 1 before receive 0");
    expect_log("irecvConsumed out of order: receive 1 while receive Some(0) is older");
    for (i, r) in rqs.iter().enumerate() {
        p.unpack(i as u64, &mut bufs[i]);
        assert!(bufs[i] == sent[i]);
        assert_eq!(p.consumed(*r), OK);
    }
    assert_eq!(
        p.net
            .irecv(p.recv, bufs[16].as_mut_ptr() as *mut c_void, n, null(), &mut rq),
        OK
    );
    assert!(!rq.is_null(), "room again once consumed");
    let mut sq = null();
    assert_eq!(
        p.net
            .isend(p.send, sent[16].as_mut_ptr() as *mut c_void, n, null(), &mut sq),
        OK
    );
    assert_eq!(p.wait(rq), n as c_int);
    assert_eq!(p.wait(sq), n as c_int);
    p.unpack(16, &mut bufs[16]);
    assert!(bufs[16] == sent[16]);
    assert_eq!(p.consumed(rq), OK);
}

#[test]
fn irecv_consumed_on_a_comm_without_device_unpack_does_nothing() {
    let net = v12();
    let pair = Pair::new(&net);
    let mut data = pattern(1000, 3);
    assert!(pair.transfer(&mut data, 1000) == data);
    // NCCL calls it for every receive of a plugin that has it, with a request test already freed.
    let junk = [0u64; 4];
    // SAFETY: tcpxr's table and comm; the request is deliberately not one tcpxr returned.
    let r = unsafe { net.0.irecvConsumed.unwrap()(pair.recv, 1, junk.as_ptr() as *mut c_void) };
    assert_eq!(r, OK);
}
