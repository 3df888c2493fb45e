//! Receives into GPU memory placed by the GPU's copy engine, under NCCL's device unpack over the
//! socket (`NCCL_TCPXR_GPU_COPY_BYTES`).
//!
//! Over the socket a receive into GPU memory lands in pinned host memory (arena.rs), and with
//! only records published NCCL's unpack kernel reads it across PCIe with the warps of the
//! receiving channel: about 2.5 GB/s a channel, which bounds GPU buffers' sendrecv
//! (docs/BENCHMARKS.md, "GPU buffers"). A receive of at least the threshold is instead copied
//! into the buffer NCCL posted by one `cuMemcpyHtoDAsync` on the comm's own stream (43 GB/s for
//! 512 KiB copies on an H200; a stream of its own, so that its copies do not wait in line behind
//! every other channel's) and published with no records, so NCCL's kernel has nothing to place; `test`
//! reports it done only once the copy's event has completed, so the bytes are in place before
//! NCCL's proxy tells its kernel. Smaller receives keep their records: a copy takes about 8 us
//! from issue to a completed event, more than the kernel's read of a few pages.
//!
//! A copy needs no multiprocessor: it completed beside a kernel that waits for the host, with one
//! hardware queue (`CUDA_DEVICE_MAX_CONNECTIONS=1`) and under MPS, where a kernel on another
//! stream waited behind it (run 239; tests/gpu_hazard.rs checks it through the plugin).
//!
//! Copies pay where NCCL's channels are few (a point-to-point peer has 2): there the kernel's
//! reads of host memory bound the transfer; a collective's 8 channels unpack as fast as the wire
//! moves, and copies made all_reduce slower (settings.rs `gpu_copy`, run 237).
//!
//! What a copy costs besides its own time: it reads bounce lines the I/O threads wrote moments
//! before, still in their cores' caches, and under load that makes the I/O threads' kernel copies
//! (receive and send) cost 1.2-1.6x the CPU a byte of host buffers'; holding each copy back
//! 100-150 us took most of that away (runs 262-268, docs/BENCHMARKS.md, GPU buffers). Copies are
//! still queued at once: the hold is latency every receive would pay, and is not yet measured
//! enough to choose.
use super::ring::RING_SLOTS;
use crate::error::Result;
use crate::gpu::{Event, Gpu, Stream};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The copies of one device-unpack receive comm, one event per ring slot (a receive holds its
/// slot until NCCL consumes it, so a slot's event is recorded again only after that).
pub struct CopyIn {
    gpu: Arc<Gpu>,
    /// The comm's copy stream, made with the events at the first copy.
    stream: Option<Stream>,
    /// Receives of at least this many bytes are copied (never 0).
    min_bytes: usize,
    /// Per ring slot: its event and the copy last recorded on it. Made at the first copy, so a
    /// comm that copies nothing creates no events.
    slots: Vec<(Event, Option<Copy>)>,
    /// What NCCL_TCPXR_STATS reports at close.
    pub counts: CopyCounts,
}

/// One queued copy: its receive, when it was queued, and whether it has been seen complete.
#[derive(Clone, Copy)]
struct Copy {
    seq: u64,
    queued: Instant,
    seen: bool,
}

/// A comm's copies for NCCL_TCPXR_STATS: how many, their bytes, the time NCCL's thread spent
/// queuing them (the driver calls), and the time from queued to first seen complete.
#[derive(Clone, Copy, Default, Debug)]
pub struct CopyCounts {
    pub copies: u64,
    pub bytes: u64,
    pub queue_ns: u64,
    pub done_ns: u64,
    pub done_max_ns: u64,
}

impl CopyCounts {
    /// The stats line's words, or None when nothing was copied.
    pub fn describe(&self) -> Option<String> {
        let n = self.copies.max(1) as f64;
        (self.copies > 0).then(|| {
            format!(
                "{} copies into GPU memory, {:.1} MB, queuing avg {:.1} us, queued to seen done avg {:.1} us max {:.1} us",
                self.copies,
                self.bytes as f64 / 1e6,
                self.queue_ns as f64 / n / 1e3,
                self.done_ns as f64 / n / 1e3,
                self.done_max_ns as f64 / 1e3
            )
        })
    }
}

impl CopyIn {
    /// Copies for receives into `gpu` of at least `min_bytes`; None when `min_bytes` is 0 (off).
    pub fn new(gpu: Arc<Gpu>, min_bytes: usize) -> Option<CopyIn> {
        (min_bytes > 0).then(|| CopyIn {
            gpu,
            stream: None,
            min_bytes,
            slots: Vec::new(),
            counts: CopyCounts::default(),
        })
    }

    /// Whether a receive of `len` bytes is copied rather than described by records.
    pub fn wants(&self, len: usize) -> bool {
        len >= self.min_bytes
    }

    /// Queues the copy of receive `seq`'s `len` bytes from pinned host memory at `src` to device
    /// address `dst`, and records its slot's event behind it.
    ///
    /// # Safety
    /// `src .. src + len` must be pinned host memory and `dst .. dst + len` device memory, both
    /// kept (and `src` unchanged) until [`CopyIn::done`] says the copy completed.
    pub unsafe fn start(&mut self, seq: u64, src: *const u8, dst: u64, len: usize) -> Result<()> {
        let stream = match &mut self.stream {
            Some(s) => s,
            None => {
                self.slots = (0..RING_SLOTS)
                    .map(|_| Event::new(&self.gpu).map(|e| (e, None)))
                    .collect::<Result<_>>()?;
                self.stream.insert(Stream::new(&self.gpu)?)
            }
        };
        let queued = Instant::now();
        let slot = &mut self.slots[(seq % RING_SLOTS as u64) as usize];
        // SAFETY: the caller keeps both ranges until the event recorded next says the copy is done.
        unsafe { crate::gpu::copy_htod_async(&self.gpu, stream, dst, src, len)? };
        slot.0.record_on(&self.gpu, stream)?;
        slot.1 = Some(Copy {
            seq,
            queued,
            seen: false,
        });
        let c = &mut self.counts;
        c.copies += 1;
        c.bytes += len as u64;
        c.queue_ns += queued.elapsed().as_nanos() as u64;
        Ok(())
    }

    /// Whether receive `seq`'s copy has completed; false while it runs or before it is started.
    pub fn done(&mut self, seq: u64) -> Result<bool> {
        let Some((event, Some(copy))) = self.slots.get_mut((seq % RING_SLOTS as u64) as usize) else {
            return Ok(false);
        };
        if copy.seq != seq || !event.done()? {
            return Ok(false);
        }
        if !copy.seen {
            copy.seen = true;
            let ns = copy.queued.elapsed().as_nanos() as u64;
            self.counts.done_ns += ns;
            self.counts.done_max_ns = self.counts.done_max_ns.max(ns);
        }
        Ok(true)
    }

    /// Waits, at most `limit`, for every copy queued, so that none writes into a buffer or reads
    /// bounce memory after its comm is gone; false when one may still run (its event did not
    /// complete, or could not be asked). For closing only.
    pub fn quiesce(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        self.slots
            .iter()
            .all(|(event, copy)| copy.is_none() || matches!(event.done_by(deadline), Ok(true)))
    }
}

#[cfg(test)]
mod tests {
    use super::CopyCounts;

    /// ncclTests/parse.py reads this line (`_COPIES`) into the runner's counters line: a change
    /// here is a change there.
    #[test]
    fn the_copy_counts_read_as_the_runner_parses_them() {
        let counts = CopyCounts {
            copies: 4,
            bytes: 2 << 20,
            queue_ns: 20_000,
            done_ns: 240_000,
            done_max_ns: 90_500,
        };
        assert_eq!(
            counts.describe().as_deref(),
            Some("4 copies into GPU memory, 2.1 MB, queuing avg 5.0 us, queued to seen done avg 60.0 us max 90.5 us")
        );
        assert_eq!(CopyCounts::default().describe(), None, "nothing copied, no line");
    }
}
