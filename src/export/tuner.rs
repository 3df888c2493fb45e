//! The `ncclTunerPlugin_v4` … `_v6` tables: NCCL looks for them in its net plugin's library when
//! `NCCL_TUNER_PLUGIN` is unset (a user's own tuner, named there, takes precedence). Each entry
//! point only converts arguments; the rule is in `crate::tuner`.
#![allow(non_upper_case_globals, non_snake_case)]

use super::guard::{ffi_fn, non_null};
use crate::abi::*;
use crate::error::Error;
use crate::tuner::Tuner;
use std::ffi::{c_int, c_void};

/// NCCL logs "TUNER/Plugin: Using tcpxr (vN)".
const NAME: &std::ffi::CStr = crate::name::NAME_C;

/// Makes the per-communicator context NCCL keeps for us (a boxed [`Tuner`]) and writes it to
/// NCCL's `context` slot, which is written (NULL) on failure too.
fn open(
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
    let t = Tuner::open(n_ranks, n_nodes)?;
    match &t.idle_because {
        None => log::info!(
            target: "tcpxr::tuner",
            "tuner: communicator {comm_id:#x} ({n_ranks} ranks, {n_nodes} nodes): {}{}",
            crate::tuner::describe(t.set_channels),
            if t.set_channels {
                ""
            } else {
                " (channels left to the user's NCCL_MIN/MAX_NCHANNELS or _CTAS)"
            }
        ),
        Some(why) => log::info!(
            target: "tcpxr::tuner",
            "tuner: communicator {comm_id:#x} ({n_ranks} ranks, {n_nodes} nodes) left to NCCL: {why}"
        ),
    }
    // SAFETY: as above.
    unsafe { *context = Box::into_raw(Box::new(t)) as *mut c_void };
    Ok(())
}

ffi_fn! {
    "ncclTuner" / "init" fn init_v4(nRanks: usize, nNodes: usize, logFunction: ncclDebugLogger_t, context: *mut *mut c_void) {
        open(context, nRanks, nNodes, 0, logFunction)
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
        open(context, nRanks, nNodes, commId, logFunction)
    }
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
        non_null!(context, "getCollInfo: context");
        non_null!(collCostTable, "getCollInfo: collCostTable");
        non_null!(nChannels, "getCollInfo: nChannels");
        let (Ok(n_algo), Ok(n_proto)) = (usize::try_from(numAlgo), usize::try_from(numProto)) else {
            return Err(Error::invalid_argument(format!(
                "getCollInfo: {numAlgo} algorithms x {numProto} protocols; accepted: non-negative counts"
            )));
        };
        // SAFETY: a non-NULL context is the Tuner init boxed; NCCL keeps it until finalize.
        let tuner = unsafe { &*(context as *const Tuner) };
        // SAFETY: NCCL's `float**` is its `float[numAlgo][numProto]` array cast (enqueue.cc), one
        // block of numAlgo * numProto floats that it owns for the duration of the call.
        let costs = unsafe { std::slice::from_raw_parts_mut(collCostTable as *mut f32, n_algo * n_proto) };
        if let Some(n) = tuner.choose(collType, nBytes, costs, n_proto) {
            // SAFETY: NCCL passes a writable int (checked non-NULL).
            unsafe { *nChannels = n };
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
