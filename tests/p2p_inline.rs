//! NCCL's hints choose how far a connection sends inline while idle. NCCL sets a connection's
//! hints (setNetAttr, v11+) just before it connects it: a connection made under a point-to-point
//! hint sends a lone message inline up to NCCL_TCPXR_INLINE_IDLE_P2P_BYTES; one made under a
//! collective's hint (or none) up to NCCL_TCPXR_INLINE_IDLE_BYTES, and larger messages over the
//! stripes. On point-to-point connections NCCL's thread sends a mid-sized message inline only
//! alone: once two were out at once (a sendrecv over two channels), its messages go over the
//! stripes until one travels alone again. Seen from the TCPX emulator, which counts every send posted to a stripe (an inline
//! message posts none).
mod common;
use common::*;
use std::ffi::c_void;

before_main! {
    select_tcpx(&[
        ("NCCL_TCPXR_STRIPES", "2"),
        ("NCCL_TCPXR_INLINE_IDLE_BYTES", "65536"),
        ("NCCL_TCPXR_INLINE_IDLE_P2P_BYTES", "262144"),
    ]);
}

/// NCCL's p2p connection hint (Send | Recv | AlltoAll | Scatter | Gather), and a collective one
/// (NCCL leaves the mask undefined when it connects a collective's connection).
const P2P_OPS: u32 = 0x7c0;
const UNDEFINED: u32 = u32::MAX;

/// A pair connected as NCCL connects one: hints for `op` on the communicator's context, then
/// listen, connect and accept with that context.
fn pair_under<'a>(net: &'a V12, ctx: *mut c_void, op: u32) -> Pair<'a> {
    let mut attr = net_attr(2, op, UNDEFINED, UNDEFINED);
    // SAFETY: the context init returned and live attributes, as NCCL passes them.
    assert_eq!(unsafe { net.0.setNetAttr.unwrap()(ctx, &mut attr) }, OK);
    Pair::in_context(net, ctx)
}

fn send_posts() -> (u64, u64) {
    let comms = assert_tcpx_rules_kept(12);
    let sends = comms.iter().filter(|c| c.kind == "send");
    (
        sends.clone().map(|c| c.get("posts")).sum(),
        sends.map(|c| c.get("bytes")).sum(),
    )
}

#[test]
fn a_p2p_hint_sends_lone_messages_inline_up_to_its_own_limit() {
    let net = v12();
    assert_eq!(net.init(), OK);
    let mut ctx: *mut c_void = null();
    // SAFETY: as NCCL calls init (no config, no logger, no profiler).
    let r = unsafe { net.0.init.unwrap()(&mut ctx, 0x5150, std::ptr::null_mut(), None, None) };
    assert_eq!(r, OK);
    let lone = 128 << 10; // above the collective limit (64 KiB), within the p2p one (256 KiB)
    let large = 300 << 10; // above both: one 512 KiB chunk, so one stripe post
    {
        let p2p = pair_under(&net, ctx, P2P_OPS);
        for i in 0..5 {
            let mut data = pattern(lone, 10 + i);
            assert!(p2p.transfer(&mut data, lone) == data, "p2p message {i} differs");
        }
        let mut data = pattern(large, 20);
        assert!(p2p.transfer(&mut data, large) == data, "large p2p message differs");
    }
    assert_eq!(
        send_posts(),
        (1, large as u64),
        "only the message above the p2p limit reached a stripe"
    );
    {
        let coll = pair_under(&net, ctx, UNDEFINED);
        for i in 0..5 {
            let mut data = pattern(lone, 30 + i);
            assert!(coll.transfer(&mut data, lone) == data, "collective message {i} differs");
        }
    }
    assert_eq!(
        send_posts(),
        (6, (large + 5 * lone) as u64),
        "a collective's connection stripes what a p2p connection sends inline"
    );
    {
        // A sendrecv over two channels: a message on each of two p2p connections, both posted
        // before either is tested. The first round's first is inline (nothing had company yet),
        // then every message is striped until one travels alone from post to end.
        let pairs = [pair_under(&net, ctx, P2P_OPS), pair_under(&net, ctx, P2P_OPS)];
        let mut seed = 40;
        for _ in 0..3 {
            round_trip_in_flight(&net, &pairs, lone, 1, &mut seed);
        }
        for i in 0..3 {
            let mut data = pattern(lone, 60 + i);
            assert!(
                pairs[0].transfer(&mut data, lone) == data,
                "lone message {i} after the pairs differs"
            );
        }
    }
    assert_eq!(
        send_posts(),
        (6 + 6, (large + 11 * lone) as u64),
        "striped: the first round's second, both of the next two rounds, the first lone message after"
    );
    // SAFETY: the context init returned, no longer used.
    let r = unsafe { net.0.finalize.unwrap()(ctx) };
    assert_eq!(r, OK);
}
