//! NCCL's side of the tuner table (`ncclTunerPlugin_v5`, what NCCL 2.28 calls): a cost table shaped
//! as NCCL's, NCCL's choice from it, and one communicator's tuner context.
use super::{table, v12, Net, OK, V12};
use nccl_net_tcpxr::abi::*;
use std::ffi::{c_int, c_void};

pub const N_ALGO: usize = 7;
pub const N_PROTO: usize = 3;
pub const RING_LL: usize = NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_LL;
pub const RING_SIMPLE: usize = NCCL_ALGO_RING * N_PROTO + NCCL_PROTO_SIMPLE;

/// NCCL's order in a process whose communicators run over tcpxr: init the net, ask for its
/// device's properties (NCCL's topology), then open a communicator's tuner context for `ranks` on
/// `nodes`; connections come at the first collective. Init reads the environment once: set it first.
pub fn net_then_tuner(ranks: usize, nodes: usize) -> (V12, TunerV5) {
    let net = v12();
    assert_eq!(net.init(), OK);
    let (r, _, _) = net.speed_and_ptr(0);
    assert_eq!(r, OK);
    (net, TunerV5::open(ranks, nodes))
}

/// A cost table shaped as NCCL's `float[7][3]` for a mid-size all_reduce over a fast net: ring LL
/// cheapest, ring Simple usable, tree Simple usable, the rest disabled.
pub fn nccl_costs() -> [[f32; N_PROTO]; N_ALGO] {
    let mut t = [[NCCL_ALGO_PROTO_IGNORE; N_PROTO]; N_ALGO];
    t[NCCL_ALGO_RING][NCCL_PROTO_LL] = 40.0;
    t[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] = 60.0;
    t[0][NCCL_PROTO_SIMPLE] = 80.0;
    t
}

/// NCCL's choice from a table: the cheapest usable entry.
pub fn chosen(t: &[[f32; N_PROTO]; N_ALGO]) -> usize {
    let flat: Vec<f32> = t.iter().flatten().copied().collect();
    (0..flat.len())
        .filter(|&i| flat[i] >= 0.0)
        .min_by(|&a, &b| flat[a].total_cmp(&flat[b]))
        .unwrap()
}

/// One communicator's tuner through the v5 table, from its init to its finalize (on drop).
pub struct TunerV5 {
    t: &'static ncclTuner_v5_t,
    ctx: *mut c_void,
}

impl TunerV5 {
    /// NCCL's init for a communicator of `ranks` ranks over `nodes` nodes.
    pub fn open(ranks: usize, nodes: usize) -> TunerV5 {
        let t: &ncclTuner_v5_t = table("ncclTunerPlugin_v5");
        let mut ctx: *mut c_void = std::ptr::null_mut();
        // SAFETY: as NCCL calls it: a live context slot; the NVLink info and constants are not read.
        let r = unsafe {
            t.init.unwrap()(
                &mut ctx,
                0x77,
                ranks,
                nodes,
                None,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        assert_eq!(r, OK);
        TunerV5 { t, ctx }
    }

    /// (NCCL's choice, channels set) for an all_reduce of `bytes` over [`nccl_costs`].
    pub fn choice(&self, bytes: usize) -> (usize, c_int) {
        let mut costs = nccl_costs();
        let mut channels: c_int = 0;
        // SAFETY: NCCL passes its float[7][3] block cast to float** (enqueue.cc), as here.
        let r = unsafe {
            self.t.getCollInfo.unwrap()(
                self.ctx,
                ncclFuncAllReduce,
                bytes,
                1,
                costs.as_mut_ptr().cast(),
                N_ALGO as c_int,
                N_PROTO as c_int,
                0,
                &mut channels,
            )
        };
        assert_eq!(r, OK);
        (chosen(&costs), channels)
    }
}

impl Drop for TunerV5 {
    fn drop(&mut self) {
        // SAFETY: the context init returned, finalized once.
        assert_eq!(unsafe { self.t.finalize.unwrap()(self.ctx) }, OK);
    }
}

/// One communicator through the v5 table: (NCCL's choice, channels set) for an all_reduce of
/// `bytes` on `ranks` ranks over `nodes` nodes.
pub fn v5_choice(ranks: usize, nodes: usize, bytes: usize) -> (usize, c_int) {
    TunerV5::open(ranks, nodes).choice(bytes)
}
