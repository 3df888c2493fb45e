//! A receive lane: posts host chunks in place, GPU chunks in place on a stripe that lands them in
//! its own pool, and otherwise into bounce slots; GPU chunks complete once the comm's
//! `RecvStage`, lent on each call, has placed them.
use super::{stripe_mr, Slots, GPU_SLOTS};
use crate::abi::loadMeta;
use crate::engine::memory::Registration;
use crate::engine::stage::{write_records, RecvStage, FRAGMENT};
use crate::engine::striper::Lane;
use crate::error::{Error, Result};
use crate::gpu::{Gpu, Mapped};
use crate::transport::{InnerMr, InnerRecv, InnerStripe, Landed};
use std::collections::VecDeque;
use std::sync::Arc;

/// What a receive lane needs to know of a message's memory.
#[derive(Default)]
pub struct RecvCtx {
    /// Whether the destination is GPU memory (placed by the comm's `RecvStage`).
    pub gpu: bool,
    /// The destination's registration on this comm, if NCCL registered it.
    pub reg: Option<Arc<Registration>>,
    /// The destination is the comm's bounce memory and the copy engine may read it as soon as the
    /// receive lands (NCCL's device unpack over socket, a receive `DeviceRing::copies` may place):
    /// posted with [`InnerRecv::post_bounce`]. Bounce memory NCCL's or tcpxr's kernel reads is
    /// posted as any other: demoting its lines made the collectives slower (run 279).
    pub copied_from_bounce: bool,
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
    Bounced {
        slot: usize,
        dst: u64,
        len: usize,
        ticket: Option<u64>,
    },
}

pub struct RecvLane {
    /// Dropped (closed) by RecvLane's Drop, unless the comm abandoned the lane's GPU memory.
    inner: std::mem::ManuallyDrop<Box<dyn InnerRecv>>,
    /// The comm could not wait for its unpack launches: what they read stays ([`Self::abandon`]).
    abandoned: bool,
    /// Which stripe of the comm this is (its position in every registration).
    index: usize,
    chunk_bytes: usize,
    /// Bounce slots and their fragment records, for GPU chunks over a stripe that lands in place.
    bounce: Option<(Slots, Mapped)>,
    fifo: VecDeque<RecvChunk>,
}

/// The stage a GPU chunk needs: the receive comm makes it before posting any.
fn lent<'a>(stage: &'a mut Option<&mut RecvStage>) -> Result<&'a mut RecvStage> {
    stage
        .as_deref_mut()
        .ok_or_else(|| Error::internal("a GPU chunk on a comm without its unpack stage"))
}

impl RecvLane {
    pub fn new(index: usize, inner: Box<dyn InnerRecv>, chunk_bytes: usize) -> Self {
        RecvLane {
            inner: std::mem::ManuallyDrop::new(inner),
            abandoned: false,
            index,
            chunk_bytes,
            bounce: None,
            fifo: VecDeque::new(),
        }
    }

    /// Makes the bounce slots and their records for chunks bound for `g`'s memory, if this stripe
    /// needs them and has none yet: when NCCL registers GPU memory, so that nothing is made on the
    /// data path.
    pub fn prepare(&mut self, g: &Gpu) -> Result<()> {
        if self.bounce.is_none() && !self.inner.gpu_direct() {
            let records = Mapped::new(g, GPU_SLOTS * self.records_per_slot() * size_of::<loadMeta>())?;
            self.bounce = Some((Slots::new(g, self.chunk_bytes)?, records));
        }
        Ok(())
    }

    fn records_per_slot(&self) -> usize {
        self.chunk_bytes.div_ceil(FRAGMENT)
    }

    /// NCCL's device unpack (ring.rs): the inner stripe keeps landed bytes in its pool.
    pub fn keep_records(&mut self) {
        self.inner.keep_records();
    }

    /// The device address the inner stripe's records count from, if it lands in a pool.
    pub fn bounce_base(&self) -> Option<u64> {
        self.inner.bounce_base()
    }

    /// Leaks what an unpack launch that did not finish may still read: the bounce slots and
    /// their records, and a stripe that lands in its own memory (TCPX: closing it frees its
    /// receive pool and unpack ring). Memory freed under the GPU is worse than memory kept.
    pub fn abandon(&mut self) {
        std::mem::forget(self.bounce.take());
        self.abandoned = self.inner.gpu_direct();
    }
}

impl Drop for RecvLane {
    fn drop(&mut self) {
        if !self.abandoned {
            // SAFETY: dropped once, here; nothing uses `inner` after the lane's drop.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.inner) };
        }
    }
}

impl Lane for RecvLane {
    type Ctx = RecvCtx;
    /// The comm's unpack stage, lent while the comm places GPU-bound bytes with tcpxr's own
    /// kernel (`RecvMode::OwnUnpack` in recv.rs); None otherwise.
    type Shared<'s> = Option<&'s mut RecvStage>;

    fn stripe(&self) -> &dyn InnerStripe {
        &**self.inner
    }

    fn stripe_mut(&mut self) -> &mut dyn InnerStripe {
        &mut **self.inner
    }

    fn post(&mut self, ptr: usize, len: usize, ctx: &RecvCtx, stage: &mut Option<&mut RecvStage>) -> Result<bool> {
        if !ctx.gpu || self.inner.gpu_direct() {
            let posted = match ctx.copied_from_bounce {
                true => self.inner.post_bounce(ptr as *mut u8, len)?,
                false => self.inner.post(ptr as *mut u8, len, stripe_mr(&ctx.reg, self.index))?,
            };
            if !posted {
                return Ok(false);
            }
            self.fifo.push_back(match ctx.gpu {
                false => RecvChunk::Host,
                true => RecvChunk::Direct {
                    dst: ptr as u64,
                    ticket: None,
                },
            });
            return Ok(true);
        }
        // Made at regMr; memory NCCL never registered gets them here.
        self.prepare(lent(stage)?.gpu())?;
        let (slots, _) = self.bounce.as_mut().expect("bounce slots just made");
        let Some(slot) = slots.free.pop() else { return Ok(false) };
        // tcpxr's kernel reads the slot, not the copy engine: no demote (see RecvCtx).
        if !self.inner.post(slots.host(slot), len, InnerMr::NONE)? {
            slots.free.push(slot);
            return Ok(false);
        }
        self.fifo.push_back(RecvChunk::Bounced {
            slot,
            dst: ptr as u64,
            len,
            ticket: None,
        });
        Ok(true)
    }

    fn test_oldest(&mut self, stage: &mut Option<&mut RecvStage>) -> Result<bool> {
        let per_slot = self.records_per_slot();
        let placed = match self.fifo.front_mut() {
            None => return Ok(false),
            Some(RecvChunk::Host) => {
                let done = self.inner.test_oldest()?;
                if done {
                    self.fifo.pop_front();
                }
                return Ok(done);
            }
            Some(RecvChunk::Direct { ticket: Some(t), .. }) | Some(RecvChunk::Bounced { ticket: Some(t), .. }) => {
                lent(stage)?.placed(*t)?
            }
            Some(RecvChunk::Direct { dst, ticket }) => {
                if self.inner.test_oldest()? {
                    let Some(job) = self.inner.device_job()? else {
                        // Landed in place: nothing to place.
                        self.fifo.pop_front();
                        return Ok(true);
                    };
                    *ticket = Some(lent(stage)?.add(job.records, job.count, job.bounce, *dst)?);
                }
                return Ok(false);
            }
            Some(RecvChunk::Bounced { slot, dst, len, ticket }) => {
                if self.inner.test_oldest()? {
                    let (slots, records) = self.bounce.as_mut().expect("a bounced chunk without its slots");
                    // SAFETY: the slot's records were allocated (GPU_SLOTS * per_slot of them)
                    // and are not part of any batch until added below.
                    let n = unsafe { write_records((records.host as *mut loadMeta).add(*slot * per_slot), *len) };
                    let recs = records.dev + (*slot * per_slot * size_of::<loadMeta>()) as u64;
                    *ticket = Some(lent(stage)?.add(recs, n, slots.dev(*slot), *dst)?);
                }
                return Ok(false);
            }
        };
        if !placed {
            return Ok(false);
        }
        if let Some(RecvChunk::Bounced { slot, .. }) = self.fifo.pop_front() {
            self.bounce
                .as_mut()
                .expect("a bounced chunk without its slots")
                .0
                .free
                .push(slot);
        }
        Ok(true)
    }

    fn landed(&self) -> Option<Landed<'_>> {
        self.inner.landed()
    }

    fn release(&mut self) -> Result<()> {
        self.inner.consumed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::InnerMr;
    use std::sync::Mutex;

    /// Records how each receive was posted: (address, length, into bounce memory).
    #[derive(Default)]
    struct Recorder(Arc<Mutex<Vec<(usize, usize, bool)>>>);

    impl InnerStripe for Recorder {}

    impl InnerRecv for Recorder {
        fn post(&mut self, ptr: *mut u8, len: usize, _: InnerMr) -> Result<bool> {
            self.0.lock().unwrap().push((ptr as usize, len, false));
            Ok(true)
        }
        fn post_bounce(&mut self, ptr: *mut u8, len: usize) -> Result<bool> {
            self.0.lock().unwrap().push((ptr as usize, len, true));
            Ok(true)
        }
        fn test_oldest(&mut self) -> Result<bool> {
            Ok(true)
        }
        fn consumed(&mut self) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_receive_the_copy_engine_reads_from_bounce_memory_is_posted_as_one_and_any_other_is_not() {
        let rec = Recorder::default();
        let posts = rec.0.clone();
        let mut lane = RecvLane::new(0, Box::new(rec), 1 << 20);
        let ctx = |copied_from_bounce| RecvCtx {
            gpu: false,
            reg: None,
            copied_from_bounce,
        };
        assert!(lane.post(0x1000, 64, &ctx(true), &mut None).unwrap());
        assert!(lane.post(0x2000, 32, &ctx(false), &mut None).unwrap());
        assert_eq!(*posts.lock().unwrap(), vec![(0x1000, 64, true), (0x2000, 32, false)]);
    }
}
