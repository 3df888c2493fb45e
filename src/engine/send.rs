//! The sending side of a connection.
//!
//! `isend` queues the message header (and, for small messages, the payload) on the control
//! connection and hands the payload's chunks to the stripes; `test` drives progress and reports a
//! message done when its header is written and every chunk has completed.
use super::comm::{Base, Comm, Side};
use super::company::{MidSized, Rule};
use super::ctrl::{Ctrl, BORROW_FROM};
use super::cut::{self, Mover, Spread};
use super::lanes::{SendCtx, SendLane};
use super::memory::Registration;
use super::profile::{self, Event, Op, Parent};
use super::requests::Kind;
use super::stall;
use super::striper::{Cut, Then};
use super::wire::MsgHeader;
use super::{CommTag, Tuning, MAX_MESSAGE_BYTES};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::transport::{InnerSend, MemKind};
use std::ffi::c_void;
use std::sync::Arc;

pub struct Msg {
    ptr: usize,
    size: usize,
    inline: bool,
    /// Control-stream offset at which this message's header (and inline payload) ends.
    ctrl_end: u64,
    cut: Cut,
    /// The size of the chunks it is cut into (0: the comm's; see [`cut::striped_chunk`]).
    chunk: usize,
    /// Where the payload lives: its GPU (None for host memory) and its registration.
    mem: SendCtx,
    /// NCCL's profiler handle for it, and its event (profile.rs).
    parent: Option<Parent>,
    event: Option<Event>,
    /// Held from its post until it is done, for a mid-sized message (company.rs).
    mid: Option<MidSized>,
}

impl Msg {
    fn done(&self, ctrl_written: u64) -> bool {
        ctrl_written >= self.ctrl_end && (self.inline || self.cut.issued == self.size) && self.cut.pending == 0
    }
}

pub struct SendState {
    b: Base<Msg, SendLane>,
    inline_bytes: usize,
    inline_idle_bytes: usize,
    idle_chunk_bytes: usize,
    /// Which other mid-sized messages keep one off the control connection (company.rs).
    mid_rule: Rule,
    spread: Spread,
    /// This comm's part in the process's count of moving send comms.
    mover: Mover,
    /// First message whose chunks are not all handed to the stripes.
    issue_seq: u64,
}

pub type SendComm = Comm<SendState>;

impl SendComm {
    pub(crate) fn new(ctrl: Ctrl, stripes: Vec<Box<dyn InnerSend>>, chunk_bytes: usize, t: &Tuning) -> Box<Self> {
        let lanes = stripes
            .into_iter()
            .enumerate()
            .map(|(i, s)| SendLane::new(i, s, chunk_bytes))
            .collect();
        Comm::boxed(SendState {
            b: Base::new(ctrl, lanes, t.send_window, chunk_bytes, Kind::Send, t),
            inline_bytes: t.inline_bytes,
            inline_idle_bytes: t.inline_idle_bytes,
            idle_chunk_bytes: t.idle_chunk_bytes,
            mid_rule: t.mid_rule,
            spread: t.spread,
            mover: Mover::default(),
            issue_seq: 0,
        })
    }

    /// Registers `len` bytes at `ptr` with every stripe (NCCL's regMr on this comm). For memory
    /// of `gpu`, the staging its chunks need is made now, not on the data path.
    pub fn reg_mr(&self, ptr: usize, len: usize, kind: MemKind, gpu: Option<&Arc<Gpu>>) -> Result<Arc<Registration>> {
        let b = &mut self.lock().b;
        if let Some(g) = gpu {
            for lane in b.striper.lanes_mut() {
                lane.prepare(g)?;
            }
        }
        b.registry.add(&mut b.striper, ptr, len, kind)
    }

    /// Posts a send. Ok(None) when all request slots are in use (NCCL retries).
    ///
    /// `gpu` says the payload is in that GPU's memory (it then goes through pinned staging); `reg`
    /// is its registration (regMr) on this comm, if NCCL passed one.
    ///
    /// `parent`: NCCL's profiler handle for the message (v10+), parent of its events.
    ///
    /// # Safety
    /// `data .. data + size` must stay readable and unchanged until `test` reports the message done.
    pub unsafe fn isend(
        &self,
        data: *const u8,
        size: usize,
        gpu: Option<Arc<Gpu>>,
        reg: Option<Arc<Registration>>,
        parent: Option<Parent>,
    ) -> Result<Option<*mut c_void>> {
        if size > MAX_MESSAGE_BYTES {
            return Err(Error::invalid_usage(format!(
                "isend of {size} bytes: tcpxr accepts messages up to {MAX_MESSAGE_BYTES} bytes"
            )));
        }
        if data.is_null() && size > 0 {
            return Err(Error::invalid_argument(format!(
                "isend of {size} bytes from a NULL buffer"
            )));
        }
        let mut guard = self.lock();
        let st = &mut *guard;
        st.b.failed()?;
        let reg = st.b.registry.check(reg, data as usize, size)?;
        let seq = st.b.posted.next_seq();
        // The CPU cannot read GPU memory: a GPU payload always goes through staging and stripes.
        let host = gpu.is_none() || size == 0;
        let outstanding = st.b.posted.outstanding();
        if outstanding == st.b.posted.capacity() {
            // No request slot: NCCL retries, and nothing is decided or counted until then.
            st.progress()?;
            return Ok(None);
        }
        let Route {
            inline,
            mid,
            chunk,
            spread_seen,
        } = st.route(size, host, outstanding);
        let msg = Msg {
            ptr: data as usize,
            size,
            inline,
            ctrl_end: 0,
            cut: Cut::default(),
            chunk,
            mem: SendCtx { gpu, reg },
            parent,
            event: None,
            mid,
        };
        let Some(request) = st.b.posted.post(msg) else {
            st.progress()?;
            return Ok(None);
        };
        if let Some(stats) = &mut st.b.stats {
            stats.posted(outstanding);
            if let Some((moving, cut)) = spread_seen {
                stats.spread(moving, cut);
            }
        }
        let header = MsgHeader {
            size: size as u64,
            seq: seq as u32,
            inline,
            // Below the comm's chunk size, which is at most 16 MiB: fits the header's field.
            chunk: chunk as u32,
        };
        let ctrl = &mut st.b.ctrl;
        let mut ctrl_end = ctrl.queue(&header.encode());
        if inline && size >= BORROW_FROM {
            // SAFETY: the caller keeps data..data+size readable and unchanged until test reports
            // this message done, which is not before the control connection has written it.
            ctrl_end = unsafe { ctrl.queue_borrowed(data, size) };
        } else if inline && size > 0 {
            // SAFETY: the caller guarantees data..data+size is readable (data non-NULL: checked).
            ctrl_end = ctrl.queue(unsafe { std::slice::from_raw_parts(data, size) });
        }
        let event = parent.and_then(|p| profile::start(p, ctrl.fd(), Op::Send, size));
        let msg = st.b.posted.get_mut(seq);
        msg.ctrl_end = ctrl_end;
        msg.event = event;
        st.progress()?;
        Ok(Some(request))
    }

    /// Ok(Some(size)) once the message of request `slot` is done; the request is then free again.
    pub fn test(&self, slot: u32) -> Result<Option<usize>> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let progress = st.progress();
        let b = &mut st.b;
        let seq = b.posted.seq_of(slot)?;
        let written = b.ctrl.written();
        let msg = b.posted.get_mut(seq);
        if msg.done(written) {
            msg.mid = None;
            let (size, inline) = (msg.size, msg.inline);
            profile::stop(msg.event.take());
            if let Some(stats) = &mut b.stats {
                stats.count(size, inline);
            }
            b.posted.complete(seq);
            return Ok(Some(size));
        }
        progress?;
        Ok(None)
    }
}

/// Whether a message travels inline on the control connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inline {
    Always,
    /// If the posting thread's other mid-sized messages allow it (company.rs).
    WhileIdle,
    No,
}

/// How a host-memory message of `size` bytes travels, with `outstanding` other messages of the
/// comm not yet reported done. Up to `always` bytes inline. Up to `idle` bytes inline too while
/// the comm is not streaming (at most one other message out): one socket write from NCCL's thread
/// then beats handing the chunk to a stripe's thread and waking it, which is what a small
/// collective waits on. A comm with more messages out is moving
/// bulk data, which the stripes carry in parallel.
pub(crate) fn goes_inline(size: usize, outstanding: usize, always: usize, idle: usize) -> Inline {
    if size <= always {
        Inline::Always
    } else if size <= idle && outstanding <= 1 {
        Inline::WhileIdle
    } else {
        Inline::No
    }
}

/// How a message travels, decided at its post.
struct Route {
    /// On the control connection, behind its header.
    inline: bool,
    /// Held from post to done for a mid-sized message (company.rs).
    mid: Option<MidSized>,
    /// The size of the chunks a striped message is cut into (0: the comm's).
    chunk: usize,
    /// What the spread rule saw, for the stats: the comms it counted moving, and whether it cut.
    spread_seen: Option<(usize, bool)>,
}

impl SendState {
    /// How a message of `size` bytes (in host memory: `host`) travels, with `outstanding` other
    /// messages of the comm not yet reported done.
    fn route(&mut self, size: usize, host: bool, outstanding: usize) -> Route {
        let (inline, mid) = match goes_inline(size, outstanding, self.inline_bytes, self.inline_idle_bytes) {
            Inline::Always if host => (true, None),
            Inline::WhileIdle if host => {
                let mid = MidSized::post(self.mid_rule);
                (mid.inline(), Some(mid))
            }
            _ => (false, None),
        };
        if inline || !host {
            return Route {
                inline,
                mid,
                chunk: 0,
                spread_seen: None,
            };
        }
        let striper = &self.b.striper;
        // Every striped host message counts toward the process's moving comms, while the rule is
        // on (its piece is the process's: off, no comm needs the count); the count itself is
        // taken only for a message the rule decides.
        if self.spread.piece > 0 {
            self.mover.note();
        }
        let mut moving = 0;
        let (chunk, spread) = cut::striped_chunk(
            size,
            striper.stripes(),
            outstanding,
            striper.chunk_bytes(),
            self.idle_chunk_bytes,
            (self.spread, || {
                moving = cut::moving();
                moving
            }),
        );
        Route {
            inline,
            mid,
            chunk,
            spread_seen: spread.map(|cut| (moving, cut)),
        }
    }
}

impl Side for SendState {
    const TAG: CommTag = CommTag::Send;
    const NAME: &'static str = "send";
    const PEER: &'static str = "receiver";
    type Msg = Msg;
    type Lane = SendLane;

    fn base(&self) -> &Base<Msg, SendLane> {
        &self.b
    }

    fn base_mut(&mut self) -> &mut Base<Msg, SendLane> {
        &mut self.b
    }

    fn stall_report(&self) -> String {
        let b = &self.b;
        let (queued, _) = b.ctrl.queued_and_read();
        let ages: Vec<String> = b.posted.waiting().iter().map(|d| stall::human(*d)).collect();
        format!(
            "{} sends outstanding (posted {} ago); control connection {} of {} bytes written; \
             stripes: {}",
            ages.len(),
            ages.join(", "),
            b.ctrl.written(),
            queued,
            b.striper.describe().join("; ")
        )
    }

    fn pass(&mut self) -> Result<()> {
        let b = &mut self.b;
        b.ctrl.flush()?;
        let posted = &mut b.posted;
        b.striper.poll(&mut (), |c| {
            posted.get_mut(c.seq).cut.pending -= 1;
            Ok(Then::Release)
        })?;
        while self.issue_seq < b.posted.next_seq() {
            let seq = self.issue_seq;
            let m = b.posted.get_mut(seq);
            if !m.inline
                && !b.striper.issue(
                    seq,
                    m.ptr..m.ptr + m.size,
                    m.chunk,
                    &m.mem,
                    &mut m.cut,
                    m.parent,
                    &mut (),
                )?
            {
                break;
            }
            self.issue_seq += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{goes_inline, Inline};

    #[test]
    fn small_messages_go_inline_always_and_mid_sized_ones_only_while_the_comm_is_not_streaming() {
        let (always, idle) = (16 << 10, 512 << 10);
        for outstanding in [0, 1, 2, 31] {
            assert_eq!(goes_inline(0, outstanding, always, idle), Inline::Always);
            assert_eq!(goes_inline(16 << 10, outstanding, always, idle), Inline::Always);
        }
        assert_eq!(goes_inline((16 << 10) + 1, 0, always, idle), Inline::WhileIdle);
        assert_eq!(goes_inline(512 << 10, 1, always, idle), Inline::WhileIdle);
        assert_eq!(
            goes_inline(512 << 10, 2, always, idle),
            Inline::No,
            "a third message in flight: streaming"
        );
        assert_eq!(goes_inline((512 << 10) + 1, 0, always, idle), Inline::No);
        // Idle inlining off, or capped below the always size by the receiver: the always rule stands.
        assert_eq!(goes_inline(64 << 10, 0, always, 0), Inline::No);
        assert_eq!(goes_inline(8 << 10, 0, always, 0), Inline::Always);
    }
}
