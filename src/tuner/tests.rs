//! The tuner's choices on NCCL's cost tables (and without one, v1-v2), row by row.
use super::*;
use crate::abi::{
    ncclFuncAllGather, ncclFuncAllReduce, ncclFuncBroadcast, ncclFuncReduce, ncclFuncReduceScatter, ncclFunc_t,
};

const N_ALGO: usize = 7;
const N_PROTO: usize = 3;

fn facts() -> Facts {
    Facts {
        setting: Switch::Auto,
        transport: Some(TransportKind::Socket),
        assigned: true,
        n_ranks: 2,
        n_nodes: 2,
        user_channels: false,
        user_algo_proto: false,
        tcpxr_set_proto: false,
        pool_threads: Some(None),
        kernel_unpacks_host_pages: Some(false),
    }
}

/// NCCL's table for tcpxr at a mid size: ring LL cheapest, ring Simple usable, the rest
/// disabled except tree.
fn table(ring_ll: f32, ring_simple: f32) -> Vec<f32> {
    let mut t = vec![-1.0; N_ALGO * N_PROTO];
    t[NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_LL] = ring_ll;
    t[NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE] = ring_simple;
    t[0] = 900.0; // tree LL
    t
}

/// `t`'s choice on `costs`, which it must leave as they were (it sets channels only).
fn channels_only(t: &Tuner, func: ncclFunc_t, bytes: usize, mut costs: Vec<f32>) -> Option<i32> {
    let before = costs.clone();
    let channels = t.choose(func, bytes, &mut costs, N_PROTO);
    assert_eq!(costs, before, "{func} {bytes}: the costs changed");
    channels
}

#[test]
fn mid_size_all_reduce_moves_from_ll_to_simple_on_two_channels() {
    let t = Tuner::new(&facts());
    assert_eq!(t.idle_because, None);
    let mut costs = table(40.0, 60.0);
    assert_eq!(t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO), Some(2));
    assert_eq!(cheapest(&costs), Some(NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE));
}

#[test]
fn the_band_is_32_kib_to_4_mib_on_two_ranks_with_one_channel_below_512_kib() {
    let t = Tuner::new(&facts());
    for (bytes, channels) in [
        (32 << 10, 1),
        (64 << 10, 1),
        ((512 << 10) - 8, 1),
        (512 << 10, 2),
        (1 << 20, 2),
        ((4 << 20) - 8, 2),
    ] {
        let mut costs = table(20.0, 30.0);
        assert_eq!(
            t.choose(ncclFuncAllReduce, bytes, &mut costs, N_PROTO),
            Some(channels),
            "{bytes}"
        );
        assert_eq!(cheapest(&costs), Some(NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE));
    }
}

#[test]
fn all_gather_and_reduce_scatter_of_16_kib_to_1_mib_shares_run_the_ring_in_simple_on_one_or_two_channels() {
    let t = Tuner::new(&facts());
    let (broadcast, ll, simple) = (ncclFuncBroadcast, NCCL_PROTO_LL, NCCL_PROTO_SIMPLE);
    // (collective, bytes over two ranks, NCCL's cheapest (algorithm, protocol), channels).
    for (func, bytes, (algo, proto), channels) in [
        (ncclFuncAllGather, 32 << 10, (NCCL_ALGO_RING, ll), Some(1)),
        (ncclFuncAllGather, 128 << 10, (NCCL_ALGO_RING, ll), Some(1)),
        (ncclFuncReduceScatter, (512 << 10) - 8, (NCCL_ALGO_RING, ll), Some(1)),
        (ncclFuncAllGather, 512 << 10, (NCCL_ALGO_PAT, simple), Some(2)),
        (ncclFuncReduceScatter, (2 << 20) - 8, (NCCL_ALGO_RING, simple), Some(2)),
    ] {
        let mut costs = vec![-1.0; N_ALGO * N_PROTO];
        costs[algo * N_PROTO + proto] = 10.0;
        costs[NCCL_ALGO_RING * N_PROTO + simple] = 30.0;
        assert_eq!(t.choose(func, bytes, &mut costs, N_PROTO), channels, "{func} {bytes}");
        assert_eq!(
            cheapest(&costs),
            Some(NCCL_ALGO_RING * N_PROTO + simple),
            "{func} {bytes}"
        );
    }
    // Outside the band (shares under 16 KiB and of 1 MiB), and a broadcast: NCCL's protocol stays.
    for (func, bytes) in [
        (ncclFuncAllGather, (32 << 10) - 8),
        (ncclFuncReduceScatter, 2 << 20),
        (broadcast, 512 << 10),
    ] {
        let mut costs = table(10.0, 30.0);
        t.choose(func, bytes, &mut costs, N_PROTO);
        assert_eq!(cheapest(&costs), Some(NCCL_ALGO_RING * N_PROTO + ll), "{func} {bytes}");
    }
}

#[test]
fn broadcast_and_reduce_of_64_to_512_kib_run_the_ring_in_simple_on_nccls_four_channels() {
    let t = Tuner::new(&facts());
    let (broadcast, reduce) = (ncclFuncBroadcast, ncclFuncReduce);
    let ring = |proto| NCCL_ALGO_RING * N_PROTO + proto;
    // (collective, bytes, channels): Simple made the cheapest, then the below-bulk rule (4
    // where NCCL's Simple keeps 4: from 4 x 32 KiB; below, NCCL's own count).
    for (func, bytes, channels) in [
        (broadcast, 64 << 10, None),
        (reduce, 128 << 10, Some(4)),
        (broadcast, (512 << 10) - 8, Some(4)),
    ] {
        let mut costs = table(10.0, 30.0);
        assert_eq!(t.choose(func, bytes, &mut costs, N_PROTO), channels, "{func} {bytes}");
        assert_eq!(cheapest(&costs), Some(ring(NCCL_PROTO_SIMPLE)), "{func} {bytes}");
    }
    // Outside: NCCL's protocol.
    for (func, bytes) in [(broadcast, (64 << 10) - 8), (reduce, 512 << 10)] {
        let mut costs = table(10.0, 30.0);
        t.choose(func, bytes, &mut costs, N_PROTO);
        assert_eq!(cheapest(&costs), Some(ring(NCCL_PROTO_LL)), "{func} {bytes}");
    }
}

#[test]
fn below_bulk_the_ring_keeps_the_channels_nccl_chose_from_four() {
    let t = Tuner::new(&facts());
    let all_gather = ncclFuncAllGather;
    // (collective, bytes, NCCL's cheapest protocol on the ring, channels), two ranks.
    for (func, bytes, proto, channels) in [
        // all_reduce above the band, in NCCL's own protocol (its costs untouched).
        (ncclFuncAllReduce, 4 << 20, NCCL_PROTO_SIMPLE, Some(4)),
        (ncclFuncAllReduce, (64 << 20) - 8, NCCL_PROTO_SIMPLE, Some(4)),
        // From shares of 32 MiB: NCCL's 8.
        (ncclFuncAllReduce, 64 << 20, NCCL_PROTO_SIMPLE, None),
        (ncclFuncAllReduce, 1 << 30, NCCL_PROTO_SIMPLE, None),
        (all_gather, 64 << 20, NCCL_PROTO_SIMPLE, None),
        // Other collectives at any smaller size where NCCL would keep 4 or more.
        (all_gather, (64 << 20) - 8, NCCL_PROTO_SIMPLE, Some(4)),
        (all_gather, 2 << 20, NCCL_PROTO_SIMPLE, Some(4)),
        (ncclFuncBroadcast, 32 << 10, NCCL_PROTO_LL, Some(4)),
        (all_gather, 20 << 10, NCCL_PROTO_LL128, Some(4)),
        // Where NCCL itself keeps fewer (LL: 8 KiB a channel on two ranks), its choice.
        (ncclFuncBroadcast, (32 << 10) - 8, NCCL_PROTO_LL, None),
        (ncclFuncBroadcast, (128 << 10) - 8, NCCL_PROTO_SIMPLE, None),
        (all_gather, 8, NCCL_PROTO_LL, None),
        (ncclFuncAllReduce, 8, NCCL_PROTO_LL, None),
    ] {
        let mut costs = vec![-1.0; N_ALGO * N_PROTO];
        costs[NCCL_ALGO_RING * N_PROTO + proto] = 10.0;
        costs[0] = 900.0; // tree LL
        assert_eq!(
            channels_only(&t, func, bytes, costs),
            channels,
            "{func} {bytes} {proto}"
        );
    }
    // PAT (NCCL spreads it by traffic itself): 4 at any size below bulk, none from it.
    for (bytes, channels) in [(1024, Some(4)), ((64 << 20) - 8, Some(4)), (64 << 20, None)] {
        let mut costs = vec![-1.0; N_ALGO * N_PROTO];
        costs[NCCL_ALGO_PAT * N_PROTO + NCCL_PROTO_SIMPLE] = 10.0;
        assert_eq!(
            t.choose(all_gather, bytes, &mut costs, N_PROTO),
            channels,
            "PAT {bytes}"
        );
    }
    // The tree in LL and LL128 (4 KiB and 5 KiB a channel at any rank count, NCCL's own
    // choice for a small all_reduce on 4 ranks): 4 where NCCL would keep more, its count below.
    // On 8 ranks, where no row runs the ring instead.
    let tree_ranks = Tuner::new(&Facts { n_ranks: 8, ..facts() });
    for (proto, bytes, channels) in [
        (NCCL_PROTO_LL, 32 << 10, Some(4)),
        (NCCL_PROTO_LL, 16 << 10, Some(4)),
        (NCCL_PROTO_LL, (16 << 10) - 8, None),
        (NCCL_PROTO_LL, 8 << 10, None),
        (NCCL_PROTO_LL128, 20 << 10, Some(4)),
        (NCCL_PROTO_LL128, (20 << 10) - 8, None),
        // The tree in Simple: NCCL's choice at any size.
        (NCCL_PROTO_SIMPLE, 1 << 20, None),
    ] {
        let mut costs = table(40.0, 60.0);
        costs[NCCL_ALGO_TREE * N_PROTO + proto] = 10.0;
        assert_eq!(
            channels_only(&tree_ranks, ncclFuncAllReduce, bytes, costs),
            channels,
            "tree {proto} {bytes}"
        );
    }
    // LL's threshold grows with the ranks: on 8, 128 KiB for 4 channels (a broadcast: no row
    // names its protocol there).
    let eight = Tuner::new(&Facts { n_ranks: 8, ..facts() });
    let mut costs = table(40.0, 60.0);
    assert_eq!(eight.choose(ncclFuncBroadcast, 32 << 10, &mut costs, N_PROTO), None);
    assert_eq!(eight.choose(ncclFuncBroadcast, 512 << 10, &mut costs, N_PROTO), Some(4));
}

/// An all_reduce of `bytes` on `ranks` ranks where NCCL's cheapest choice is algorithm `nccl`'s
/// LL and algorithm `other`'s LL is usable but costlier: the tuner's choice is `other`'s LL when
/// `traded`, else NCCL's; an all_gather's costs are left as they were. Returns `choose`'s channels.
fn ll_trade(ranks: usize, bytes: usize, nccl: usize, other: usize, traded: bool) -> Option<i32> {
    let t = Tuner::new(&Facts {
        n_ranks: ranks,
        ..facts()
    });
    let costs_of = || {
        let mut costs = vec![-1.0; N_ALGO * N_PROTO];
        costs[nccl * N_PROTO + NCCL_PROTO_LL] = 10.0;
        costs[other * N_PROTO + NCCL_PROTO_LL] = 40.0;
        costs[NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE] = 60.0;
        costs
    };
    let mut costs = costs_of();
    let channels = t.choose(ncclFuncAllReduce, bytes, &mut costs, N_PROTO);
    let want = if traded { other } else { nccl };
    assert_eq!(
        cheapest(&costs),
        Some(want * N_PROTO + NCCL_PROTO_LL),
        "{ranks} ranks, {bytes}"
    );
    let mut costs = costs_of();
    t.choose(ncclFuncAllGather, bytes, &mut costs, N_PROTO);
    assert_eq!(costs, costs_of(), "{ranks} ranks, {bytes}: all_gather");
    channels
}

#[test]
fn a_tiny_all_reduce_on_3_or_4_ranks_runs_the_trees_ll_where_nccl_would_run_the_rings() {
    let tree_ll = NCCL_ALGO_TREE * N_PROTO + NCCL_PROTO_LL;
    // (ranks, bytes, whether the tree replaces the ring); NCCL's choice the ring's LL.
    for (ranks, bytes, tree) in [
        (4, 8, true),
        (4, 2 << 10, true),
        (4, (8 << 10) - 4, true),
        (4, 8 << 10, false),
        (3, 2 << 10, true),
        (3, (6 << 10) - 3, true),
        (3, 6 << 10, false),
        (2, 2 << 10, false),
        (5, 2 << 10, false),
    ] {
        ll_trade(ranks, bytes, NCCL_ALGO_RING, NCCL_ALGO_TREE, tree);
    }
    let t = Tuner::new(&Facts { n_ranks: 4, ..facts() });
    // A tree NCCL cannot run (its cost negative: disabled or unsupported) is not chosen.
    let mut costs = table(10.0, 60.0);
    costs[tree_ll] = -1.0;
    let before = costs.clone();
    t.choose(ncclFuncAllReduce, 2 << 10, &mut costs, N_PROTO);
    assert_eq!(costs, before, "no tree");
    // NCCL's own tree stands, and so does the ring's Simple where NCCL chose it.
    for (ring_ll_cost, ring_simple_cost, tree_cost) in [(40.0, 60.0, 10.0), (-1.0, 5.0, 40.0)] {
        let mut costs = table(ring_ll_cost, ring_simple_cost);
        costs[tree_ll] = tree_cost;
        let before = costs.clone();
        t.choose(ncclFuncAllReduce, 2 << 10, &mut costs, N_PROTO);
        assert_eq!(costs, before);
    }
    // v2 names the tree's LL, but not where tcpxr bound NCCL_PROTO to Simple.
    assert_eq!(
        t.pick(ncclFuncAllReduce, 2 << 10).algo_proto,
        Some((NCCL_ALGO_TREE, NCCL_PROTO_LL))
    );
    let gpu_buffers = Tuner::new(&Facts {
        n_ranks: 4,
        tcpxr_set_proto: true,
        ..facts()
    });
    assert_eq!(gpu_buffers.pick(ncclFuncAllReduce, 2 << 10).algo_proto, None);
}

#[test]
fn a_small_all_reduce_on_3_or_4_ranks_runs_the_rings_ll_where_nccl_would_run_the_trees() {
    let tree_ll = NCCL_ALGO_TREE * N_PROTO + NCCL_PROTO_LL;
    // (ranks, bytes, whether the ring replaces the tree); NCCL's choice the tree's LL.
    for (ranks, bytes, ring) in [
        (4, 8, false),
        (4, 8 << 10, true),
        (4, 32 << 10, true),
        (4, (64 << 10) - 8, true),
        (4, 64 << 10, false),
        (3, 12 << 10, true),
        (3, 4 << 10, false),
        (2, 8 << 10, false),
        (5, 16 << 10, false),
    ] {
        let channels = ll_trade(ranks, bytes, NCCL_ALGO_TREE, NCCL_ALGO_RING, ring);
        // The ring's LL keeps 16 KiB a channel on 4 ranks: NCCL's own single channel stands.
        if ring {
            assert_eq!(channels, None, "{ranks} ranks, {bytes}");
        }
    }
    let t = Tuner::new(&Facts { n_ranks: 4, ..facts() });
    let mut costs = table(40.0, 60.0);
    let before = costs.clone();
    t.choose(ncclFuncAllReduce, 8 << 10, &mut costs, N_PROTO);
    assert_eq!(costs, before, "NCCL's ring stands");
    // A ring the user disabled (every ring cost negative) is not chosen.
    let mut costs = vec![-1.0; N_ALGO * N_PROTO];
    costs[tree_ll] = 10.0;
    t.choose(ncclFuncAllReduce, 8 << 10, &mut costs, N_PROTO);
    assert_eq!(cheapest(&costs), Some(tree_ll));
    // Nor is the tree in Simple (GPU buffers: LL off).
    let mut costs = table(-1.0, 60.0);
    costs[NCCL_ALGO_TREE * N_PROTO + NCCL_PROTO_SIMPLE] = 10.0;
    let before = costs.clone();
    t.choose(ncclFuncAllReduce, 8 << 10, &mut costs, N_PROTO);
    assert_eq!(costs, before, "the tree's Simple stands");
    // v2 names the ring's LL.
    assert_eq!(
        t.pick(ncclFuncAllReduce, 8 << 10).algo_proto,
        Some((NCCL_ALGO_RING, NCCL_PROTO_LL))
    );
    assert_eq!(
        t.pick(ncclFuncAllReduce, 64 << 10).algo_proto,
        Some((NCCL_ALGO_RING, NCCL_PROTO_SIMPLE)),
        "the next row's"
    );
    // Not where tcpxr bound NCCL_PROTO to Simple for GPU buffers: NCCL would run a named LL.
    let gpu_buffers = Tuner::new(&Facts {
        n_ranks: 4,
        tcpxr_set_proto: true,
        ..facts()
    });
    assert_eq!(gpu_buffers.pick(ncclFuncAllReduce, 8 << 10).algo_proto, None);
    assert_eq!(
        gpu_buffers.pick(ncclFuncAllReduce, 64 << 10).algo_proto,
        Some((NCCL_ALGO_RING, NCCL_PROTO_SIMPLE))
    );
}

#[test]
fn where_nccls_kernel_unpacks_host_pages_shares_of_4_to_32_mib_keep_every_channel() {
    let t = Tuner::new(&Facts {
        kernel_unpacks_host_pages: Some(true),
        ..facts()
    });
    // (collective, bytes, channels), two ranks, NCCL's choice the ring in Simple.
    for (func, bytes, channels) in [
        (ncclFuncAllReduce, (8 << 20) - 8, Some(4)),
        (ncclFuncAllReduce, 8 << 20, None),
        (ncclFuncAllReduce, (64 << 20) - 8, None),
        (ncclFuncAllGather, 4 << 20, Some(4)),
        (ncclFuncAllGather, 8 << 20, None),
        (ncclFuncReduceScatter, 32 << 20, None),
        (ncclFuncAllReduce, 1 << 30, None),
    ] {
        let mut costs = vec![-1.0; N_ALGO * N_PROTO];
        costs[NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE] = 10.0;
        assert_eq!(channels_only(&t, func, bytes, costs), channels, "{func} {bytes}");
        assert_eq!(t.pick(func, bytes).channels, channels, "v2: {func} {bytes}");
    }
    // The band's rows stand.
    let mut costs = table(40.0, 60.0);
    assert_eq!(t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO), Some(2));
    // On 4 ranks a 4 MiB share is 16 MiB.
    let four = Tuner::new(&Facts {
        n_ranks: 4,
        kernel_unpacks_host_pages: Some(true),
        ..facts()
    });
    let mut costs = table(40.0, 10.0);
    assert_eq!(four.choose(ncclFuncAllReduce, 8 << 20, &mut costs, N_PROTO), Some(4));
    assert_eq!(four.choose(ncclFuncAllReduce, 16 << 20, &mut costs, N_PROTO), None);
}

#[test]
fn a_pool_of_few_threads_caps_every_collectives_channels() {
    assert_eq!(
        pool_channels(0).map(|p| p.channels),
        None,
        "NCCL's thread alone: unmeasured, no cap"
    );
    assert_eq!(pool_channels(1).map(|p| p.channels), None);
    assert_eq!(pool_channels(2).map(|p| p.channels), Some(2));
    assert_eq!(
        pool_channels(3).map(|p| p.channels),
        None,
        "measured: mixed, keeps 8 (run 253)"
    );
    assert_eq!(
        pool_channels(4).map(|p| p.channels),
        None,
        "measured within the spread of 8"
    );
    assert_eq!(pool_channels(7).map(|p| p.channels), None);
    assert_eq!(
        pool_channels(8).map(|p| p.channels),
        None,
        "a roomy pool keeps NCCL's 8 for bulk"
    );
    let with = |threads: Option<usize>| {
        Tuner::new(&Facts {
            pool_threads: Some(threads),
            ..facts()
        })
    };
    let simple_ring = |bytes: usize, t: &Tuner| {
        let mut costs = vec![-1.0; N_ALGO * N_PROTO];
        costs[NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE] = 10.0;
        t.choose(ncclFuncAllReduce, bytes, &mut costs, N_PROTO)
    };
    // (pool threads, channels for: bulk all_reduce, below bulk, the band's 2-channel row).
    for (threads, bulk, below, band) in [
        (None, None, Some(4), Some(2)),
        (Some(10), None, Some(4), Some(2)),
        (Some(6), None, Some(4), Some(2)),
        (Some(2), Some(2), Some(2), Some(2)),
    ] {
        let t = with(threads);
        assert_eq!(simple_ring(1 << 30, &t), bulk, "bulk, {threads:?} threads");
        assert_eq!(simple_ring(8 << 20, &t), below, "below bulk, {threads:?} threads");
        let mut costs = table(40.0, 60.0);
        assert_eq!(
            t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO),
            band,
            "band, {threads:?}"
        );
    }
    // A cap never raises NCCL's own smaller count: an 8 B all_reduce in LL keeps it.
    let two = with(Some(2));
    let mut costs = vec![-1.0; N_ALGO * N_PROTO];
    costs[NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_LL] = 10.0;
    assert_eq!(two.choose(ncclFuncAllReduce, 8, &mut costs, N_PROTO), None);
    // The band's one-channel row stays at 1.
    let mut costs = table(40.0, 60.0);
    assert_eq!(two.choose(ncclFuncAllReduce, 64 << 10, &mut costs, N_PROTO), Some(1));
    // Where NCCL keeps another choice in the band (the tree's LL, far cheaper; or Simple
    // disabled), the row's count does not apply but the pool's cap does, as at bulk.
    let mut tree_ll = table(40.0, 60.0);
    tree_ll[NCCL_ALGO_TREE * N_PROTO + NCCL_PROTO_LL] = 1.0;
    for costs in [tree_ll, table(40.0, -1.0)] {
        assert_eq!(
            channels_only(&two, ncclFuncAllReduce, 1 << 20, costs.clone()),
            Some(2),
            "{costs:?}"
        );
        assert_eq!(channels_only(&with(Some(6)), ncclFuncAllReduce, 1 << 20, costs), None);
    }
    // The user's channel bounds stand above the cap.
    let bounded = Tuner::new(&Facts {
        user_channels: true,
        pool_threads: Some(Some(2)),
        ..facts()
    });
    assert_eq!(simple_ring(1 << 30, &bounded), None);
    // Tables without costs (v1, v2): the same caps.
    assert_eq!(two.pick(ncclFuncAllReduce, 1 << 30).channels, Some(2));
    assert_eq!(with(Some(6)).pick(ncclFuncAllReduce, 1 << 30).channels, None);
    assert_eq!(with(Some(10)).pick(ncclFuncAllReduce, 1 << 30).channels, None);
    assert_eq!(two.pick(ncclFuncAllGather, 8 << 20).channels, Some(2));
    assert_eq!(two.pick(ncclFuncAllReduce, 8).channels, None);
}

#[test]
fn the_share_scales_with_ranks() {
    let t = Tuner::new(&Facts { n_ranks: 8, ..facts() });
    // 1 MiB over 8 ranks is a 128 KiB share: Simple, 1 channel; 8 MiB a 1 MiB share: 2 channels.
    // 64 KiB is an 8 KiB share: LL.
    let mut costs = table(40.0, 60.0);
    assert_eq!(t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO), Some(1));
    let mut costs = table(40.0, 60.0);
    assert_eq!(t.choose(ncclFuncAllReduce, 8 << 20, &mut costs, N_PROTO), Some(2));
    let mut costs = table(40.0, 60.0);
    assert_eq!(t.choose(ncclFuncAllReduce, 64 << 10, &mut costs, N_PROTO), None);
    assert_eq!(cheapest(&costs), Some(NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_LL));
}

#[test]
fn disabled_protocols_and_nccls_other_choices_are_respected() {
    let t = Tuner::new(&facts());
    // NCCL_PROTO=LL: Simple is -1 and stays so.
    let mut costs = table(40.0, -1.0);
    assert_eq!(t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO), None);
    assert_eq!(costs[NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE], -1.0);
    // Tree cheapest: NCCL's choice stands.
    let mut costs = table(40.0, 60.0);
    costs[0] = 10.0;
    assert_eq!(t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO), None);
    assert_eq!(cheapest(&costs), Some(0));
    // Simple already cheapest: only the channels.
    let mut costs = table(60.0, 40.0);
    assert_eq!(t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO), Some(2));
    assert_eq!(costs[NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE], 40.0);
}

#[test]
fn user_channel_bounds_keep_nccls_channel_count() {
    let t = Tuner::new(&Facts {
        user_channels: true,
        ..facts()
    });
    let mut costs = table(40.0, 60.0);
    assert_eq!(t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO), None);
    assert_eq!(cheapest(&costs), Some(NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE));
    assert_eq!(
        t.choose(ncclFuncAllGather, 4 << 20, &mut table(40.0, 60.0), N_PROTO),
        None
    );
}

#[test]
fn idle_unless_tcpxr_is_the_net_of_a_multi_node_communicator_over_the_socket() {
    let idle = |f: Facts| Tuner::new(&f).idle_because;
    assert!(idle(Facts {
        setting: Switch::Off,
        ..facts()
    })
    .unwrap()
    .contains("NCCL_TCPXR_TUNER=0"));
    assert!(idle(Facts {
        transport: None,
        ..facts()
    })
    .is_some());
    assert!(idle(Facts {
        transport: Some(TransportKind::Tcpx),
        ..facts()
    })
    .unwrap()
    .contains("socket transport only"));
    assert_eq!(
        idle(Facts {
            transport: Some(TransportKind::Tcpx),
            setting: Switch::On,
            ..facts()
        }),
        None
    );
    assert!(idle(Facts {
        assigned: false,
        ..facts()
    })
    .unwrap()
    .contains("another net"));
    assert!(idle(Facts { n_nodes: 1, ..facts() }).unwrap().contains("single node"));
    // An idle tuner changes nothing.
    let t = Tuner::new(&Facts { n_nodes: 1, ..facts() });
    let mut costs = table(40.0, 60.0);
    assert_eq!(t.choose(ncclFuncAllReduce, 1 << 20, &mut costs, N_PROTO), None);
    assert_eq!(costs, table(40.0, 60.0));
}

#[test]
fn without_a_cost_table_the_rows_name_the_ring_in_simple_and_cap_channels_where_any_ring_protocol_keeps_four() {
    let t = Tuner::new(&facts());
    let simple = Some((NCCL_ALGO_RING, NCCL_PROTO_SIMPLE));
    let pick = |algo_proto, channels| Pick { algo_proto, channels };
    // (collective, bytes over two ranks, what v2 tells NCCL).
    for (func, bytes, want) in [
        // The all_reduce band: named, with its channels.
        (ncclFuncAllReduce, 32 << 10, pick(simple, Some(1))),
        (ncclFuncAllReduce, 256 << 10, pick(simple, Some(1))),
        (ncclFuncAllReduce, 1 << 20, pick(simple, Some(2))),
        (ncclFuncAllReduce, (4 << 20) - 8, pick(simple, Some(2))),
        // Below it NCCL's choice; above it and below bulk, 4 channels under NCCL's choice.
        (ncclFuncAllReduce, 16 << 10, Pick::default()),
        (ncclFuncAllReduce, 4 << 20, pick(None, Some(4))),
        (ncclFuncAllReduce, (64 << 20) - 8, pick(None, Some(4))),
        (ncclFuncAllReduce, 64 << 20, Pick::default()),
        // all_gather's band from a 16 KiB share, and below it NCCL's choice (4 channels only
        // from 4 x 32 KiB, Simple's threshold and the ring's largest on two ranks, inside the band).
        (ncclFuncAllGather, 32 << 10, pick(simple, Some(1))),
        (ncclFuncAllGather, 128 << 10, pick(simple, Some(1))),
        (ncclFuncReduceScatter, 1 << 20, pick(simple, Some(2))),
        (ncclFuncAllGather, (32 << 10) - 8, Pick::default()),
        // broadcast and reduce: named, then the below-bulk row by Simple's threshold.
        (ncclFuncBroadcast, 64 << 10, pick(simple, None)),
        (ncclFuncReduce, 128 << 10, pick(simple, Some(4))),
        (ncclFuncBroadcast, 512 << 10, pick(None, Some(4))),
    ] {
        assert_eq!(t.pick(func, bytes), want, "{func} {bytes}");
    }
    // LL's threshold grows with the ranks, past Simple's from 9: on 64, 1 MiB for 4 channels (a
    // broadcast, above the sizes its row names).
    let many = Tuner::new(&Facts { n_ranks: 64, ..facts() });
    assert_eq!(many.pick(ncclFuncBroadcast, (1 << 20) - 8), Pick::default());
    assert_eq!(many.pick(ncclFuncBroadcast, 1 << 20), pick(None, Some(4)));
    // The user's NCCL_ALGO or NCCL_PROTO: nothing named, nor a named row's channels.
    let named_by_user = Tuner::new(&Facts {
        user_algo_proto: true,
        ..facts()
    });
    assert_eq!(named_by_user.pick(ncclFuncAllReduce, 1 << 20), Pick::default());
    assert_eq!(named_by_user.pick(ncclFuncBroadcast, 256 << 10), pick(None, Some(4)));
    // The user's channel bounds: named, NCCL's channels.
    let bounded = Tuner::new(&Facts {
        user_channels: true,
        ..facts()
    });
    assert_eq!(bounded.pick(ncclFuncAllReduce, 1 << 20), pick(simple, None));
    assert_eq!(bounded.pick(ncclFuncAllReduce, 4 << 20), Pick::default());
    // Idle: nothing.
    let idle = Tuner::new(&Facts { n_nodes: 1, ..facts() });
    assert_eq!(idle.pick(ncclFuncAllReduce, 1 << 20), Pick::default());
}
