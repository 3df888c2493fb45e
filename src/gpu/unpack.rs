//! Launching the unpack kernel: jobs (one per received chunk) are gathered into a batch and placed
//! by one launch on the GPU's persistent stream; a CUDA event recorded behind the launch says when
//! the batch is done, which is when its bounce pages may be released.
//!
//! Every launch slot (its job array in mapped memory and its event) is allocated when the unpacker
//! is made; a launch only writes jobs into a free slot, so nothing is created, allocated or
//! synchronised per chunk.
use super::{check, Gpu, Mapped};
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

/// Jobs one launch can carry (TCPXR_MAX_JOBS in kernel.cu).
pub const MAX_JOBS: usize = 256;
const THREADS: u32 = 256;

struct Slot {
    jobs: Mapped,
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
    slots: Vec<Slot>,
    pending: Vec<Job>,
    records: u32,
    next_slot: usize,
    launches: u64,
}

// SAFETY: the raw event handles are only used through &mut self.
unsafe impl Send for Unpacker {}

impl Unpacker {
    /// An unpacker with `depth` launch slots (batches that may be in flight at once).
    pub fn new(gpu: Arc<Gpu>, depth: usize) -> Result<Unpacker> {
        gpu.bind()?;
        let mut slots = Vec::with_capacity(depth);
        for _ in 0..depth.max(1) {
            let jobs = Mapped::new(&gpu, MAX_JOBS * std::mem::size_of::<Job>())?;
            let mut event: sys::CUevent = std::ptr::null_mut();
            // SAFETY: valid out-pointer; timing off makes record/query cheapest.
            check(
                unsafe { sys::cuEventCreate(&mut event, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32) },
                "cuEventCreate",
            )?;
            slots.push(Slot {
                jobs,
                event,
                generation: 0,
                busy: false,
            });
        }
        Ok(Unpacker {
            gpu,
            slots,
            pending: Vec::with_capacity(MAX_JOBS),
            records: 0,
            next_slot: 0,
            launches: 0,
        })
    }

    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// Adds a chunk to the next batch; false when the batch is full (launch first).
    pub fn add(&mut self, records: u64, count: u32, bounce: u64, dst: u64) -> bool {
        if self.pending.len() >= MAX_JOBS {
            return false;
        }
        self.pending.push(Job {
            records,
            bounce,
            dst,
            first: self.records,
            count,
        });
        self.records += count;
        true
    }

    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    pub fn launches(&self) -> u64 {
        self.launches
    }

    /// Launches everything added since the last launch as one kernel. Ok(None): nothing pending,
    /// or every slot still busy (call again after polling `done`).
    pub fn launch(&mut self) -> Result<Option<Batch>> {
        if self.pending.is_empty() {
            return Ok(None);
        }
        let Some(slot) = self.free_slot()? else { return Ok(None) };
        self.gpu.bind()?;
        let s = &mut self.slots[slot];
        // SAFETY: the slot is free (its previous launch completed), so the GPU no longer reads it.
        unsafe {
            std::ptr::copy_nonoverlapping(self.pending.as_ptr(), s.jobs.host as *mut Job, self.pending.len());
        }
        let njobs = self.pending.len() as i32;
        let total = self.records;
        let warps_per_block = THREADS / 32;
        let grid = total.div_ceil(warps_per_block).clamp(1, self.gpu.sm_count * 16);
        let mut jobs_dev = s.jobs.dev;
        let (mut nj, mut tot) = (njobs, total);
        let mut params: [*mut c_void; 3] = [
            &mut jobs_dev as *mut u64 as *mut c_void,
            &mut nj as *mut i32 as *mut c_void,
            &mut tot as *mut u32 as *mut c_void,
        ];
        // SAFETY: the parameters match tcpxr_unpack(const TcpxrJob*, int, unsigned) and live across
        // the call (the driver copies them at launch).
        unsafe {
            check(
                sys::cuLaunchKernel(
                    self.gpu.unpack_fn,
                    grid,
                    1,
                    1,
                    THREADS,
                    1,
                    1,
                    0,
                    self.gpu.stream,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                ),
                "cuLaunchKernel(tcpxr_unpack)",
            )?;
            check(sys::cuEventRecord(s.event, self.gpu.stream), "cuEventRecord")?;
        }
        s.busy = true;
        s.generation += 1;
        self.pending.clear();
        self.records = 0;
        self.launches += 1;
        Ok(Some(Batch {
            slot,
            generation: s.generation,
        }))
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
        let _ = self.gpu.bind();
        for s in &self.slots {
            // SAFETY: events are live; waiting makes sure no launch still reads the job arrays
            // that are freed right after.
            unsafe {
                sys::cuEventSynchronize(s.event);
                sys::cuEventDestroy_v2(s.event);
            }
        }
    }
}
