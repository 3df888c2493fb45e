//! Making connections: listen, and the non-blocking accept and connect state machines.
//!
//! Handshake (all on the control connection, tcpxr's own TCP socket):
//! 1. connector -> listener: hello {magic, version, nonce from the NCCL handle};
//! 2. listener -> connector: welcome {stripes, chunk bytes, one inner handle per stripe};
//! 3. each side drives the inner transport's connect / accept for every stripe until all are up.
//!
//! How long each side waits. The connector's control connection and its welcome are bounded by
//! NCCL_TCPXR_HANDSHAKE_TIMEOUT_MS from connect's start. Its stripes are not: a TCPX connect
//! completes only once the peer's NCCL has called accept (TCPX's connect waits for the peer's
//! accept thread), which NCCL may do long after its connects, so a clock would cut live peers.
//! What tells a dead peer instead is the control connection, which carried the welcome and
//! carries nothing more until the comm exists: while stripes are pending, a peer that closed or
//! reset it (its process died, or its accept gave up) is ncclRemoteError at once, and one whose
//! host stopped answering is when the connection's keepalive gives up (NCCL_TCPXR_PEER_TIMEOUT_MS).
//! The socket transport's stripes complete without the peer's accept (the listen backlog takes
//! them) and fail at once when refused, so this matters for TCPX. The listener's accept bounds the
//! wait for its stripes by the handshake timeout from its first look (see `stripes_since`).
//!
//! The listener chose stripes and chunk size at listen time and put them in the NCCL handle, so
//! both ends cut messages identically whatever their own configuration says. Connections to the
//! listen port that do not present the nonce are refused without delaying the real peer. Step 2
//! does not wait for NCCL's accept: answer.rs's thread sends the welcome as soon as the hello is
//! in (NCCL 2.12 calls accept only after its connects have completed).
use super::answer;
use super::ctrl::Ctrl;
use super::nics::Nics;
use super::wire::{self, ListenHandle, HANDLE_BYTES, WELCOME_HEAD_BYTES};
use super::{CommTag, RecvComm, SendComm, Tuning};
use crate::error::{Error, Result};
use crate::net::acceptor::{Acceptor, Verdict};
use crate::net::{nonce, sys};
use crate::transport::{
    InnerConnector, InnerHandle, InnerListener, InnerRecv, InnerSend, Transport, INNER_HANDLE_BYTES,
};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub(super) struct ListenState {
    transport: Arc<dyn Transport>,
    acceptor: Acceptor,
    handle: ListenHandle,
    inner: Vec<Box<dyn InnerListener>>,
    inner_handles: Vec<InnerHandle>,
    peer_timeout_ms: u64,
    ctrl: Option<Ctrl>,
    /// What went wrong answering the hello on answer.rs's thread, for accept to return.
    failed: Option<Error>,
    accepted: Vec<Option<Box<dyn InnerRecv>>>,
    /// When accept first looked for the stripes after the welcome: a peer that dies or gives up
    /// between its welcome and its stripes is an error a handshake timeout later (nothing reads
    /// the control connection until the comm exists, so its close is not seen).
    stripes_since: Option<Instant>,
    spent: bool,
}

impl ListenState {
    /// Takes the peer's control connection once its hello is in, and sends the welcome. True once
    /// nothing is left to answer (the welcome is out, or it failed, or accept is done).
    pub(super) fn answer(&mut self) -> bool {
        if self.spent || self.failed.is_some() {
            return true;
        }
        match self.try_answer() {
            Ok(done) => done,
            Err(e) => {
                self.failed = Some(e);
                true
            }
        }
    }

    fn try_answer(&mut self) -> Result<bool> {
        if self.ctrl.is_none() {
            let nonce = self.handle.nonce;
            let got = self.acceptor.poll(|hello| match wire::check_hello(hello, nonce) {
                Ok(()) => Verdict::Accept,
                Err(why) => Verdict::Reject(why),
            })?;
            let Some((stream, _)) = got else {
                return Ok(false);
            };
            let mut ctrl = Ctrl::new(stream, self.peer_timeout_ms)?;
            ctrl.queue(&wire::welcome(
                self.handle.stripes,
                self.handle.chunk_bytes,
                &self.inner_handles,
            ));
            self.ctrl = Some(ctrl);
        }
        let ctrl = self.ctrl.as_mut().unwrap();
        ctrl.flush()?;
        Ok(ctrl.idle())
    }
}

#[repr(C)]
pub struct ListenComm {
    tag: CommTag,
    /// Shared with answer.rs's thread, which answers the hello before NCCL calls accept.
    state: Arc<Mutex<ListenState>>,
}

impl Drop for ListenComm {
    fn drop(&mut self) {
        answer::forget(&self.state);
        // The answering thread may be looking at this comm right now (one pass, microseconds):
        // its listeners are closed here, on NCCL's thread, not on that one.
        while Arc::strong_count(&self.state) > 1 {
            std::thread::yield_now();
        }
    }
}

impl ListenComm {
    /// Opens the control listener and one inner listener per stripe, dealt over `nics`, and
    /// writes the NCCL handle the peer will connect with.
    pub fn listen(
        transport: Arc<dyn Transport>,
        nics: &Nics,
        stripes: usize,
        chunk_bytes: usize,
        tuning: &Tuning,
        out: &mut [u8; HANDLE_BYTES],
    ) -> Result<Box<ListenComm>> {
        let device = transport.devices().get(nics.first()).ok_or_else(|| {
            Error::invalid_argument(format!(
                "listen on transport device {}: there are {}",
                nics.first(),
                transport.devices().len()
            ))
        })?;
        let acceptor = Acceptor::bind(
            device.ctrl_addr,
            wire::HELLO_BYTES,
            tuning.handshake_timeout,
            "tcpxr listener",
        )?;
        let handle = ListenHandle {
            ctrl: acceptor.local_addr()?,
            stripes: stripes as u16,
            chunk_bytes: chunk_bytes as u32,
            // Config validation keeps it within MAX_INLINE_BYTES.
            inline_bytes: tuning.inline_accept as u32,
            nonce: nonce(),
        };
        let mut inner = Vec::with_capacity(stripes);
        let mut inner_handles = Vec::with_capacity(stripes);
        for dev in nics.layout(stripes) {
            let (h, l) = transport.listen(dev)?;
            inner_handles.push(h);
            inner.push(l);
        }
        handle.write(out);
        let state = Arc::new(Mutex::new(ListenState {
            transport,
            acceptor,
            handle,
            inner,
            inner_handles,
            peer_timeout_ms: tuning.peer_timeout_ms,
            ctrl: None,
            failed: None,
            accepted: (0..stripes).map(|_| None).collect(),
            stripes_since: None,
            spent: false,
        }));
        answer::watch(&state);
        Ok(Box::new(ListenComm {
            tag: CommTag::Listen,
            state,
        }))
    }

    /// Ok(None) until the peer has connected its control connection and every stripe.
    pub fn accept(&self, tuning: &Tuning) -> Result<Option<Box<RecvComm>>> {
        let mut guard = self.state.lock().unwrap();
        let st = &mut *guard;
        if st.spent {
            return Err(Error::internal(
                "accept called again on a listen comm that already produced its connection",
            ));
        }
        if let Some(e) = st.failed.take() {
            st.spent = true;
            return Err(e);
        }
        if !st.answer() {
            return Ok(None);
        }
        if let Some(e) = st.failed.take() {
            st.spent = true;
            return Err(e);
        }
        let ctrl = st.ctrl.as_mut().unwrap();
        for (slot, listener) in st.accepted.iter_mut().zip(st.inner.iter_mut()) {
            if slot.is_none() {
                *slot = listener.accept()?;
            }
        }
        if !ctrl.idle() || st.accepted.iter().any(Option::is_none) {
            // Measured from accept's first look, not from the welcome: NCCL may call accept long
            // after the answer thread welcomed the peer, and the stripes wait in the backlog then.
            let since = *st.stripes_since.get_or_insert_with(Instant::now);
            if since.elapsed() > tuning.handshake_timeout {
                st.spent = true;
                let missing = st.accepted.iter().filter(|s| s.is_none()).count();
                return Err(Error::remote(format!(
                    "accept: the peer's hello was answered, but {} within NCCL_TCPXR_HANDSHAKE_TIMEOUT_MS ({} ms): \
                     the peer died or gave up its connect",
                    match ctrl.idle() {
                        false => "it did not read the welcome".to_string(),
                        true => format!("{missing} of its {} stripes did not connect", st.accepted.len()),
                    },
                    tuning.handshake_timeout.as_millis()
                )));
            }
            return Ok(None);
        }
        st.spent = true;
        let stripes = st.accepted.iter_mut().map(|s| s.take().unwrap()).collect();
        log::debug!(
            "accepted a connection over {} with {} stripes of {} B chunks",
            st.transport.kind(),
            st.handle.stripes,
            st.handle.chunk_bytes
        );
        // The receiver holds to the inline limit it announced in the handle.
        let tuning = Tuning {
            inline_accept: st.handle.inline_bytes as usize,
            ..*tuning
        };
        Ok(Some(RecvComm::new(
            st.ctrl.take().unwrap(),
            stripes,
            st.handle.chunk_bytes as usize,
            &tuning,
        )))
    }
}

/// A stripe's connect failed: the peer's, when its control connection shows it gone.
fn stripes_failed(e: Error, ctrl: &Ctrl, handle: &ListenHandle) -> Error {
    match ctrl.peer_gone() {
        Some(how) if e.code != crate::abi::ncclResult_t::ncclRemoteError => Error::remote(format!(
            "{}; peer at {} gone: its control connection {how}",
            e.msg, handle.ctrl
        )),
        _ => e,
    }
}

enum Phase {
    /// TCP connect of the control connection in progress; then the hello goes out.
    Connecting(TcpStream),
    /// Hello queued; waiting for the welcome's head and inner handles.
    Welcome,
    /// Driving the inner connects.
    Stripes,
}

/// A connect in progress: NCCL calls connect() again until it yields the comm.
pub struct Connecting {
    transport: Arc<dyn Transport>,
    nics: Nics,
    handle: ListenHandle,
    phase: Phase,
    ctrl: Option<Ctrl>,
    welcome_head: [u8; WELCOME_HEAD_BYTES],
    head_got: usize,
    inner_bytes: Vec<u8>,
    inner_got: usize,
    connectors: Vec<Option<Box<dyn InnerConnector>>>,
    sends: Vec<Option<Box<dyn InnerSend>>>,
    started: Instant,
}

impl Connecting {
    pub fn start(
        transport: Arc<dyn Transport>,
        nics: Nics,
        handle_bytes: &[u8; HANDLE_BYTES],
        tuning: &Tuning,
    ) -> Result<Self> {
        if nics.members().any(|d| d >= transport.devices().len()) {
            return Err(Error::invalid_argument(format!(
                "connect on transport devices {nics}: there are {}",
                transport.devices().len()
            )));
        }
        let handle = ListenHandle::read(handle_bytes)?;
        // NCCL's traffic class marks the connection from its SYN on.
        let stream = sys::connect_start(&handle.ctrl, tuning.traffic_class)
            .map_err(|e| Error::os(&format!("connect to {}", handle.ctrl), e))?;
        Ok(Connecting {
            transport,
            nics,
            phase: Phase::Connecting(stream),
            ctrl: None,
            welcome_head: [0; WELCOME_HEAD_BYTES],
            head_got: 0,
            // At most wire::MAX_STRIPES handles (8 KiB): ListenHandle::read bounds the count.
            inner_bytes: vec![0; handle.inner_handle_bytes()],
            inner_got: 0,
            connectors: Vec::new(),
            sends: Vec::new(),
            handle,
            started: Instant::now(),
        })
    }

    /// Ok(None) until the connection is complete.
    pub fn poll(&mut self, tuning: &Tuning) -> Result<Option<Box<SendComm>>> {
        if let Phase::Connecting(stream) = &self.phase {
            match sys::connect_finished(stream) {
                Ok(true) => {}
                Ok(false) => {
                    if self.started.elapsed() > tuning.handshake_timeout {
                        return Err(Error::remote(format!(
                            "connecting to {} timed out after {} ms",
                            self.handle.ctrl,
                            tuning.handshake_timeout.as_millis()
                        )));
                    }
                    return Ok(None);
                }
                Err(e) => {
                    return Err(Error::remote(format!(
                        "cannot connect to peer at {}: {e}",
                        self.handle.ctrl
                    )))
                }
            }
            let Phase::Connecting(stream) = std::mem::replace(&mut self.phase, Phase::Welcome) else {
                unreachable!()
            };
            let mut ctrl = Ctrl::new(stream, tuning.peer_timeout_ms)?;
            ctrl.queue(&wire::hello(self.handle.nonce));
            self.ctrl = Some(ctrl);
        }
        let ctrl = self.ctrl.as_mut().unwrap();
        ctrl.flush()?;
        if let Phase::Welcome = self.phase {
            // A listener that accepts and then never completes its welcome must not hold NCCL's
            // connect loop forever.
            if self.started.elapsed() > tuning.handshake_timeout {
                return Err(Error::remote(format!(
                    "peer at {} sent {} of the {} bytes of its welcome in {} ms",
                    self.handle.ctrl,
                    self.head_got + self.inner_got,
                    WELCOME_HEAD_BYTES + self.inner_bytes.len(),
                    tuning.handshake_timeout.as_millis()
                )));
            }
            let refused = |e: Error| {
                Error::remote(format!(
                    "peer at {} did not welcome this connection ({}); it refuses a hello whose nonce does not match its listen",
                    self.handle.ctrl, e.msg
                ))
            };
            if !ctrl
                .read_into(&mut self.welcome_head, &mut self.head_got)
                .map_err(refused)?
            {
                return Ok(None);
            }
            wire::read_welcome_head(&self.welcome_head, &self.handle)?;
            if !ctrl
                .read_into(&mut self.inner_bytes, &mut self.inner_got)
                .map_err(refused)?
            {
                return Ok(None);
            }
            let handles = self.inner_bytes.chunks_exact(INNER_HANDLE_BYTES);
            for (chunk, dev) in handles.zip(self.nics.layout(self.handle.stripes as usize)) {
                let h: InnerHandle = chunk.try_into().unwrap();
                self.connectors
                    .push(Some(self.transport.connect(dev, &h, tuning.traffic_class)?));
                self.sends.push(None);
            }
            self.phase = Phase::Stripes;
        }
        for (conn, send) in self.connectors.iter_mut().zip(self.sends.iter_mut()) {
            if let Some(c) = conn {
                match c.poll() {
                    Ok(Some(s)) => {
                        *send = Some(s);
                        *conn = None;
                    }
                    Ok(None) => {}
                    // TCPX reports a peer that closed as a system error: the control connection
                    // says whose it is.
                    Err(e) => return Err(stripes_failed(e, ctrl, &self.handle)),
                }
            }
        }
        if self.sends.iter().any(Option::is_none) || !ctrl.idle() {
            if let Some(how) = ctrl.peer_gone() {
                let pending = self.sends.iter().filter(|s| s.is_none()).count();
                return Err(Error::remote(format!(
                    "peer gone after its welcome: the peer at {}: its control connection {how} while {pending} of the {} \
                     stripes were not connected yet (it died, or its accept gave up)",
                    self.handle.ctrl,
                    self.sends.len()
                )));
            }
            return Ok(None);
        }
        let stripes = self.sends.iter_mut().map(|s| s.take().unwrap()).collect();
        let ctrl = self.ctrl.take().unwrap();
        // Never inline more than the receiver said it takes.
        let tuning = Tuning {
            inline_bytes: tuning.inline_bytes.min(self.handle.inline_bytes as usize),
            inline_idle_bytes: tuning.inline_idle_bytes.min(self.handle.inline_bytes as usize),
            ..*tuning
        };
        Ok(Some(SendComm::new(
            ctrl,
            stripes,
            self.handle.chunk_bytes as usize,
            &tuning,
        )))
    }
}
