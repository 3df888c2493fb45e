//! NCCL's tuner tables (`src/include/nccl_tuner.h` up to 2.23, then
//! `src/include/plugin/tuner/tuner_v4.h` … `tuner_v6.h`), which NCCL 2.21 and later look for in
//! the net plugin's library when `NCCL_TUNER_PLUGIN` is unset: v2 is read by NCCL 2.21, v3 (then
//! v2) by 2.22-2.23, v4 by 2.24-2.27, v5 by 2.28-2.29, v6 by 2.30 and later. NCCL 2.19-2.20 read
//! v1 only from the library `NCCL_TUNER_PLUGIN` names, never from the net plugin's. tcpxr reads
//! neither the NVLink domain description nor the tuning constants, so they stay opaque pointers
//! here.
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
pub const NCCL_ALGO_TREE: usize = 0;
pub const NCCL_ALGO_RING: usize = 1;
pub const NCCL_ALGO_PAT: usize = 6;
pub const NCCL_PROTO_LL: usize = 0;
pub const NCCL_PROTO_LL128: usize = 1;
pub const NCCL_PROTO_SIMPLE: usize = 2;
/// A cost of this value marks a combination NCCL will not use (disabled by NCCL_ALGO/NCCL_PROTO,
/// or unsupported here); any negative cost is skipped by NCCL's choice.
pub const NCCL_ALGO_PROTO_IGNORE: f32 = -1.0;

/// `NCCL_ALGO_UNDEF` and `NCCL_PROTO_UNDEF`: the value NCCL presets v1's and v2's algorithm and
/// protocol outputs to; left so, NCCL chooses them itself.
pub const NCCL_UNDEF: c_int = -1;

/// `init` of v1 (NCCL 2.19-2.20): per communicator, but with no context to return, so every
/// later call concerns whichever communicator NCCL means.
pub type ncclTunerInit_v1_t =
    Option<unsafe extern "C" fn(nRanks: usize, nNodes: usize, logFunction: ncclDebugLogger_t) -> ncclResult_t>;

/// `init` of v2-v4: per communicator; writes the context NCCL passes back to every later call.
pub type ncclTunerInit_v2_t = Option<
    unsafe extern "C" fn(
        nRanks: usize,
        nNodes: usize,
        logFunction: ncclDebugLogger_t,
        context: *mut *mut c_void,
    ) -> ncclResult_t,
>;

/// `getCollInfo` of v2: no cost table; the tuner names one algorithm and protocol (both or
/// neither) and/or a channel count, each preset by NCCL to "undecided" (-1, -1, 0).
pub type ncclTunerGetCollInfo_v2_t = Option<
    unsafe extern "C" fn(
        context: *mut c_void,
        collType: ncclFunc_t,
        nBytes: usize,
        collNetSupport: c_int,
        nvlsSupport: c_int,
        numPipeOps: c_int,
        algorithm: *mut c_int,
        protocol: *mut c_int,
        nChannels: *mut c_int,
    ) -> ncclResult_t,
>;

/// `getCollInfo` of v3 (NCCL 2.22-2.23): v4's without `regBuff`.
pub type ncclTunerGetCollInfo_v3_t = Option<
    unsafe extern "C" fn(
        context: *mut c_void,
        collType: ncclFunc_t,
        nBytes: usize,
        numPipeOps: c_int,
        collCostTable: *mut *mut f32,
        numAlgo: c_int,
        numProto: c_int,
        nChannels: *mut c_int,
    ) -> ncclResult_t,
>;

/// The v1 table (`ncclTunerPlugin_v1`, NCCL 2.19-2.20, found only through `NCCL_TUNER_PLUGIN`):
/// v2's calls without the context.
#[repr(C)]
pub struct ncclTuner_v1_t {
    pub name: *const c_char,
    pub init: ncclTunerInit_v1_t,
    pub getCollInfo: Option<
        unsafe extern "C" fn(
            collType: ncclFunc_t,
            nBytes: usize,
            collNetSupport: c_int,
            nvlsSupport: c_int,
            numPipeOps: c_int,
            algorithm: *mut c_int,
            protocol: *mut c_int,
            nChannels: *mut c_int,
        ) -> ncclResult_t,
    >,
    pub destroy: Option<unsafe extern "C" fn() -> ncclResult_t>,
}

/// The v2 table (`ncclTunerPlugin_v2`, NCCL 2.21, and 2.22-2.23 when there is no v3).
#[repr(C)]
pub struct ncclTuner_v2_t {
    pub name: *const c_char,
    pub init: ncclTunerInit_v2_t,
    pub getCollInfo: ncclTunerGetCollInfo_v2_t,
    pub destroy: ncclTunerFinalize_t,
}

/// The v3 table (`ncclTunerPlugin_v3`, NCCL 2.22-2.23): NCCL's cost table, as in v4.
#[repr(C)]
pub struct ncclTuner_v3_t {
    pub name: *const c_char,
    pub init: ncclTunerInit_v2_t,
    pub getCollInfo: ncclTunerGetCollInfo_v3_t,
    pub destroy: ncclTunerFinalize_t,
}

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

/// `finalize` (v5, v6) and `destroy` (v2-v4): frees the context init returned.
pub type ncclTunerFinalize_t = Option<unsafe extern "C" fn(context: *mut c_void) -> ncclResult_t>;

/// The v4 table (`ncclTunerPlugin_v4`, NCCL 2.24-2.27).
#[repr(C)]
pub struct ncclTuner_v4_t {
    pub name: *const c_char,
    pub init: ncclTunerInit_v2_t,
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
unsafe impl Sync for ncclTuner_v1_t {}
// SAFETY: as above.
unsafe impl Sync for ncclTuner_v2_t {}
// SAFETY: as above.
unsafe impl Sync for ncclTuner_v3_t {}
// SAFETY: as above.
unsafe impl Sync for ncclTuner_v4_t {}
// SAFETY: as above.
unsafe impl Sync for ncclTuner_v5_t {}
// SAFETY: as above.
unsafe impl Sync for ncclTuner_v6_t {}
