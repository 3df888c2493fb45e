//! The GPU side of a group: how bytes reach and leave windows in GPU memory without tcpxr ever
//! waiting on the GPU (window.rs's rule decides whether this may run at all).
//!
//! * Landing: a put (or a get's answer) for a GPU window is received into pinned host staging
//!   buffers of [`STAGE_BYTES`] each, from a pool of [`STAGE_BUFFERS`] made at the group's first
//!   GPU registration; each full buffer, and whatever a progress pass received into one, is
//!   copied host-to-device on the group's own non-blocking stream on that GPU, and goes back to
//!   the pool when the event recorded behind its copy has completed. With the pool empty the
//!   connection is left unread until one returns (within a copy's time: see [`Buffers`]).
//! * Signals in GPU memory, on the same stream after the data's copies, so that a kernel that sees
//!   the signal sees the data:
//!   - in a window registered with NCCL_NET_MR_FLAG_SIGNAL_NEVER_RESET (NCCL 2.30's GIN and RMA
//!     proxies register their signals so) of up to [`STAGE_BYTES`], tcpxr is the only writer of
//!     the words: it keeps their values ([`Shadow`], read once at registration), adds on the host
//!     and writes the sum with `cuStreamWriteValue64`, which the GPU's front end performs. No
//!     multiprocessor is needed, so a kernel that holds every one while it spins on the signal
//!     cannot keep it out (with a kernel it would wait until that kernel let a block go: a hang);
//!   - elsewhere (NCCL may reset such words), a device atomic applies the add to whatever the word
//!     holds (kernel.cu's `tcpxr_signal_add`, <<<1,1>>>), which needs a multiprocessor free.
//!
//!   A host signal after GPU work is added in stream order too (a host function on the stream),
//!   and so is a rank's host-to-host copy within itself (group.rs; one host function per
//!   [`HOST_PIECE`]). Stream order covers both weak
//!   signals (their put's copies come first) and strong ones (every earlier put's copies and
//!   signals do).
//! * Sending from GPU memory (a put's source, a get's answer): copied device-to-host into a
//!   staging buffer on the same stream, at most [`OUT_AHEAD`] pieces ahead per peer and never
//!   into the last [`INBOUND_RESERVE`] free buffers; the send waits for its event in the progress
//!   loop.
//!
//! Nothing here blocks: copies, writes and event records are queued, events are queried. Events
//! come from a pool that keeps every event made (as many as were ever in flight at once), and are
//! taken before the work they track is queued ([`queue_tracked`]): queued work never goes
//! untracked.
use super::stats::Spread;
use super::window::add_host_signal;
use crate::error::Result;
use crate::gpu::{self, Event, Gpu, Mapped, Stream};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long registration waits for a never-reset signal window's values to be read (behind what
/// the application queued before registering: [`gpu::copy_dtoh_after_queued_work`]).
const READ_WAIT: Duration = Duration::from_secs(20);

/// The values of a never-reset GPU signal window's words, as tcpxr last wrote them.
struct Shadow {
    base: u64,
    words: Vec<u64>,
}

/// Bytes of one staging buffer: the most one copy moves.
pub const STAGE_BYTES: usize = 1 << 20;
/// Staging buffers per group (pinned host memory: STAGE_BYTES each).
pub const STAGE_BUFFERS: usize = 16;

/// Free staging buffers kept for landing: a copy out for sending is started only while more than
/// this many are free (see [`Buffers`]).
pub const INBOUND_RESERVE: usize = STAGE_BUFFERS / 4;
/// Pieces of GPU payloads one peer's send queue stages ahead of the socket: more cannot go out
/// sooner, and would only keep buffers from other peers' sends.
pub const OUT_AHEAD: usize = 4;

/// The accounting of a pool of staging buffers, shared by landing (bytes received for GPU memory)
/// and sending (bytes copied out of GPU memory), and the rule that keeps the two from deadlocking.
///
/// A landing buffer comes back once its host-to-device copy completes: that depends on the GPU
/// alone (peer.rs never holds one across a pass waiting for more bytes: what a pass read is copied
/// at once). A sending buffer comes back once its bytes are in the socket: that depends on the
/// peer reading, which depends on the peer's landing buffers. Were sends free to take every buffer
/// (as they did until 2026-11-27), every rank of a group could hold all of its buffers in answers
/// queued behind sockets its peers no longer read, because their own buffers are all in answers
/// too: no one lands, so no socket drains (three ranks each iget'ing 3 MiB + 5 from each other's
/// GPU windows twice hung). Sends may therefore take a buffer only while more than `reserve` are
/// free: landing always finds one within a copy's time, so every rank reads every socket, every
/// queued piece is sent, and every buffer comes back.
pub struct Buffers {
    free: Vec<usize>,
    total: usize,
    reserve: usize,
}

impl Buffers {
    /// `total` buffers (numbered 0..total), `reserve` of them kept for landing.
    pub fn new(total: usize, reserve: usize) -> Buffers {
        Buffers {
            free: (0..total).rev().collect(),
            total,
            reserve,
        }
    }

    /// A buffer to land received bytes in: any free one.
    pub fn take_in(&mut self) -> Option<usize> {
        self.free.pop()
    }

    /// A buffer to copy bytes out into for sending: only while more than the reserve are free.
    pub fn take_out(&mut self) -> Option<usize> {
        if self.free.len() > self.reserve {
            self.free.pop()
        } else {
            None
        }
    }

    pub fn give(&mut self, b: usize) {
        debug_assert!(!self.free.contains(&b), "buffer {b} given back twice");
        self.free.push(b);
    }

    /// Writes off a buffer taken and never to be given back (a copy into it may still run), so
    /// that the pool counts as idle without it.
    pub fn lose(&mut self) {
        self.total -= 1;
    }

    pub fn all_free(&self) -> bool {
        self.free.len() == self.total
    }
}

/// Stream work not yet known complete, and what to do when it is (generic over the event only so
/// that the tests can drive [`queue_tracked`] and [`retire`] without a GPU).
struct Inflight<E = Event> {
    event: E,
    /// Whether `event` is recorded behind the work. False where cuEventRecord failed after the
    /// work was queued: the work is then still pending, and [`retire`] records the event again
    /// before querying it, since an event that was never recorded (or last recorded behind older
    /// work) reads as complete.
    recorded: bool,
    /// A staging buffer the work reads, freed after it.
    buf: Option<usize>,
    /// A request finished after it (a get that landed in GPU memory, a put to this rank).
    request: Option<u64>,
    since: std::time::Instant,
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
    /// The group's own stream on that GPU: every copy, signal and host function of the group, in
    /// the group's order. Not the GPU's persistent stream, where another group's signal kernel,
    /// kept from starting by an application kernel that holds every multiprocessor while it waits
    /// for this group's signal, would hold this group's signal behind it: a hang across
    /// communicators (and a large host copy of one group would hold every other's work).
    stream: Stream,
    /// The staging buffers: STAGE_BUFFERS of STAGE_BYTES, one pinned allocation (VMM host pages
    /// come in 2 MiB granules, so sixteen allocations of 1 MiB would pin twice the memory).
    bufs: Option<Mapped>,
    pool: Buffers,
    events: Vec<Event>,
    inflight: VecDeque<Inflight>,
    /// Stream work from its event's record until seen complete (stats.rs reports it).
    pub work: Spread,
    /// Landings that found every staging buffer in use.
    pub waits: u64,
    /// By window number: never-reset signal windows whose words tcpxr writes without a kernel.
    shadows: HashMap<u32, Shadow>,
    /// Whether the GPU takes cuStreamWriteValue64 (else every signal takes the kernel).
    write64: bool,
    /// An event recorded behind all the stream's work by [`Stager::settled`], until it has
    /// completed or more work is queued.
    marker: Option<Event>,
}

impl Stager {
    /// The pool for GPU `ordinal`: made at registration (allocating pinned memory may wait), never
    /// on the data path.
    pub fn new(ordinal: usize) -> Result<Stager> {
        let gpu = Gpu::get(ordinal)?;
        // The signal kernel is loaded now, never while NCCL's kernel spins on a signal.
        gpu.prepare_kernels()?;
        let bufs = Mapped::new(&gpu, STAGE_BUFFERS * STAGE_BYTES)?;
        let events = (0..2 * STAGE_BUFFERS)
            .map(|_| Event::new(&gpu))
            .collect::<Result<Vec<_>>>()?;
        let stream = Stream::new(&gpu)?;
        log::info!(
            target: "tcpxr::init",
            "RMA: GPU {ordinal} windows placed by copies on the group's own stream through {STAGE_BUFFERS} x {} KiB of pinned staging",
            STAGE_BYTES >> 10
        );
        Ok(Stager {
            pool: Buffers::new(STAGE_BUFFERS, INBOUND_RESERVE),
            bufs: Some(bufs),
            events,
            inflight: VecDeque::new(),
            work: Spread::default(),
            waits: 0,
            shadows: HashMap::new(),
            write64: gpu.writes_u64_on_stream(),
            marker: None,
            stream,
            gpu,
        })
    }

    /// A staging buffer to land received bytes in (None while all are in use).
    pub fn take_buf(&mut self) -> Option<usize> {
        let b = self.pool.take_in();
        self.waits += u64::from(b.is_none());
        b
    }

    /// Gives back a landing buffer that received nothing.
    pub fn untake(&mut self, b: usize) {
        self.pool.give(b);
    }

    /// The host address of staging buffer `b`.
    pub fn host(&self, b: usize) -> *mut u8 {
        buffer(&self.bufs, b)
    }

    fn event(&mut self) -> Result<Event> {
        match self.events.pop() {
            Some(e) => Ok(e),
            None => Event::new(&self.gpu),
        }
    }

    /// Queues work on the group's stream with `queue` and tracks it with an event, with what to do
    /// once it completes: [`queue_tracked`] (the event is taken before anything is queued).
    fn track(
        &mut self,
        buf: Option<usize>,
        request: Option<u64>,
        queue: impl FnOnce(&Gpu, &Stream) -> Result<()>,
    ) -> Result<()> {
        self.unmark();
        let Stager {
            gpu,
            stream,
            events,
            inflight,
            ..
        } = self;
        queue_tracked(
            inflight,
            buf,
            request,
            || events.pop().map_or_else(|| Event::new(gpu), Ok),
            || queue(gpu, stream),
            |e| e.record_on(gpu, stream),
        )
    }

    /// Copies `len` received bytes of staging buffer `buf` to device address `dst`; the buffer
    /// returns to the pool once the copy is done.
    pub fn land(&mut self, dst: u64, buf: usize, len: usize) -> Result<()> {
        let src = self.host(buf);
        // SAFETY: `buf` is a pinned buffer of this pool holding `len` <= STAGE_BYTES received
        // bytes, out of the free list until the event tracking this copy completes; `dst` lies in
        // a registered GPU window, which deregMrSym keeps until this pool is idle.
        self.track(Some(buf), None, |gpu, on| unsafe {
            gpu::copy_htod_async(gpu, on, dst, src, len)
        })
    }

    /// Copies `len` bytes between device or host addresses on the stream (a rank's operation on
    /// itself), and finishes `request` once it has run. A host window in pageable memory makes
    /// CUDA stage this copy synchronously.
    pub fn copy(&mut self, dst: u64, src: u64, len: usize, request: u64) -> Result<()> {
        // SAFETY: both ranges lie in registered windows (checked by the caller), kept until this
        // pool is idle (deregMrSym waits for it).
        self.track(None, Some(request), |gpu, on| unsafe {
            gpu::copy_async(gpu, on, dst, src, len)
        })
    }

    /// Whether stream work this pool tracks (landings, a rank's copies within itself, signals)
    /// may still be running: what a rank's host-memory operation on itself must then wait for.
    pub fn pending(&self) -> bool {
        !self.inflight.is_empty()
    }

    /// Copies `len` bytes between two host windows on the CPU, in stream order: after the
    /// stream's earlier work, before its later work (a rank's operation on itself while
    /// [`Stager::pending`]; done at once, it could land before an earlier copy into the same
    /// bytes, or read bytes an earlier copy has not written yet), and finishes `request` once it
    /// has run. One host function per piece of at most [`HOST_PIECE`] bytes ([`host_pieces`]),
    /// all queued now and in order, so a later signal still follows every piece.
    pub fn copy_host(&mut self, dst: usize, src: usize, len: usize, request: u64) -> Result<()> {
        self.track(None, Some(request), |gpu, on| {
            for (d, s, n) in host_pieces(dst, src, len) {
                gpu::call_in_order(
                    gpu,
                    on,
                    Box::new(move || {
                        // SAFETY: both ranges lie in registered host windows (checked when the
                        // operation was posted), kept until this pool is idle (deregMrSym waits
                        // for the event tracking this copy); `copy` allows overlap within a
                        // piece, and host_pieces orders the pieces as one overlapping copy needs.
                        unsafe { std::ptr::copy(s as *const u8, d as *mut u8, n) }
                    }),
                )?;
            }
            Ok(())
        })
    }

    /// Marks `request` done once the stream's work so far has completed.
    pub fn finish_after(&mut self, request: u64) -> Result<()> {
        self.track(None, Some(request), |_, _| Ok(()))
    }

    /// Takes over the words of GPU window `win` (`size` bytes at `base`), registered never-reset:
    /// reads their values now, after whatever was queued to initialise them (NCCL zeroes its
    /// signal buffers with a cudaMemset on the default stream right before registering them), so
    /// that signals into it are written without a kernel. Registration, not the data path;
    /// bounded by [`READ_WAIT`]. Whether it did: not for windows larger than a staging buffer
    /// (signal windows are small; a large one keeps the kernel) or on a GPU without 64-bit stream
    /// writes.
    pub fn track_signals(&mut self, win: u32, base: u64, size: usize) -> bool {
        if !self.write64 || !(8..=STAGE_BYTES).contains(&size) {
            return false;
        }
        let Some(buf) = self.pool.take_in() else {
            return false;
        };
        match self.read_words(buf, base, size) {
            Ok(words) => {
                self.pool.give(buf);
                self.shadows.insert(win, Shadow { base, words });
                true
            }
            Err(e) => {
                // A copy that may still run could write the buffer: it leaves the pool for good.
                self.pool.lose();
                log::warn!(
                    "RMA window {win}: its {size} bytes of never-reset signals could not be read ({}); \
                     signals into it are added by the kernel instead",
                    e.msg
                );
                false
            }
        }
    }

    /// The 64-bit words of `size` bytes of device memory at `base`, read through staging buffer
    /// `buf` after the work queued before them.
    fn read_words(&mut self, buf: usize, base: u64, size: usize) -> Result<Vec<u64>> {
        let host = self.host(buf);
        let event = self.event()?;
        // SAFETY: `buf` is a pinned buffer of this pool, held by the caller until the event
        // completes (or, past the wait, never given back); the window is registered GPU memory of
        // at least `size` bytes.
        unsafe { gpu::copy_dtoh_after_queued_work(&self.gpu, host, base, size, &event)? };
        if !event.done_by(Instant::now() + READ_WAIT)? {
            return Err(crate::error::Error::internal(format!(
                "the read took over {} s",
                READ_WAIT.as_secs()
            )));
        }
        self.events.push(event);
        Ok((0..size / 8)
            // SAFETY: the copy into the buffer has completed; 8-byte words within `size`.
            .map(|i| unsafe { std::ptr::read_unaligned(host.add(i * 8) as *const u64) })
            .collect())
    }

    /// Forgets a deregistered window's words.
    pub fn untrack(&mut self, win: u32) {
        self.shadows.remove(&win);
    }

    /// Adds `add` to the signal at device address `addr` of window `win` after the stream's
    /// earlier work (the copies of every put before it): by a stream write of the new value where
    /// tcpxr keeps the window's words, else by a device atomic.
    pub fn signal_gpu(&mut self, win: u32, addr: u64, add: u64) -> Result<()> {
        let written = self.shadows.get_mut(&win).map(|sh| {
            let word = &mut sh.words[((addr - sh.base) / 8) as usize];
            *word = word.wrapping_add(add);
            *word
        });
        // Tracked, so that what follows on the host (a host signal, a rank's host copy within
        // itself) waits for it: [`Stager::pending`].
        self.track(None, None, |gpu, on| match written {
            // SAFETY: `addr` is an 8-aligned signal inside a registered GPU window (signal_at),
            // kept until this pool is idle (deregMrSym waits for it).
            Some(value) => unsafe { gpu::write_u64_async(gpu, on, addr, value) },
            // SAFETY: as above.
            None => unsafe { gpu::add_u64_async(gpu, on, addr, add) },
        })
    }

    /// Adds `add` to the host signal at `addr` now, or, while stream work is pending (bytes the
    /// signal may cover), in stream order after it. In stream order, not once the event before it
    /// is polled complete (as until 2026-11-28): a GPU signal queued after it would otherwise show
    /// before it, which a strong signal must not.
    pub fn signal_host(&mut self, addr: usize, add: u64) -> Result<()> {
        if !self.pending() {
            add_host_signal(addr, add);
            return Ok(());
        }
        // Tracked: deregMrSym waits for it.
        self.track(None, None, |gpu, on| {
            gpu::call_in_order(gpu, on, Box::new(move || add_host_signal(addr, add)))
        })
    }

    /// Starts copying `len` bytes at device address `src` out into a staging buffer for sending;
    /// None while no buffer may be taken for sending ([`Buffers::take_out`]).
    pub fn stage_out(&mut self, src: u64, len: usize) -> Result<Option<Outbound>> {
        // First: a copy queued whose event then fails is still not covered by an older marker.
        self.unmark();
        let Stager {
            gpu,
            stream,
            bufs,
            pool,
            events,
            ..
        } = self;
        let started = copy_into_taken(
            pool,
            // SAFETY: `b` is a pinned buffer of this pool (len <= STAGE_BYTES), held by the
            // returned Outbound until its event has completed (or lost for good); `src` lies in a
            // registered GPU window which deregMrSym keeps while an operation reading it is queued.
            |b| unsafe { gpu::copy_dtoh_async(gpu, stream, buffer(bufs, b), src, len) },
            || {
                let event = events.pop().map_or_else(|| Event::new(gpu), Ok)?;
                event.record_on(gpu, stream)?;
                Ok(event)
            },
        )?;
        Ok(started.map(|(buf, event)| Outbound {
            buf,
            event,
            ready: false,
        }))
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
        self.pool.give(o.buf);
        self.events.push(o.event);
    }

    /// Retires completed stream work in order: frees buffers and calls `finished` for requests
    /// that waited on it.
    pub fn poll(&mut self, mut finished: impl FnMut(u64)) -> Result<()> {
        let Stager {
            gpu,
            stream,
            pool,
            events,
            inflight,
            work,
            ..
        } = self;
        retire(
            inflight,
            |e| e.record_on(gpu, stream),
            |e| e.done(),
            |w| {
                work.add(w.since.elapsed());
                if let Some(b) = w.buf {
                    pool.give(b);
                }
                if let Some(r) = w.request {
                    finished(r);
                }
                events.push(w.event);
            },
        )
    }

    /// Whether stream work is pending or staging buffers are out.
    pub fn busy(&self) -> bool {
        !self.inflight.is_empty() || !self.pool.all_free()
    }

    /// Whether everything queued on the stream before the first of these calls (since work was
    /// last queued) has completed, without blocking: landings into windows, copies out of them
    /// into staging (not all in `inflight`), signals. For a group whose error stopped its sockets
    /// ([`Stager::busy`] then never clears: staging held by abandoned operations stays out).
    pub fn settled(&mut self) -> Result<bool> {
        let marker = match self.marker.take() {
            Some(m) => m,
            None => {
                let m = self.event()?;
                m.record_on(&self.gpu, &self.stream)?;
                m
            }
        };
        if marker.done()? {
            self.events.push(marker);
            return Ok(true);
        }
        self.marker = Some(marker);
        Ok(false)
    }

    /// Forgets the marker: work queued after it is not covered by it.
    fn unmark(&mut self) {
        if let Some(m) = self.marker.take() {
            self.events.push(m);
        }
    }
}

/// Bytes one host function of a rank's host-to-host copy within itself moves
/// ([`Stager::copy_host`]). CUDA may run the host functions of independent streams one at a time
/// ("may be serialized", cuLaunchHostFunc): one memmove of a large put (hundreds of MiB: tens of
/// ms or more) would hold back every other host function of the process for its whole length; in
/// pieces, one piece at most. 2 MiB takes some 0.1-0.4 ms on one core, short beside a step of a
/// collective, and long beside the hand-off from one host function to the next (microseconds),
/// so the pieces add little to the copy's time. All pieces are queued at once, in order, since
/// the group's later stream work (a signal) must follow the last: the group's work queued after
/// the copy still waits for the whole copy (a stream runs in order); other groups' work and the
/// engine's do not, each on a stream of its own (until 2026-11-29 every group shared the GPU's
/// persistent stream with the engine's unpack launches and staging copies).
pub const HOST_PIECE: usize = 2 << 20;

/// The pieces (`dst`, `src`, `len`) of at most [`HOST_PIECE`] bytes that, copied one after
/// another (each with `std::ptr::copy`), copy `len` bytes from `src` to `dst` as one
/// `std::ptr::copy` would, overlap included: front to back where `dst` lies below `src`, back to
/// front where above, so no piece overwrites source bytes a later piece still reads.
fn host_pieces(dst: usize, src: usize, len: usize) -> impl Iterator<Item = (usize, usize, usize)> {
    let n = len.div_ceil(HOST_PIECE);
    let back_to_front = dst > src;
    (0..n).map(move |i| {
        let at = HOST_PIECE * if back_to_front { n - 1 - i } else { i };
        (dst + at, src + at, HOST_PIECE.min(len - at))
    })
}

/// Queues stream work and tracks it in `inflight`, so that nothing once queued goes untracked:
/// `obtain` takes the event (from the pool, or made) before anything is queued, so failing to get
/// one queues nothing; `queue` queues the work (it may fail part-way, after queueing some of
/// it); `record` records the event behind whatever was queued. The entry is kept whatever
/// `queue` and `record` return: where the record failed, the work counts as pending (`recorded`
/// false) until [`retire`] has recorded the event again behind it and seen it complete. Until
/// 2026-11-28 the event was taken and recorded only after the work was queued, and a failure
/// there left it untracked: a host function ([`Stager::copy_host`], [`Stager::signal_host`])
/// could still write a host window while [`Stager::pending`] read false and deregMrSym, seeing
/// nothing in flight, let the window go.
fn queue_tracked<E>(
    inflight: &mut VecDeque<Inflight<E>>,
    buf: Option<usize>,
    request: Option<u64>,
    obtain: impl FnOnce() -> Result<E>,
    queue: impl FnOnce() -> Result<()>,
    record: impl FnOnce(&E) -> Result<()>,
) -> Result<()> {
    let event = obtain()?;
    let queued = queue();
    let recorded = record(&event);
    inflight.push_back(Inflight {
        event,
        recorded: recorded.is_ok(),
        buf,
        request,
        since: Instant::now(),
    });
    queued.and(recorded)
}

/// Hands `retired` the completed front of `inflight`, in order, stopping at the first entry not
/// known complete. An entry whose record failed is recorded now first (`record`): a record later
/// on the same stream follows the work too, and an event not recorded behind it would read as
/// complete (`done`) at once. A record that fails again leaves the entry pending and is the error.
fn retire<E>(
    inflight: &mut VecDeque<Inflight<E>>,
    mut record: impl FnMut(&E) -> Result<()>,
    mut done: impl FnMut(&E) -> Result<bool>,
    mut retired: impl FnMut(Inflight<E>),
) -> Result<()> {
    while let Some(front) = inflight.front_mut() {
        if !front.recorded {
            record(&front.event)?;
            front.recorded = true;
        }
        if !done(&front.event)? {
            break;
        }
        retired(inflight.pop_front().expect("front"));
    }
    Ok(())
}

/// Takes a buffer for sending out of `pool` and starts a copy into it: `copy(buf)` queues the
/// copy, `track()` records the event that says it has completed. Only a copy that failed to queue
/// gives its buffer back; once queued, a copy no event covers may still write the buffer, so a
/// failure to track it loses the buffer for good ([`Buffers::lose`]): never handed to a landing,
/// never freed (Drop leaks the staging then). Until 2026-11-28 that failure gave it back.
fn copy_into_taken<E>(
    pool: &mut Buffers,
    copy: impl FnOnce(usize) -> Result<()>,
    track: impl FnOnce() -> Result<E>,
) -> Result<Option<(usize, E)>> {
    let Some(buf) = pool.take_out() else {
        return Ok(None);
    };
    if let Err(e) = copy(buf) {
        pool.give(buf);
        return Err(e);
    }
    match track() {
        Ok(event) => Ok(Some((buf, event))),
        Err(e) => {
            pool.lose();
            Err(e)
        }
    }
}

/// The host address of staging buffer `b` of `bufs` (b < STAGE_BUFFERS).
fn buffer(bufs: &Option<Mapped>, b: usize) -> *mut u8 {
    let mem = bufs.as_ref().expect("the staging buffers live until the stager drops");
    assert!(b < STAGE_BUFFERS, "staging buffer {b} of {STAGE_BUFFERS}");
    // SAFETY: b < STAGE_BUFFERS, so the offset stays inside the allocation.
    unsafe { mem.host.add(b * STAGE_BYTES) }
}

impl Drop for Stager {
    /// Waits (bounded) for pending stream work before the pinned buffers it uses are freed; the
    /// group is being closed, after NCCL's kernels are done with it. Not every copy into staging
    /// is in `inflight`: a send's copy out of GPU memory is tracked by its [`Outbound`], which the
    /// group's peers held and have dropped before this. So one event recorded now behind
    /// everything queued on the stream is waited for: every copy into or out of staging is before
    /// it (until 2026-11-28 only `inflight` was, and staging a send was still copying into was
    /// freed at once).
    fn drop(&mut self) {
        if self.pool.total < STAGE_BUFFERS {
            // A buffer was written off under a copy that may still run (no event covers it).
            std::mem::forget(self.bufs.take());
            return;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let settled = self.event().and_then(|e| {
            e.record_on(&self.gpu, &self.stream)?;
            e.done_by(deadline)
        });
        if !matches!(settled, Ok(true)) {
            log::warn!(
                "RMA: closing a group whose GPU copies have not completed after 5 s: its staging stays allocated"
            );
            // Leaking the pinned buffers is safer than freeing memory a copy still uses.
            std::mem::forget(self.bufs.take());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How a simulated rank uses its staging pool: the rule before 2026-11-27 (sends take any
    /// free buffer, as far ahead as the queue goes; a landing keeps its buffer until a whole
    /// buffer's bytes have arrived) or the rule now (the pool's reserve, [`OUT_AHEAD`], and
    /// landings copied at the end of every pass).
    #[derive(Clone, Copy, PartialEq)]
    enum Rule {
        Before,
        Now,
    }

    /// Units of bytes in a simulation: a staging buffer holds `PIECE`, a socket `SOCKET`.
    const PIECE: usize = 4;
    const SOCKET: usize = 3;

    struct Staged {
        buf: usize,
        ready_at: u64,
        sent: usize,
    }

    /// One rank of a simulated group: its pool, copies in flight (a fake copier that completes
    /// each copy a few steps after it was queued, whatever the rank does meanwhile), and per peer
    /// the pieces it still has to send (answers to gets from GPU memory), those staged, the
    /// landing in progress and the pieces landed.
    struct SimRank {
        pool: Buffers,
        copies: Vec<(usize, u64)>,
        to_send: Vec<usize>,
        staged: Vec<VecDeque<Staged>>,
        landing: Vec<Option<(usize, usize)>>,
        /// Units received from each peer.
        got: Vec<usize>,
    }

    /// `n` ranks, each sending `pieces` pieces of GPU payload to every other rank, moved by a
    /// random interleaving of sends, receives and polls (seeded: threads of one process, or
    /// processes, race like this). Whether every piece arrived before no move was possible.
    fn simulate(rule: Rule, n: usize, pieces: usize, seed: u64) -> bool {
        let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move |m: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % m
        };
        let reserve = if rule == Rule::Now { INBOUND_RESERVE } else { 0 };
        let ahead = if rule == Rule::Now { OUT_AHEAD } else { usize::MAX };
        let mut ranks: Vec<SimRank> = (0..n)
            .map(|r| SimRank {
                pool: Buffers::new(STAGE_BUFFERS, reserve),
                copies: Vec::new(),
                to_send: (0..n).map(|p| if p == r { 0 } else { pieces }).collect(),
                staged: (0..n).map(|_| VecDeque::new()).collect(),
                landing: vec![None; n],
                got: vec![0; n],
            })
            .collect();
        // socket[a][b]: units sent by a not yet read by b.
        let mut socket = vec![vec![0usize; n]; n];
        let mut idle = 0;
        for now in 0..1_000_000u64 {
            if (0..n).all(|r| (0..n).all(|p| p == r || ranks[r].got[p] == pieces * PIECE)) {
                return true;
            }
            let (r, p) = (next(n as u64) as usize, next(n as u64) as usize);
            let before = (
                socket.clone(),
                ranks.iter().map(|x| x.pool.free.len()).collect::<Vec<_>>(),
            );
            let me = &mut ranks[r];
            // Poll: completed copies give their buffers back.
            me.copies.retain(|&(b, at)| {
                if at <= now {
                    me.pool.give(b);
                }
                at > now
            });
            if p != r {
                // Send to p: ready pieces into the socket, then pieces staged: before, one when
                // those before it were ready; now (as peer.rs) as many as OUT_AHEAD and the pool's
                // rule allow.
                while let Some(s) = me.staged[p].front_mut() {
                    if s.ready_at > now {
                        break;
                    }
                    let take = (PIECE - s.sent).min(SOCKET - socket[r][p]);
                    s.sent += take;
                    socket[r][p] += take;
                    if s.sent < PIECE {
                        break;
                    }
                    let b = s.buf;
                    me.staged[p].pop_front();
                    me.pool.give(b);
                }
                let all_ready = me.staged[p].iter().all(|s| s.ready_at <= now);
                while me.to_send[p] > 0 && (all_ready || rule == Rule::Now) && me.staged[p].len() < ahead {
                    let Some(buf) = me.pool.take_out() else { break };
                    me.to_send[p] -= 1;
                    let ready_at = now + 1 + next(3);
                    me.staged[p].push_back(Staged { buf, ready_at, sent: 0 });
                    if rule == Rule::Before {
                        break;
                    }
                }
                // Receive from p into a staging buffer.
                while socket[p][r] > 0 {
                    let (buf, filled) = match me.landing[p] {
                        Some(l) => l,
                        None => match me.pool.take_in() {
                            Some(b) => (b, 0),
                            None => break,
                        },
                    };
                    // A buffer is filled up to the end of the piece being received (units
                    // received so far decide where a piece ends, as the header does in peer.rs).
                    let piece_left = PIECE - me.got[p] % PIECE;
                    let n = socket[p][r].min(piece_left).min(PIECE - filled);
                    socket[p][r] -= n;
                    me.got[p] += n;
                    let filled = filled + n;
                    let ends = n == piece_left || filled == PIECE;
                    if ends || (rule == Rule::Now && socket[p][r] == 0) {
                        // Copied on: the buffer comes back when the fake copy completes.
                        me.copies.push((buf, now + 1 + next(3)));
                        me.landing[p] = None;
                    } else {
                        me.landing[p] = Some((buf, filled));
                    }
                }
            }
            let after = (
                socket.clone(),
                ranks.iter().map(|x| x.pool.free.len()).collect::<Vec<_>>(),
            );
            let moving = ranks.iter().any(|x| !x.copies.is_empty()) || before != after;
            idle = if moving { 0 } else { idle + 1 };
            if idle > 20_000 {
                return false;
            }
        }
        false
    }

    /// Sending and landing sharing the pool, on the CPU. Under the rule before, every rank of a
    /// group could end with all its buffers in answers queued behind sockets its peers no longer
    /// read, their own buffers being in answers too: some interleavings of 3 ranks each answering
    /// 16 pieces (two 8 MiB gets from GPU memory) to each other hang. (The 8 pieces a rank of
    /// `gpu_iget_reads_a_peers_gpu_window` answers each peer stay below that: none hangs.) Under
    /// the rule now every interleaving delivers every piece.
    #[test]
    fn staging_cannot_deadlock_between_sending_and_landing() {
        for (n, pieces) in [(3, 16), (2, 40), (4, 12)] {
            let stuck = (0..40).filter(|&seed| !simulate(Rule::Before, n, pieces, seed)).count();
            assert!(stuck > 0, "{n} ranks x {pieces} pieces: the rule before never hung");
        }
        assert!((0..40).all(|seed| simulate(Rule::Before, 3, 8, seed)));
        for (n, pieces) in [(3, 8), (3, 16), (3, 24), (2, 40), (4, 12), (5, 3)] {
            for seed in 0..100 {
                assert!(
                    simulate(Rule::Now, n, pieces, seed),
                    "{n} ranks x {pieces} pieces, seed {seed}: stuck"
                );
            }
        }
    }

    /// A copy into a staging buffer that was queued but whose event could not be recorded may
    /// still write the buffer: it is lost for good, never taken again. A copy that failed to
    /// queue gives its buffer back.
    #[test]
    fn a_copy_queued_without_an_event_loses_its_buffer() {
        let cuda_error = || crate::error::Error::internal("cuEventRecord failed");
        let mut pool = Buffers::new(3, 0);
        let mut copying = None;
        let r = copy_into_taken(
            &mut pool,
            |b| {
                copying = Some(b);
                Ok(())
            },
            || Err::<(), _>(cuda_error()),
        );
        assert!(r.is_err());
        let copying = copying.expect("a buffer was taken");
        let taken: Vec<usize> = std::iter::from_fn(|| pool.take_in()).collect();
        assert_eq!(taken.len(), 2);
        assert!(
            !taken.contains(&copying),
            "buffer {copying}, under an untracked copy, was handed out again"
        );
        taken.into_iter().for_each(|b| pool.give(b));
        assert!(pool.all_free(), "the pool counts as idle without the lost buffer");

        let mut pool = Buffers::new(3, 0);
        let r = copy_into_taken(&mut pool, |_| Err(cuda_error()), || Ok(()));
        assert!(r.is_err());
        assert!(pool.all_free(), "a copy that never queued gives its buffer back");
        assert_eq!(std::iter::from_fn(|| pool.take_in()).count(), 3);

        let mut pool = Buffers::new(3, 0);
        let (b, ()) = copy_into_taken(&mut pool, |_| Ok(()), || Ok(())).unwrap().unwrap();
        assert!(!pool.all_free());
        pool.give(b);
        assert!(pool.all_free());
    }

    /// Stream work queued before its event could be recorded stays tracked: pending (holding its
    /// buffer and request) until a later record of the event succeeds and that record completes,
    /// though an event whose record failed reads as complete at once. No event to be had queues
    /// nothing. Until 2026-11-28 the event was taken and recorded after the work was queued and
    /// the entry kept only if both succeeded: the second case left `inflight` empty
    /// (`Stager::pending` false), the first queued the work anyway.
    #[test]
    fn work_queued_before_its_event_fails_to_record_stays_pending() {
        let failed = |what: &str| crate::error::Error::internal(format!("{what} failed"));
        let mut inflight: VecDeque<Inflight<u32>> = VecDeque::new();

        let mut queued = false;
        let r = queue_tracked(
            &mut inflight,
            None,
            Some(1),
            || Err(failed("cuEventCreate")),
            || {
                queued = true;
                Ok(())
            },
            |_| Ok(()),
        );
        assert!(r.is_err());
        assert!(!queued, "work was queued with no event to track it");
        assert!(inflight.is_empty());

        let r = queue_tracked(
            &mut inflight,
            Some(7),
            Some(2),
            || Ok(5),
            || Ok(()),
            |_| Err(failed("cuEventRecord")),
        );
        assert!(r.is_err(), "the failed record is still the caller's error");
        assert_eq!(inflight.len(), 1, "queued work whose record failed is not tracked");

        let mut retired = Vec::new();
        // An unrecorded event reads as complete: retire must record it before asking.
        let r = retire(
            &mut inflight,
            |_| Err(failed("cuEventRecord")),
            |_| Ok(true),
            |w| retired.push((w.buf, w.request)),
        );
        assert!(r.is_err());
        assert!(
            retired.is_empty(),
            "work retired though its event was never recorded behind it"
        );
        let r = retire(
            &mut inflight,
            |_| Ok(()),
            |_| Ok(false),
            |w| retired.push((w.buf, w.request)),
        );
        assert!(r.is_ok() && retired.is_empty(), "retired before its event completed");
        let r = retire(
            &mut inflight,
            |_| panic!("recorded again"),
            |_| Ok(true),
            |w| retired.push((w.buf, w.request)),
        );
        assert!(r.is_ok());
        assert_eq!(retired, vec![(Some(7), Some(2))]);
        assert!(inflight.is_empty());

        // Work that failed part-way through queueing (a copy's later piece) is tracked too.
        let r = queue_tracked(
            &mut inflight,
            None,
            Some(3),
            || Ok(6),
            || Err(failed("cuLaunchHostFunc")),
            |_| Ok(()),
        );
        assert!(r.is_err());
        assert_eq!(
            inflight.len(),
            1,
            "the pieces queued before the failure are not tracked"
        );
    }

    /// A host-to-host copy cut into pieces of at most HOST_PIECE bytes (one host function each)
    /// copies as one memmove would, whichever way the two ranges overlap. Until 2026-11-28 it was
    /// one host function of the whole length.
    #[test]
    fn a_host_copy_is_cut_into_bounded_pieces_that_copy_as_one_memmove() {
        let len = 3 * HOST_PIECE + 5;
        let src = 2 * HOST_PIECE;
        let (p, near) = (HOST_PIECE, 3);
        for dst in [src, src + near, src - near, src + p + 1, src - p - 1, src + 4 * p, 0] {
            let mut bytes: Vec<u8> = (0..10 * HOST_PIECE)
                .map(|i| (i % 251) as u8 ^ (i >> 12) as u8)
                .collect();
            let mut want = bytes.clone();
            want.copy_within(src..src + len, dst);
            let pieces: Vec<_> = host_pieces(dst, src, len).collect();
            assert_eq!(pieces.len(), len.div_ceil(HOST_PIECE));
            assert!(
                pieces.iter().all(|&(_, _, n)| (1..=HOST_PIECE).contains(&n)),
                "a piece over {HOST_PIECE} bytes: {pieces:?}"
            );
            for (d, s, n) in pieces {
                bytes.copy_within(s..s + n, d);
            }
            assert!(
                bytes == want,
                "copying {len} bytes from {src} to {dst} in pieces differs from one copy"
            );
        }
        assert_eq!(host_pieces(8, 0, 0).count(), 0);
    }

    #[test]
    fn a_lost_buffer_leaves_the_pool_idle_without_it() {
        let mut b = Buffers::new(3, 1);
        let kept = b.take_in().unwrap();
        let _lost = b.take_in().unwrap();
        b.lose();
        assert!(!b.all_free());
        b.give(kept);
        assert!(b.all_free(), "the two buffers left are free");
    }

    #[test]
    fn sends_never_take_the_landing_reserve() {
        let mut b = Buffers::new(6, 2);
        let out: Vec<usize> = std::iter::from_fn(|| b.take_out()).collect();
        assert_eq!(out.len(), 4);
        assert!(b.take_in().is_some() && b.take_in().is_some() && b.take_in().is_none());
        b.give(out[0]);
        assert_eq!(b.take_out(), None, "a freed buffer under the reserve is landing's");
        assert_eq!(b.take_in(), Some(out[0]));
    }
}
