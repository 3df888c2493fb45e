//! The RMA plugin ABI NCCL 2.30 looks up as `ncclRmaPlugin_v14` (`src/include/plugin/rma/rma_v14.h`):
//! one-sided puts, signals and gets over a group of ranks, which NCCL's GIN proxy and its host
//! RMA API (ncclPutSignal) drive from their own progress threads.
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

/// `ncclRma_v14_t`: the table itself.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct ncclRma_v14_t {
    pub name: *const c_char,
    pub init: Option<
        unsafe extern "C" fn(ctx: *mut *mut c_void, commId: u64, logFunction: ncclDebugLogger_t) -> ncclResult_t,
    >,
    pub devices: Option<unsafe extern "C" fn(ndev: *mut c_int) -> ncclResult_t>,
    pub getProperties: Option<unsafe extern "C" fn(dev: c_int, props: *mut ncclNetProperties_v12_t) -> ncclResult_t>,
    pub listen: Option<
        unsafe extern "C" fn(
            ctx: *mut c_void,
            dev: c_int,
            handle: *mut c_void,
            listenComm: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub connect: Option<
        unsafe extern "C" fn(
            ctx: *mut c_void,
            handles: *mut *mut c_void,
            nranks: c_int,
            rank: c_int,
            listenComm: *mut c_void,
            collComm: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub createContext: Option<
        unsafe extern "C" fn(
            collComm: *mut c_void,
            config: *mut ncclRmaConfig_v14_t,
            rmaCtx: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub regMrSym: Option<
        unsafe extern "C" fn(
            collComm: *mut c_void,
            data: *mut c_void,
            size: usize,
            type_: c_int,
            mrFlags: u64,
            mhandle: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub regMrSymDmaBuf: Option<
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
    >,
    pub deregMrSym: Option<unsafe extern "C" fn(collComm: *mut c_void, mhandle: *mut c_void) -> ncclResult_t>,
    pub destroyContext: Option<unsafe extern "C" fn(rmaCtx: *mut c_void) -> ncclResult_t>,
    pub closeColl: Option<unsafe extern "C" fn(collComm: *mut c_void) -> ncclResult_t>,
    pub closeListen: Option<unsafe extern "C" fn(listenComm: *mut c_void) -> ncclResult_t>,
    pub iput: Option<
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
    >,
    pub iputSignal: IputSignalFn,
    pub iget: Option<
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
    >,
    pub iflush: Option<
        unsafe extern "C" fn(
            rmaCtx: *mut c_void,
            context: c_int,
            mhandle: *mut c_void,
            rank: u32,
            request: *mut *mut c_void,
        ) -> ncclResult_t,
    >,
    pub test:
        Option<unsafe extern "C" fn(collComm: *mut c_void, request: *mut c_void, done: *mut c_int) -> ncclResult_t>,
    pub rmaProgress: Option<unsafe extern "C" fn(rmaCtx: *mut c_void) -> ncclResult_t>,
    pub queryLastError: Option<unsafe extern "C" fn(rmaCtx: *mut c_void, hasError: *mut bool) -> ncclResult_t>,
    pub finalize: Option<unsafe extern "C" fn(ctx: *mut c_void) -> ncclResult_t>,
}

// SAFETY: the table is an immutable static whose only data pointer, `name`, is a static C string.
unsafe impl Sync for ncclRma_v14_t {}
