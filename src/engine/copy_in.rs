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
//! reports it done only once the copy has completed, so the bytes are in place before NCCL's
//! proxy tells its kernel. Smaller receives keep their records: a copy takes about 8 us from issue
//! to completion, more than the kernel's read of a few pages.
//!
//! Completion costs NCCL's thread no driver call: a comm queues its copies in receive order on
//! its own stream, each followed by a write of its receive's number + 1 into a word of pinned
//! host memory (`cuStreamWriteValue64`, fenced after the copy), so one load of that word says
//! which copies are done. NCCL's thread queues every copy and tests the head receive in a loop;
//! it was counted at 4-7 us a copy with an event recorded and queried instead (run 238).
//!
//! A copy needs no multiprocessor: it completed beside a kernel that waits for the host, with one
//! hardware queue (`CUDA_DEVICE_MAX_CONNECTIONS=1`) and under MPS, where a kernel on another
//! stream waited behind it (run 239; tests/gpu_hazard.rs checks it through the plugin).
//!
//! Copies pay where NCCL's channels are few (a point-to-point peer has 2): there the kernel's
//! reads of host memory bound the transfer; a collective's 8 channels unpack as fast as the wire
//! moves, and copies made all_reduce slower (settings.rs `gpu_copy`, run 237).
use crate::error::{Error, Result};
use crate::gpu::{Gpu, Mapped, Stream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The copies of one device-unpack receive comm, queued in receive order on its own stream.
pub struct CopyIn {
    gpu: Arc<Gpu>,
    /// The comm's copy stream and its completion word (receive number + 1 of the newest copy
    /// done), made at the first copy, so a comm that copies nothing makes neither.
    stream: Option<(Stream, Mapped)>,
    /// Receives of at least this many bytes are copied (never 0).
    min_bytes: usize,
    /// The newest receive queued (copies are queued in receive order), if any.
    last: Option<u64>,
    /// Per receive queued and not yet seen complete, oldest first: its number and when it was
    /// queued (for the counters).
    pending: std::collections::VecDeque<(u64, Instant)>,
    /// What NCCL_TCPXR_STATS reports at close.
    pub counts: CopyCounts,
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
    /// Copies for receives into `gpu` of at least `min_bytes`; None when `min_bytes` is 0 (off),
    /// or when the GPU cannot write a word from a stream (every GPU CUDA 12+ drives on Linux can).
    pub fn new(gpu: Arc<Gpu>, min_bytes: usize) -> Option<CopyIn> {
        if min_bytes > 0 && !gpu.writes_u64_on_stream() {
            log::warn!(
                "GPU {}: no 64-bit stream memory operations; NCCL's unpack kernel places every receive \
                 (NCCL_TCPXR_GPU_COPY_BYTES has no effect)",
                gpu.ordinal
            );
            return None;
        }
        (min_bytes > 0).then(|| CopyIn {
            gpu,
            stream: None,
            min_bytes,
            last: None,
            pending: std::collections::VecDeque::new(),
            counts: CopyCounts::default(),
        })
    }

    /// Whether a receive of `len` bytes is copied rather than described by records.
    pub fn wants(&self, len: usize) -> bool {
        len >= self.min_bytes
    }

    /// Queues the copy of receive `seq`'s `len` bytes from pinned host memory at `src` to device
    /// address `dst`, then the write that says it is done. Receives are queued in order: `seq`
    /// must be newer than every receive queued before.
    ///
    /// # Safety
    /// `src .. src + len` must be pinned host memory and `dst .. dst + len` device memory, both
    /// kept (and `src` unchanged) until [`CopyIn::done`] says the copy completed.
    pub unsafe fn start(&mut self, seq: u64, src: *const u8, dst: u64, len: usize) -> Result<()> {
        if self.last.is_some_and(|l| l >= seq) {
            return Err(Error::internal(format!(
                "a copy into GPU memory for receive {seq} queued after receive {:?}'s",
                self.last
            )));
        }
        let (stream, word) = match &mut self.stream {
            Some(s) => s,
            None => {
                let word = Mapped::new(&self.gpu, 8)?;
                self.stream.insert((Stream::new(&self.gpu)?, word))
            }
        };
        let queued = Instant::now();
        // SAFETY: the caller keeps both ranges until the word says the copy is done; the word is
        // 8 bytes of mapped memory this comm owns until its drop, after `quiesce`.
        unsafe { stream.copy_htod_then_write(&self.gpu, dst, src, len, word.dev, seq + 1)? };
        self.last = Some(seq);
        self.pending.push_back((seq, queued));
        let c = &mut self.counts;
        c.copies += 1;
        c.bytes += len as u64;
        c.queue_ns += queued.elapsed().as_nanos() as u64;
        Ok(())
    }

    /// The completion word: receive number + 1 of the newest copy done (0: none yet).
    fn copied(&self) -> u64 {
        match &self.stream {
            // SAFETY: 8 aligned bytes of mapped memory this comm owns, written only by the GPU
            // (a 64-bit store); the acquire load orders NCCL's later reads after it.
            Some((_, word)) => unsafe { AtomicU64::from_ptr(word.host as *mut u64) }.load(Ordering::Acquire),
            None => 0,
        }
    }

    /// Whether receive `seq`'s copy has completed; false while it runs or before it is queued.
    pub fn done(&mut self, seq: u64) -> Result<bool> {
        if self.last.is_none_or(|l| l < seq) {
            return Ok(false);
        }
        let copied = self.copied();
        // Copies complete in queue order: every receive below the word's value is done.
        while let Some(&(s, queued)) = self.pending.front() {
            if s >= copied {
                break;
            }
            let ns = queued.elapsed().as_nanos() as u64;
            self.counts.done_ns += ns;
            self.counts.done_max_ns = self.counts.done_max_ns.max(ns);
            self.pending.pop_front();
        }
        Ok(seq < copied)
    }

    /// Waits (at most a few seconds) for every copy queued, so that none writes into a buffer or
    /// reads bounce memory after its comm is gone; for closing only.
    pub fn quiesce(&self) {
        let Some(last) = self.last else { return };
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.copied() <= last {
            if Instant::now() >= deadline {
                log::warn!("closing a receive comm: a copy into GPU memory did not complete within 5 s");
                return;
            }
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}
