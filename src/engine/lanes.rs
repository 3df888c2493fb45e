//! The striper's lanes: one per stripe, over the inner transport. Host chunks go straight to the
//! inner connection. Chunks in GPU memory go straight to a stripe that takes GPU memory
//! (`gpu_direct`: TCPX sends from it and lands receives in its own bounce pool, whose fragment
//! records the comm's `RecvStage` places with the unpack kernel before the pages are released).
//! Over a stripe that does not (the socket), they take a detour:
//!
//! * sending: the copy engine copies the chunk into pinned staging on the GPU's persistent stream;
//!   an event says when, and only then is staging handed to the inner send;
//! * receiving: the chunk lands in pinned, device-mapped bounce memory of tcpxr's own; its 4 KiB
//!   fragment records go to the comm's `RecvStage`.
//!
//! Either way `RecvStage` places every chunk that arrived in one progress pass with one kernel
//! launch, and a chunk completes (its bounce memory reused or released) only after that launch's
//! event.
//!
//! Staging and bounce slots and their events are allocated once per lane, on its first GPU chunk;
//! nothing is created, allocated or synchronised per chunk. Inner posts stay in chunk order even
//! when a GPU chunk waits for its copy, so both ends of a stripe still agree.
//!
//! A host chunk of registered memory is posted with this stripe's handle for it
//! ([`Registration::stripe`]); staging and bounce slots, and memory NCCL did not register, are
//! posted without one (the inner transport registers them per post if it must).
use super::memory::Registration;
use super::striper::Lane;
use crate::abi::loadMeta;
use crate::error::{Error, Result};
use crate::gpu::unpack::{Batch, Unpacker};
use crate::gpu::{self, Event, Gpu, Mapped};
use crate::transport::{InnerMr, InnerRecv, InnerSend, MemKind};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// GPU staging or bounce slots per lane: enough to keep a stripe busy while earlier chunks are
/// copied or unpacked.
const GPU_SLOTS: usize = 4;
/// Fragment size of the records the receive side writes (what TCPX's bounce pages look like).
const FRAGMENT: usize = 4096;
/// Batches of unpack launches that may be in flight per receive comm.
const LAUNCH_DEPTH: usize = 8;

/// Writes the 4 KiB fragment records of `len` contiguous bytes at `base` and returns their count.
///
/// # Safety
/// `base` must have room for `len.div_ceil(FRAGMENT)` records, and the GPU must not be reading
/// them (they are added to a batch only afterwards).
unsafe fn write_records(base: *mut loadMeta, len: usize) -> u32 {
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

/// Pinned slots of `slot_bytes` each, allocated on first use.
struct Slots {
    mem: Mapped,
    slot_bytes: usize,
    free: Vec<usize>,
}

impl Slots {
    fn new(gpu: &Gpu, slot_bytes: usize) -> Result<Slots> {
        Ok(Slots {
            mem: Mapped::new(gpu, slot_bytes * GPU_SLOTS)?,
            slot_bytes,
            free: (0..GPU_SLOTS).rev().collect(),
        })
    }
    fn host(&self, slot: usize) -> *mut u8 {
        // SAFETY: slot < GPU_SLOTS, so the offset stays inside the allocation.
        unsafe { self.mem.host.add(slot * self.slot_bytes) }
    }
    fn dev(&self, slot: usize) -> u64 {
        self.mem.dev + (slot * self.slot_bytes) as u64
    }
}

// ---------------------------------------------------------------------------------------------

/// What a send lane needs to know of a message's memory.
#[derive(Default)]
pub struct SendCtx {
    /// The GPU whose memory holds the payload, or None for host memory.
    pub gpu: Option<Arc<Gpu>>,
    /// The payload's registration on this comm, if NCCL registered it.
    pub reg: Option<Arc<Registration>>,
}

/// What a receive lane needs to know of a message's memory.
#[derive(Default)]
pub struct RecvCtx {
    /// Set when the destination is GPU memory: the comm's unpack stage.
    pub stage: Option<SharedStage>,
    /// The destination's registration on this comm, if NCCL registered it.
    pub reg: Option<Arc<Registration>>,
}

fn stripe_mr(reg: &Option<Arc<Registration>>, index: usize) -> InnerMr {
    reg.as_ref().map_or(InnerMr::NONE, |r| r.stripe(index))
}

enum SendChunk {
    /// Host memory, or GPU memory on a stripe that sends from it: posted to the inner send as it
    /// is, with its registration on this stripe.
    Direct { ptr: usize, len: usize, mr: InnerMr },
    /// GPU memory: being copied into staging slot `slot` (the slot's event says when).
    Staged { slot: usize, len: usize },
}

pub struct SendLane {
    inner: Box<dyn InnerSend>,
    /// Which stripe of the comm this is (its position in every registration).
    index: usize,
    chunk_bytes: usize,
    /// The GPU, one event per staging slot, the slots (dropped in that order: the events wait for
    /// pending copies before the staging memory goes).
    gpu: Option<(Arc<Gpu>, Vec<Event>, Slots)>,
    /// Chunks accepted but not yet handed to the inner send, in order.
    waiting: VecDeque<SendChunk>,
    /// Staging slot of each chunk handed to the inner send (None for host chunks), in order.
    posted: VecDeque<Option<usize>>,
}

impl SendLane {
    /// Makes the staging slots and their events for chunks from `g`'s memory, if this stripe
    /// needs them and has none yet: when NCCL registers GPU memory, so that nothing is created on
    /// the data path.
    pub fn prepare(&mut self, g: &Arc<Gpu>) -> Result<()> {
        if self.gpu.is_none() && !self.inner.gpu_direct() {
            let events = (0..GPU_SLOTS).map(|_| Event::new(g)).collect::<Result<Vec<_>>>()?;
            self.gpu = Some((g.clone(), events, Slots::new(g, self.chunk_bytes)?));
        }
        Ok(())
    }

    pub fn new(index: usize, inner: Box<dyn InnerSend>, chunk_bytes: usize) -> Self {
        SendLane {
            inner,
            index,
            chunk_bytes,
            gpu: None,
            waiting: VecDeque::new(),
            posted: VecDeque::new(),
        }
    }

    /// Hands waiting chunks to the inner send, oldest first, as copies finish and slots allow.
    fn pump(&mut self) -> Result<()> {
        while let Some(front) = self.waiting.front() {
            let (ptr, len, mr, slot) = match front {
                SendChunk::Direct { ptr, len, mr } => (*ptr, *len, *mr, None),
                SendChunk::Staged { slot, len } => {
                    let (_, copied, slots) = self.gpu.as_ref().expect("staged chunk without GPU state");
                    if !copied[*slot].done()? {
                        return Ok(());
                    }
                    (slots.host(*slot) as usize, *len, InnerMr::NONE, Some(*slot))
                }
            };
            if !self.inner.post(ptr as *const u8, len, mr)? {
                return Ok(());
            }
            self.waiting.pop_front();
            self.posted.push_back(slot);
        }
        Ok(())
    }
}

impl Lane for SendLane {
    type Ctx = SendCtx;

    fn io_nanos(&self) -> Option<u64> {
        self.inner.io_nanos()
    }

    fn progress(&self) -> Option<crate::transport::StripeProgress> {
        self.inner.progress()
    }

    fn fd(&self) -> std::ffi::c_int {
        self.inner.fd()
    }

    fn register(&mut self, ptr: usize, len: usize, kind: MemKind) -> Result<InnerMr> {
        self.inner.register(ptr as *mut u8, len, kind)
    }

    fn deregister(&mut self, mr: InnerMr) -> Result<()> {
        self.inner.deregister(mr)
    }

    fn post(&mut self, ptr: usize, len: usize, ctx: &SendCtx) -> Result<bool> {
        match &ctx.gpu {
            None => self.waiting.push_back(SendChunk::Direct {
                ptr,
                len,
                mr: stripe_mr(&ctx.reg, self.index),
            }),
            Some(_) if self.inner.gpu_direct() => self.waiting.push_back(SendChunk::Direct {
                ptr,
                len,
                mr: stripe_mr(&ctx.reg, self.index),
            }),
            Some(g) => {
                // Made at regMr; memory NCCL never registered gets them here.
                self.prepare(g)?;
                let (g, events, slots) = self.gpu.as_mut().unwrap();
                let Some(slot) = slots.free.pop() else { return Ok(false) };
                // SAFETY: the slot holds chunk_bytes >= len; NCCL keeps the source valid until the
                // message completes, which is after this copy has.
                unsafe { gpu::copy_dtoh_async(g, slots.host(slot), ptr as u64, len)? };
                // The slot's event is free: its previous chunk completed before the slot was freed.
                events[slot].record(g)?;
                self.waiting.push_back(SendChunk::Staged { slot, len });
            }
        }
        self.pump()?;
        Ok(true)
    }

    fn test_oldest(&mut self) -> Result<bool> {
        self.pump()?;
        if self.posted.is_empty() || !self.inner.test_oldest()? {
            return Ok(false);
        }
        if let Some(slot) = self.posted.pop_front().flatten() {
            self.gpu.as_mut().unwrap().2.free.push(slot);
        }
        Ok(true)
    }

    fn release(&mut self) -> Result<()> {
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------

/// The receive side's GPU state shared by all lanes of one comm: the unpacker and the batches in
/// flight. Batches are polled oldest first and `placed` only moves past a batch once it and every
/// older one are done (two streams may finish them out of order), so "ticket t is placed" is a
/// single counter and chunks are released, and TCPX told `consumed`, in order.
pub struct RecvStage {
    unpacker: Unpacker,
    /// Tickets handed to chunks added to the unpacker so far, and placed so far.
    added: u64,
    placed: u64,
    /// (tickets up to, batch) of launches not yet seen complete, oldest first.
    launched: VecDeque<(u64, Batch)>,
    /// Tickets added since the last launch.
    unlaunched: u64,
}

pub type SharedStage = Arc<Mutex<RecvStage>>;

impl RecvStage {
    pub fn new(gpu: Arc<Gpu>) -> Result<SharedStage> {
        let unpacker = Unpacker::new(gpu, LAUNCH_DEPTH)?;
        Ok(Arc::new(Mutex::new(RecvStage {
            unpacker,
            added: 0,
            placed: 0,
            launched: VecDeque::new(),
            unlaunched: 0,
        })))
    }

    pub fn gpu(&self) -> &Arc<Gpu> {
        self.unpacker.gpu()
    }

    /// Queues a chunk's records; returns its ticket.
    fn add(&mut self, records: u64, count: u32, bounce: u64, dst: u64) -> Result<u64> {
        if !self.unpacker.add(records, count, bounce, dst) {
            self.launch()?;
            if !self.unpacker.add(records, count, bounce, dst) {
                return Err(Error::internal("unpack batch full right after a launch"));
            }
        }
        self.added += 1;
        self.unlaunched += 1;
        Ok(self.added)
    }

    /// Launches what was added since the last launch (one kernel for all stripes' chunks).
    pub fn launch(&mut self) -> Result<()> {
        if self.unlaunched == 0 {
            return Ok(());
        }
        if let Some(b) = self.unpacker.launch()? {
            self.launched.push_back((self.added, b));
            self.unlaunched = 0;
        }
        Ok(())
    }

    /// Chunks added for placement so far, and placed so far (stall report).
    pub fn counts(&self) -> (u64, u64) {
        (self.added, self.placed)
    }

    /// Waits for every launched batch (used when the comm closes).
    pub fn quiesce(&mut self) {
        let _ = self.launch();
        while let Some(&(upto, b)) = self.launched.front() {
            match self.unpacker.done(b) {
                Ok(false) => std::hint::spin_loop(),
                _ => {
                    self.placed = upto;
                    self.launched.pop_front();
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
        Ok(ticket <= self.placed)
    }
}

enum RecvChunk {
    Host,
    /// GPU memory on a `gpu_direct` stripe: landed by the transport, then placed at `dst` from its
    /// records; `ticket` once queued for unpacking.
    Direct {
        dst: u64,
        ticket: Option<u64>,
    },
    /// Landing in bounce slot `slot`, then placed at `dst`; `ticket` once queued for unpacking.
    Gpu {
        slot: usize,
        dst: u64,
        len: usize,
        ticket: Option<u64>,
    },
}

pub struct RecvLane {
    inner: Box<dyn InnerRecv>,
    /// Which stripe of the comm this is (its position in every registration).
    index: usize,
    chunk_bytes: usize,
    gpu: Option<(Slots, Mapped, SharedStage)>,
    /// The comm's unpack stage, for chunks received `Direct`.
    direct_stage: Option<SharedStage>,
    fifo: VecDeque<RecvChunk>,
}

impl RecvLane {
    pub fn new(index: usize, inner: Box<dyn InnerRecv>, chunk_bytes: usize) -> Self {
        RecvLane {
            inner,
            index,
            chunk_bytes,
            gpu: None,
            direct_stage: None,
            fifo: VecDeque::new(),
        }
    }

    /// Makes the bounce slots and their records for chunks bound for the memory of `stage`'s GPU,
    /// if this stripe needs them and has none yet (see [`SendLane::prepare`]).
    pub fn prepare(&mut self, stage: &SharedStage) -> Result<()> {
        if self.gpu.is_none() && !self.inner.gpu_direct() {
            let g = stage.lock().unwrap().gpu().clone();
            let records = Mapped::new(&g, GPU_SLOTS * self.chunk_bytes.div_ceil(FRAGMENT) * 16)?;
            self.gpu = Some((Slots::new(&g, self.chunk_bytes)?, records, stage.clone()));
        }
        Ok(())
    }

    /// NCCL's device unpack (ring.rs): the inner stripe keeps landed bytes in its pool.
    pub fn keep_records(&mut self) {
        self.inner.keep_records();
    }

    /// The device address the inner stripe's records count from, if it lands in a pool.
    pub fn bounce_base(&self) -> Option<u64> {
        self.inner.bounce_base()
    }
}

impl Lane for RecvLane {
    type Ctx = RecvCtx;

    fn io_nanos(&self) -> Option<u64> {
        self.inner.io_nanos()
    }

    fn progress(&self) -> Option<crate::transport::StripeProgress> {
        self.inner.progress()
    }

    fn fd(&self) -> std::ffi::c_int {
        self.inner.fd()
    }

    fn register(&mut self, ptr: usize, len: usize, kind: MemKind) -> Result<InnerMr> {
        self.inner.register(ptr as *mut u8, len, kind)
    }

    fn deregister(&mut self, mr: InnerMr) -> Result<()> {
        self.inner.deregister(mr)
    }

    fn post(&mut self, ptr: usize, len: usize, ctx: &RecvCtx) -> Result<bool> {
        let Some(stage) = &ctx.stage else {
            if !self.inner.post(ptr as *mut u8, len, stripe_mr(&ctx.reg, self.index))? {
                return Ok(false);
            }
            self.fifo.push_back(RecvChunk::Host);
            return Ok(true);
        };
        if self.inner.gpu_direct() {
            if !self.inner.post(ptr as *mut u8, len, stripe_mr(&ctx.reg, self.index))? {
                return Ok(false);
            }
            self.direct_stage.get_or_insert_with(|| stage.clone());
            self.fifo.push_back(RecvChunk::Direct {
                dst: ptr as u64,
                ticket: None,
            });
            return Ok(true);
        }
        // Made at regMr; memory NCCL never registered gets them here.
        self.prepare(stage)?;
        let (slots, _, _) = self.gpu.as_mut().unwrap();
        let Some(slot) = slots.free.pop() else { return Ok(false) };
        if !self.inner.post(slots.host(slot), len, InnerMr::NONE)? {
            slots.free.push(slot);
            return Ok(false);
        }
        self.fifo.push_back(RecvChunk::Gpu {
            slot,
            dst: ptr as u64,
            len,
            ticket: None,
        });
        Ok(true)
    }

    fn test_oldest(&mut self) -> Result<bool> {
        match self.fifo.front_mut() {
            None => Ok(false),
            Some(RecvChunk::Host) => {
                let done = self.inner.test_oldest()?;
                if done {
                    self.fifo.pop_front();
                }
                Ok(done)
            }
            Some(RecvChunk::Direct { dst, ticket }) => {
                let stage = self.direct_stage.as_ref().expect("a direct chunk without its stage");
                let Some(t) = *ticket else {
                    if !self.inner.test_oldest()? {
                        return Ok(false);
                    }
                    let Some(job) = self.inner.device_job()? else {
                        // Landed in place: nothing to place.
                        self.fifo.pop_front();
                        return Ok(true);
                    };
                    *ticket = Some(stage.lock().unwrap().add(job.records, job.count, job.bounce, *dst)?);
                    return Ok(false);
                };
                if !stage.lock().unwrap().placed(t)? {
                    return Ok(false);
                }
                self.fifo.pop_front();
                Ok(true)
            }
            Some(RecvChunk::Gpu { slot, dst, len, ticket }) => {
                let (slots, records, stage) = self.gpu.as_mut().unwrap();
                let Some(t) = *ticket else {
                    if self.inner.test_oldest()? {
                        let per_slot = self.chunk_bytes.div_ceil(FRAGMENT);
                        // SAFETY: the slot's records were allocated (GPU_SLOTS * per_slot of them)
                        // and are not part of any batch until added below.
                        let n = unsafe { write_records((records.host as *mut loadMeta).add(*slot * per_slot), *len) };
                        let recs = records.dev + (*slot * per_slot * 16) as u64;
                        *ticket = Some(stage.lock().unwrap().add(recs, n, slots.dev(*slot), *dst)?);
                    }
                    return Ok(false);
                };
                if !stage.lock().unwrap().placed(t)? {
                    return Ok(false);
                }
                slots.free.push(*slot);
                self.fifo.pop_front();
                Ok(true)
            }
        }
    }

    fn landed(&self) -> Option<crate::transport::Landed<'_>> {
        self.inner.landed()
    }

    fn release(&mut self) -> Result<()> {
        self.inner.consumed()
    }
}

// ---------------------------------------------------------------------------------------------

/// Landing memory for inline payloads (those that come on the control connection) bound for GPU
/// memory: one slot per request slot of the comm, each with room for the fragment records and
/// `limit` payload bytes, pinned and device-mapped. The control connection reads a payload straight
/// into its slot and the unpack kernel places it, in the launch of its progress pass.
///
/// Nothing here touches CUDA's legacy default stream. A synchronous copy would: it queues behind
/// whatever the application put there, and an application (torch does) may already have queued
/// work there that waits for this very receive.
pub struct InlineLanding {
    mem: Mapped,
    slot_bytes: usize,
    records_bytes: usize,
    limit: usize,
}

impl InlineLanding {
    pub fn new(gpu: &Gpu, slots: usize, limit: usize) -> Result<InlineLanding> {
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

    /// Where request slot `slot`'s payload of `len` bytes lands (host view).
    pub fn payload(&mut self, slot: u32, len: usize) -> Result<&mut [u8]> {
        if len > self.limit || self.base(slot) + self.slot_bytes > self.mem.len {
            return Err(Error::internal(format!(
                "inline landing: {len} bytes in slot {slot} exceed its {} bytes",
                self.limit
            )));
        }
        // SAFETY: in bounds (checked above); the slot belongs to the one message posted on it,
        // and the GPU reads it only after `queue`, until that message completes.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.mem.host.add(self.base(slot) + self.records_bytes), len) })
    }

    /// Queues slot `slot`'s `len` bytes for placement at device address `dst`; returns the ticket
    /// that says when they are placed.
    pub fn queue(&mut self, slot: u32, len: usize, dst: u64, stage: &mut RecvStage) -> Result<u64> {
        let base = self.base(slot);
        // SAFETY: the slot's record area holds limit / FRAGMENT records, and len <= limit
        // (`payload` checked it); the GPU reads them only once added below.
        let n = unsafe { write_records(self.mem.host.add(base) as *mut loadMeta, len) };
        let records = self.mem.dev + base as u64;
        stage.add(records, n, records + self.records_bytes as u64, dst)
    }
}
