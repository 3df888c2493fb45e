//! NCCL's device unpack with several receiving peers in one thread block, through the v12 table.
//!
//! NCCL's kernel keeps one bounce base per thread block, taken from the receive connection it set
//! up last, and applies it to the records of every peer the block receives from: a tree node
//! receives from its children and its parent in one step, a grouped point-to-point step from
//! several peers. Every device-unpack comm of a process must therefore describe its pages from the
//! same base. This test plays a tree node: three receive comms, receives posted on all three at
//! once, and the test's stand-in for the kernel places each comm's records from the base of the
//! comm accepted last.
//!
//! Over the socket only receives into GPU memory land in bounce memory; the test sets
//! `TCPXR_TEST_BOUNCE_HOST_RECEIVES=1` (before the library is loaded, the only test of this binary)
//! so that host-memory receives take that path too and the CPU host can check it.
mod common;

use common::*;
use nccl_net_tcpxr::abi::*;
use std::ffi::c_void;
use std::time::Instant;

struct Peer {
    send: *mut c_void,
    recv: *mut c_void,
    handle: unpackNetDeviceHandle,
}

fn wait(net: &V12, req: *mut c_void) -> usize {
    let (mut done, mut size) = (0, -1);
    let start = Instant::now();
    while done == 0 {
        assert_eq!(net.test(req, &mut done, &mut size), OK);
        assert!(start.elapsed() < DEADLINE, "request never completed");
    }
    size as usize
}

/// What NCCL's kernel does for receive `n` of each peer in one block: the records of slot n % 16
/// of every peer's ring, all counted from `base`. Returns how many records it placed.
fn place(peers: &[Peer], base: u64, n: u64, dsts: &mut [Vec<u8>]) -> usize {
    let slot = (n % 16) as usize;
    let mut placed = 0;
    for (p, dst) in peers.iter().zip(dsts.iter_mut()) {
        // SAFETY: the ring the peer's handle points to (host memory on a host without CUDA); its
        // count is published before test reports the receive done, the records before the count.
        let meta = unsafe { &*p.handle.meta };
        for r in &meta.mem[slot][..meta.cnt[slot] as usize] {
            let (dst_off, len) = (r.dst_off as usize, r.len as usize);
            assert!(dst_off + len <= dst.len(), "a record beyond the receive: {r:?}");
            // SAFETY: src_off counts from the block's base into bounce memory the comm holds
            // until irecvConsumed.
            let from = unsafe { std::slice::from_raw_parts((base + r.src_off as u64) as *const u8, len) };
            dst[dst_off..dst_off + len].copy_from_slice(from);
            placed += 1;
        }
    }
    placed
}

#[test]
fn a_tree_node_receiving_from_three_peers_in_one_block_places_each_from_its_own_pages() {
    // SAFETY: the only test of this binary, before the library is loaded: no other thread reads
    // the environment.
    unsafe { std::env::set_var("TCPXR_TEST_BOUNCE_HOST_RECEIVES", "1") };
    let net = v12();
    let peers: Vec<Peer> = (0..3)
        .map(|_| {
            let (send, recv, dev) = unpack_pair(&net, true);
            // SAFETY: the handle tcpxr gave NCCL (host memory here), 24 readable bytes.
            let handle = unsafe { std::ptr::read(dev as *const unpackNetDeviceHandle) };
            Peer { send, recv, handle }
        })
        .collect();
    // NCCL's setup runs once per connection in the block; the last one's base wins.
    let base = peers.last().unwrap().handle.bounce_buf as u64;
    assert_ne!(base, 0, "receives land in bounce memory");
    let capacity = 300_000;
    let mut records = 0;
    for n in 0..40u64 {
        // Sizes differ per peer and round, some smaller than posted, one round empty.
        let sizes: Vec<usize> = (0..3)
            .map(|i| ((n as usize * 7919 + i * 104_729) % capacity) * (n % 13 != 5) as usize)
            .collect();
        let mut sent: Vec<Vec<u8>> = sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| pattern(s, n * 3 + i as u64))
            .collect();
        let mut bufs = vec![vec![0u8; capacity]; 3];
        let mut rqs = vec![];
        for (i, p) in peers.iter().enumerate() {
            let mut rq = null();
            assert_eq!(
                net.irecv(p.recv, bufs[i].as_mut_ptr() as *mut c_void, capacity, null(), &mut rq),
                OK
            );
            assert!(!rq.is_null());
            rqs.push(rq);
        }
        let mut sqs = vec![];
        for (i, p) in peers.iter().enumerate() {
            let mut sq = null();
            assert_eq!(
                net.isend(p.send, sent[i].as_mut_ptr() as *mut c_void, sizes[i], null(), &mut sq),
                OK
            );
            assert!(!sq.is_null());
            sqs.push(sq);
        }
        for i in 0..3 {
            assert_eq!(wait(&net, rqs[i]), sizes[i]);
            assert_eq!(wait(&net, sqs[i]), sizes[i]);
        }
        assert!(
            bufs.iter().all(|b| b.iter().all(|x| *x == 0)),
            "only the records place the bytes"
        );
        records += place(&peers, base, n, &mut bufs);
        for i in 0..3 {
            assert!(
                bufs[i][..sizes[i]] == sent[i][..],
                "round {n}: peer {i}'s {} bytes",
                sizes[i]
            );
            assert!(
                bufs[i][sizes[i]..].iter().all(|x| *x == 0),
                "nothing beyond the size sent"
            );
            // SAFETY: tcpxr's table, its own comm and request.
            assert_eq!(unsafe { net.0.irecvConsumed.unwrap()(peers[i].recv, 1, rqs[i]) }, OK);
        }
    }
    assert!(records > 40, "{records} records: the receives took the bounce path");
    for p in peers {
        assert_eq!(net.close_send(p.send), OK);
        assert_eq!(net.close_recv(p.recv), OK);
    }
}
