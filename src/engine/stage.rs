//! A receive comm's GPU placement by tcpxr's own unpack kernel (comms without NCCL's device
//! unpack: the v5/v6 tables, the C API). The receive comm owns one `RecvStage` (its mode
//! `RecvMode::OwnUnpack`, for the one GPU it receives into) and lends it to its lanes on each call: chunks that landed in bounce memory, and inline
//! payloads that landed in the stage's own slots, are added as jobs, every job added in one
//! progress pass is placed by one launch, and a chunk is done once its launch's event is.
use crate::abi::loadMeta;
use crate::error::{Error, Result};
use crate::gpu::unpack::{Batch, Unpacker};
use crate::gpu::{Gpu, Mapped};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Fragment size of the records tcpxr writes (what TCPX's bounce pages look like).
pub const FRAGMENT: usize = 4096;
/// Batches of unpack launches that may be in flight per receive comm.
const LAUNCH_DEPTH: usize = 8;

/// Writes the 4 KiB fragment records of `len` contiguous bytes at `base` and returns their count.
///
/// # Safety
/// `base` must have room for `len.div_ceil(FRAGMENT)` records, and the GPU must not be reading
/// them (they are added to a batch only afterwards).
pub unsafe fn write_records(base: *mut loadMeta, len: usize) -> u32 {
    let n = len.div_ceil(FRAGMENT);
    for i in 0..n {
        let off = i * FRAGMENT;
        let rec = loadMeta {
            src_off: off as u32,
            len: FRAGMENT.min(len - off) as u32,
            dst_off: off as u64,
        };
        // SAFETY: i < n records fit, as the caller promised.
        unsafe { std::ptr::write(base.add(i), rec) };
    }
    n as u32
}

/// The unpacker and the batches in flight, and the landing slots of inline payloads. Batches are
/// polled oldest first and `placed` only moves past a batch once it and every older one are done
/// (two streams may finish them out of order), so "ticket t is placed" is a single counter and
/// chunks are released, and TCPX told `consumed`, in order.
///
/// A chunk is never refused: when the batch is full and every launch slot is busy (many stripes of
/// small chunks outrunning the GPU), its job waits here, in order, for a later pass's launch.
pub struct RecvStage {
    unpacker: Unpacker,
    /// Tickets handed out so far (one per chunk or inline payload added).
    added: u64,
    /// Tickets whose jobs are in the unpacker's batch or launched: every one up to this.
    batched: u64,
    /// Tickets placed so far: their launches, and every older one, are done.
    placed: u64,
    /// (tickets up to, batch) of launches not yet seen complete, oldest first.
    launched: VecDeque<(u64, Batch)>,
    /// Jobs added while no launch slot was free for the full batch ahead of them, oldest first.
    waiting: VecDeque<Waiting>,
    inline: InlineLanding,
}

/// A job not yet in the unpacker's batch: its ticket and what [`Unpacker::add`] takes.
#[derive(Clone, Copy)]
struct Waiting {
    ticket: u64,
    records: u64,
    count: u32,
    bounce: u64,
    dst: u64,
}

/// How long a closing comm waits for its launches before it leaks the memory they read.
pub const QUIESCE_LIMIT: Duration = Duration::from_secs(5);

impl RecvStage {
    /// A stage for receives into `gpu`'s memory, with one inline landing slot of `inline_limit`
    /// bytes for each of the comm's `request_slots`.
    pub fn new(gpu: Arc<Gpu>, request_slots: usize, inline_limit: usize) -> Result<RecvStage> {
        let inline = InlineLanding::new(&gpu, request_slots, inline_limit)?;
        Ok(RecvStage {
            unpacker: Unpacker::new(gpu, LAUNCH_DEPTH)?,
            added: 0,
            batched: 0,
            placed: 0,
            launched: VecDeque::new(),
            waiting: VecDeque::new(),
            inline,
        })
    }

    pub fn gpu(&self) -> &Arc<Gpu> {
        self.unpacker.gpu()
    }

    /// Queues a chunk's `count` records (device address `records`, offsets from `bounce` and
    /// `dst`); returns its ticket.
    pub fn add(&mut self, records: u64, count: u32, bounce: u64, dst: u64) -> Result<u64> {
        self.added += 1;
        self.waiting.push_back(Waiting {
            ticket: self.added,
            records,
            count,
            bounce,
            dst,
        });
        self.feed()?;
        Ok(self.added)
    }

    /// Moves waiting jobs into the batch, oldest first, launching each batch that fills while a
    /// launch slot is free; what does not fit waits for the next call.
    fn feed(&mut self) -> Result<()> {
        while let Some(&w) = self.waiting.front() {
            if !self.unpacker.add(w.records, w.count, w.bounce, w.dst) {
                if !self.launch_batch()? {
                    return Ok(());
                }
                continue;
            }
            self.batched = w.ticket;
            self.waiting.pop_front();
        }
        Ok(())
    }

    /// Launches the batch; false when every launch slot is busy (it stays, and so do its jobs).
    fn launch_batch(&mut self) -> Result<bool> {
        if !self.unpacker.has_pending() {
            return Ok(true);
        }
        match self.unpacker.launch()? {
            Some(b) => {
                self.launched.push_back((self.batched, b));
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Launches what was added since the last launch (one kernel for all stripes' chunks), and
    /// what waited for a launch slot as far as slots are free.
    pub fn launch(&mut self) -> Result<()> {
        self.feed()?;
        self.launch_batch()?;
        Ok(())
    }

    /// Chunks added for placement so far, and placed so far (stall report).
    pub fn counts(&self) -> (u64, u64) {
        (self.added, self.placed)
    }

    /// Waits until every chunk added has been placed, or `limit` has passed (false: a launch may
    /// still read the bounce memory and inline landings, which the caller must then not free).
    /// For a closing comm, after NCCL is done with its receives.
    pub fn quiesce(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            match self.launch().and_then(|_| self.placed(self.added)) {
                Ok(true) => return true,
                Ok(false) if Instant::now() < deadline => std::thread::sleep(Duration::from_micros(50)),
                Ok(false) => return false,
                Err(e) => {
                    log::warn!("closing a receive comm: its unpack launches cannot be waited for: {e}");
                    return false;
                }
            }
        }
    }

    /// Whether the chunk with `ticket` has been placed (its launch's event has completed).
    pub fn placed(&mut self, ticket: u64) -> Result<bool> {
        while let Some(&(upto, b)) = self.launched.front() {
            if !self.unpacker.done(b)? {
                break;
            }
            self.placed = upto;
            self.launched.pop_front();
        }
        // Jobs with no records are batched but never launched: nothing to wait for.
        if self.launched.is_empty() && !self.unpacker.has_pending() {
            self.placed = self.batched;
        }
        Ok(ticket <= self.placed)
    }

    /// Where request slot `slot`'s inline payload of `len` bytes lands (host view).
    pub fn inline_payload(&mut self, slot: u32, len: usize) -> Result<&mut [u8]> {
        self.inline.payload(slot, len)
    }

    /// Queues request slot `slot`'s inline payload of `len` bytes for placement at device address
    /// `dst`; returns its ticket.
    pub fn place_inline(&mut self, slot: u32, len: usize, dst: u64) -> Result<u64> {
        let (records, count, payload) = self.inline.records(slot, len)?;
        self.add(records, count, payload, dst)
    }
}

/// Landing memory for inline payloads (those that come on the control connection) bound for GPU
/// memory: one slot per request slot of the comm, each with room for the fragment records and
/// `limit` payload bytes, pinned and device-mapped. The control connection reads a payload straight
/// into its slot and the unpack kernel places it, in the launch of its progress pass.
///
/// Nothing here touches CUDA's legacy default stream. A synchronous copy would: it queues behind
/// whatever the application put there, and an application (torch does) may already have queued
/// work there that waits for this very receive.
struct InlineLanding {
    mem: Mapped,
    slot_bytes: usize,
    records_bytes: usize,
    limit: usize,
}

impl InlineLanding {
    fn new(gpu: &Gpu, slots: usize, limit: usize) -> Result<InlineLanding> {
        // Records first, then the payload, which starts 256-byte aligned so that the kernel's wide
        // copies apply.
        let records_bytes = (limit.div_ceil(FRAGMENT).max(1) * std::mem::size_of::<loadMeta>()).next_multiple_of(256);
        let slot_bytes = (records_bytes + limit).next_multiple_of(256);
        Ok(InlineLanding {
            mem: Mapped::new(gpu, slots * slot_bytes)?,
            slot_bytes,
            records_bytes,
            limit,
        })
    }

    fn base(&self, slot: u32) -> usize {
        slot as usize * self.slot_bytes
    }

    /// The offset of slot `slot`, which must have room for `len` payload bytes.
    fn checked_base(&self, slot: u32, len: usize) -> Result<usize> {
        if len > self.limit || self.base(slot) + self.slot_bytes > self.mem.len {
            return Err(Error::internal(format!(
                "inline landing: {len} bytes in slot {slot} exceed its {} bytes",
                self.limit
            )));
        }
        Ok(self.base(slot))
    }

    fn payload(&mut self, slot: u32, len: usize) -> Result<&mut [u8]> {
        let base = self.checked_base(slot, len)?;
        // SAFETY: in bounds (checked); the slot belongs to the one message posted on it,
        // and the GPU reads it only after `records`, until that message completes.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.mem.host.add(base + self.records_bytes), len) })
    }

    /// Writes slot `slot`'s records for `len` bytes; returns their device address and count, and
    /// the payload's device address.
    fn records(&mut self, slot: u32, len: usize) -> Result<(u64, u32, u64)> {
        let base = self.checked_base(slot, len)?;
        // SAFETY: the slot's record area holds limit / FRAGMENT records, and len <= limit
        // (checked); the GPU reads them only once added to a batch.
        let n = unsafe { write_records(self.mem.host.add(base) as *mut loadMeta, len) };
        let records = self.mem.dev + base as u64;
        Ok((records, n, records + self.records_bytes as u64))
    }
}
