//! The GPU side of a group: how bytes reach and leave windows in GPU memory without tcpxr ever
//! waiting on the GPU (window.rs's rule decides whether this may run at all).
//!
//! * Landing: a put (or a get's answer) for a GPU window is received into pinned host staging
//!   buffers of [`STAGE_BYTES`] each, from a pool of [`STAGE_BUFFERS`] made at the group's first
//!   GPU registration; each full buffer is copied host-to-device on tcpxr's persistent
//!   non-blocking stream of that GPU, and goes back to the pool when the event recorded behind
//!   its copy has completed. With the pool empty the connection is left unread until one returns.
//! * Signals in GPU memory: each add is applied to the word itself by a device atomic
//!   (kernel.cu's `tcpxr_signal_add`, launched <<<1,1>>> on the same stream after the data's
//!   copies): a kernel that sees the signal sees the data, and NCCL may reset the word between
//!   puts (it registers signal windows without NCCL_NET_MR_FLAG_SIGNAL_NEVER_RESET). A host
//!   signal after GPU data waits for the stream work before it (added when its event completes).
//!   Stream order covers both weak signals (their put's copies come first) and strong ones (every
//!   earlier put's copies do).
//! * Sending from GPU memory (a put's source, a get's answer): copied device-to-host into a
//!   staging buffer on the same stream; the send waits for its event in the progress loop.
//!
//! Nothing here blocks: copies, writes and event records are queued, events are queried. Events
//! come from a pool that keeps every event made (as many as were ever in flight at once).
use super::window::add_host_signal;
use crate::error::Result;
use crate::gpu::{self, Event, Gpu, Mapped};
use std::collections::VecDeque;
use std::sync::Arc;

/// Bytes of one staging buffer: the most one copy moves.
pub const STAGE_BYTES: usize = 1 << 20;
/// Staging buffers per group (pinned host memory: STAGE_BYTES each).
pub const STAGE_BUFFERS: usize = 16;

/// Stream work not yet known complete, and what to do when it is.
struct Inflight {
    event: Event,
    /// A staging buffer the work reads, freed after it.
    buf: Option<usize>,
    /// A request finished after it (a get that landed in GPU memory, a put to this rank).
    request: Option<u64>,
    /// A host signal added after it (address, addend).
    host_signal: Option<(usize, u64)>,
}

/// A staging buffer holding bytes copied out of GPU memory for sending, and the event of that
/// copy.
pub struct Outbound {
    pub buf: usize,
    event: Event,
    ready: bool,
}

pub struct Stager {
    pub gpu: Arc<Gpu>,
    bufs: Vec<Mapped>,
    free: Vec<usize>,
    events: Vec<Event>,
    inflight: VecDeque<Inflight>,
}

impl Stager {
    /// The pool for GPU `ordinal`: made at registration (allocating pinned memory may wait), never
    /// on the data path.
    pub fn new(ordinal: usize) -> Result<Stager> {
        let gpu = Gpu::get(ordinal)?;
        // The signal kernel is loaded now, never while NCCL's kernel spins on a signal.
        gpu.prepare_kernels()?;
        let bufs = (0..STAGE_BUFFERS)
            .map(|_| Mapped::new(&gpu, STAGE_BYTES))
            .collect::<Result<Vec<_>>>()?;
        let events = (0..2 * STAGE_BUFFERS)
            .map(|_| Event::new(&gpu))
            .collect::<Result<Vec<_>>>()?;
        log::info!(
            target: "tcpxr::init",
            "RMA: GPU {ordinal} windows placed by copies on tcpxr's stream through {STAGE_BUFFERS} x {} KiB of pinned staging",
            STAGE_BYTES >> 10
        );
        Ok(Stager {
            gpu,
            free: (0..bufs.len()).rev().collect(),
            bufs,
            events,
            inflight: VecDeque::new(),
        })
    }

    pub fn take_buf(&mut self) -> Option<usize> {
        self.free.pop()
    }

    /// The host address of staging buffer `b`.
    pub fn host(&self, b: usize) -> *mut u8 {
        self.bufs[b].host
    }

    fn event(&mut self) -> Result<Event> {
        match self.events.pop() {
            Some(e) => Ok(e),
            None => Event::new(&self.gpu),
        }
    }

    /// Records an event behind the stream's work so far, with what to do once it completes.
    fn after(&mut self, buf: Option<usize>, request: Option<u64>, host_signal: Option<(usize, u64)>) -> Result<()> {
        let event = self.event()?;
        event.record(&self.gpu)?;
        self.inflight.push_back(Inflight {
            event,
            buf,
            request,
            host_signal,
        });
        Ok(())
    }

    /// Copies `len` received bytes of staging buffer `buf` to device address `dst`; the buffer
    /// returns to the pool once the copy is done.
    pub fn land(&mut self, dst: u64, buf: usize, len: usize) -> Result<()> {
        let src = self.bufs[buf].host;
        // SAFETY: `buf` is a pinned buffer of this pool holding `len` <= STAGE_BYTES received
        // bytes, out of the free list until the event recorded just after completes; `dst` lies
        // in a registered GPU window, which deregMrSym keeps until this pool is idle.
        unsafe { gpu::copy_htod_async(&self.gpu, dst, src, len)? };
        self.after(Some(buf), None, None)
    }

    /// Copies `len` bytes between device or host addresses on the stream (a rank's operation on
    /// itself). A host window in pageable memory makes CUDA stage this copy synchronously.
    pub fn copy(&mut self, dst: u64, src: u64, len: usize) -> Result<()> {
        // SAFETY: both ranges lie in registered windows (checked by the caller), kept until this
        // pool is idle (deregMrSym waits for it).
        unsafe { gpu::copy_async(&self.gpu, dst, src, len) }
    }

    /// Marks `request` done once the stream's work so far has completed.
    pub fn finish_after(&mut self, request: u64) -> Result<()> {
        self.after(None, Some(request), None)
    }

    /// Adds `add` to the GPU signal at device address `addr` with a device atomic after the
    /// stream's earlier work (the copies of every put before it).
    pub fn signal_gpu(&mut self, addr: u64, add: u64) -> Result<()> {
        // SAFETY: `addr` is an 8-aligned signal inside a registered GPU window (signal_at), kept
        // until this pool is idle (deregMrSym waits for it).
        unsafe { gpu::add_u64_async(&self.gpu, addr, add) }
    }

    /// Adds `add` to the host signal at `addr` now, or, while stream work is pending (bytes the
    /// signal may cover), once it has completed.
    pub fn signal_host(&mut self, addr: usize, add: u64) -> Result<()> {
        if self.inflight.is_empty() {
            add_host_signal(addr, add);
            Ok(())
        } else {
            self.after(None, None, Some((addr, add)))
        }
    }

    /// Starts copying `len` bytes at device address `src` out into a staging buffer for sending;
    /// None while the pool is empty.
    pub fn stage_out(&mut self, src: u64, len: usize) -> Result<Option<Outbound>> {
        let Some(buf) = self.free.pop() else { return Ok(None) };
        let dst = self.bufs[buf].host;
        // SAFETY: `buf` is a pinned buffer of this pool (len <= STAGE_BYTES), held by the returned
        // Outbound until its event has completed; `src` lies in a registered GPU window which
        // deregMrSym keeps while an operation reading it is queued.
        let queued = unsafe { gpu::copy_dtoh_async(&self.gpu, dst, src, len) }.and_then(|()| {
            let event = self.event()?;
            event.record(&self.gpu)?;
            Ok(event)
        });
        match queued {
            Ok(event) => Ok(Some(Outbound {
                buf,
                event,
                ready: false,
            })),
            Err(e) => {
                self.free.push(buf);
                Err(e)
            }
        }
    }

    /// Whether an outbound copy has completed (never blocks).
    pub fn ready(&self, o: &mut Outbound) -> Result<bool> {
        if !o.ready {
            o.ready = o.event.done()?;
        }
        Ok(o.ready)
    }

    /// Gives an outbound buffer (sent, or abandoned once its copy completed) back.
    pub fn release(&mut self, o: Outbound) {
        self.free.push(o.buf);
        self.events.push(o.event);
    }

    /// Retires completed stream work in order: frees buffers, adds deferred host signals and
    /// calls `finished` for requests that waited on it.
    pub fn poll(&mut self, mut finished: impl FnMut(u64)) -> Result<()> {
        while let Some(front) = self.inflight.front() {
            if !front.event.done()? {
                break;
            }
            let w = self.inflight.pop_front().expect("front");
            if let Some(b) = w.buf {
                self.free.push(b);
            }
            if let Some((addr, add)) = w.host_signal {
                add_host_signal(addr, add);
            }
            if let Some(r) = w.request {
                finished(r);
            }
            self.events.push(w.event);
        }
        Ok(())
    }

    /// Whether stream work is pending or staging buffers are out.
    pub fn busy(&self) -> bool {
        !self.inflight.is_empty() || self.free.len() < self.bufs.len()
    }
}

impl Drop for Stager {
    /// Waits (bounded) for pending stream work before the pinned buffers it uses are freed; the
    /// group is being closed, after NCCL's kernels are done with it.
    fn drop(&mut self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        for w in &self.inflight {
            if !matches!(w.event.done_by(deadline), Ok(true)) {
                log::warn!("RMA: closing a group whose GPU copies have not completed after 5 s");
                // Leaking the pinned buffers is safer than freeing memory a copy still uses.
                std::mem::forget(std::mem::take(&mut self.bufs));
                return;
            }
        }
    }
}
