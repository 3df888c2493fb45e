//! NCCL's device unpack through the v12 table, with this test playing NCCL: accept asks for the
//! receive comm's device handle (NCCL_NET_DEVICE_UNPACK version 7), and once test() reports a
//! receive done the test does what NCCL's kernel does (reads the n-th receive's records from slot
//! n % 16 of the ring the handle points to and copies each fragment from the bounce buffer into
//! place), then calls irecvConsumed. Over the socket (this file) host-memory receives land in place
//! and publish no records; tests/device_unpack_tcpx.rs runs the same scenarios over the TCPX
//! emulator, where every receive lands in the emulator's pool and only the records bring it home.
mod common;

use common::*;
use nccl_net_tcpxr::abi::*;
use std::ffi::{c_int, c_void};
use std::time::Instant;

/// A pair whose receive side has NCCL's device unpack, and the device handle accept filled in.
struct UnpackPair {
    net: V12,
    send: *mut c_void,
    recv: *mut c_void,
    handle: unpackNetDeviceHandle,
}

fn connect() -> UnpackPair {
    let net = v12();
    let (send, recv, dev) = unpack_pair(&net, true);
    // Without a GPU tcpxr's ring lives in plain host memory: the device address is the host one.
    // SAFETY: the handle tcpxr gave NCCL, 24 readable bytes.
    let handle = unsafe { std::ptr::read(dev as *const unpackNetDeviceHandle) };
    assert_eq!(
        handle.head,
        u64::MAX,
        "NCCL's kernel increments head before its first slice"
    );
    UnpackPair {
        net,
        send,
        recv,
        handle,
    }
}

impl UnpackPair {
    /// What NCCL's kernel does for receive `n` into `dst`: every record of slot n % 16.
    fn unpack(&self, n: u64, dst: &mut [u8]) -> usize {
        let slot = (n % 16) as usize;
        // SAFETY: the ring the handle points to (host memory here); the count is published before
        // test reports the receive done, the records before the count.
        let meta = unsafe { &*self.handle.meta };
        let cnt = meta.cnt[slot] as usize;
        for r in &meta.mem[slot][..cnt] {
            let (src, dst_off, len) = (r.src_off as usize, r.dst_off as usize, r.len as usize);
            assert!(dst_off + len <= dst.len(), "a record beyond the receive: {r:?}");
            // SAFETY: src_off counts from bounce_buf, which the comm keeps until irecvConsumed.
            let from = unsafe { std::slice::from_raw_parts((self.handle.bounce_buf as *const u8).add(src), len) };
            dst[dst_off..dst_off + len].copy_from_slice(from);
        }
        cnt
    }

    /// How many records receive `n` published.
    fn published(&self, n: u64) -> usize {
        // SAFETY: as in unpack.
        unsafe { (*self.handle.meta).cnt[(n % 16) as usize] as usize }
    }

    fn consumed(&self, req: *mut c_void) -> R {
        // SAFETY: tcpxr's table, its own comm and request.
        unsafe { self.net.0.irecvConsumed.unwrap()(self.recv, 1, req) }
    }
}

impl Drop for UnpackPair {
    fn drop(&mut self) {
        assert_eq!(self.net.close_send(self.send), OK);
        assert_eq!(self.net.close_recv(self.recv), OK);
    }
}

fn wait(net: &V12, req: *mut c_void) -> c_int {
    let (mut done, mut size) = (0, -1);
    let start = Instant::now();
    while done == 0 {
        assert_eq!(net.test(req, &mut done, &mut size), OK);
        assert!(start.elapsed() < DEADLINE, "request never completed");
    }
    size
}

#[test]
pub fn receives_are_placed_from_the_ring_slot_of_their_number_and_released_by_irecv_consumed() {
    let p = connect();
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
            assert_eq!(wait(&p.net, rq) as usize, sizes[k]);
            assert_eq!(wait(&p.net, sq) as usize, sizes[k]);
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
    let p = connect();
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
        assert_eq!(wait(&p.net, rq), n as c_int);
        assert_eq!(wait(&p.net, sq), n as c_int);
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
    assert_eq!(wait(&p.net, rq), n as c_int);
    assert_eq!(wait(&p.net, sq), n as c_int);
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
