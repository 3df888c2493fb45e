//! The work tcpxr queues on a GPU: copies, the signal add, the signal write and host functions,
//! each on a [`Queue`] the caller names (the GPU's persistent stream, or a [`Stream`] of its own),
//! and one read on the legacy default stream for registration.
//! Each call only queues; completion is an [`Event`] recorded behind it.
use super::{check, free_in, Event, Gpu};
use crate::error::Result;
use cudarc::driver::sys;
use std::ffi::c_void;

/// A stream work can be queued on: a GPU's persistent stream (`Gpu` itself: the engine's staging
/// copies and unpack launches) or a [`Stream`] of an owner's own (a receive comm's copies, an RMA
/// group's work), so that one owner's work never waits in line behind another's.
pub trait Queue {
    /// The driver's handle, live as long as `self`.
    fn raw(&self) -> sys::CUstream;
}

impl Queue for Gpu {
    fn raw(&self) -> sys::CUstream {
        self.stream
    }
}

impl Queue for Stream {
    fn raw(&self) -> sys::CUstream {
        self.raw
    }
}

/// Queues a device-to-host copy on `on`, a stream of `gpu` (the copy engine does it).
///
/// # Safety
/// `dst` must stay valid, and `src .. src + len` unchanged, until work recorded after it completes.
pub unsafe fn copy_dtoh_async(gpu: &Gpu, on: &impl Queue, dst: *mut u8, src: u64, len: usize) -> Result<()> {
    let _current = gpu.enter()?;
    // SAFETY: the caller keeps both ranges valid until the copy is known complete; the stream is
    // live and its GPU's context current (`_current`).
    let r = unsafe { sys::cuMemcpyDtoHAsync_v2(dst as *mut c_void, src, len, on.raw()) };
    check(r, "cuMemcpyDtoHAsync")
}

/// Copies `len` bytes of device memory at `src` into pinned host memory at `dst` on the legacy
/// default stream (CU_STREAM_LEGACY), and records `event` behind it. That stream runs after
/// everything already queued on it and on every blocking stream (per-thread default streams
/// included), such as the `cudaMemset` NCCL queues on a signal buffer just before it registers it:
/// a copy on tcpxr's non-blocking stream could read the memory before that memset. For
/// registration only: it may wait behind any kernel on those streams (the caller bounds the wait).
///
/// # Safety
/// `dst .. dst + len` must be pinned host memory and `src` device memory, both valid until
/// `event` has completed.
pub unsafe fn copy_dtoh_after_queued_work(gpu: &Gpu, dst: *mut u8, src: u64, len: usize, event: &Event) -> Result<()> {
    let _current = gpu.enter()?;
    // CU_STREAM_LEGACY (cuda.h: ((CUstream)0x1)).
    let legacy = 1usize as sys::CUstream;
    // SAFETY: the caller keeps both ranges valid until the event completes; the GPU's context is
    // current (`_current`); the event is live.
    unsafe {
        check(
            sys::cuMemcpyDtoHAsync_v2(dst as *mut c_void, src, len, legacy),
            "cuMemcpyDtoHAsync(legacy stream)",
        )?;
        check(sys::cuEventRecord(event.raw, legacy), "cuEventRecord(legacy stream)")
    }
}

/// Queues a host-to-device copy on `on`, a stream of `gpu` (the copy engine does it).
///
/// # Safety
/// `src .. src + len` must be pinned host memory that stays valid and unchanged, and `dst` device
/// memory that stays allocated, until work recorded after the copy completes.
pub unsafe fn copy_htod_async(gpu: &Gpu, on: &impl Queue, dst: u64, src: *const u8, len: usize) -> Result<()> {
    let _current = gpu.enter()?;
    // SAFETY: the caller keeps both ranges valid until the copy is known complete; the stream is
    // live and its GPU's context current (`_current`).
    let r = unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src as *const c_void, len, on.raw()) };
    check(r, "cuMemcpyHtoDAsync")
}

/// Queues a copy between any two addresses CUDA knows (device or pinned host memory, unified
/// addressing) on `on`, a stream of `gpu`.
///
/// # Safety
/// Both ranges must stay valid (and `src` unchanged) until work recorded after the copy completes.
pub unsafe fn copy_async(gpu: &Gpu, on: &impl Queue, dst: u64, src: u64, len: usize) -> Result<()> {
    let _current = gpu.enter()?;
    // SAFETY: the caller keeps both ranges valid until the copy is known complete; the stream is
    // live and its GPU's context current (`_current`).
    check(unsafe { sys::cuMemcpyAsync(dst, src, len, on.raw()) }, "cuMemcpyAsync")
}

/// Queues an atomic add of `add` to the 64-bit word of device memory at `addr` on `on`, a stream
/// of `gpu`, after everything queued there before it: kernel.cu's `tcpxr_signal_add`, one
/// thread, fenced (system scope) before and after the add, so a kernel that sees the new value
/// sees every byte the stream's earlier copies wrote. The add applies to whatever the word holds
/// then, so whoever else writes it (NCCL resetting a signal) is never overwritten with a stale
/// value. (cuStreamBatchMemOp's atomic reduction would do it without a kernel, from CUDA 13.1.)
/// The kernels must have been loaded ([`Gpu::prepare_kernels`]) before anything waits on this.
///
/// # Safety
/// `addr` must be 8-aligned device memory that stays allocated until work recorded after it
/// completes.
pub unsafe fn add_u64_async(gpu: &Gpu, on: &impl Queue, addr: u64, add: u64) -> Result<()> {
    let f = gpu.kernels()?.signal_add;
    let _current = gpu.enter()?;
    let (mut p, mut v) = (addr, add);
    let mut params: [*mut c_void; 2] = [&mut p as *mut u64 as *mut c_void, &mut v as *mut u64 as *mut c_void];
    // SAFETY: tcpxr_signal_add(unsigned long long*, unsigned long long) with the caller's aligned
    // device word and the addend, both alive across the call (the driver copies them); the GPU's
    // context is current (`_current`).
    unsafe { gpu.launch_one_block(f, 1, on.raw(), &mut params, "cuLaunchKernel(tcpxr_signal_add)") }
}

/// Queues a write of `value` to the 64-bit word of device memory at `addr` on `on`, a stream of
/// `gpu`, after everything queued there before it, without a kernel: the GPU's front end performs it
/// (cuStreamWriteValue64), so it needs no multiprocessor and cannot wait for one that a kernel
/// holds. Its default flags fence the stream's earlier writes before it, so a kernel that sees the
/// value sees every byte the stream's earlier copies wrote.
///
/// # Safety
/// `addr` must be 8-aligned device memory that stays allocated until work recorded after it
/// completes.
pub unsafe fn write_u64_async(gpu: &Gpu, on: &impl Queue, addr: u64, value: u64) -> Result<()> {
    let _current = gpu.enter()?;
    // SAFETY: the caller's aligned device word; the stream is live and its GPU's context current
    // (`_current`).
    check(
        unsafe { sys::cuStreamWriteValue64_v2(on.raw(), addr, value, 0) },
        "cuStreamWriteValue64_v2",
    )
}

/// Queues `f` on `on`, a stream of `gpu`, to run on a thread of the driver once everything queued
/// there before it has completed; work queued there after it waits until it returns
/// (cuLaunchHostFunc). For host-memory work that must keep its place in the stream's order. `f`
/// must not call CUDA (the driver's rule for host functions) and should be short: it holds the
/// stream.
pub fn call_in_order(gpu: &Gpu, on: &impl Queue, f: Box<dyn FnOnce() + Send>) -> Result<()> {
    extern "C" fn run(data: *mut c_void) {
        // SAFETY: `data` is the box `call_in_order` leaked, which the driver hands here once.
        let f = unsafe { Box::from_raw(data as *mut Box<dyn FnOnce() + Send>) };
        // Nothing unwinds into the driver.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || (*f)()));
    }
    let _current = gpu.enter()?;
    let data = Box::into_raw(Box::new(f)) as *mut c_void;
    // SAFETY: `run` takes `data` back exactly once; the stream is live and its GPU's context
    // current (`_current`).
    let r = unsafe { sys::cuLaunchHostFunc(on.raw(), Some(run), data) };
    if r != sys::CUresult::CUDA_SUCCESS {
        // SAFETY: not queued, so the driver never hands `data` to `run`: it is still ours.
        drop(unsafe { Box::from_raw(data as *mut Box<dyn FnOnce() + Send>) });
    }
    check(r, "cuLaunchHostFunc")
}

/// A stream of its own beside the GPU's persistent one (non-blocking, highest priority), for work
/// that must not wait in line behind others': a receive comm's copies into GPU memory
/// (engine/copy_in.rs), which would otherwise queue behind every other channel's, and an RMA
/// group's work (rma/stage.rs), which would otherwise wait behind another group's signal kernel
/// that an application kernel keeps from starting.
pub struct Stream {
    pub(super) raw: sys::CUstream,
    /// The primary context it was made in, entered to destroy it.
    ctx: sys::CUcontext,
}

// SAFETY: a stream handle may be used from any thread with its context current; `ctx` is a
// retained primary context, valid on any thread.
unsafe impl Send for Stream {}

impl Stream {
    pub fn new(gpu: &Gpu) -> Result<Stream> {
        let _current = gpu.enter()?;
        let (mut least, mut greatest) = (0, 0);
        let mut raw: sys::CUstream = std::ptr::null_mut();
        // SAFETY: valid out-pointers; the GPU's context is current (`_current`).
        unsafe {
            check(
                sys::cuCtxGetStreamPriorityRange(&mut least, &mut greatest),
                "cuCtxGetStreamPriorityRange",
            )?;
            check(
                sys::cuStreamCreateWithPriority(&mut raw, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32, greatest),
                "cuStreamCreateWithPriority",
            )?;
        }
        Ok(Stream { raw, ctx: gpu.ctx })
    }
}

impl Drop for Stream {
    /// Destroys the stream in its own context; the driver lets work queued on it finish first.
    fn drop(&mut self) {
        let raw = self.raw;
        // SAFETY: the stream is live and destroyed once.
        free_in(self.ctx, "a CUDA stream (cuStreamDestroy)", || unsafe {
            sys::cuStreamDestroy_v2(raw)
        });
    }
}
