//! regMr and deregMr, and the memory handle NCCL passes back with every isend and irecv: checked by
//! its magic before it is read.
use super::gpu_buffers_offered;
use super::live::{live_data_comm, DataComm};
use crate::abi::{NCCL_PTR_CUDA, NCCL_PTR_HOST};
use crate::engine::memory::Registration;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::transport::MemKind;
use std::ffi::{c_int, c_void};
use std::sync::Arc;

/// What a memory handle records: the memory's kind; for GPU memory, its GPU (which decides
/// whether payloads go through staging and the unpack kernel); and its registration with every
/// stripe of the comm (the socket transport needs none; TCPX registers it with each of its comms).
///
/// `magic` comes first (`repr(C)`), so a pointer is checked by reading one u32 before it is
/// treated as a MemHandle.
#[repr(C)]
pub struct MemHandle {
    magic: u32,
    pub kind: c_int,
    pub ptr: usize,
    pub size: usize,
    pub gpu: Option<Arc<Gpu>>,
    registration: Arc<Registration>,
}

const MR_MAGIC: u32 = 0x4d52_5854; // "TXRM"

/// Registers `size` bytes at `data` (of NCCL's memory type `kind`) with every stripe of `comm`.
///
/// # Safety
/// `comm` may be any pointer (it is looked up in the registry before it is read); a live comm
/// must not be closed during the call.
pub unsafe fn reg_mr(comm: *mut c_void, data: *mut c_void, size: usize, kind: c_int) -> Result<*mut c_void> {
    // SAFETY: the caller's promise on `comm`; live_data_comm asks the registry before reading it.
    let comm = unsafe { live_data_comm(comm, "regMr") }?;
    let gpu = match kind {
        NCCL_PTR_HOST => None,
        NCCL_PTR_CUDA => {
            if !gpu_buffers_offered() {
                return Err(Error::invalid_argument(
                    "regMr of CUDA memory: tcpxr did not offer GPU buffers (NCCL_TCPXR_GPU_BUFFERS=1, or auto over tcpx, with a CUDA driver)",
                ));
            }
            match Gpu::of_pointer(data)? {
                Some(g) => Some(g),
                None => {
                    return Err(Error::invalid_argument(format!(
                        "regMr(NCCL_PTR_CUDA) of {data:p}, which is not device memory"
                    )))
                }
            }
        }
        other => {
            return Err(Error::invalid_argument(format!(
                "regMr with memory type {other}: accepted NCCL_PTR_HOST ({NCCL_PTR_HOST}) and NCCL_PTR_CUDA ({NCCL_PTR_CUDA})"
            )))
        }
    };
    let mem = if gpu.is_some() { MemKind::Cuda } else { MemKind::Host };
    let registration = match comm {
        DataComm::Send(s) => s.reg_mr(data as usize, size, mem, gpu.as_ref())?,
        DataComm::Recv(r) => r.reg_mr(data as usize, size, mem, gpu.as_ref())?,
    };
    let mh = Box::new(MemHandle {
        magic: MR_MAGIC,
        kind,
        ptr: data as usize,
        size,
        gpu,
        registration,
    });
    Ok(Box::into_raw(mh) as *mut c_void)
}

/// # Safety
/// `comm` as for [`reg_mr`]; `mhandle` must be NULL, a memory handle `reg_mr` returned that is
/// not yet deregistered, or a pointer to at least 4 readable bytes that do not hold MR_MAGIC.
/// The handle is freed: NCCL must not use it again.
pub unsafe fn dereg_mr(comm: *mut c_void, mhandle: *mut c_void) -> Result<()> {
    // SAFETY: the caller's promise on `comm`; live_data_comm asks the registry before reading it.
    let comm = unsafe { live_data_comm(comm, "deregMr") }?;
    // SAFETY: the caller's promise on `mhandle`.
    let MemArg::Ours(mh) = (unsafe { mem_arg(mhandle) }) else {
        return Err(Error::invalid_argument("deregMr of a handle tcpxr did not register"));
    };
    match comm {
        DataComm::Send(s) => s.dereg_mr(&mh.registration)?,
        DataComm::Recv(r) => r.dereg_mr(&mh.registration)?,
    }
    // SAFETY: mem_arg found MR_MAGIC, so `mhandle` is a live Box<MemHandle> from reg_mr, which
    // NCCL deregisters once; `mh` is not used after this. Clearing the magic first makes a stale
    // second deregMr of the same address fail the check while the allocator keeps the bytes.
    unsafe {
        (*(mhandle as *mut MemHandle)).magic = 0;
        drop(Box::from_raw(mhandle as *mut MemHandle));
    }
    Ok(())
}

/// NCCL's getDeviceMr: tcpxr makes no device-side handle (NCCL's unpack kernel reads none), but
/// the comm and the memory handle must be ones tcpxr made.
///
/// # Safety
/// `comm` as for [`reg_mr`]; `mhandle` as for [`dereg_mr`] (it is not freed).
pub unsafe fn get_device_mr(comm: *mut c_void, mhandle: *mut c_void) -> Result<()> {
    // SAFETY: the caller's promise on `comm`; live_data_comm asks the registry before reading it.
    unsafe { live_data_comm(comm, "getDeviceMr") }?;
    // SAFETY: the caller's promise on `mhandle`.
    match unsafe { mem_arg(mhandle) } {
        MemArg::Ours(_) => Ok(()),
        MemArg::Absent => Err(Error::invalid_argument("getDeviceMr: mhandle is NULL")),
        MemArg::Foreign(p) => Err(Error::invalid_argument(format!(
            "getDeviceMr of {p:p}, which is not a memory handle tcpxr registered"
        ))),
    }
}

/// A memory handle as NCCL passed it with isend or irecv.
pub(super) enum MemArg<'a> {
    /// NULL: NCCL registered nothing for this buffer.
    Absent,
    Ours(&'a MemHandle),
    /// Not NULL, but not a handle tcpxr made.
    Foreign(*mut c_void),
}

/// # Safety
/// `mhandle` must be NULL, a memory handle from `reg_mr` not deregistered during `'a`, or a
/// pointer to at least 4 readable bytes that do not hold MR_MAGIC.
pub(super) unsafe fn mem_arg<'a>(mhandle: *mut c_void) -> MemArg<'a> {
    if mhandle.is_null() {
        return MemArg::Absent;
    }
    if (mhandle as usize) % std::mem::align_of::<MemHandle>() != 0 {
        return MemArg::Foreign(mhandle);
    }
    // SAFETY: non-NULL and aligned, so (the caller's promise) 4 readable bytes; `magic` is the
    // first field of the repr(C) MemHandle.
    if unsafe { std::ptr::read(mhandle as *const u32) } != MR_MAGIC {
        return MemArg::Foreign(mhandle);
    }
    // SAFETY: MR_MAGIC, so (the caller's promise) a live MemHandle from reg_mr for 'a.
    MemArg::Ours(unsafe { &*(mhandle as *const MemHandle) })
}

/// The GPU that holds `data`, from its memory handle (NCCL always passes one); without a handle the
/// pointer itself is asked.
pub(super) fn gpu_of(data: *mut c_void, mh: &MemArg) -> Result<Option<Arc<Gpu>>> {
    match mh {
        MemArg::Ours(mh) => Ok(mh.gpu.clone()),
        // Without GPU buffers offered, NCCL hands host memory only: no driver query per message.
        MemArg::Absent if !gpu_buffers_offered() => Ok(None),
        MemArg::Absent => Gpu::of_pointer(data),
        MemArg::Foreign(p) => Err(Error::invalid_argument(format!(
            "{p:p} is not a memory handle tcpxr registered"
        ))),
    }
}

/// The registration NCCL's memory handle carries, if it passed one.
pub(super) fn registration_of(mh: &MemArg) -> Option<Arc<Registration>> {
    match mh {
        MemArg::Ours(mh) => Some(mh.registration.clone()),
        _ => None,
    }
}
