//! [`Event`]: a CUDA event without timing, made once and recorded many times behind work on a
//! stream, then only queried (waited for, with a deadline, only when something closes).
use super::{check, free_in, Gpu};
use crate::abi::ncclResult_t;
use crate::error::{Error, Result};
use cudarc::driver::sys;

/// A CUDA event without timing, created once and recorded many times.
pub struct Event {
    /// stream.rs records it on the legacy default stream too.
    pub(super) raw: sys::CUevent,
    /// The primary context it was made in, entered to destroy it.
    ctx: sys::CUcontext,
}

// SAFETY: an event handle may be used from any thread with the context current; `ctx` is a
// retained primary context, valid on any thread.
unsafe impl Send for Event {}

impl Event {
    pub fn new(gpu: &Gpu) -> Result<Event> {
        let _current = gpu.enter()?;
        let mut raw: sys::CUevent = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the GPU's context is current (`_current`).
        let r = unsafe { sys::cuEventCreate(&mut raw, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32) };
        check(r, "cuEventCreate")?;
        Ok(Event { raw, ctx: gpu.ctx })
    }

    /// Records the event behind the work queued so far on `on`, a stream of `gpu`.
    pub fn record_on(&self, gpu: &Gpu, on: &impl super::Queue) -> Result<()> {
        let _current = gpu.enter()?;
        // SAFETY: live event and stream.
        check(unsafe { sys::cuEventRecord(self.raw, on.raw()) }, "cuEventRecord")
    }

    /// Whether the recorded work has finished; never blocks.
    pub fn done(&self) -> Result<bool> {
        // SAFETY: live event.
        match unsafe { sys::cuEventQuery(self.raw) } {
            sys::CUresult::CUDA_SUCCESS => Ok(true),
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            e => Err(Error::new(
                ncclResult_t::ncclUnhandledCudaError,
                format!("cuEventQuery: {e:?}"),
            )),
        }
    }

    /// Polls [`Event::done`] until the recorded work has finished (true) or `deadline` passes
    /// (false); for closing, never on a data path.
    pub fn done_by(&self, deadline: std::time::Instant) -> Result<bool> {
        loop {
            if self.done()? {
                return Ok(true);
            }
            if std::time::Instant::now() >= deadline {
                return Ok(false);
            }
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }
}

impl Drop for Event {
    /// Destroys the event in its own context without waiting: the driver lets an event go while
    /// recorded work is pending and releases it once that work completes. Memory such work writes
    /// is its owner's to wait for (SendLane's drop), so a close waits on no copy here.
    fn drop(&mut self) {
        let raw = self.raw;
        // SAFETY: the event is live and destroyed once.
        free_in(self.ctx, "a CUDA event (cuEventDestroy)", || unsafe {
            sys::cuEventDestroy_v2(raw)
        });
    }
}
