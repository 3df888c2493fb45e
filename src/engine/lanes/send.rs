//! A send lane: posts host chunks as they are and GPU chunks through pinned staging (or as they
//! are to a stripe that sends from GPU memory).
use super::{stripe_mr, Slots, GPU_SLOTS};
use crate::engine::memory::Registration;
use crate::engine::striper::Lane;
use crate::error::Result;
use crate::gpu::{self, Event, Gpu};
use crate::transport::{InnerMr, InnerSend, InnerStripe};
use std::collections::VecDeque;
use std::sync::Arc;

/// What a send lane needs to know of a message's memory.
#[derive(Default)]
pub struct SendCtx {
    /// The GPU whose memory holds the payload, or None for host memory.
    pub gpu: Option<Arc<Gpu>>,
    /// The payload's registration on this comm, if NCCL registered it.
    pub reg: Option<Arc<Registration>>,
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
    /// Send lanes share nothing.
    type Shared = ();

    fn stripe(&self) -> &dyn InnerStripe {
        &*self.inner
    }

    fn stripe_mut(&mut self) -> &mut dyn InnerStripe {
        &mut *self.inner
    }

    fn post(&mut self, ptr: usize, len: usize, ctx: &SendCtx, _: &mut ()) -> Result<bool> {
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

    fn test_oldest(&mut self, _: &mut ()) -> Result<bool> {
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
