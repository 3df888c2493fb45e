//! Cuts messages into chunks and deals them round-robin over the stripes, keeping each stripe's
//! in-flight chunks under its window. The cursor continues across messages, and both ends of a comm
//! run the same arithmetic, so chunk k of the byte stream lands on the same stripe on both sides
//! without any per-chunk metadata on the wire.
use super::profile::{self, Event, Op, Parent};
use crate::error::{Error, Result};
use crate::transport::{ChunkTimes, InnerMr, InnerStripe, Landed, MemKind};
use std::collections::VecDeque;
use std::ops::Range;

/// What the striper needs of one stripe: its inner connection (register, counters), post, test
/// the oldest, release the oldest. `Ctx` is what a post needs to know about the message's memory
/// (see lanes.rs); `Shared` is state of the comm that all its lanes use, which the comm owns and
/// lends to each post and test (a borrow, hence its lifetime).
pub trait Lane {
    type Ctx;
    type Shared<'s>;
    /// The stripe's inner connection.
    fn stripe(&self) -> &dyn InnerStripe;
    fn stripe_mut(&mut self) -> &mut dyn InnerStripe;
    fn post(&mut self, ptr: usize, len: usize, ctx: &Self::Ctx, shared: &mut Self::Shared<'_>) -> Result<bool>;
    fn test_oldest(&mut self, shared: &mut Self::Shared<'_>) -> Result<bool>;
    /// For NCCL's device unpack: the records of the chunk `test_oldest` just reported landed,
    /// when it landed in a bounce pool rather than in place.
    fn landed(&self) -> Option<Landed<'_>> {
        None
    }
    fn release(&mut self) -> Result<()>;
}

/// A chunk handed to a stripe: its message, where in the message it lies, and its profiler event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Chunk {
    seq: u64,
    offset: usize,
    len: usize,
    event: Option<Event>,
}

/// A chunk that has landed, as `poll` reports it.
pub struct Landing<'a> {
    pub seq: u64,
    /// Where the chunk lies in its message, and its length.
    pub offset: usize,
    pub len: usize,
    /// Its records in the inner transport's bounce pool (device unpack), if it did not land in place.
    pub landed: Option<Landed<'a>>,
}

/// What `poll`'s caller does with a landed chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Then {
    /// Release its inner slot now (the socket transport, and TCPX once its bytes are placed).
    Release,
    /// Keep its inner slot (TCPX's pages) until `release_message` for its message: NCCL's kernel
    /// still has to read them.
    Hold,
}

struct Stripe<L> {
    lane: L,
    /// The chunks in flight, oldest first.
    in_flight: VecDeque<Chunk>,
    /// Messages of landed chunks whose inner slots are held until their message is released,
    /// oldest first; they count against the window like chunks in flight.
    held: VecDeque<u64>,
    chunks: u64,
    bytes: u64,
    /// Chunks already in flight on this stripe when each new one was handed to it, summed, and the
    /// most: near 0 the stripe waits for work (the caller's pipeline is the limit), near the window
    /// the stripe's I/O is.
    queued_sum: u64,
    queued_max: usize,
}

/// What the striper counted, for NCCL_TCPXR_STATS.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StripeCounts {
    pub chunks: Vec<u64>,
    pub bytes: Vec<u64>,
    /// Nanoseconds each stripe's I/O spent moving bytes, where the transport measures it.
    pub io_nanos: Vec<Option<u64>>,
    /// Chunks already in flight when each chunk was posted, summed per stripe (divide by chunks).
    pub queued_sum: Vec<u64>,
    /// The most chunks ever in flight ahead of a new one, per stripe.
    pub queued_max: Vec<usize>,
    /// Hand-offs of each stripe to a helper thread and the nanoseconds they waited, where the
    /// transport counts them.
    pub handoffs: Vec<Option<(u64, u64)>>,
    /// Each sending stripe's waits for its receiver's grant and their nanoseconds, where the
    /// transport has a window of its own.
    pub grant_waits: Vec<Option<(u64, u64)>>,
    /// Each receiving stripe's window: times it grew and the largest it reached, where the
    /// transport's window grows.
    pub window_growth: Vec<Option<(u64, u64)>>,
    /// Where each stripe's chunks spent their time, where the transport times them.
    pub times: Vec<Option<ChunkTimes>>,
    /// Bytes each stripe demoted as they landed in bounce memory, where the transport does.
    pub demoted: Vec<Option<u64>>,
    /// Times issuing stopped because the next stripe's window was full or its transport busy.
    pub stalls: u64,
}

pub struct Striper<L> {
    stripes: Vec<Stripe<L>>,
    cursor: usize,
    window: usize,
    chunk_bytes: usize,
    stalls: u64,
    /// Chunks retired so far, over all stripes: grows whenever a stripe makes progress.
    retired: u64,
    /// The direction, for profiler events.
    op: Op,
}

/// Progress of one message through the striper.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cut {
    /// Offset of the first byte not yet handed to a stripe.
    pub issued: usize,
    /// Chunks handed out and not yet completed.
    pub pending: usize,
}

impl<L: Lane> Striper<L> {
    pub fn new(lanes: Vec<L>, window: usize, chunk_bytes: usize, op: Op) -> Self {
        assert!(!lanes.is_empty() && window > 0 && chunk_bytes > 0);
        let stripes = lanes
            .into_iter()
            .map(|lane| Stripe {
                lane,
                in_flight: VecDeque::with_capacity(window),
                held: VecDeque::new(),
                chunks: 0,
                bytes: 0,
                queued_sum: 0,
                queued_max: 0,
            })
            .collect();
        Striper {
            stripes,
            cursor: 0,
            window,
            chunk_bytes,
            stalls: 0,
            retired: 0,
            op,
        }
    }

    /// How many stripes there are.
    pub fn stripes(&self) -> usize {
        self.stripes.len()
    }

    /// The comm's chunk size: the most any message is cut into.
    pub fn chunk_bytes(&self) -> usize {
        self.chunk_bytes
    }

    /// Every stripe's lane, in stripe order.
    pub fn lanes_mut(&mut self) -> impl Iterator<Item = &mut L> {
        self.stripes.iter_mut().map(|s| &mut s.lane)
    }

    /// Registers `len` bytes at `ptr` on every stripe: one handle per stripe, in stripe order. On
    /// failure the stripes already done are deregistered again.
    pub fn register(&mut self, ptr: usize, len: usize, kind: MemKind) -> Result<Vec<InnerMr>> {
        let mut mrs = Vec::with_capacity(self.stripes.len());
        for i in 0..self.stripes.len() {
            match self.stripes[i].lane.stripe_mut().register(ptr as *mut u8, len, kind) {
                Ok(mr) => mrs.push(mr),
                Err(e) => {
                    let _ = self.deregister(&mrs);
                    return Err(e);
                }
            }
        }
        Ok(mrs)
    }

    /// Deregisters what `register` returned; every stripe is tried, the first error is returned.
    pub fn deregister(&mut self, mrs: &[InnerMr]) -> Result<()> {
        let mut first = Ok(());
        for (s, mr) in self.stripes.iter_mut().zip(mrs) {
            if let Err(e) = s.lane.stripe_mut().deregister(*mr) {
                if first.is_ok() {
                    first = Err(e);
                }
            }
        }
        first
    }

    /// Hands out chunks of message `seq` (its `bytes`, cut into `chunk`-byte pieces: at most the
    /// comm's chunk size; 0: that size) until it is all out or the next stripe in turn is full.
    /// Returns true once every chunk is out. `parent`: the message's profiler handle; each chunk
    /// is then an event from its post until its stripe completes it.
    #[allow(clippy::too_many_arguments)]
    pub fn issue(
        &mut self,
        seq: u64,
        bytes: Range<usize>,
        chunk: usize,
        ctx: &L::Ctx,
        cut: &mut Cut,
        parent: Option<Parent>,
        shared: &mut L::Shared<'_>,
    ) -> Result<bool> {
        let (base, size) = (bytes.start, bytes.len());
        let chunk = match chunk {
            0 => self.chunk_bytes,
            c => c.min(self.chunk_bytes),
        };
        while cut.issued < size {
            let s = &mut self.stripes[self.cursor];
            if s.in_flight.len() + s.held.len() >= self.window {
                self.stalls += 1;
                return Ok(false);
            }
            let len = chunk.min(size - cut.issued);
            if !s.lane.post(base + cut.issued, len, ctx, shared)? {
                self.stalls += 1;
                return Ok(false);
            }
            s.queued_sum += s.in_flight.len() as u64;
            s.queued_max = s.queued_max.max(s.in_flight.len());
            s.in_flight.push_back(Chunk {
                seq,
                offset: cut.issued,
                len,
                event: parent.and_then(|p| profile::start(p, s.lane.stripe().fd(), self.op, len)),
            });
            s.chunks += 1;
            s.bytes += len as u64;
            cut.issued += len;
            cut.pending += 1;
            self.cursor = (self.cursor + 1) % self.stripes.len();
        }
        Ok(true)
    }

    /// Retires every chunk that has landed, oldest first on each stripe, reporting each to
    /// `landed`, which says whether its inner slot is released now or held for its message.
    pub fn poll(&mut self, shared: &mut L::Shared<'_>, mut landed: impl FnMut(Landing) -> Result<Then>) -> Result<()> {
        for s in &mut self.stripes {
            while let Some(&c) = s.in_flight.front() {
                if !s.lane.test_oldest(shared)? {
                    break;
                }
                s.in_flight.pop_front();
                profile::stop(c.event);
                self.retired += 1;
                let then = landed(Landing {
                    seq: c.seq,
                    offset: c.offset,
                    len: c.len,
                    landed: s.lane.landed(),
                })?;
                match then {
                    Then::Release if s.held.is_empty() => s.lane.release()?,
                    // Inner slots are released in order: behind a held one, every one waits.
                    _ => s.held.push_back(c.seq),
                }
            }
        }
        Ok(())
    }

    /// Releases the held inner slots of message `seq`, which must be the oldest message holding
    /// any (NCCL consumes in order), on every stripe in order.
    pub fn release_message(&mut self, seq: u64) -> Result<()> {
        for s in &mut self.stripes {
            while let Some(&front) = s.held.front() {
                if front > seq {
                    break;
                }
                if front < seq {
                    return Err(Error::internal(format!(
                        "message {seq} released while message {front} still holds its chunks"
                    )));
                }
                s.lane.release()?;
                s.held.pop_front();
            }
        }
        Ok(())
    }

    /// Chunks retired so far over all stripes.
    pub fn retired(&self) -> u64 {
        self.retired
    }

    /// Chunks posted to the stripes and not yet landed (sent, or received), over all stripes.
    pub fn in_flight(&self) -> usize {
        self.stripes.iter().map(|s| s.in_flight.len()).sum()
    }

    /// One line per stripe for a stall report: chunks in flight and held, and what the inner
    /// connection has moved.
    pub fn describe(&self) -> Vec<String> {
        self.stripes
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let inner = match s.lane.stripe().progress() {
                    Some(p) => format!(
                        ", {} of {} bytes done{}",
                        p.done_bytes,
                        p.posted_bytes,
                        if p.with_worker { ", with an I/O thread" } else { "" }
                    ),
                    None => String::new(),
                };
                format!(
                    "s{i}: {} chunks in flight, {} held{inner}",
                    s.in_flight.len(),
                    s.held.len()
                )
            })
            .collect()
    }

    pub fn counts(&self) -> StripeCounts {
        StripeCounts {
            chunks: self.stripes.iter().map(|s| s.chunks).collect(),
            bytes: self.stripes.iter().map(|s| s.bytes).collect(),
            io_nanos: self.stripes.iter().map(|s| s.lane.stripe().io_nanos()).collect(),
            queued_sum: self.stripes.iter().map(|s| s.queued_sum).collect(),
            queued_max: self.stripes.iter().map(|s| s.queued_max).collect(),
            handoffs: self.stripes.iter().map(|s| s.lane.stripe().handoffs()).collect(),
            grant_waits: self.stripes.iter().map(|s| s.lane.stripe().grant_waits()).collect(),
            window_growth: self.stripes.iter().map(|s| s.lane.stripe().window_growth()).collect(),
            times: self.stripes.iter().map(|s| s.lane.stripe().chunk_times()).collect(),
            demoted: self.stripes.iter().map(|s| s.lane.stripe().demoted_bytes()).collect(),
            stalls: self.stalls,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A lane that records posts and completes them when told.
    #[derive(Clone, Default)]
    struct FakeLane {
        posts: Arc<Mutex<Vec<(usize, usize)>>>,
        registered: Arc<Mutex<Vec<InnerMr>>>,
        id: usize,
        done: Arc<Mutex<usize>>,
        tested: usize,
    }

    impl InnerStripe for FakeLane {
        fn register(&mut self, ptr: *mut u8, _len: usize, _kind: MemKind) -> Result<InnerMr> {
            if self.id == 99 {
                return Err(crate::error::Error::internal("refused"));
            }
            self.registered.lock().unwrap().push(InnerMr(ptr as usize + self.id));
            Ok(InnerMr(ptr as usize + self.id))
        }
        fn deregister(&mut self, mr: InnerMr) -> Result<()> {
            self.registered.lock().unwrap().retain(|m| *m != mr);
            Ok(())
        }
    }

    impl Lane for FakeLane {
        type Ctx = ();
        type Shared<'s> = ();
        fn stripe(&self) -> &dyn InnerStripe {
            self
        }
        fn stripe_mut(&mut self) -> &mut dyn InnerStripe {
            self
        }
        fn post(&mut self, ptr: usize, len: usize, _: &(), _: &mut ()) -> Result<bool> {
            self.posts.lock().unwrap().push((ptr, len));
            Ok(true)
        }
        fn test_oldest(&mut self, _: &mut ()) -> Result<bool> {
            if *self.done.lock().unwrap() > self.tested {
                self.tested += 1;
                return Ok(true);
            }
            Ok(false)
        }
        fn release(&mut self) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn chunks_go_round_robin_and_the_cursor_continues_across_messages() {
        let lanes: Vec<FakeLane> = (0..3).map(|_| FakeLane::default()).collect();
        let views = lanes.clone();
        let mut st = Striper::new(lanes, 16, 100, Op::Send);
        let mut a = Cut::default();
        assert!(st.issue(0, 1000..1250, 0, &(), &mut a, None, &mut ()).unwrap()); // chunks of 100, 100, 50 on stripes 0, 1, 2
        let mut b = Cut::default();
        assert!(st.issue(1, 5000..5100, 0, &(), &mut b, None, &mut ()).unwrap()); // next message starts on stripe 0
        assert_eq!(*views[0].posts.lock().unwrap(), vec![(1000, 100), (5000, 100)]);
        assert_eq!(*views[1].posts.lock().unwrap(), vec![(1100, 100)]);
        assert_eq!(*views[2].posts.lock().unwrap(), vec![(1200, 50)]);
        assert_eq!((a.issued, a.pending, b.pending), (250, 3, 1));
    }

    #[test]
    fn a_message_may_be_cut_finer_than_the_comm_but_never_coarser() {
        let lanes: Vec<FakeLane> = (0..3).map(|_| FakeLane::default()).collect();
        let views = lanes.clone();
        let mut st = Striper::new(lanes, 16, 100, Op::Send);
        let mut a = Cut::default();
        assert!(st.issue(0, 0..90, 40, &(), &mut a, None, &mut ()).unwrap()); // 40, 40, 10 on stripes 0, 1, 2
        let mut b = Cut::default();
        assert!(st.issue(1, 1000..1150, 400, &(), &mut b, None, &mut ()).unwrap()); // the comm's 100, then 50
        assert_eq!(*views[0].posts.lock().unwrap(), vec![(0, 40), (1000, 100)]);
        assert_eq!(*views[1].posts.lock().unwrap(), vec![(40, 40), (1100, 50)]);
        assert_eq!(*views[2].posts.lock().unwrap(), vec![(80, 10)]);
        assert_eq!((a.pending, b.pending), (3, 2));
    }

    #[test]
    fn memory_is_registered_on_every_stripe_in_order_or_on_none() {
        let lane = |id| FakeLane {
            id,
            ..Default::default()
        };
        let lanes = vec![lane(0), lane(1), lane(2)];
        let views = lanes.clone();
        let mut st = Striper::new(lanes, 16, 100, Op::Send);
        let mrs = st.register(1000, 500, MemKind::Host).unwrap();
        assert_eq!(mrs, vec![InnerMr(1000), InnerMr(1001), InnerMr(1002)]);
        st.deregister(&mrs).unwrap();
        assert!(views.iter().all(|v| v.registered.lock().unwrap().is_empty()));
        let lanes = vec![lane(0), lane(99)];
        let views = lanes.clone();
        let mut st = Striper::new(lanes, 16, 100, Op::Send);
        assert!(st.register(1000, 500, MemKind::Host).is_err());
        assert!(
            views[0].registered.lock().unwrap().is_empty(),
            "undone on the stripes that took it"
        );
    }

    #[test]
    fn window_stops_issue_until_chunks_complete() {
        let lanes: Vec<FakeLane> = (0..2).map(|_| FakeLane::default()).collect();
        let views = lanes.clone();
        let mut st = Striper::new(lanes, 2, 10, Op::Send);
        let mut cut = Cut::default();
        assert!(!st.issue(7, 0..100, 0, &(), &mut cut, None, &mut ()).unwrap());
        assert_eq!(cut.issued, 40, "2 stripes x window 2 x 10 B");
        *views[0].done.lock().unwrap() = 1;
        let mut finished = vec![];
        st.poll(&mut (), |c| {
            finished.push(c.seq);
            Ok(Then::Release)
        })
        .unwrap();
        assert_eq!(finished, vec![7]);
        assert!(!st.issue(7, 0..100, 0, &(), &mut cut, None, &mut ()).unwrap());
        assert_eq!(cut.issued, 50, "one more chunk fits on stripe 0, then stripe 1 is full");
        let counts = st.counts();
        assert_eq!(
            (counts.chunks, counts.bytes, counts.stalls),
            (vec![3, 2], vec![30, 20], 2)
        );
        // Stripe 0 took its chunks with 0, 1 and (after one completed) 1 ahead of them; stripe 1
        // with 0 and 1.
        assert_eq!((counts.queued_sum, counts.queued_max), (vec![2, 1], vec![1, 1]));
    }
}
