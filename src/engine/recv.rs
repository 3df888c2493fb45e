//! The receiving side of a connection.
//!
//! Posted receives are matched in order with the headers arriving on the control connection. A
//! header tells the real size (at most what was posted, else "message truncated") and whether the
//! payload follows inline on the control connection or comes over the stripes, chunked exactly as
//! the sender cut it.
//!
//! A comm is in one of three modes ([`RecvMode`]), and every call branches on it once:
//! * `Host`: bytes land in place (host memory; every comm starts here);
//! * `OwnUnpack`: tcpxr's own unpack kernel places bytes bound for GPU memory (a comm without
//!   NCCL's device unpack switches to it at the first regMr of GPU memory, or the first receive
//!   into GPU memory NCCL never registered; lanes.rs, stage.rs);
//! * `DeviceUnpack`: NCCL asked for its device unpack at accept (v7+, see ring.rs): bytes bound
//!   for GPU memory land in bounce memory, their records are published when the receive
//!   completes (or, for a large receive over the socket, the copy engine places them first and
//!   none are: copy_in.rs), and the bounce memory (and TCPX's slots) are kept until NCCL's
//!   `irecvConsumed`; the whole of such a receive's life is followed here and in ring.rs.
//!
//! Each message knows where its bytes land ([`Land`]): in place, or in the comm's bounce memory
//! (device unpack into GPU memory over the socket).
use super::comm::{Base, Comm, Side};
use super::ctrl::Ctrl;
use super::headers::{Headers, HostBuf};
use super::lanes::{RecvCtx, RecvLane};
use super::memory::Registration;
use super::profile::{self, Event, Op, Parent};
use super::requests::Kind;
use super::ring::{Bounce, DeviceRing, RING_SLOTS};
use super::stage::{RecvStage, QUIESCE_LIMIT};
use super::stall;
use super::striper::{Cut, Then};
use super::{CommTag, Tuning};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::transport::{InnerRecv, MemKind};
use std::ffi::c_void;
use std::sync::Arc;

/// How a receive comm places what it receives: decided at accept (device unpack) or at the first
/// GPU memory it sees (its own unpack stage), and never changed after.
enum RecvMode {
    /// Bytes land in place; no GPU memory has been registered or received into.
    Host,
    /// GPU placement of received chunks and inline payloads by tcpxr's unpack kernel (comms
    /// without device unpack), made at the first regMr of GPU memory (or receive into it); lent
    /// to the lanes on each post and test.
    OwnUnpack(RecvStage),
    /// NCCL's device unpack, asked for at accept: NCCL's kernel places GPU-bound bytes.
    DeviceUnpack(DeviceRing),
}

impl RecvMode {
    /// The stage the lanes borrow on each post and test: only tcpxr's own unpack has one.
    fn stage(&mut self) -> Option<&mut RecvStage> {
        match self {
            RecvMode::OwnUnpack(stage) => Some(stage),
            RecvMode::Host | RecvMode::DeviceUnpack(_) => None,
        }
    }

    /// Whether receive `seq`, all of whose bytes are in, still waits for its copy into GPU memory
    /// (copy_in.rs); queues the copy if the progress pass has not (it queues them oldest first,
    /// and an older receive may still be arriving).
    fn copying(&mut self, seq: u64, m: &mut Msg) -> Result<bool> {
        let RecvMode::DeviceUnpack(ring) = self else {
            return Ok(false);
        };
        match m.land {
            Land::Bounce(Some(b)) if b.place != Place::Records => {
                m.start_copy(seq, ring)?;
                Ok(!ring.copied(seq)?)
            }
            _ => Ok(false),
        }
    }

    /// Whether the inline payload with placement `ticket` (tcpxr's own unpack) is in place.
    fn placed(&mut self, ticket: Option<u64>) -> Result<bool> {
        match (self, ticket) {
            (RecvMode::OwnUnpack(stage), Some(t)) => stage.placed(t),
            _ => Ok(true),
        }
    }
}

/// Where one receive's bytes land.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Land {
    /// In the buffer NCCL posted.
    InPlace,
    /// In this comm's bounce memory (device unpack into GPU memory over the socket): `None` until
    /// earlier receives have left room and it is taken.
    Bounce(Option<Bounced>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct Bounced {
    /// The host address of the bounce memory taken.
    host: usize,
    /// Its offset from the records' base (what NCCL's kernel reads).
    at: usize,
    /// How the bytes get from there into the posted GPU buffer.
    place: Place,
}

/// How a receive in bounce memory is placed into the GPU buffer NCCL posted.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// By NCCL's kernel, from the records published when the receive is reported done.
    Records,
    /// By the copy engine (copy_in.rs), queued once every byte has arrived: not yet queued.
    CopyDue,
    /// The copy is queued; the receive is reported done once it has completed.
    Copying,
}

pub struct Msg {
    /// The buffer NCCL posted.
    ptr: usize,
    land: Land,
    capacity: usize,
    /// Known once the header has arrived.
    size: Option<usize>,
    inline: bool,
    inline_got: usize,
    /// For an inline payload bound for GPU memory: its placement's ticket on the unpack stage.
    inline_ticket: Option<u64>,
    cut: Cut,
    /// The size of the chunks the sender cut it into, from its header (0: the comm's).
    chunk: usize,
    /// Whether the destination is GPU memory (placed by the comm's unpack stage), and its
    /// registration.
    mem: RecvCtx,
    /// NCCL's profiler handle for it, and its event (profile.rs).
    parent: Option<Parent>,
    event: Option<Event>,
}

impl Msg {
    fn new(ptr: usize, land: Land, capacity: usize, mem: RecvCtx, parent: Option<Parent>) -> Msg {
        Msg {
            ptr,
            land,
            capacity,
            size: None,
            inline: false,
            inline_got: 0,
            inline_ticket: None,
            cut: Cut::default(),
            chunk: 0,
            mem,
            parent,
            event: None,
        }
    }

    fn done(&self, ctrl_done: bool) -> bool {
        let Some(size) = self.size else { return false };
        ctrl_done && (self.inline || self.cut.issued == size) && self.cut.pending == 0
    }

    /// Queues the copy engine's copy of this receive from bounce memory into the posted GPU
    /// buffer, if it is one to copy and not yet queued; every byte must have arrived.
    fn start_copy(&mut self, seq: u64, ring: &mut DeviceRing) -> Result<()> {
        if let Land::Bounce(Some(b)) = self.land {
            if b.place == Place::CopyDue {
                // SAFETY: the posted GPU buffer, kept by NCCL until the receive is reported done,
                // which waits for the copy.
                unsafe { ring.start_copy(seq, b.host, self.ptr as u64, self.size.unwrap_or(0))? };
                self.land = Land::Bounce(Some(Bounced {
                    place: Place::Copying,
                    ..b
                }));
            }
        }
        Ok(())
    }

    /// The address the bytes are received at: the posted buffer, or the bounce memory taken.
    fn dst(&self) -> Result<usize> {
        match self.land {
            Land::InPlace => Ok(self.ptr),
            Land::Bounce(Some(b)) => Ok(b.host),
            Land::Bounce(None) => Err(Error::internal("a receive landing in bounce memory not yet taken")),
        }
    }
}

pub struct RecvState {
    b: Base<Msg, RecvLane>,
    mode: RecvMode,
    /// Largest inline payload this side accepts (announced in the listen handle).
    inline_limit: usize,
    /// First message whose header or inline payload has not fully arrived.
    ctrl_seq: u64,
    /// First message whose chunks are not all posted to the stripes.
    issue_seq: u64,
    /// First message not yet looked at for a copy into GPU memory (device unpack; copy_in.rs).
    copy_seq: u64,
    /// The headers' reading from the control connection.
    headers: Headers,
}

pub type RecvComm = Comm<RecvState>;

impl RecvComm {
    pub(crate) fn new(ctrl: Ctrl, stripes: Vec<Box<dyn InnerRecv>>, chunk_bytes: usize, t: &Tuning) -> Box<Self> {
        let lanes = stripes
            .into_iter()
            .enumerate()
            .map(|(i, s)| RecvLane::new(i, s, chunk_bytes))
            .collect();
        Comm::boxed(RecvState {
            b: Base::new(ctrl, lanes, t.recv_window, chunk_bytes, Kind::Recv, t),
            mode: RecvMode::Host,
            inline_limit: t.inline_accept,
            ctrl_seq: 0,
            issue_seq: 0,
            copy_seq: 0,
            headers: Headers::default(),
        })
    }

    /// Registers `len` bytes at `ptr` with every stripe (NCCL's regMr on this comm). For memory
    /// of `gpu` on a comm without device unpack, everything tcpxr's unpack kernel needs is made
    /// now, so that no CUDA object is created on the data path.
    pub fn reg_mr(&self, ptr: usize, len: usize, kind: MemKind, gpu: Option<&Arc<Gpu>>) -> Result<Arc<Registration>> {
        let mut guard = self.lock();
        let st = &mut *guard;
        if let Some(g) = gpu {
            st.gpu_stage(g)?;
        }
        st.b.registry.add(&mut st.b.striper, ptr, len, kind)
    }

    /// Whether NCCL places this comm's received GPU pages (device unpack).
    pub fn device_unpack(&self) -> bool {
        matches!(self.lock().mode, RecvMode::DeviceUnpack(_))
    }

    /// Switches this comm to NCCL's device unpack (NCCL asked for it at accept, before any
    /// receive) and returns the device address of the handle NCCL's kernel reads. `gpu` is the
    /// GPU receives go to (None without CUDA: host destinations only); over the socket, receives
    /// into it of at least `copy_bytes` (0: none) are placed by the copy engine.
    pub fn enable_device_unpack(&self, gpu: Option<&Arc<Gpu>>, copy_bytes: usize) -> Result<*mut c_void> {
        let mut guard = self.lock();
        let st = &mut *guard;
        if st.b.posted.next_seq() > 0 || !matches!(st.mode, RecvMode::Host) {
            return Err(Error::internal("device unpack asked for after the comm was in use"));
        }
        let bases: Vec<Option<u64>> = st.b.striper.lanes_mut().map(|l| l.bounce_base()).collect();
        let bounce = match (bases.iter().all(Option::is_some), bases.iter().all(Option::is_none)) {
            (true, _) => Bounce::External(bases.iter().flatten().copied().min().unwrap_or(0)),
            (_, true) => Bounce::Own,
            _ => {
                return Err(Error::internal(
                    "stripes of one comm disagree on whether they land in a bounce pool",
                ))
            }
        };
        let ring = DeviceRing::new(gpu, bounce, copy_bytes)?;
        st.b.striper.lanes_mut().for_each(|l| l.keep_records());
        let handle = ring.device_handle();
        st.mode = RecvMode::DeviceUnpack(ring);
        Ok(handle)
    }

    /// NCCL's kernel is done with receive `slot` (`irecvConsumed`): its bounce memory and inner
    /// slots go back. NCCL calls this for every receive of a plugin that has the function; on a
    /// comm without device unpack it is a no-op that does not look at the request.
    pub fn consumed(&self, slot: u32) -> Result<()> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let RecvMode::DeviceUnpack(ring) = &mut st.mode else {
            return Ok(());
        };
        let seq = st.b.posted.held_seq_of(slot)?;
        if st.b.posted.oldest_held() != Some(seq) {
            return Err(Error::internal(format!(
                "irecvConsumed out of order: receive {seq} while receive {:?} is older",
                st.b.posted.oldest_held()
            )));
        }
        st.b.striper.release_message(seq)?;
        ring.consume(seq)?;
        st.b.posted.release(seq);
        st.progress()
    }

    /// Posts a receive of up to `capacity` bytes. Ok(None) when all request slots are in use.
    ///
    /// `gpu` says the buffer is in that GPU's memory (chunks are then placed by the unpack kernel);
    /// `reg` is its registration (regMr) on this comm, if NCCL passed one.
    ///
    /// `parent`: NCCL's profiler handle for the message (v10+), parent of its events.
    ///
    /// # Safety
    /// `data .. data + capacity` must stay writable and untouched by others until `test` reports
    /// the message done.
    pub unsafe fn irecv(
        &self,
        data: *mut u8,
        capacity: usize,
        gpu: Option<Arc<Gpu>>,
        reg: Option<Arc<Registration>>,
        parent: Option<Parent>,
    ) -> Result<Option<*mut c_void>> {
        if data.is_null() && capacity > 0 {
            return Err(Error::invalid_argument(format!(
                "irecv of {capacity} bytes into a NULL buffer"
            )));
        }
        let mut guard = self.lock();
        let st = &mut *guard;
        st.b.failed()?;
        let reg = st.b.registry.check(reg, data as usize, capacity)?;
        // tcpxr's own GPU stage comes first, so that an error there loses no request slot. It
        // exists since regMr, except for memory NCCL never registered.
        if let Some(g) = &gpu {
            st.gpu_stage(g)?;
        }
        let (land, mem) = match &st.mode {
            RecvMode::Host | RecvMode::OwnUnpack(_) => (
                Land::InPlace,
                RecvCtx {
                    gpu: gpu.is_some(),
                    reg,
                    copied_from_bounce: false,
                },
            ),
            RecvMode::DeviceUnpack(ring) => {
                // One ring slot per receive until NCCL consumes it.
                if st.b.posted.unretired() >= RING_SLOTS {
                    st.progress()?;
                    return Ok(None);
                }
                // Over the socket a receive into GPU memory lands in bounce memory, which needs
                // no registration; TCPX lands it in its own pool from the posted buffer. Either
                // way NCCL's kernel places it: tcpxr's lanes see host memory.
                match ring.bounces(gpu.is_some()) {
                    true => (
                        Land::Bounce(None),
                        RecvCtx {
                            gpu: false,
                            reg: None,
                            copied_from_bounce: ring.copies(capacity),
                        },
                    ),
                    false => (
                        Land::InPlace,
                        RecvCtx {
                            gpu: false,
                            reg,
                            copied_from_bounce: false,
                        },
                    ),
                }
            }
        };
        let outstanding = st.b.posted.outstanding();
        let Some(request) = st.b.posted.post(Msg::new(data as usize, land, capacity, mem, parent)) else {
            st.progress()?;
            return Ok(None);
        };
        if let Some(stats) = &mut st.b.stats {
            stats.posted(outstanding);
        }
        st.started(capacity, parent);
        st.progress()?;
        Ok(Some(request))
    }

    /// Ok(Some(size received)) once the message of request `slot` is done.
    pub fn test(&self, slot: u32) -> Result<Option<usize>> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let progress = st.progress();
        let seq = st.b.posted.seq_of(slot)?;
        let ctrl_done = seq < st.ctrl_seq;
        let msg = st.b.posted.get_mut(seq);
        if !msg.done(ctrl_done) || !st.mode.placed(msg.inline_ticket)? || st.mode.copying(seq, msg)? {
            progress?;
            return Ok(None);
        }
        let (size, land) = (msg.size.unwrap_or(0), msg.land);
        profile::stop(msg.event.take());
        if let Some(stats) = &mut st.b.stats {
            stats.count(size, msg.inline);
        }
        match &mut st.mode {
            RecvMode::Host | RecvMode::OwnUnpack(_) => st.b.posted.complete(seq),
            RecvMode::DeviceUnpack(ring) => {
                // NCCL's kernel reads the records once test says done, and the pages until
                // irecvConsumed; a copied receive (in place by now) publishes none.
                if let Land::Bounce(Some(b)) = land {
                    if b.place == Place::Records {
                        ring.add_contiguous(seq, b.at, size)?;
                    }
                }
                ring.publish(seq);
                st.b.posted.hold(seq);
            }
        }
        Ok(Some(size))
    }
}

impl Side for RecvState {
    const TAG: CommTag = CommTag::Recv;
    const NAME: &'static str = "receive";
    const PEER: &'static str = "sender";
    type Msg = Msg;
    type Lane = RecvLane;

    fn base(&self) -> &Base<Msg, RecvLane> {
        &self.b
    }

    fn base_mut(&mut self) -> &mut Base<Msg, RecvLane> {
        &mut self.b
    }

    fn stall_report(&self) -> String {
        let (_, read) = self.b.ctrl.queued_and_read();
        let ages: Vec<String> = self.b.posted.waiting().iter().map(|d| stall::human(*d)).collect();
        let waiting_header = self.ctrl_seq < self.b.posted.next_seq();
        let gpu = match &self.mode {
            RecvMode::Host => String::new(),
            RecvMode::OwnUnpack(stage) => {
                let (added, placed) = stage.counts();
                format!("; unpack kernel: {placed} of {added} chunks placed")
            }
            RecvMode::DeviceUnpack(_) => format!(
                "; NCCL's device unpack: {} receives done and not yet consumed by NCCL",
                self.b.posted.unretired() - self.b.posted.live()
            ),
        };
        format!(
            "{} receives outstanding (posted {} ago){}; control connection {read} bytes read; stripes: {}{gpu}",
            ages.len(),
            ages.join(", "),
            if waiting_header {
                ", the oldest still waiting for its header"
            } else {
                ""
            },
            self.b.striper.describe().join("; ")
        )
    }

    fn pass(&mut self) -> Result<()> {
        self.read_control()?;
        let (posted, striper) = (&mut self.b.posted, &mut self.b.striper);
        match &mut self.mode {
            RecvMode::Host => striper.poll(&mut None, |c| {
                posted.get_mut(c.seq).cut.pending -= 1;
                Ok(Then::Release)
            })?,
            RecvMode::OwnUnpack(stage) => {
                striper.poll(&mut Some(&mut *stage), |c| {
                    posted.get_mut(c.seq).cut.pending -= 1;
                    Ok(Then::Release)
                })?;
                // Every GPU chunk that arrived in this pass, on any stripe, is placed by one launch.
                stage.launch()?;
            }
            RecvMode::DeviceUnpack(ring) => striper.poll(&mut None, |c| {
                posted.get_mut(c.seq).cut.pending -= 1;
                // A chunk that landed in the inner transport's pool (TCPX): its records join its
                // receive's slot, and the pages they point at stay until NCCL consumes the receive.
                match c.landed {
                    Some(landed) => {
                        ring.add_chunk(c.seq, c.offset, c.len, &landed)?;
                        Ok(Then::Hold)
                    }
                    None => Ok(Then::Release),
                }
            })?,
        }
        while self.issue_seq < self.ctrl_seq {
            let seq = self.issue_seq;
            let m = self.b.posted.get_mut(seq);
            let size = m.size.unwrap_or(0);
            if !m.inline {
                let at = m.dst()?;
                let (mem, cut, parent, chunk) = (&m.mem, &mut m.cut, m.parent, m.chunk);
                if !self
                    .b
                    .striper
                    .issue(seq, at..at + size, chunk, mem, cut, parent, &mut self.mode.stage())?
                {
                    break;
                }
            }
            self.issue_seq += 1;
        }
        self.start_copies()
    }

    /// Lets every unpack launch or copy finish before the bounce memory it reads is freed; what
    /// is still read after QUIESCE_LIMIT is leaked instead (a GPU that stopped), with a WARN.
    fn closing(&mut self) {
        match &mut self.mode {
            RecvMode::OwnUnpack(stage) => {
                if !stage.quiesce(QUIESCE_LIMIT) {
                    log::warn!(
                        "closing a receive comm: an unpack launch did not complete within {} s; its bounce \
                         memory, inline landings and TCPX receive comms stay allocated",
                        QUIESCE_LIMIT.as_secs()
                    );
                    self.b.striper.lanes_mut().for_each(RecvLane::abandon);
                    std::mem::forget(std::mem::replace(&mut self.mode, RecvMode::Host));
                }
            }
            RecvMode::DeviceUnpack(ring) => {
                ring.quiesce(QUIESCE_LIMIT);
                if let (Some(_), Some(copies)) = (&self.b.stats, ring.copy_counts()) {
                    log::info!("stats receive copies: {copies}");
                }
            }
            RecvMode::Host => {}
        }
    }
}

impl RecvState {
    /// The newest posted receive's profiler event starts (as NCCL's socket transport's: the posted
    /// size, on the control connection).
    fn started(&mut self, capacity: usize, parent: Option<Parent>) {
        let event = parent.and_then(|p| profile::start(p, self.b.ctrl.fd(), Op::Recv, capacity));
        let seq = self.b.posted.next_seq() - 1;
        self.b.posted.get_mut(seq).event = event;
    }

    /// Queues the copy engine's copy of every receive, oldest first, whose bytes have all arrived
    /// in bounce memory and are to be copied (device unpack over the socket; copy_in.rs), so that
    /// a copy runs while NCCL still tests older receives.
    fn start_copies(&mut self) -> Result<()> {
        let RecvMode::DeviceUnpack(ring) = &mut self.mode else {
            return Ok(());
        };
        // Receives before the oldest unretired one are gone; none of them awaits a copy.
        let mut seq = self.copy_seq.max(self.b.posted.front_seq());
        while seq < self.ctrl_seq {
            let m = self.b.posted.get_mut(seq);
            if !m.done(true) {
                break;
            }
            m.start_copy(seq, ring)?;
            seq += 1;
        }
        self.copy_seq = seq;
        Ok(())
    }

    /// Makes the unpack stage of receives into `g`'s memory, with every stripe's bounce slots, on
    /// first use (regMr), switching the comm to tcpxr's own unpack; checks that later receives go
    /// to the same GPU. Nothing to make under NCCL's device unpack.
    fn gpu_stage(&mut self, g: &Arc<Gpu>) -> Result<()> {
        let ordinal = match &self.mode {
            RecvMode::DeviceUnpack(_) => return Ok(()),
            RecvMode::OwnUnpack(stage) => stage.gpu().ordinal,
            RecvMode::Host => {
                let stage = RecvStage::new(g.clone(), self.b.posted.capacity(), self.inline_limit)?;
                let ordinal = stage.gpu().ordinal;
                self.mode = RecvMode::OwnUnpack(stage);
                ordinal
            }
        };
        if ordinal != g.ordinal {
            return Err(Error::invalid_usage(format!(
                "GPU {} memory on a connection that receives into GPU {ordinal}",
                g.ordinal
            )));
        }
        for lane in self.b.striper.lanes_mut() {
            lane.prepare(g)?;
        }
        Ok(())
    }

    /// Reads headers and inline payloads, in order, for the posted receives.
    fn read_control(&mut self) -> Result<()> {
        // One message's control bytes a pass, the oldest posted receive's. Reads take this
        // message's bytes only (ctrl.rs; what a gathered read takes past them is handed back),
        // so going on to the next header now would cost a recv that may find nothing yet (NCCL
        // posts receives ahead) and would delay this message's test reporting it done, or its
        // chunks going to the stripes; the next pass reads on.
        let seq = self.ctrl_seq;
        if seq == self.b.posted.next_seq() {
            return Ok(());
        }
        let slot = self.b.posted.slot_of(seq);
        let m = self.b.posted.get_mut(seq);
        if m.size.is_none() {
            // Into host memory in place, the header's read may bring a small inline payload too
            // (headers.rs). (A comm whose lanes see GPU memory as host, NCCL's device unpack over
            // tcpx, accepts nothing inline: its limit of 0 keeps its payloads out.)
            let into = match (m.land, m.mem.gpu) {
                (Land::InPlace, false) => Some(HostBuf {
                    ptr: m.ptr as *mut u8,
                    capacity: m.capacity,
                }),
                _ => None,
            };
            // SAFETY: irecv's buffer, which its caller keeps writable and untouched by others until
            // the receive is reported done; its chunks are issued after its header.
            let Some(read) = (unsafe { self.headers.read(&mut self.b.ctrl, seq, into, self.inline_limit) })? else {
                return Ok(());
            };
            let h = read.header?;
            m.inline_got = read.payload_got;
            if h.seq != seq as u32 {
                return Err(Error::remote(format!(
                    "control connection out of step: message {} arrived where {} was expected",
                    h.seq, seq as u32
                )));
            }
            if h.size > m.capacity as u64 {
                return Err(Error::invalid_usage(format!(
                    "message truncated: peer sent {} bytes but the receive posted {} bytes",
                    h.size, m.capacity
                )));
            }
            if h.inline && h.size > self.inline_limit as u64 {
                return Err(Error::remote(format!(
                    "peer sent {} bytes inline; this side announced at most {}",
                    h.size, self.inline_limit
                )));
            }
            if h.chunk as usize > self.b.striper.chunk_bytes() {
                return Err(Error::remote(format!(
                    "peer cut message {seq} into {}-byte chunks; this connection's are at most {}",
                    h.chunk,
                    self.b.striper.chunk_bytes()
                )));
            }
            m.size = Some(h.size as usize);
            m.inline = h.inline;
            m.chunk = h.chunk as usize;
        }
        let size = m.size.unwrap_or(0);
        if m.land == Land::Bounce(None) {
            // Device unpack into GPU memory over the socket: the bytes land in bounce memory,
            // once earlier receives have left room.
            let RecvMode::DeviceUnpack(ring) = &mut self.mode else {
                return Err(Error::internal(
                    "a receive landing in bounce memory without device unpack",
                ));
            };
            let Some((host, at)) = ring.take_bounce(seq, size)? else {
                return Ok(());
            };
            m.land = Land::Bounce(Some(Bounced {
                host: host as usize,
                at,
                place: match ring.copies(size) {
                    true => Place::CopyDue,
                    false => Place::Records,
                },
            }));
        }
        if m.inline && size > 0 {
            match (m.mem.gpu, &mut self.mode) {
                (true, RecvMode::OwnUnpack(stage)) => {
                    // Bound for GPU memory (the peer sent from host memory): the payload lands
                    // in this request's pinned slot and the unpack kernel places it.
                    if !self
                        .b
                        .ctrl
                        .read_into(stage.inline_payload(slot, size)?, &mut m.inline_got)?
                    {
                        return Ok(());
                    }
                    m.inline_ticket = Some(stage.place_inline(slot, size, m.ptr as u64)?);
                }
                (true, _) => return Err(Error::internal("a receive into GPU memory without its unpack stage")),
                (false, _) => {
                    let dst = m.dst()?;
                    // SAFETY: `dst` is irecv's buffer (its caller guarantees ptr..ptr+capacity
                    // is writable, and size <= capacity) or bounce memory taken for `size` bytes.
                    let dst = unsafe { std::slice::from_raw_parts_mut(dst as *mut u8, size) };
                    if !self.b.ctrl.read_into(dst, &mut m.inline_got)? {
                        return Ok(());
                    }
                }
            }
        }
        self.ctrl_seq += 1;
        Ok(())
    }
}
