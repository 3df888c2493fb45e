//! What the two sides of a connection share, written once: the object NCCL holds (a tag, then the
//! side's state behind one mutex, so NCCL's two threads and several comms never race), the state
//! every side keeps besides its own (`Base`), and the progress pass's bookkeeping: the first error
//! is kept and returned from then on, the stall watch hears what moved, and where the stripes'
//! transport does not report a peer that is gone (TCPX), the peer watch looks at the control
//! connection (liveness.rs).
use super::ctrl::Ctrl;
use super::liveness::PeerWatch;
use super::memory::{Registration, Registry};
use super::posted::Posted;
use super::profile::Op;
use super::requests::Kind;
use super::stall::{self, StallWatch};
use super::striper::{Lane, Striper};
use super::{CommTag, Stats, Tuning};
use crate::error::{Error, Result};
use std::ffi::c_void;
use std::sync::{Arc, Mutex, MutexGuard};

/// What every side has: the control connection, the stripes, the posted messages, the first
/// error, the counters, the registered memory, the stall watch.
pub struct Base<M, L> {
    pub(crate) ctrl: Ctrl,
    pub(crate) striper: Striper<L>,
    pub(crate) posted: Posted<M>,
    pub(crate) error: Option<Error>,
    pub(crate) stats: Option<Stats>,
    pub(crate) registry: Registry,
    /// NCCL_TCPXR_STALL_SECONDS: says so when the comm stops moving.
    pub(crate) watch: StallWatch,
    /// The peer's address, for the stall report.
    pub(crate) peer: String,
    /// Looks at the control connection for a peer that is gone while chunks are in flight, when
    /// the stripes' transport does not report it (TCPX; liveness.rs). None: the stripes fail by
    /// themselves (the socket transport sees the close or reset on its own sockets).
    pub(crate) peer_watch: Option<PeerWatch>,
}

impl<M, L: Lane> Base<M, L> {
    /// Over `lanes`, one per stripe, each keeping up to `window` chunks of `chunk_bytes` in
    /// flight. The peer watch is kept where a stripe's transport does not report a peer that is
    /// gone.
    pub fn new(ctrl: Ctrl, lanes: Vec<L>, window: usize, chunk_bytes: usize, kind: Kind, t: &Tuning) -> Self {
        let watch_peer = lanes.iter().any(|l| !l.stripe().reports_peer_loss());
        let op = match kind {
            Kind::Send => Op::Send,
            Kind::Recv => Op::Recv,
        };
        Base {
            peer_watch: watch_peer.then(PeerWatch::default),
            striper: Striper::new(lanes, window, chunk_bytes, op),
            posted: Posted::new(t.max_requests, kind),
            error: None,
            stats: t.stats.then(Stats::new),
            registry: Registry::new(0),
            watch: StallWatch::new(t.stall_seconds),
            peer: ctrl.peer(),
            ctrl,
        }
    }

    /// The comm's first error, if it has one: every call after it returns it.
    pub fn failed(&self) -> Result<()> {
        self.error.as_ref().map_or(Ok(()), |e| Err(e.clone()))
    }

    /// A count that grows whenever anything moves: control bytes written or read, chunks retired,
    /// messages reported.
    fn movement(&self) -> u64 {
        let (_, read) = self.ctrl.queued_and_read();
        self.ctrl.written() + read + self.striper.retired() + self.posted.reported()
    }
}

/// One side of a connection, as the shared scaffolding drives it.
pub trait Side: Send + Sized {
    const TAG: CommTag;
    /// "send" or "receive", for logs.
    const NAME: &'static str;
    /// "receiver" or "sender": the peer, for logs.
    const PEER: &'static str;
    type Msg;
    type Lane: Lane;
    fn base(&self) -> &Base<Self::Msg, Self::Lane>;
    fn base_mut(&mut self) -> &mut Base<Self::Msg, Self::Lane>;
    /// One progress pass: move what can move now, without blocking.
    fn pass(&mut self) -> Result<()>;
    /// What a stalled comm waits for.
    fn stall_report(&self) -> String;
    /// Called once when the comm closes, before its memory is deregistered.
    fn closing(&mut self) {}

    /// A progress pass unless the comm has failed; keeps its first error; tells the stall watch
    /// what moved, and logs what it has to say.
    fn progress(&mut self) -> Result<()> {
        self.base().failed()?;
        let mut r = self.pass();
        let b = self.base_mut();
        // What moved in this pass, once, for both watches.
        let mark = b.movement();
        if r.is_ok() {
            r = watch_peer(b, mark, Self::PEER);
        }
        if let Err(e) = &mut r {
            peer_gone_is_remote(e, &b.ctrl);
            b.error = Some(e.clone());
        }
        let event = b.watch.observe(mark, b.posted.live() > 0);
        stall::log(event, Self::NAME, &self.base().peer, || self.stall_report());
        r
    }
}

/// The peer watch's look (liveness.rs), where the comm has one: chunks in flight on the stripes and
/// nothing moving are what it watches; a peer gone is ncclRemoteError naming it.
fn watch_peer<M, L: Lane>(b: &mut Base<M, L>, mark: u64, peer: &str) -> Result<()> {
    let Some(watch) = b.peer_watch.as_mut() else {
        return Ok(());
    };
    let (ctrl, in_flight) = (&b.ctrl, b.striper.in_flight());
    match watch.observe(mark, in_flight > 0, || ctrl.peer_gone()) {
        None => Ok(()),
        Some(gone) => Err(Error::remote(format!(
            "peer gone: the {peer} at {}: its control connection {} while {in_flight} chunks were in flight on \
             the stripes and nothing had moved for {} (the stripes' TCPX does not report a peer lost under its \
             own connections)",
            b.peer,
            gone.how,
            stall::human(gone.still)
        ))),
    }
}

/// A failure the inner transport reports in its own terms while the peer is gone is the peer's:
/// TCPX reports a connection its peer closed as a system error (2), never as ncclRemoteError, so
/// such an error becomes ncclRemoteError when the control connection shows the peer left (one
/// poll, on the error path only). An internal error stays one: it is tcpxr's or TCPX's own, and
/// may be why the peer left.
fn peer_gone_is_remote(e: &mut Error, ctrl: &Ctrl) {
    use crate::abi::ncclResult_t as R;
    if e.code != R::ncclSystemError {
        return;
    }
    if let Some(how) = ctrl.peer_gone() {
        *e = Error::remote(format!("{}; peer gone: its control connection {how}", e.msg));
    }
}

/// The object NCCL holds for one side of a connection. `tag` comes first, so the boundary can
/// check what a `void*` really is before using it.
#[repr(C)]
pub struct Comm<S: Side> {
    tag: CommTag,
    state: Mutex<S>,
}

impl<S: Side> Comm<S> {
    /// Boxes `state` (the address NCCL will hold) and makes that address the owner its requests
    /// and registrations are checked against.
    pub(crate) fn boxed(state: S) -> Box<Self> {
        let comm = Box::new(Comm {
            tag: S::TAG,
            state: Mutex::new(state),
        });
        let owner = &*comm as *const Self as *const c_void;
        let mut st = comm.lock();
        st.base_mut().posted.set_owner(owner);
        st.base_mut().registry = Registry::new(owner as usize);
        drop(st);
        comm
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, S> {
        self.state.lock().unwrap()
    }

    /// Deregisters what `reg_mr` returned on this comm.
    pub fn dereg_mr(&self, reg: &Arc<Registration>) -> Result<()> {
        let mut st = self.lock();
        let b = st.base_mut();
        b.registry.remove(&mut b.striper, reg)
    }
}

impl<S: Side> Drop for Comm<S> {
    fn drop(&mut self) {
        let st = self.state.get_mut().unwrap_or_else(|e| e.into_inner());
        st.closing();
        let b = st.base_mut();
        if let Some(stats) = &b.stats {
            stats.report(S::NAME, &b.striper.counts());
        }
        b.registry.clear(&mut b.striper);
    }
}
