//! The RMA plugin ABI NCCL 2.30 looks up as `ncclRmaPlugin_v14` (`src/include/plugin/rma/rma_v14.h`),
//! and the v15-v17 tables of NVIDIA/nccl's later headers: one-sided puts, signals and gets over a
//! group of ranks, which NCCL's GIN proxy and its host RMA API (ncclPutSignal) drive from their
//! own progress threads.
use super::{ncclDebugLogger_t, ncclNetDeviceType, ncclNetProperties_v12_t, ncclResult_t};
use std::ffi::{c_char, c_int, c_void};

/// `NCCL_NET_DEVICE_GIN_PROXY`: what an RMA backend reports as its device type; NCCL's GIN proxy
/// (the device side it implements over an RMA backend) takes this type.
pub const NCCL_NET_DEVICE_GIN_PROXY: ncclNetDeviceType = 2;

/// `mrFlags` of regMrSym: the window holds signals, which must be written in order with the
/// puts before them.
pub const NCCL_NET_MR_FLAG_FORCE_SO: u64 = 1 << 0;
/// `mrFlags` of regMrSym: the window's signals are never reset by the GPU, so the plugin may keep
/// their values.
pub const NCCL_NET_MR_FLAG_SIGNAL_NEVER_RESET: u64 = 1 << 1;
/// `signalOp` of iputSignal: add 1 to the signal.
pub const NCCL_NET_SIGNAL_OP_INC: u32 = 0x1;
/// `signalOp` of iputSignal: add `signalValue` to the signal.
pub const NCCL_NET_SIGNAL_OP_ADD: u32 = 0x2;

/// `ncclRmaConfig_v14_t`: what createContext is asked for.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclRmaConfig_v14_t {
    /// Contexts: ordering holds within a context, not across them.
    pub nContexts: c_int,
    pub trafficClass: c_int,
    /// Ranks a context talks to: every `rankStride`-th one (1: all).
    pub rankStride: c_int,
}

/// `ncclRmaConfig_v17_t` (v17 replaces the stride with an explicit list of peers).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclRmaConfig_v17_t {
    pub nContexts: c_int,
    pub trafficClass: c_int,
    /// The ranks a context talks to, `peerArrayCount` of them.
    pub peerArray: *mut c_int,
    pub peerArrayCount: c_int,
}

/// `ncclRmaProperties_v16_t`: what getRmaProperties reports of a group.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclRmaProperties_v16_t {
    /// Whether any signal's arrival makes every put already received, from any peer, visible.
    pub flushesAllPutsOnAnySignal: bool,
}

/// `ncclRmaOptFlags` of v15+ iput / iputSignal / iget: the caller allows requests to be
/// aggregated (a hint: data and ordering are unchanged).
pub const ncclRmaOptFlagsAggregateRequests: u32 = 1 << 0;

// The entry points, each typed once: the tables v14-v17 share most of them.
pub type RmaInitFn =
    Option<unsafe extern "C" fn(ctx: *mut *mut c_void, commId: u64, logFunction: ncclDebugLogger_t) -> ncclResult_t>;
pub type RmaDevicesFn = Option<unsafe extern "C" fn(ndev: *mut c_int) -> ncclResult_t>;
pub type RmaGetPropertiesFn =
    Option<unsafe extern "C" fn(dev: c_int, props: *mut ncclNetProperties_v12_t) -> ncclResult_t>;
pub type RmaGetRmaPropertiesFn =
    Option<unsafe extern "C" fn(collComm: *mut c_void, rmaProps: *mut ncclRmaProperties_v16_t) -> ncclResult_t>;
pub type RmaListenFn = Option<
    unsafe extern "C" fn(
        ctx: *mut c_void,
        dev: c_int,
        handle: *mut c_void,
        listenComm: *mut *mut c_void,
    ) -> ncclResult_t,
>;
pub type RmaConnectFn = Option<
    unsafe extern "C" fn(
        ctx: *mut c_void,
        handles: *mut *mut c_void,
        nranks: c_int,
        rank: c_int,
        listenComm: *mut c_void,
        collComm: *mut *mut c_void,
    ) -> ncclResult_t,
>;
/// v17's connect: NCCL's abort flag, which a connect still waiting for its peers watches.
pub type RmaConnectV17Fn = Option<
    unsafe extern "C" fn(
        ctx: *mut c_void,
        handles: *mut *mut c_void,
        nranks: c_int,
        rank: c_int,
        listenComm: *mut c_void,
        collComm: *mut *mut c_void,
        abortFlag: *mut u32,
    ) -> ncclResult_t,
>;
pub type RmaCreateContextFn = Option<
    unsafe extern "C" fn(
        collComm: *mut c_void,
        config: *mut ncclRmaConfig_v14_t,
        rmaCtx: *mut *mut c_void,
    ) -> ncclResult_t,
>;
pub type RmaCreateContextV17Fn = Option<
    unsafe extern "C" fn(
        collComm: *mut c_void,
        config: *mut ncclRmaConfig_v17_t,
        rmaCtx: *mut *mut c_void,
    ) -> ncclResult_t,
>;
pub type RmaRegMrSymFn = Option<
    unsafe extern "C" fn(
        collComm: *mut c_void,
        data: *mut c_void,
        size: usize,
        type_: c_int,
        mrFlags: u64,
        mhandle: *mut *mut c_void,
    ) -> ncclResult_t,
>;
pub type RmaRegMrSymDmaBufFn = Option<
    unsafe extern "C" fn(
        collComm: *mut c_void,
        data: *mut c_void,
        size: usize,
        type_: c_int,
        offset: u64,
        fd: c_int,
        mrFlags: u64,
        mhandle: *mut *mut c_void,
    ) -> ncclResult_t,
>;
pub type RmaDeregMrSymFn = Option<unsafe extern "C" fn(collComm: *mut c_void, mhandle: *mut c_void) -> ncclResult_t>;
/// destroyContext, closeColl, closeListen, rmaProgress and finalize: one object in, a code out.
pub type RmaCloseFn = Option<unsafe extern "C" fn(object: *mut c_void) -> ncclResult_t>;
pub type RmaIputFn = Option<
    unsafe extern "C" fn(
        rmaCtx: *mut c_void,
        context: c_int,
        srcOff: u64,
        srcMhandle: *mut c_void,
        size: usize,
        dstOff: u64,
        dstMhandle: *mut c_void,
        rank: u32,
        request: *mut *mut c_void,
    ) -> ncclResult_t,
>;
/// The type of `iputSignal` (its 14 arguments make it worth a name).
pub type IputSignalFn = Option<
    unsafe extern "C" fn(
        rmaCtx: *mut c_void,
        context: c_int,
        srcOff: u64,
        srcMhandle: *mut c_void,
        size: usize,
        dstOff: u64,
        dstMhandle: *mut c_void,
        rank: u32,
        signalOff: u64,
        signalMhandle: *mut c_void,
        signalValue: u64,
        signalOp: u32,
        isStrongSignal: bool,
        request: *mut *mut c_void,
    ) -> ncclResult_t,
>;
pub type RmaIgetFn = Option<
    unsafe extern "C" fn(
        rmaCtx: *mut c_void,
        context: c_int,
        remoteOff: u64,
        remoteMhandle: *mut c_void,
        size: usize,
        localOff: u64,
        localMhandle: *mut c_void,
        rank: u32,
        request: *mut *mut c_void,
    ) -> ncclResult_t,
>;
/// v15+ iput: `optFlags` (ncclRmaOptFlags) before the request.
pub type RmaIputV15Fn = Option<
    unsafe extern "C" fn(
        rmaCtx: *mut c_void,
        context: c_int,
        srcOff: u64,
        srcMhandle: *mut c_void,
        size: usize,
        dstOff: u64,
        dstMhandle: *mut c_void,
        rank: u32,
        optFlags: u32,
        request: *mut *mut c_void,
    ) -> ncclResult_t,
>;
/// v15+ iputSignal: `optFlags` after `isStrongSignal`.
pub type IputSignalV15Fn = Option<
    unsafe extern "C" fn(
        rmaCtx: *mut c_void,
        context: c_int,
        srcOff: u64,
        srcMhandle: *mut c_void,
        size: usize,
        dstOff: u64,
        dstMhandle: *mut c_void,
        rank: u32,
        signalOff: u64,
        signalMhandle: *mut c_void,
        signalValue: u64,
        signalOp: u32,
        isStrongSignal: bool,
        optFlags: u32,
        request: *mut *mut c_void,
    ) -> ncclResult_t,
>;
/// v15+ iget: `optFlags` before the request.
pub type RmaIgetV15Fn = Option<
    unsafe extern "C" fn(
        rmaCtx: *mut c_void,
        context: c_int,
        remoteOff: u64,
        remoteMhandle: *mut c_void,
        size: usize,
        localOff: u64,
        localMhandle: *mut c_void,
        rank: u32,
        optFlags: u32,
        request: *mut *mut c_void,
    ) -> ncclResult_t,
>;
pub type RmaIflushFn = Option<
    unsafe extern "C" fn(
        rmaCtx: *mut c_void,
        context: c_int,
        mhandle: *mut c_void,
        rank: u32,
        request: *mut *mut c_void,
    ) -> ncclResult_t,
>;
pub type RmaTestFn =
    Option<unsafe extern "C" fn(collComm: *mut c_void, request: *mut c_void, done: *mut c_int) -> ncclResult_t>;
pub type RmaQueryLastErrorFn = Option<unsafe extern "C" fn(rmaCtx: *mut c_void, hasError: *mut bool) -> ncclResult_t>;

/// `ncclRma_v14_t` (NCCL 2.30).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclRma_v14_t {
    pub name: *const c_char,
    pub init: RmaInitFn,
    pub devices: RmaDevicesFn,
    pub getProperties: RmaGetPropertiesFn,
    pub listen: RmaListenFn,
    pub connect: RmaConnectFn,
    pub createContext: RmaCreateContextFn,
    pub regMrSym: RmaRegMrSymFn,
    pub regMrSymDmaBuf: RmaRegMrSymDmaBufFn,
    pub deregMrSym: RmaDeregMrSymFn,
    pub destroyContext: RmaCloseFn,
    pub closeColl: RmaCloseFn,
    pub closeListen: RmaCloseFn,
    pub iput: RmaIputFn,
    pub iputSignal: IputSignalFn,
    pub iget: RmaIgetFn,
    pub iflush: RmaIflushFn,
    pub test: RmaTestFn,
    pub rmaProgress: RmaCloseFn,
    pub queryLastError: RmaQueryLastErrorFn,
    pub finalize: RmaCloseFn,
}

/// `ncclRma_v15_t` (NVIDIA/nccl's rma_v15.h): v14 with `optFlags` on iput, iputSignal and iget.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclRma_v15_t {
    pub name: *const c_char,
    pub init: RmaInitFn,
    pub devices: RmaDevicesFn,
    pub getProperties: RmaGetPropertiesFn,
    pub listen: RmaListenFn,
    pub connect: RmaConnectFn,
    pub createContext: RmaCreateContextFn,
    pub regMrSym: RmaRegMrSymFn,
    pub regMrSymDmaBuf: RmaRegMrSymDmaBufFn,
    pub deregMrSym: RmaDeregMrSymFn,
    pub destroyContext: RmaCloseFn,
    pub closeColl: RmaCloseFn,
    pub closeListen: RmaCloseFn,
    pub iput: RmaIputV15Fn,
    pub iputSignal: IputSignalV15Fn,
    pub iget: RmaIgetV15Fn,
    pub iflush: RmaIflushFn,
    pub test: RmaTestFn,
    pub rmaProgress: RmaCloseFn,
    pub queryLastError: RmaQueryLastErrorFn,
    pub finalize: RmaCloseFn,
}

/// `ncclRma_v16_t` (rma_v16.h): v15 with getRmaProperties after devices.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclRma_v16_t {
    pub name: *const c_char,
    pub init: RmaInitFn,
    pub devices: RmaDevicesFn,
    pub getRmaProperties: RmaGetRmaPropertiesFn,
    pub getProperties: RmaGetPropertiesFn,
    pub listen: RmaListenFn,
    pub connect: RmaConnectFn,
    pub createContext: RmaCreateContextFn,
    pub regMrSym: RmaRegMrSymFn,
    pub regMrSymDmaBuf: RmaRegMrSymDmaBufFn,
    pub deregMrSym: RmaDeregMrSymFn,
    pub destroyContext: RmaCloseFn,
    pub closeColl: RmaCloseFn,
    pub closeListen: RmaCloseFn,
    pub iput: RmaIputV15Fn,
    pub iputSignal: IputSignalV15Fn,
    pub iget: RmaIgetV15Fn,
    pub iflush: RmaIflushFn,
    pub test: RmaTestFn,
    pub rmaProgress: RmaCloseFn,
    pub queryLastError: RmaQueryLastErrorFn,
    pub finalize: RmaCloseFn,
}

/// `ncclRma_v17_t` (rma_v17.h): v16 with NCCL's abort flag on connect and a list of peers in
/// createContext's config.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclRma_v17_t {
    pub name: *const c_char,
    pub init: RmaInitFn,
    pub devices: RmaDevicesFn,
    pub getRmaProperties: RmaGetRmaPropertiesFn,
    pub getProperties: RmaGetPropertiesFn,
    pub listen: RmaListenFn,
    pub connect: RmaConnectV17Fn,
    pub createContext: RmaCreateContextV17Fn,
    pub regMrSym: RmaRegMrSymFn,
    pub regMrSymDmaBuf: RmaRegMrSymDmaBufFn,
    pub deregMrSym: RmaDeregMrSymFn,
    pub destroyContext: RmaCloseFn,
    pub closeColl: RmaCloseFn,
    pub closeListen: RmaCloseFn,
    pub iput: RmaIputV15Fn,
    pub iputSignal: IputSignalV15Fn,
    pub iget: RmaIgetV15Fn,
    pub iflush: RmaIflushFn,
    pub test: RmaTestFn,
    pub rmaProgress: RmaCloseFn,
    pub queryLastError: RmaQueryLastErrorFn,
    pub finalize: RmaCloseFn,
}

// SAFETY: the tables are immutable statics whose only data pointer, `name`, is a static C string.
unsafe impl Sync for ncclRma_v14_t {}
// SAFETY: as above.
unsafe impl Sync for ncclRma_v15_t {}
// SAFETY: as above.
unsafe impl Sync for ncclRma_v16_t {}
// SAFETY: as above.
unsafe impl Sync for ncclRma_v17_t {}
