//! The tuner exported beside the net tables, called as NCCL calls it (ncclTunerPlugin_v1 … _v6
//! from the same library), before and after NCCL makes tcpxr a communicator's net.
mod common;
use common::tuner::*;
use common::*;
use nccl_net_tcpxr::abi::*;
use std::ffi::{c_int, c_void, CStr};

#[test]
fn the_tuner_acts_only_once_tcpxr_is_the_net_of_a_multi_node_communicator() {
    // SAFETY: a table's `name` is a static NUL-terminated string.
    let name = |p: *const std::ffi::c_char| unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string();
    let (v4, v6) = (
        table::<ncclTuner_v4_t>("ncclTunerPlugin_v4"),
        table::<ncclTuner_v6_t>("ncclTunerPlugin_v6"),
    );
    assert_eq!(name(v4.name), "tcpxr");
    assert!(v6.getChunkSize.is_none(), "NCCL keeps its own chunk sizes");

    // NCCL initialises every net plugin it loaded (also with NCCL_NET naming another): tcpxr's
    // init alone does not make it the communicator's net, and NCCL's choice stands.
    let net = v12();
    assert_eq!(net.init(), OK);
    assert_eq!(v5_choice(2, 2, 1 << 20), (RING_LL, 0));
    // tcpxr's init had NCCL build 8 channels (the user bounds none here); that bound is tcpxr's
    // own, so the tuner still chooses the band's channels below.
    assert_eq!(std::env::var("NCCL_MIN_NCHANNELS").as_deref(), Ok("8"));
    // Host buffers over the socket: point-to-point connections get LL buffers, LL up to 8 KiB a
    // channel (nccl_settings::defaults).
    assert_eq!(std::env::var("NCCL_ALLOC_P2P_NET_LL_BUFFERS").as_deref(), Ok("1"));
    assert_eq!(std::env::var("NCCL_P2P_LL_THRESHOLD").as_deref(), Ok("8192"));

    // NCCL asks the net it assigned for its devices' properties (its topology), then loads the
    // tuner; connections come at the first collective.
    let (r, speed, ptr) = net.speed_and_ptr(0);
    assert_eq!(r, OK);
    // lo has no link speed: with host buffers on tcpxr's 8 channels NCCL is told Socket's 10 Gb/s
    // (its ring's Simple kernel then runs 256 threads a channel), not the socket transport's 400.
    assert_eq!((speed, ptr), (10_000, NCCL_PTR_HOST));
    // Mid size on two nodes: Simple on 2 channels from 512 KiB, on 1 channel from 32 KiB below it.
    assert_eq!(v5_choice(2, 2, 1 << 20), (RING_SIMPLE, 2));
    assert_eq!(v5_choice(2, 2, 512 << 10), (RING_SIMPLE, 2));
    assert_eq!(v5_choice(2, 2, 256 << 10), (RING_SIMPLE, 1));
    assert_eq!(v5_choice(2, 2, 64 << 10), (RING_SIMPLE, 1));
    // The band's ends: 32 KiB and just under 4 MiB.
    assert_eq!(v5_choice(2, 2, 32 << 10), (RING_SIMPLE, 1));
    assert_eq!(v5_choice(2, 2, (4 << 20) - 4), (RING_SIMPLE, 2));
    assert_eq!(v5_choice(2, 2, 16 << 10), (RING_LL, 0));
    // Above it and below bulk, NCCL's protocol on the 4 channels NCCL built before tcpxr's 8.
    assert_eq!(v5_choice(2, 2, 4 << 20), (RING_LL, 4));
    assert_eq!(v5_choice(2, 2, (64 << 20) - 4), (RING_LL, 4));
    // Latency-bound and bulk sizes, and one node: NCCL's choice.
    assert_eq!(v5_choice(2, 2, 8), (RING_LL, 0));
    assert_eq!(v5_choice(2, 2, 64 << 20), (RING_LL, 0));
    assert_eq!(v5_choice(2, 1, 1 << 20), (RING_LL, 0));

    // v4 (NCCL 2.24-2.27) and v6 (2.30+) reach the same rule.
    let mut ctx: *mut c_void = std::ptr::null_mut();
    // SAFETY: as NCCL calls it.
    assert_eq!(unsafe { v4.init.unwrap()(2, 2, None, &mut ctx) }, OK);
    let mut costs = nccl_costs();
    let mut channels: c_int = 0;
    // SAFETY: as above; the table is one block of floats.
    let r = unsafe {
        v4.getCollInfo.unwrap()(
            ctx,
            ncclFuncAllReduce,
            1 << 20,
            1,
            costs.as_mut_ptr().cast(),
            7,
            3,
            0,
            &mut channels,
        )
    };
    assert_eq!((r, chosen(&costs), channels), (OK, RING_SIMPLE, 2));
    // SAFETY: the context init returned.
    assert_eq!(unsafe { v4.destroy.unwrap()(ctx) }, OK);
    let mut ctx: *mut c_void = std::ptr::null_mut();
    // SAFETY: as NCCL calls it.
    let r = unsafe { v6.init.unwrap()(&mut ctx, 1, 2, 2, None, std::ptr::null_mut(), std::ptr::null_mut()) };
    assert_eq!(r, OK);
    // SAFETY: the context init returned.
    assert_eq!(unsafe { v6.finalize.unwrap()(ctx) }, OK);

    // The tables of NCCL 2.19-2.23, in the same process (the tuner acts only once tcpxr is the
    // net, which the tests of one binary share).
    v3_decides_on_nccls_cost_table_as_v4();
    v2_and_v1_name_the_ring_in_simple_and_the_channels();
}

/// NCCL 2.22-2.23's v3: v4's call without `regBuff`, over a `float[6][3]` (2.22) or `[7][3]`
/// (2.23, with PAT) table.
fn v3_decides_on_nccls_cost_table_as_v4() {
    let v3: &ncclTuner_v3_t = table("ncclTunerPlugin_v3");
    let mut ctx: *mut c_void = std::ptr::null_mut();
    // SAFETY: as NCCL 2.23 calls it (init.cc): ranks, nodes, its logger, the context slot.
    assert_eq!(unsafe { v3.init.unwrap()(2, 2, None, &mut ctx) }, OK);
    // (bytes, algorithms in NCCL's table, NCCL's choice after the call, channels).
    for (bytes, n_algo, choice, channels) in [
        (1 << 20, 7, RING_SIMPLE, 2),
        (1 << 20, 6, RING_SIMPLE, 2),
        (64 << 10, 7, RING_SIMPLE, 1),
        (64 << 20, 7, RING_LL, 0),
        (64 << 20, 6, RING_LL, 0),
    ] {
        let mut costs = nccl_costs();
        let mut n: c_int = 0;
        // SAFETY: as enqueue.cc passes it: its table cast to float**, its dimensions (the first
        // `n_algo` rows of this block), a writable channel count preset to 0.
        let r = unsafe {
            v3.getCollInfo.unwrap()(
                ctx,
                ncclFuncAllReduce,
                bytes,
                1,
                costs.as_mut_ptr().cast(),
                n_algo,
                N_PROTO as c_int,
                &mut n,
            )
        };
        assert_eq!(
            (r, chosen(&costs), n),
            (OK, choice, channels),
            "{bytes} over {n_algo} algorithms"
        );
    }
    // SAFETY: the context init returned, destroyed once.
    assert_eq!(unsafe { v3.destroy.unwrap()(ctx) }, OK);
}

/// v2's or v1's outputs as NCCL presets them (NCCL_ALGO_UNDEF, NCCL_PROTO_UNDEF, 0 channels)
/// and reads them after the call.
struct Named {
    algo: c_int,
    proto: c_int,
    channels: c_int,
}

const UNDECIDED: (c_int, c_int, c_int) = (NCCL_UNDEF, NCCL_UNDEF, 0);
/// The ring in Simple on `n` channels, as v2 and v1 name it.
fn ring_simple_on(n: c_int) -> (c_int, c_int, c_int) {
    (NCCL_ALGO_RING as c_int, NCCL_PROTO_SIMPLE as c_int, n)
}

impl Named {
    fn new() -> Named {
        Named {
            algo: NCCL_UNDEF,
            proto: NCCL_UNDEF,
            channels: 0,
        }
    }
    fn get(&self) -> (c_int, c_int, c_int) {
        (self.algo, self.proto, self.channels)
    }
}

/// NCCL 2.21's v2 (context per communicator) and 2.19-2.20's v1 (none): no cost table, one
/// choice named.
fn v2_and_v1_name_the_ring_in_simple_and_the_channels() {
    let v2: &ncclTuner_v2_t = table("ncclTunerPlugin_v2");
    let mut ctx: *mut c_void = std::ptr::null_mut();
    // SAFETY: as NCCL 2.21 calls it (init.cc): ranks, nodes, its logger, the context slot.
    assert_eq!(unsafe { v2.init.unwrap()(2, 2, None, &mut ctx) }, OK);
    let v2_call = |bytes: usize| {
        let mut out = Named::new();
        // SAFETY: as enqueue.cc (getTunerInfo) passes it: the context, no CollNet nor NVLS, one
        // operation, its preset outputs.
        let r = unsafe {
            v2.getCollInfo.unwrap()(
                ctx,
                ncclFuncAllReduce,
                bytes,
                0,
                0,
                1,
                &mut out.algo,
                &mut out.proto,
                &mut out.channels,
            )
        };
        assert_eq!(r, OK);
        out.get()
    };
    // Mid-size: the ring in Simple on the band's channels; above it 4 channels under NCCL's own
    // choice; bulk and latency-bound sizes: NCCL's.
    assert_eq!(v2_call(1 << 20), ring_simple_on(2));
    assert_eq!(v2_call(64 << 10), ring_simple_on(1));
    assert_eq!(v2_call(4 << 20), (NCCL_UNDEF, NCCL_UNDEF, 4));
    assert_eq!(v2_call(64 << 20), UNDECIDED);
    assert_eq!(v2_call(8), UNDECIDED);
    // SAFETY: the context init returned, destroyed once.
    assert_eq!(unsafe { v2.destroy.unwrap()(ctx) }, OK);

    let v1: &ncclTuner_v1_t = table("ncclTunerPlugin_v1");
    let v1_call = |bytes: usize| {
        let mut out = Named::new();
        // SAFETY: as NCCL 2.19's enqueue.cc passes it: no context, no CollNet nor NVLS, one
        // operation, its preset outputs.
        let r = unsafe {
            v1.getCollInfo.unwrap()(
                ncclFuncAllReduce,
                bytes,
                0,
                0,
                1,
                &mut out.algo,
                &mut out.proto,
                &mut out.channels,
            )
        };
        assert_eq!(r, OK);
        out.get()
    };
    // SAFETY: as NCCL 2.19 calls it: ranks, nodes, its logger.
    assert_eq!(unsafe { v1.init.unwrap()(2, 2, None) }, OK);
    assert_eq!(v1_call(1 << 20), ring_simple_on(2));
    assert_eq!(v1_call(64 << 20), UNDECIDED);
    // A second communicator of the same shape shares the tuner; one of another shape makes the
    // calls ambiguous (v1 does not say which communicator asks): NCCL's choice until all are gone.
    // SAFETY: as above.
    assert_eq!(unsafe { v1.init.unwrap()(2, 2, None) }, OK);
    assert_eq!(v1_call(1 << 20), ring_simple_on(2));
    // SAFETY: as above.
    assert_eq!(unsafe { v1.init.unwrap()(8, 2, None) }, OK);
    assert_eq!(v1_call(1 << 20), UNDECIDED);
    for _ in 0..3 {
        // SAFETY: as NCCL calls it, once per communicator.
        assert_eq!(unsafe { v1.destroy.unwrap()() }, OK);
    }
    // SAFETY: as above.
    assert_eq!(unsafe { v1.init.unwrap()(8, 2, None) }, OK);
    // On 8 ranks 1 MiB is a 128 KiB share: one channel.
    assert_eq!(v1_call(1 << 20), ring_simple_on(1));
    // SAFETY: as above.
    assert_eq!(unsafe { v1.destroy.unwrap()() }, OK);
}

#[test]
fn bad_arguments_are_errors_not_crashes() {
    let t: &ncclTuner_v5_t = table("ncclTunerPlugin_v5");
    // SAFETY: NULL pointers tcpxr must refuse.
    let r = unsafe {
        t.init.unwrap()(
            std::ptr::null_mut(),
            0,
            2,
            2,
            None,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(r, ncclResult_t::ncclInvalidArgument);
    expect_log("init (ncclTuner v5): init: context is NULL");
    let mut ctx: *mut c_void = std::ptr::null_mut();
    // SAFETY: as NCCL calls it.
    let r = unsafe { t.init.unwrap()(&mut ctx, 0, 2, 2, None, std::ptr::null_mut(), std::ptr::null_mut()) };
    assert_eq!(r, OK);
    let mut channels: c_int = 0;
    let mut costs = nccl_costs();
    // SAFETY: a NULL table, then a negative count: refused before any access.
    let r = unsafe {
        t.getCollInfo.unwrap()(
            ctx,
            ncclFuncAllReduce,
            1 << 20,
            1,
            std::ptr::null_mut(),
            7,
            3,
            0,
            &mut channels,
        )
    };
    assert_eq!(r, ncclResult_t::ncclInvalidArgument);
    expect_log("getCollInfo (ncclTuner v5): getCollInfo: collCostTable is NULL");
    // SAFETY: as above.
    let r = unsafe {
        t.getCollInfo.unwrap()(
            ctx,
            ncclFuncAllReduce,
            1 << 20,
            1,
            costs.as_mut_ptr().cast(),
            -1,
            3,
            0,
            &mut channels,
        )
    };
    assert_eq!(r, ncclResult_t::ncclInvalidArgument);
    expect_log("getCollInfo (ncclTuner v5): getCollInfo: -1 algorithms x 3 protocols");
    // SAFETY: the context init returned.
    assert_eq!(unsafe { t.finalize.unwrap()(ctx) }, OK);
    // SAFETY: finalize of NULL is refused by nothing and touches nothing.
    assert_eq!(unsafe { t.finalize.unwrap()(std::ptr::null_mut()) }, OK);

    // v2: a NULL context or output is refused before any write.
    let v2: &ncclTuner_v2_t = table("ncclTunerPlugin_v2");
    let (mut a, mut p) = (NCCL_UNDEF, NCCL_UNDEF);
    // SAFETY: NULL pointers tcpxr must refuse.
    let r = unsafe {
        v2.getCollInfo.unwrap()(
            std::ptr::null_mut(),
            ncclFuncAllReduce,
            1 << 20,
            0,
            0,
            1,
            &mut a,
            &mut p,
            &mut channels,
        )
    };
    assert_eq!(r, ncclResult_t::ncclInvalidArgument);
    expect_log("getCollInfo (ncclTuner v2): getCollInfo: context is NULL");
    let v1: &ncclTuner_v1_t = table("ncclTunerPlugin_v1");
    // SAFETY: as above.
    let r = unsafe {
        v1.getCollInfo.unwrap()(
            ncclFuncAllReduce,
            1 << 20,
            0,
            0,
            1,
            std::ptr::null_mut(),
            &mut p,
            &mut channels,
        )
    };
    assert_eq!(r, ncclResult_t::ncclInvalidArgument);
    expect_log("getCollInfo (ncclTuner v1): getCollInfo: algorithm is NULL");
    assert_eq!((a, p), (NCCL_UNDEF, NCCL_UNDEF));
}
