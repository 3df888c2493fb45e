//! Every exported net table, v5 to v12, is callable in the shape its NCCL calls it: taken from the
//! built library by its symbol and driven through its own C function pointers (tests/common's
//! `Net` impl per version: init with that version's arguments, devices, getProperties into that
//! version's struct, non-blocking listen/connect/accept, regMr, isend/irecv/test with that
//! version's size types and extra arguments, deregMr, the closes), with a real transfer over
//! loopback. A table whose slots were out of order, or an entry point adapting the wrong
//! signature, fails here (a wrong size type reads the wrong bytes, a swapped slot is called with a
//! comm or request of the wrong kind, which tcpxr refuses by its tags).
mod common;
use common::*;
use nccl_net_tcpxr::abi::*;
use nccl_net_tcpxr::config::MAX_INLINE_BYTES;
use std::ffi::{c_int, c_void};

/// Above the largest inline limit any setting allows: always sent over the stripes, in several
/// chunks.
const STRIPED: usize = (MAX_INLINE_BYTES as usize) * 3 + 5;

/// (bytes sent, bytes posted): nothing, a little, a size smaller than posted (inline and striped),
/// and a striped message that fills its receive exactly.
const CASES: &[(usize, usize)] = &[
    (0, 0),
    (0, 4096),
    (1, 1),
    (4096, 4096),
    (1000, 64 << 10),
    (100 << 10, 100 << 10),
    (STRIPED, STRIPED),
    (STRIPED - 4099, STRIPED),
];

/// One registered buffer on each side (as NCCL registers its buffers once per connection), every
/// case sent through it; checks the bytes, the sizes test reports on both sides, and that nothing
/// past the message was written.
fn every_case_arrives(pair: &Pair) {
    let net = pair.net;
    let v = net.version();
    let capacity = CASES.iter().map(|&(_, posted)| posted).max().unwrap();
    let mut src = vec![0u8; capacity];
    let mut dst = vec![0u8; capacity];
    let (mut smh, mut rmh) = (null(), null());
    let r = net.reg_mr(pair.send, src.as_mut_ptr().cast(), capacity, &mut smh);
    assert_eq!(r, OK, "v{v}: regMr of the send buffer");
    let r = net.reg_mr(pair.recv, dst.as_mut_ptr().cast(), capacity, &mut rmh);
    assert_eq!(r, OK, "v{v}: regMr of the receive buffer");
    assert!(!smh.is_null() && !rmh.is_null(), "v{v}: regMr gave no handle");
    for (i, &(n, posted)) in CASES.iter().enumerate() {
        let data = pattern(n, 100 * u64::from(v) + i as u64);
        src[..n].copy_from_slice(&data);
        dst.fill(0xEE);
        let (mut rq, mut sq) = (null(), null());
        let r = net.irecv(pair.recv, dst.as_mut_ptr().cast(), posted, rmh, &mut rq);
        assert_eq!(r, OK, "v{v}: irecv of {posted}");
        let r = net.isend(pair.send, src.as_mut_ptr().cast(), n, smh, &mut sq);
        assert_eq!(r, OK, "v{v}: isend of {n}");
        assert!(!rq.is_null() && !sq.is_null(), "v{v}: a request slot was busy");
        let (rsize, ssize) = wait_both(net, rq, sq);
        assert_eq!(
            (rsize as usize, ssize as usize),
            (n, n),
            "v{v}: sizes test reports for {n} bytes into {posted}"
        );
        assert!(dst[..n] == data[..], "v{v}: {n} bytes into {posted} arrived different");
        assert!(
            dst[n..posted].iter().all(|&b| b == 0xEE),
            "v{v}: bytes past the {n} sent were written"
        );
    }
    assert_eq!(net.dereg_mr(pair.send, smh), OK, "v{v}: deregMr");
    assert_eq!(net.dereg_mr(pair.recv, rmh), OK, "v{v}: deregMr");
}

/// What NCCL asks before it connects: devices, then each device's properties.
fn devices_and_properties(net: &dyn Net) {
    let v = net.version();
    assert_eq!(net.init(), OK, "v{v}: init");
    assert_eq!(net.name(), "tcpxr", "v{v}: name");
    let mut n: c_int = 0;
    assert_eq!(net.devices(&mut n), OK, "v{v}: devices");
    assert!(n >= 1, "v{v}: {n} devices");
    let (r, speed, ptr) = net.speed_and_ptr(0);
    assert_eq!(r, OK, "v{v}: getProperties");
    assert!(speed > 0, "v{v}: speed {speed}");
    assert!(ptr & NCCL_PTR_HOST != 0, "v{v}: ptrSupport {ptr:#x}");
}

fn table_moves_data(net: &dyn Net) {
    devices_and_properties(net);
    let pair = Pair::new(net);
    every_case_arrives(&pair);
}

#[test]
fn v5_moves_data_as_nccl_2_12_calls_it() {
    table_moves_data(&v5());
}

#[test]
fn v6_moves_data_as_nccl_2_13_to_2_18_call_it() {
    table_moves_data(&v6());
}

#[test]
fn v7_moves_data_as_nccl_2_19_calls_it() {
    table_moves_data(&v7());
}

#[test]
fn v8_moves_data_as_nccl_2_20_to_2_23_call_it() {
    table_moves_data(&v8());
}

#[test]
fn v9_moves_data_as_nccl_2_24_to_2_25_call_it() {
    table_moves_data(&v9());
}

#[test]
fn v10_moves_data_as_nccl_2_26_to_2_27_call_it() {
    table_moves_data(&v10());
}

#[test]
fn v11_moves_data_as_nccl_2_28_to_2_29_call_it() {
    let net = v11();
    table_moves_data(&net);
    assert_eq!(net.finalize(), OK, "v11: finalize");
}

#[test]
fn v12_moves_data_as_nccl_2_30_calls_it() {
    let net = v12();
    devices_and_properties(&net);
    // NCCL 2.30 makes its connections within the communicator's context from init.
    let mut ctx: *mut c_void = null();
    let mut cfg = ncclNetCommConfig_v12_t { trafficClass: -1 };
    // SAFETY: as NCCL calls it: live out-pointers, a config, no logger nor profiler.
    let r = unsafe { net.0.init.unwrap()(&mut ctx, 0x1212, &mut cfg, None, None) };
    assert_eq!(r, OK, "v12: init");
    {
        let pair = Pair::in_context(&net, ctx);
        every_case_arrives(&pair);
    }
    // SAFETY: the context init returned, finalized once after its comms closed.
    assert_eq!(unsafe { net.0.finalize.unwrap()(ctx) }, OK, "v12: finalize");
}
