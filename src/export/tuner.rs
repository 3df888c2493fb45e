//! The `ncclTunerPlugin_v1` … `_v6` tables: NCCL 2.21 and later look for v2+ in their net
//! plugin's library when `NCCL_TUNER_PLUGIN` is unset (a user's own tuner, named there, takes
//! precedence); NCCL 2.19-2.20 load v1 only from the library `NCCL_TUNER_PLUGIN` names (which may
//! be tcpxr's). Each entry point only converts arguments; the rule is in `crate::tuner`: v3-v6
//! lower costs in NCCL's table (`Tuner::choose`), v1 and v2, which see no table, name one choice
//! (`Tuner::pick`).
#![allow(non_upper_case_globals, non_snake_case)]

use super::guard::{ffi_fn, non_null};
use crate::abi::*;
use crate::error::Error;
use crate::tuner::{Pick, Tuner};
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

/// NCCL logs "TUNER/Plugin: Using tcpxr (vN)".
const NAME: &std::ffi::CStr = crate::name::NAME_C;

/// Makes the per-communicator context NCCL keeps for us (a boxed [`Tuner`]) and writes it to
/// NCCL's `context` slot, which is written (NULL) on failure too.
fn open(
    table: u32,
    context: *mut *mut c_void,
    n_ranks: usize,
    n_nodes: usize,
    comm_id: u64,
    logger: ncclDebugLogger_t,
) -> crate::error::Result<()> {
    // NCCL's logger first, so that even a refused call is logged where NCCL logs.
    crate::log::install(logger);
    non_null!(context, "init: context");
    // SAFETY: NCCL passes a writable pointer-sized slot (checked non-NULL).
    unsafe { *context = std::ptr::null_mut() };
    let t = Tuner::open(n_ranks, n_nodes);
    match &t.idle_because {
        None => log::info!(
            target: "tcpxr::tuner",
            "tuner (ncclTunerPlugin_v{table}): communicator {comm_id:#x} ({n_ranks} ranks, {n_nodes} nodes): {}{}",
            crate::tuner::describe(t.set_channels),
            if t.set_channels {
                ""
            } else {
                " (channels left to the user's NCCL_MIN/MAX_NCHANNELS or _CTAS)"
            }
        ),
        Some(why) => log::info!(
            target: "tcpxr::tuner",
            "tuner (ncclTunerPlugin_v{table}): communicator {comm_id:#x} ({n_ranks} ranks, {n_nodes} nodes) left to NCCL: {why}"
        ),
    }
    // SAFETY: as above.
    unsafe { *context = Box::into_raw(Box::new(t)) as *mut c_void };
    Ok(())
}

ffi_fn! {
    "ncclTuner" / "init" fn init_v4(nRanks: usize, nNodes: usize, logFunction: ncclDebugLogger_t, context: *mut *mut c_void) {
        open(V, context, nRanks, nNodes, 0, logFunction)
    }
}

ffi_fn! {
    "ncclTuner" / "init" fn init_v5(
        context: *mut *mut c_void,
        commId: u64,
        nRanks: usize,
        nNodes: usize,
        logFunction: ncclDebugLogger_t,
        _nvlDomainInfo: *mut c_void,
        _constants: *mut c_void,
    ) {
        open(V, context, nRanks, nNodes, commId, logFunction)
    }
}

/// `getCollInfo` of v3-v6: may lower costs in NCCL's table and set the channel count.
fn coll_info(
    context: *mut c_void,
    coll: ncclFunc_t,
    n_bytes: usize,
    cost_table: *mut *mut f32,
    num_algo: c_int,
    num_proto: c_int,
    n_channels: *mut c_int,
) -> crate::error::Result<()> {
    non_null!(context, "getCollInfo: context");
    non_null!(cost_table, "getCollInfo: collCostTable");
    non_null!(n_channels, "getCollInfo: nChannels");
    let (Ok(n_algo), Ok(n_proto)) = (usize::try_from(num_algo), usize::try_from(num_proto)) else {
        return Err(Error::invalid_argument(format!(
            "getCollInfo: {num_algo} algorithms x {num_proto} protocols; accepted: non-negative counts"
        )));
    };
    // SAFETY: a non-NULL context is the Tuner init boxed; NCCL keeps it until finalize.
    let tuner = unsafe { &*(context as *const Tuner) };
    // SAFETY: NCCL's `float**` is its `float[numAlgo][numProto]` array cast (enqueue.cc), one
    // block of numAlgo * numProto floats that it owns for the duration of the call.
    let costs = unsafe { std::slice::from_raw_parts_mut(cost_table as *mut f32, n_algo * n_proto) };
    if let Some(n) = tuner.choose(coll, n_bytes, costs, n_proto) {
        // SAFETY: NCCL passes a writable int (checked non-NULL).
        unsafe { *n_channels = n };
    }
    Ok(())
}

ffi_fn! {
    "ncclTuner" / "getCollInfo" fn get_coll_info(
        context: *mut c_void,
        collType: ncclFunc_t,
        nBytes: usize,
        _numPipeOps: c_int,
        collCostTable: *mut *mut f32,
        numAlgo: c_int,
        numProto: c_int,
        _regBuff: c_int,
        nChannels: *mut c_int,
    ) {
        coll_info(context, collType, nBytes, collCostTable, numAlgo, numProto, nChannels)
    }
}

ffi_fn! {
    "ncclTuner" / "getCollInfo" fn get_coll_info_v3(
        context: *mut c_void,
        collType: ncclFunc_t,
        nBytes: usize,
        _numPipeOps: c_int,
        collCostTable: *mut *mut f32,
        numAlgo: c_int,
        numProto: c_int,
        nChannels: *mut c_int,
    ) {
        coll_info(context, collType, nBytes, collCostTable, numAlgo, numProto, nChannels)
    }
}

/// Writes a [`Pick`] to v1's and v2's outputs, which NCCL presets to "undecided" (-1, -1, 0): only
/// what the pick decides is written.
fn write_pick(
    pick: Pick,
    algorithm: *mut c_int,
    protocol: *mut c_int,
    n_channels: *mut c_int,
) -> crate::error::Result<()> {
    non_null!(algorithm, "getCollInfo: algorithm");
    non_null!(protocol, "getCollInfo: protocol");
    non_null!(n_channels, "getCollInfo: nChannels");
    if let Some((algo, proto)) = pick.algo_proto {
        // SAFETY: NCCL passes writable ints (checked non-NULL); indices of 0-6 fit a c_int.
        unsafe {
            *algorithm = algo as c_int;
            *protocol = proto as c_int;
        }
    }
    if let Some(n) = pick.channels {
        // SAFETY: as above.
        unsafe { *n_channels = n };
    }
    Ok(())
}

ffi_fn! {
    "ncclTuner" / "getCollInfo" fn get_coll_info_v2(
        context: *mut c_void,
        collType: ncclFunc_t,
        nBytes: usize,
        _collNetSupport: c_int,
        _nvlsSupport: c_int,
        _numPipeOps: c_int,
        algorithm: *mut c_int,
        protocol: *mut c_int,
        nChannels: *mut c_int,
    ) {
        non_null!(context, "getCollInfo: context");
        // SAFETY: a non-NULL context is the Tuner init boxed; NCCL keeps it until destroy.
        let tuner = unsafe { &*(context as *const Tuner) };
        write_pick(tuner.pick(collType, nBytes), algorithm, protocol, nChannels)
    }
}

/// v1's tuner state, one per process since v1 passes no context: the communicators NCCL has
/// initialised and not destroyed, and the tuner they share while all of them open the same one
/// (same ranks and facts). When they differ, a getCollInfo cannot tell which communicator it is
/// for, so the tuner leaves every collective to NCCL until the last of them is destroyed. The lock
/// is held for a few instructions per call.
struct V1 {
    live: usize,
    tuner: Option<Tuner>,
    mixed: bool,
}

static V1_STATE: Mutex<V1> = Mutex::new(V1 {
    live: 0,
    tuner: None,
    mixed: false,
});

fn v1_state() -> std::sync::MutexGuard<'static, V1> {
    // A panic while it was held left plain data behind: still usable.
    V1_STATE.lock().unwrap_or_else(|e| e.into_inner())
}

ffi_fn! {
    "ncclTuner" / "init" fn init_v1(nRanks: usize, nNodes: usize, logFunction: ncclDebugLogger_t) {
        let mut context: *mut c_void = std::ptr::null_mut();
        open(V, &mut context, nRanks, nNodes, 0, logFunction)?;
        // SAFETY: open boxed a Tuner into `context` (it returned Ok); taken back here, once.
        let t = *unsafe { Box::from_raw(context as *mut Tuner) };
        let mut v1 = v1_state();
        v1.live += 1;
        match &v1.tuner {
            None => v1.tuner = Some(t),
            Some(shared) if *shared != t => {
                if !v1.mixed {
                    log::info!(
                        target: "tcpxr::tuner",
                        "tuner v1: communicators of different shapes share NCCL 2.19-2.20's one tuner, which cannot tell \
                         them apart: collectives left to NCCL until they are destroyed"
                    );
                }
                v1.mixed = true;
            }
            Some(_) => {}
        }
        Ok(())
    }
}

ffi_fn! {
    "ncclTuner" / "getCollInfo" fn get_coll_info_v1(
        collType: ncclFunc_t,
        nBytes: usize,
        _collNetSupport: c_int,
        _nvlsSupport: c_int,
        _numPipeOps: c_int,
        algorithm: *mut c_int,
        protocol: *mut c_int,
        nChannels: *mut c_int,
    ) {
        let pick = {
            let v1 = v1_state();
            match (&v1.tuner, v1.mixed) {
                (Some(t), false) => t.pick(collType, nBytes),
                _ => Pick::default(),
            }
        };
        write_pick(pick, algorithm, protocol, nChannels)
    }
}

ffi_fn! {
    "ncclTuner" / "destroy" fn destroy_v1() {
        let mut v1 = v1_state();
        v1.live = v1.live.saturating_sub(1);
        if v1.live == 0 {
            v1.tuner = None;
            v1.mixed = false;
        }
        Ok(())
    }
}

ffi_fn! {
    "ncclTuner" / "finalize" fn finalize(context: *mut c_void) {
        if !context.is_null() {
            // SAFETY: a non-NULL context is what init boxed; NCCL finalizes each context once.
            drop(unsafe { Box::from_raw(context as *mut Tuner) });
        }
        Ok(())
    }
}

#[no_mangle]
pub static ncclTunerPlugin_v1: ncclTuner_v1_t = ncclTuner_v1_t {
    name: NAME.as_ptr(),
    init: Some(init_v1::<1>),
    getCollInfo: Some(get_coll_info_v1::<1>),
    destroy: Some(destroy_v1::<1>),
};

#[no_mangle]
pub static ncclTunerPlugin_v2: ncclTuner_v2_t = ncclTuner_v2_t {
    name: NAME.as_ptr(),
    init: Some(init_v4::<2>),
    getCollInfo: Some(get_coll_info_v2::<2>),
    destroy: Some(finalize::<2>),
};

#[no_mangle]
pub static ncclTunerPlugin_v3: ncclTuner_v3_t = ncclTuner_v3_t {
    name: NAME.as_ptr(),
    init: Some(init_v4::<3>),
    getCollInfo: Some(get_coll_info_v3::<3>),
    destroy: Some(finalize::<3>),
};

#[no_mangle]
pub static ncclTunerPlugin_v4: ncclTuner_v4_t = ncclTuner_v4_t {
    name: NAME.as_ptr(),
    init: Some(init_v4::<4>),
    getCollInfo: Some(get_coll_info::<4>),
    destroy: Some(finalize::<4>),
};

#[no_mangle]
pub static ncclTunerPlugin_v5: ncclTuner_v5_t = ncclTuner_v5_t {
    name: NAME.as_ptr(),
    init: Some(init_v5::<5>),
    getCollInfo: Some(get_coll_info::<5>),
    finalize: Some(finalize::<5>),
};

#[no_mangle]
pub static ncclTunerPlugin_v6: ncclTuner_v6_t = ncclTuner_v6_t {
    name: NAME.as_ptr(),
    init: Some(init_v5::<6>),
    getCollInfo: Some(get_coll_info::<6>),
    finalize: Some(finalize::<6>),
    // NCCL's own chunk sizes: tcpxr chunks each message itself.
    getChunkSize: None,
};
