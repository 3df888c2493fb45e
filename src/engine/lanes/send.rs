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
use std::time::{Duration, Instant};

/// How long closing a send lane waits for copies still in flight into its pinned staging (a copy
/// of one chunk takes well under a millisecond) before it leaves that memory allocated rather
/// than free it under the copy engine.
const STAGING_DRAIN: Duration = Duration::from_millis(200);

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
    /// The GPU, one event per staging slot, the slots. Dropping an event does not wait for its
    /// copy: the lane's own drop does, before the staging memory goes.
    gpu: Option<(Arc<Gpu>, Vec<Event>, Slots)>,
    /// A copy into staging was queued but its event could not be recorded (a CUDA error): nothing
    /// says when it finishes, so the staging memory is never freed.
    untracked_copy: bool,
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
            untracked_copy: false,
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

/// Takes a free staging slot and starts `copy` into it; a slot whose copy cannot be started goes
/// back to `free` (with the error), so a CUDA error loses no slot. Ok(None): none is free.
fn take_slot(free: &mut Vec<usize>, copy: impl FnOnce(usize) -> Result<()>) -> Result<Option<usize>> {
    let Some(slot) = free.pop() else { return Ok(None) };
    match copy(slot) {
        Ok(()) => Ok(Some(slot)),
        Err(e) => {
            free.push(slot);
            Err(e)
        }
    }
}

impl Drop for SendLane {
    /// Staging memory is freed only once no copy into it is in flight: the copies of chunks still
    /// waiting for their event are given [`STAGING_DRAIN`] to finish (chunks handed to the inner
    /// send had finished theirs). One that has not, or one queued without an event, leaves the
    /// staging allocated for the rest of the process, with a WARN, rather than freed under the
    /// copy engine; a close never waits longer than that.
    fn drop(&mut self) {
        let Some((_, events, slots)) = &self.gpu else { return };
        let deadline = Instant::now() + STAGING_DRAIN;
        let copying: Vec<usize> = self
            .waiting
            .iter()
            .filter_map(|c| match c {
                SendChunk::Staged { slot, .. } => Some(*slot),
                SendChunk::Direct { .. } => None,
            })
            .collect();
        let settled = !self.untracked_copy && copying.iter().all(|&s| events[s].done_by(deadline).unwrap_or(false));
        if !settled {
            log::warn!(
                "closing a send stripe with a copy into its pinned staging still in flight: its {} bytes stay allocated",
                slots.mem.len
            );
            let (_, events, slots) = self.gpu.take().unwrap();
            drop(events);
            std::mem::forget(slots);
        }
    }
}

impl Lane for SendLane {
    type Ctx = SendCtx;
    /// Send lanes share nothing.
    type Shared<'s> = ();

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
                let untracked = &mut self.untracked_copy;
                let Slots { mem, slot_bytes, free } = slots;
                // Slot `slot`'s host address (slot < GPU_SLOTS: inside the allocation).
                let host = |slot: usize| mem.host.wrapping_add(slot * *slot_bytes);
                let staged = take_slot(free, |slot| {
                    // SAFETY: the slot holds chunk_bytes >= len; NCCL keeps the source valid until
                    // the message completes, which is after this copy has.
                    unsafe { gpu::copy_dtoh_async(g, g.as_ref(), host(slot), ptr as u64, len)? };
                    // The slot's event is free: its previous chunk completed before the slot was
                    // freed.
                    events[slot].record_on(g, g.as_ref()).inspect_err(|_| *untracked = true)
                })?;
                let Some(slot) = staged else { return Ok(false) };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn a_staging_slot_whose_copy_fails_goes_back_to_the_free_list() {
        let mut free = vec![3, 2, 1, 0];
        let failed = take_slot(&mut free, |_| Err(Error::internal("cuMemcpyDtoHAsync failed")));
        assert!(failed.is_err());
        let mut sorted = free.clone();
        sorted.sort();
        assert_eq!(sorted, [0, 1, 2, 3], "no slot lost to the error");
        assert_eq!(take_slot(&mut free, |_| Ok(())).unwrap(), Some(0));
        assert_eq!(free.len(), 3);
        let mut none = Vec::new();
        assert_eq!(take_slot(&mut none, |_| unreachable!()).unwrap(), None);
    }
}
