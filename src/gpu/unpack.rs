//! Launching the unpack kernel: jobs (one per received chunk) are gathered into a batch and placed
//! by one launch on one of the GPU's two persistent unpack streams (in turn, so that consecutive
//! batches overlap); a CUDA event recorded behind the launch says when the batch is done, which is
//! when its bounce pages may be released. Batches may therefore finish out of order; each has its
//! own event.
//!
//! The jobs of a batch travel in the launch's parameter block; the only per-launch resource is an
//! event from a fixed pool allocated when the unpacker is made, so nothing is created, allocated or
//! synchronised per chunk.
use super::{check, Gpu};
use crate::error::{Error, Result};
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::Arc;

/// One chunk to place: `count` records at device address `records` (NCCL's loadMeta layout), whose
/// offsets are relative to `bounce` (source) and `dst` (destination). Mirrors `TcpxrJob` in kernel.cu.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Job {
    pub records: u64,
    pub bounce: u64,
    pub dst: u64,
    pub first: u32,
    pub count: u32,
}

/// Jobs one launch can carry (TCPXR_MAX_JOBS in kernel.cu, which says why 64; the 4 KiB parameter
/// block would hold 120).
pub const MAX_JOBS: usize = 64;
const THREADS: u32 = 256;
/// Records a block stages per round (TCPXR_TILE in kernel.cu: 8 warps x 1 record).
const TILE: u32 = 8;

/// The kernel's single parameter (TcpxrBatch in kernel.cu).
#[repr(C)]
pub(crate) struct BatchParam {
    njobs: i32,
    total: u32,
    jobs: [Job; MAX_JOBS],
}

/// A batch with no jobs: launching it only loads the kernel.
pub(crate) fn empty_batch() -> Box<BatchParam> {
    Box::new(BatchParam {
        njobs: 0,
        total: 0,
        jobs: [Job::default(); MAX_JOBS],
    })
}

struct Slot {
    event: sys::CUevent,
    generation: u64,
    busy: bool,
}

/// A launched batch; ask `done` about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    slot: usize,
    generation: u64,
}

pub struct Unpacker {
    gpu: Arc<Gpu>,
    kernel: sys::CUfunction,
    slots: Vec<Slot>,
    param: Box<BatchParam>,
    next_slot: usize,
    launches: u64,
}

// SAFETY: the raw kernel and event handles are not tied to a thread (the driver API is thread-safe,
// and every method makes the GPU's context current first); Unpacker is not Sync, so one thread at
// a time uses them.
unsafe impl Send for Unpacker {}

impl Unpacker {
    /// An unpacker with `depth` launch slots (batches that may be in flight at once).
    pub fn new(gpu: Arc<Gpu>, depth: usize) -> Result<Unpacker> {
        let kernel = gpu.unpack_fn()?;
        let _current = gpu.enter()?;
        let mut slots = Vec::with_capacity(depth);
        for _ in 0..depth.max(1) {
            let mut event: sys::CUevent = std::ptr::null_mut();
            // Timing off makes record/query cheapest.
            // SAFETY: a valid out-pointer; the GPU's context is current (`_current`).
            let r = unsafe { sys::cuEventCreate(&mut event, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32) };
            check(r, "cuEventCreate")?;
            slots.push(Slot {
                event,
                generation: 0,
                busy: false,
            });
        }
        let param = Box::new(BatchParam {
            njobs: 0,
            total: 0,
            jobs: [Job::default(); MAX_JOBS],
        });
        Ok(Unpacker {
            gpu,
            kernel,
            slots,
            param,
            next_slot: 0,
            launches: 0,
        })
    }

    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// Adds a chunk to the next batch; false when the batch is full (launch first).
    pub fn add(&mut self, records: u64, count: u32, bounce: u64, dst: u64) -> bool {
        if count == 0 {
            return true;
        }
        let n = self.param.njobs as usize;
        if n >= MAX_JOBS {
            return false;
        }
        self.param.jobs[n] = Job {
            records,
            bounce,
            dst,
            first: self.param.total,
            count,
        };
        self.param.njobs += 1;
        self.param.total += count;
        true
    }

    pub fn has_pending(&self) -> bool {
        self.param.njobs > 0
    }

    pub fn launches(&self) -> u64 {
        self.launches
    }

    /// Launches everything added since the last launch as one kernel. Ok(None): nothing pending,
    /// or every slot still busy (call again after polling `done`).
    pub fn launch(&mut self) -> Result<Option<Batch>> {
        if self.param.njobs == 0 {
            return Ok(None);
        }
        let Some(slot) = self.free_slot()? else { return Ok(None) };
        let _current = self.gpu.enter()?;
        // A block takes TILE records at a time; enough blocks to cover them, at most 16 per SM.
        let grid = self.param.total.div_ceil(TILE).clamp(1, self.gpu.sm_count * 16);
        let mut params: [*mut c_void; 1] = [&mut *self.param as *mut BatchParam as *mut c_void];
        let s = &mut self.slots[slot];
        let stream = if self.launches % 2 == 0 {
            self.gpu.stream
        } else {
            self.gpu.unpack_alt
        };
        // SAFETY: the parameter matches tcpxr_unpack(const TcpxrBatch) and lives across the call
        // (the driver copies it at launch).
        unsafe {
            check(
                sys::cuLaunchKernel(
                    self.kernel,
                    grid,
                    1,
                    1,
                    THREADS,
                    1,
                    1,
                    0,
                    stream,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                ),
                "cuLaunchKernel(tcpxr_unpack)",
            )?;
            check(sys::cuEventRecord(s.event, stream), "cuEventRecord")?;
        }
        s.busy = true;
        s.generation += 1;
        self.param.njobs = 0;
        self.param.total = 0;
        self.launches += 1;
        Ok(Some(Batch {
            slot,
            generation: s.generation,
        }))
    }

    /// Makes `stream` wait for every batch launched so far (whichever unpack stream ran it), so work
    /// queued on `stream` afterwards, such as a timing event, comes after all of them.
    ///
    /// # Safety
    /// `stream` must be a live stream of this GPU's context.
    pub unsafe fn join_into(&self, stream: sys::CUstream) -> Result<()> {
        let _current = self.gpu.enter()?;
        for s in self.slots.iter().filter(|s| s.busy) {
            // SAFETY: a live event recorded behind a launch; the caller vouches for the stream.
            let r = unsafe { sys::cuStreamWaitEvent(stream, s.event, 0) };
            check(r, "cuStreamWaitEvent")?;
        }
        Ok(())
    }

    /// Makes both unpack streams wait for `event` before the launches that follow, so work held
    /// behind `event` (a benchmark's gate) holds every launch, whichever stream runs it.
    ///
    /// # Safety
    /// `event` must be a live event of this GPU's context.
    pub unsafe fn start_after(&self, event: sys::CUevent) -> Result<()> {
        let _current = self.gpu.enter()?;
        for stream in [self.gpu.stream, self.gpu.unpack_alt] {
            // SAFETY: the GPU's live streams; the caller vouches for the event.
            let r = unsafe { sys::cuStreamWaitEvent(stream, event, 0) };
            check(r, "cuStreamWaitEvent")?;
        }
        Ok(())
    }

    /// Whether a launched batch has finished on the GPU (never blocks).
    pub fn done(&mut self, b: Batch) -> Result<bool> {
        let s = &mut self.slots[b.slot];
        if s.generation != b.generation || !s.busy {
            return Ok(true);
        }
        // SAFETY: the event is live.
        match unsafe { sys::cuEventQuery(s.event) } {
            sys::CUresult::CUDA_SUCCESS => {
                s.busy = false;
                Ok(true)
            }
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            e => Err(Error::new(
                crate::abi::ncclResult_t::ncclUnhandledCudaError,
                format!("unpack kernel failed: {e:?}"),
            )),
        }
    }

    fn free_slot(&mut self) -> Result<Option<usize>> {
        for k in 0..self.slots.len() {
            let i = (self.next_slot + k) % self.slots.len();
            if self.slots[i].busy {
                let b = Batch {
                    slot: i,
                    generation: self.slots[i].generation,
                };
                if !self.done(b)? {
                    continue;
                }
            }
            self.next_slot = (i + 1) % self.slots.len();
            return Ok(Some(i));
        }
        Ok(None)
    }
}

impl Drop for Unpacker {
    fn drop(&mut self) {
        let _current = self.gpu.enter();
        for s in &self.slots {
            // SAFETY: events are live; waiting lets every launch finish before its event goes.
            unsafe {
                sys::cuEventSynchronize(s.event);
                sys::cuEventDestroy_v2(s.event);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_batch_parameter_fits_the_4_kib_launch_limit_and_mirrors_the_kernel() {
        assert_eq!(std::mem::size_of::<Job>(), 32);
        assert_eq!(std::mem::size_of::<BatchParam>(), 8 + 32 * MAX_JOBS);
        assert!(std::mem::size_of::<BatchParam>() <= 4096);
        assert!(include_str!("kernel.cu").contains(&format!("#define TCPXR_MAX_JOBS {MAX_JOBS}")));
    }
}
