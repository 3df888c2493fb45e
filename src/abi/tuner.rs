//! NCCL's tuner tables (`src/include/plugin/tuner/tuner_v4.h` … `tuner_v6.h`), which NCCL looks for
//! in the net plugin's library when `NCCL_TUNER_PLUGIN` is unset: v4 is read by NCCL 2.24-2.27,
//! v5 by 2.28-2.29, v6 by 2.30 and later. tcpxr reads neither the NVLink domain description nor the
//! tuning constants, so they stay opaque pointers here.
use crate::abi::{ncclDebugLogger_t, ncclResult_t};
use std::ffi::{c_char, c_int, c_void};

/// `ncclFunc_t` (nccl_common.h): the collective NCCL asks about.
pub type ncclFunc_t = c_int;
pub const ncclFuncBroadcast: ncclFunc_t = 0;
pub const ncclFuncReduce: ncclFunc_t = 1;
pub const ncclFuncAllGather: ncclFunc_t = 2;
pub const ncclFuncReduceScatter: ncclFunc_t = 3;
pub const ncclFuncAllReduce: ncclFunc_t = 4;

/// Indices into the cost table NCCL hands `getCollInfo` (nccl_tuner.h): a row per algorithm, a
/// column per protocol, `numAlgo * numProto` floats in one block behind the `float**`.
pub const NCCL_ALGO_RING: usize = 1;
pub const NCCL_ALGO_PAT: usize = 6;
pub const NCCL_PROTO_LL: usize = 0;
pub const NCCL_PROTO_LL128: usize = 1;
pub const NCCL_PROTO_SIMPLE: usize = 2;
/// A cost of this value marks a combination NCCL will not use (disabled by NCCL_ALGO/NCCL_PROTO,
/// or unsupported here); any negative cost is skipped by NCCL's choice.
pub const NCCL_ALGO_PROTO_IGNORE: f32 = -1.0;

/// `getCollInfo` (v4-v6): may lower costs in NCCL's cost table and set the channel count.
pub type ncclTunerGetCollInfo_t = Option<
    unsafe extern "C" fn(
        context: *mut c_void,
        collType: ncclFunc_t,
        nBytes: usize,
        numPipeOps: c_int,
        collCostTable: *mut *mut f32,
        numAlgo: c_int,
        numProto: c_int,
        regBuff: c_int,
        nChannels: *mut c_int,
    ) -> ncclResult_t,
>;

/// `init` of v5 and v6: per communicator, with its id, the NVLink domains and NCCL's tuning
/// constants.
pub type ncclTunerInit_v5_t = Option<
    unsafe extern "C" fn(
        context: *mut *mut c_void,
        commId: u64,
        nRanks: usize,
        nNodes: usize,
        logFunction: ncclDebugLogger_t,
        nvlDomainInfo: *mut c_void,
        constants: *mut c_void,
    ) -> ncclResult_t,
>;

/// `finalize` (v5, v6) and `destroy` (v4): frees the context init returned.
pub type ncclTunerFinalize_t = Option<unsafe extern "C" fn(context: *mut c_void) -> ncclResult_t>;

/// The v4 table (`ncclTunerPlugin_v4`, NCCL 2.24-2.27).
#[repr(C)]
pub struct ncclTuner_v4_t {
    pub name: *const c_char,
    pub init: Option<
        unsafe extern "C" fn(
            nRanks: usize,
            nNodes: usize,
            logFunction: ncclDebugLogger_t,
            context: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub getCollInfo: ncclTunerGetCollInfo_t,
    pub destroy: ncclTunerFinalize_t,
}

/// The v5 table (`ncclTunerPlugin_v5`, NCCL 2.28-2.29).
#[repr(C)]
pub struct ncclTuner_v5_t {
    pub name: *const c_char,
    pub init: ncclTunerInit_v5_t,
    pub getCollInfo: ncclTunerGetCollInfo_t,
    pub finalize: ncclTunerFinalize_t,
}

/// The v6 table (`ncclTunerPlugin_v6`, NCCL 2.30+): v5 plus `getChunkSize`, which NCCL calls only
/// when it is not NULL.
#[repr(C)]
pub struct ncclTuner_v6_t {
    pub name: *const c_char,
    pub init: ncclTunerInit_v5_t,
    pub getCollInfo: ncclTunerGetCollInfo_t,
    pub finalize: ncclTunerFinalize_t,
    pub getChunkSize: Option<
        unsafe extern "C" fn(
            context: *mut c_void,
            collType: ncclFunc_t,
            nBytes: usize,
            algo: c_int,
            proto: c_int,
            nChannels: c_int,
            chunkSize: *mut usize,
        ) -> ncclResult_t,
    >,
}

// SAFETY: the tables are immutable statics; `name` points at a 'static C string.
unsafe impl Sync for ncclTuner_v4_t {}
// SAFETY: as above.
unsafe impl Sync for ncclTuner_v5_t {}
// SAFETY: as above.
unsafe impl Sync for ncclTuner_v6_t {}
