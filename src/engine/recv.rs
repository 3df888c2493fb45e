//! The receiving side of a connection.
//!
//! Posted receives are matched in order with the headers arriving on the control connection. A
//! header tells the real size (at most what was posted, else "message truncated") and whether the
//! payload follows inline on the control connection or comes over the stripes, chunked exactly as
//! the sender cut it.
//!
//! A comm NCCL receives on with device unpack (v7+, see ring.rs) lands bytes bound for GPU
//! memory in bounce memory, publishes their records when the receive completes, and keeps the
//! bounce memory (and TCPX's slots) until NCCL's `irecvConsumed`; the whole of such a receive's
//! life is followed here and in ring.rs. Other comms place GPU-bound bytes with tcpxr's own unpack
//! kernel (lanes.rs).
use super::comm::{Base, Comm, Side};
use super::ctrl::Ctrl;
use super::lanes::{RecvCtx, RecvLane};
use super::memory::Registration;
use super::profile::{self, Event, Op, Parent};
use super::requests::Kind;
use super::ring::{Bounce, DeviceRing, RING_SLOTS};
use super::stage::RecvStage;
use super::stall;
use super::striper::{Cut, Striper, Then};
use super::wire::{MsgHeader, MSG_HEADER_BYTES};
use super::{CommTag, Tuning};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::transport::{InnerRecv, MemKind};
use std::ffi::c_void;
use std::sync::Arc;

pub struct Msg {
    /// The buffer NCCL posted.
    ptr: usize,
    /// Where the bytes are received: `ptr`, or this comm's bounce memory (device unpack into GPU
    /// memory over the socket; set once the bounce memory is taken).
    land: usize,
    /// Device unpack over the socket into GPU memory: the message lands in bounce memory, at this
    /// offset once taken.
    bounce: Option<Option<usize>>,
    capacity: usize,
    /// Known once the header has arrived.
    size: Option<usize>,
    inline: bool,
    inline_got: usize,
    /// For an inline payload bound for GPU memory: its placement's ticket on the unpack stage.
    inline_ticket: Option<u64>,
    cut: Cut,
    /// Whether the destination is GPU memory (placed by the comm's unpack stage), and its
    /// registration.
    mem: RecvCtx,
    /// NCCL's profiler handle for it, and its event (profile.rs).
    parent: Option<Parent>,
    event: Option<Event>,
}

impl Msg {
    fn new(ptr: usize, capacity: usize, mem: RecvCtx, parent: Option<Parent>) -> Msg {
        Msg {
            ptr,
            land: ptr,
            bounce: None,
            capacity,
            size: None,
            inline: false,
            inline_got: 0,
            inline_ticket: None,
            cut: Cut::default(),
            mem,
            parent,
            event: None,
        }
    }

    fn done(&self, ctrl_done: bool) -> bool {
        let Some(size) = self.size else { return false };
        ctrl_done && (self.inline || self.cut.issued == size) && self.cut.pending == 0
    }
}

pub struct RecvState {
    b: Base<Msg, RecvLane>,
    /// NCCL's device unpack, when NCCL asked for it at accept.
    ring: Option<DeviceRing>,
    /// GPU placement of received chunks and inline payloads by tcpxr's unpack kernel (comms
    /// without device unpack), made at the first regMr of GPU memory (or receive into it); lent
    /// to the lanes on each post and test.
    stage: Option<RecvStage>,
    /// Largest inline payload this side accepts (announced in the listen handle).
    inline_limit: usize,
    /// First message whose header or inline payload has not fully arrived.
    ctrl_seq: u64,
    /// First message whose chunks are not all posted to the stripes.
    issue_seq: u64,
    header: [u8; MSG_HEADER_BYTES],
    header_got: usize,
}

pub type RecvComm = Comm<RecvState>;

impl RecvComm {
    pub(crate) fn new(ctrl: Ctrl, stripes: Vec<Box<dyn InnerRecv>>, chunk_bytes: usize, t: &Tuning) -> Box<Self> {
        let lanes = stripes
            .into_iter()
            .enumerate()
            .map(|(i, s)| RecvLane::new(i, s, chunk_bytes))
            .collect();
        let striper = Striper::new(lanes, t.recv_window, chunk_bytes, Op::Recv);
        Comm::boxed(RecvState {
            b: Base::new(ctrl, striper, Kind::Recv, t),
            ring: None,
            stage: None,
            inline_limit: t.inline_accept,
            ctrl_seq: 0,
            issue_seq: 0,
            header: [0; MSG_HEADER_BYTES],
            header_got: 0,
        })
    }

    /// Registers `len` bytes at `ptr` with every stripe (NCCL's regMr on this comm). For memory
    /// of `gpu` on a comm without device unpack, everything tcpxr's unpack kernel needs is made
    /// now, so that no CUDA object is created on the data path.
    pub fn reg_mr(&self, ptr: usize, len: usize, kind: MemKind, gpu: Option<&Arc<Gpu>>) -> Result<Arc<Registration>> {
        let mut guard = self.lock();
        let st = &mut *guard;
        if let (Some(g), None) = (gpu, &st.ring) {
            st.gpu_stage(g)?;
        }
        st.b.registry.add(&mut st.b.striper, ptr, len, kind)
    }

    /// Whether NCCL places this comm's received GPU pages (device unpack).
    pub fn device_unpack(&self) -> bool {
        self.lock().ring.is_some()
    }

    /// Switches this comm to NCCL's device unpack (NCCL asked for it at accept, before any
    /// receive) and returns the device address of the handle NCCL's kernel reads. `gpu` is the
    /// GPU receives go to (None without CUDA: host destinations only).
    pub fn enable_device_unpack(&self, gpu: Option<&Arc<Gpu>>) -> Result<*mut c_void> {
        let mut guard = self.lock();
        let st = &mut *guard;
        if st.b.posted.next_seq() > 0 || st.ring.is_some() {
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
        let ring = DeviceRing::new(gpu, bounce)?;
        st.b.striper.lanes_mut().for_each(|l| l.keep_records());
        let handle = ring.device_handle();
        st.ring = Some(ring);
        Ok(handle)
    }

    /// NCCL's kernel is done with receive `slot` (`irecvConsumed`): its bounce memory and inner
    /// slots go back. NCCL calls this for every receive of a plugin that has the function; on a
    /// comm without device unpack it is a no-op that does not look at the request.
    pub fn consumed(&self, slot: u32) -> Result<()> {
        let mut guard = self.lock();
        let st = &mut *guard;
        if st.ring.is_none() {
            return Ok(());
        }
        let seq = st.b.posted.held_seq_of(slot)?;
        if st.b.posted.oldest_held() != Some(seq) {
            return Err(Error::internal(format!(
                "irecvConsumed out of order: receive {seq} while receive {:?} is older",
                st.b.posted.oldest_held()
            )));
        }
        st.b.striper.release_message(seq)?;
        st.ring.as_mut().unwrap().consume(seq)?;
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
        if let Some(ring) = &st.ring {
            // One ring slot per receive until NCCL consumes it.
            if st.b.posted.unretired() >= RING_SLOTS {
                st.progress()?;
                return Ok(None);
            }
            // Over the socket a receive into GPU memory lands in bounce memory, which needs no
            // registration; TCPX lands it in its own pool from the posted buffer.
            let bounce = ring.bounces(gpu.is_some());
            let mut msg = Msg::new(
                data as usize,
                capacity,
                RecvCtx {
                    gpu: false,
                    reg: if bounce { None } else { reg },
                },
                parent,
            );
            msg.bounce = bounce.then_some(None);
            let Some(request) = st.b.posted.post(msg) else {
                st.progress()?;
                return Ok(None);
            };
            st.started(capacity, parent);
            st.progress()?;
            return Ok(Some(request));
        }
        // The GPU stage comes first, so that an error there loses no request slot. It exists since
        // regMr, except for memory NCCL never registered.
        if let Some(g) = &gpu {
            st.gpu_stage(g)?;
        }
        let mem = RecvCtx {
            gpu: gpu.is_some(),
            reg,
        };
        let Some(request) = st.b.posted.post(Msg::new(data as usize, capacity, mem, parent)) else {
            st.progress()?;
            return Ok(None);
        };
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
        let placed = match (msg.inline_ticket, &mut st.stage) {
            (Some(t), Some(stage)) => stage.placed(t)?,
            _ => true,
        };
        if placed && msg.done(ctrl_done) {
            let (size, inline, bounce) = (msg.size.unwrap_or(0), msg.inline, msg.bounce);
            profile::stop(msg.event.take());
            if let Some(stats) = &mut st.b.stats {
                stats.count(size, inline);
            }
            match &mut st.ring {
                Some(ring) => {
                    // NCCL's kernel reads the records once test says done, and the pages until
                    // irecvConsumed.
                    if let Some(Some(at)) = bounce {
                        ring.add_contiguous(seq, at, size)?;
                    }
                    ring.publish(seq);
                    st.b.posted.hold(seq);
                }
                None => st.b.posted.complete(seq),
            }
            return Ok(Some(size));
        }
        progress?;
        Ok(None)
    }
}

impl Side for RecvState {
    const TAG: CommTag = CommTag::Recv;
    const NAME: &'static str = "receive";
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
        let gpu = match (&self.ring, &self.stage) {
            (Some(_), _) => format!(
                "; NCCL's device unpack: {} receives done and not yet consumed by NCCL",
                self.b.posted.unretired() - self.b.posted.live()
            ),
            (None, Some(stage)) => {
                let (added, placed) = stage.counts();
                format!("; unpack kernel: {placed} of {added} chunks placed")
            }
            (None, None) => String::new(),
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
        let (posted, ring) = (&mut self.b.posted, &mut self.ring);
        self.b.striper.poll(&mut self.stage, |c| {
            posted.get_mut(c.seq).cut.pending -= 1;
            // Device unpack: the chunk's records join its receive's slot, and the pages they
            // point at stay until NCCL consumes the receive.
            match (ring.as_mut(), c.landed) {
                (Some(ring), Some(landed)) => {
                    ring.add_chunk(c.seq, c.offset, c.len, &landed)?;
                    Ok(Then::Hold)
                }
                _ => Ok(Then::Release),
            }
        })?;
        // Every GPU chunk that arrived in this pass, on any stripe, is placed by one launch.
        if let Some(stage) = &mut self.stage {
            stage.launch()?;
        }
        while self.issue_seq < self.ctrl_seq {
            let seq = self.issue_seq;
            let m = self.b.posted.get_mut(seq);
            let size = m.size.unwrap_or(0);
            if !m.inline
                && !self.b.striper.issue(
                    seq,
                    m.land..m.land + size,
                    &m.mem,
                    &mut m.cut,
                    m.parent,
                    &mut self.stage,
                )?
            {
                break;
            }
            self.issue_seq += 1;
        }
        Ok(())
    }

    /// Lets every unpack launch finish before the bounce memory it reads is freed.
    fn closing(&mut self) {
        if let Some(stage) = &mut self.stage {
            stage.quiesce();
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

    /// Makes the unpack stage of receives into `g`'s memory, with every stripe's bounce slots, on
    /// first use (regMr); checks that later receives go to the same GPU.
    fn gpu_stage(&mut self, g: &Arc<Gpu>) -> Result<()> {
        if self.stage.is_none() {
            self.stage = Some(RecvStage::new(g.clone(), self.b.posted.capacity(), self.inline_limit)?);
        }
        let ordinal = self.stage.as_ref().expect("made above").gpu().ordinal;
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
        while self.ctrl_seq < self.b.posted.next_seq() {
            let seq = self.ctrl_seq;
            let slot = self.b.posted.slot_of(seq);
            let m = self.b.posted.get_mut(seq);
            if m.size.is_none() {
                if !self.b.ctrl.read_into(&mut self.header, &mut self.header_got)? {
                    return Ok(());
                }
                self.header_got = 0;
                let h = MsgHeader::decode(&self.header)?;
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
                m.size = Some(h.size as usize);
                m.inline = h.inline;
            }
            let size = m.size.unwrap_or(0);
            if m.bounce == Some(None) {
                // Device unpack into GPU memory over the socket: the bytes land in bounce memory,
                // once earlier receives have left room.
                let ring = self.ring.as_mut().expect("bounce without a ring");
                let Some((host, at)) = ring.take_bounce(seq, size)? else {
                    return Ok(());
                };
                m.land = host as usize;
                m.bounce = Some(Some(at));
            }
            if m.inline && size > 0 {
                match (m.mem.gpu, &mut self.stage) {
                    (true, None) => return Err(Error::internal("a receive into GPU memory without its unpack stage")),
                    (true, Some(stage)) => {
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
                    (false, _) => {
                        // SAFETY: `land` is irecv's buffer (its caller guarantees ptr..ptr+capacity
                        // is writable, and size <= capacity) or bounce memory taken for `size` bytes.
                        let dst = unsafe { std::slice::from_raw_parts_mut(m.land as *mut u8, size) };
                        if !self.b.ctrl.read_into(dst, &mut m.inline_got)? {
                            return Ok(());
                        }
                    }
                }
            }
            self.ctrl_seq += 1;
        }
        Ok(())
    }
}
