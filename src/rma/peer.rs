//! One connection (lane) to a peer of a group: full duplex, carrying both ranks' operations of
//! the contexts mapped to it in order. The sending half is a queue of headers and borrowed
//! payloads moved by gathered non-blocking `sendmsg`; the receiving half parses headers and lands
//! payloads with non-blocking `recv` straight into the target window. Ordering: everything one
//! rank sends another on one context travels on this one stream and is applied in stream order,
//! so a signal is applied after every put of its context sent before it (strong and weak alike).
//!
//! GPU memory is never read or written by a system call: payloads from GPU windows are sent from
//! staging buffers once their device-to-host copy has completed, and payloads for GPU windows are
//! received into staging buffers and copied in (stage.rs).
use super::stage::{Outbound, Stager, OUT_AHEAD, STAGE_BYTES};
use super::window::Dest;
use super::wire::{Header, Op, HEADER_BYTES};
use crate::error::{Error, Result};
use crate::net::conn::{self, Direction};
use crate::net::sys;
use std::collections::VecDeque;
use std::io::ErrorKind;
use std::net::TcpStream;
use std::os::fd::AsRawFd;

/// Most bytes one progress pass reads from one peer, so a flood from one cannot starve the rest.
const READ_PER_PASS: usize = 8 << 20;
/// Most queued operations one `sendmsg` gathers.
const GATHER: usize = 32;

/// An operation queued for the peer: its header, then `len` payload bytes at `payload` (memory
/// of a registered window, valid until the operation's request completes or, for a get's answer,
/// until the window is deregistered, which waits for it).
pub struct Out {
    pub head: [u8; HEADER_BYTES],
    /// Header bytes this piece sends: HEADER_BYTES, or 0 for a later piece of a GPU payload.
    head_len: usize,
    pub payload: usize,
    pub len: usize,
    /// Bytes of header and payload already sent.
    pub sent: usize,
    /// The request completed when the last byte is handed to the kernel.
    pub request: Option<u64>,
    /// The local window the payload is read from, so deregMrSym can wait for it.
    pub window: Option<u32>,
    /// A piece of a GPU payload: the device address it is copied from, and its staging once
    /// started (`payload` is then the staging buffer).
    stage: Option<(u64, Option<Outbound>)>,
}

impl Out {
    pub fn new(h: &Header, payload: usize, request: Option<u64>, window: Option<u32>) -> Out {
        Out {
            head: h.encode(),
            head_len: HEADER_BYTES,
            payload,
            len: h.payload() as usize,
            sent: 0,
            request,
            window,
            stage: None,
        }
    }

    /// An operation whose payload is in GPU memory at `src`: pieces of at most one staging
    /// buffer each, the header on the first, the request on the last.
    pub fn from_gpu(h: &Header, src: u64, request: Option<u64>, window: Option<u32>) -> Vec<Out> {
        let total = h.payload() as usize;
        if total == 0 {
            return vec![Out::new(h, 0, request, window)];
        }
        let mut pieces = Vec::with_capacity(total.div_ceil(STAGE_BYTES));
        let mut at = 0;
        while at < total {
            let len = (total - at).min(STAGE_BYTES);
            let last = at + len == total;
            pieces.push(Out {
                head: h.encode(),
                head_len: if at == 0 { HEADER_BYTES } else { 0 },
                payload: 0,
                len,
                sent: 0,
                request: if last { request } else { None },
                window,
                stage: Some((src + at as u64, None)),
            });
            at += len;
        }
        pieces
    }

    /// Queues `h` with its payload at `src` (host or GPU memory).
    pub fn queue(out: &mut VecDeque<Out>, h: &Header, src: Dest, request: Option<u64>, window: Option<u32>) {
        match src {
            Dest::Host(a) => out.push_back(Out::new(h, a, request, window)),
            Dest::Gpu(d) => out.extend(Out::from_gpu(h, d, request, window)),
        }
    }

    fn total(&self) -> usize {
        self.head_len + self.len
    }
}

/// A get this rank asked the peer for: where its answer lands.
pub struct PendingGet {
    pub dst: Dest,
    pub len: u64,
    pub request: u64,
    pub window: u32,
}

/// What the receiving half is in the middle of.
enum Inbound {
    Header {
        buf: [u8; HEADER_BYTES],
        got: usize,
    },
    Payload {
        head: Header,
        dst: Dest,
        done: usize,
        get: Option<PendingGet>,
        /// For a GPU destination: the staging buffer being filled, and its bytes so far.
        buf: Option<usize>,
        filled: usize,
    },
}

/// What a step of [`Peer::receive`] leaves to do.
enum Next {
    /// Read on (the budget allowing).
    More,
    /// The pass ends: the socket is empty, or (GPU) every staging buffer is in a copy.
    Stop,
    /// The pass ends with the socket empty mid-payload: copy on what was staged first.
    LandAndStop,
}

/// What the group must do about a header that arrived (the peer cannot see the windows).
pub enum Arrived {
    /// A put: the group answers where its payload lands, checked against the window.
    Put(Header),
    Reg {
        win: u32,
        size: u64,
    },
    GetReq(Header),
    /// A put or get answer whose payload has landed completely.
    Landed {
        head: Header,
        get: Option<PendingGet>,
    },
}

pub struct Peer {
    pub rank: usize,
    stream: TcpStream,
    pub out: VecDeque<Out>,
    pub gets: VecDeque<PendingGet>,
    inbound: Inbound,
    /// The peer closed (or reset) the connection between two operations.
    eof_between_ops: bool,
    /// The group saw it closed so, with nothing owed either way: it is no longer moved.
    pub closed: bool,
}

impl Peer {
    pub fn new(rank: usize, stream: TcpStream) -> Peer {
        Peer {
            rank,
            stream,
            out: VecDeque::new(),
            gets: VecDeque::new(),
            inbound: Inbound::Header {
                buf: [0; HEADER_BYTES],
                got: 0,
            },
            eof_between_ops: false,
            closed: false,
        }
    }

    /// The peer closed its end between operations with nothing owed either way: it finished
    /// first (or died idle), which is an error only if this rank still wants something of it.
    pub fn closed_cleanly(&self) -> bool {
        self.eof_between_ops && self.out.is_empty() && self.gets.is_empty()
    }

    fn io_error(&self, dir: Direction, e: std::io::Error) -> Error {
        conn::error(&format!("RMA connection to rank {}", self.rank), dir, e)
    }

    /// Sends what the socket takes now; calls `done` with the request of each operation whose
    /// last byte went.
    /// Pieces of GPU payloads wait for their staging copy to complete, and hold back what is
    /// queued after them. The copies of up to [`OUT_AHEAD`] pieces are started at once (as the
    /// pool's rule allows: stage.rs's `Buffers`), so they run back to back on the stream while
    /// earlier pieces are in the socket; until 2026-11-27 the next piece's copy was started only
    /// once every earlier one had completed, one copy per call, so an 8 MiB payload took at least
    /// 8 calls with a copy's latency between each.
    pub fn send(&mut self, stager: &mut Option<Stager>, mut done: impl FnMut(u64)) -> Result<()> {
        while !self.out.is_empty() {
            let mut iov: Vec<libc::iovec> = Vec::with_capacity(2 * GATHER);
            let mut ahead = 0;
            // Whether every piece so far can go now: what follows a piece whose copy is still
            // running waits (stream order), but its own copy is started meanwhile.
            let mut sendable = true;
            for o in self.out.iter_mut().take(GATHER) {
                if let Some((src, staged)) = &mut o.stage {
                    let st = stager
                        .as_mut()
                        .ok_or_else(|| Error::internal("a GPU payload queued on a group without GPU staging"))?;
                    ahead += 1;
                    if staged.is_none() {
                        if ahead > OUT_AHEAD {
                            break;
                        }
                        match st.stage_out(*src, o.len)? {
                            Some(s) => {
                                o.payload = st.host(s.buf) as usize;
                                *staged = Some(s);
                            }
                            None => break,
                        }
                    }
                    if sendable && !st.ready(staged.as_mut().expect("staged"))? {
                        sendable = false;
                    }
                }
                if !sendable {
                    continue;
                }
                let head_left = o.head_len.saturating_sub(o.sent);
                if head_left > 0 {
                    iov.push(libc::iovec {
                        iov_base: o.head[o.sent..o.head_len].as_ptr() as *mut _,
                        iov_len: head_left,
                    });
                }
                let from = o.sent.saturating_sub(o.head_len);
                if o.len > from {
                    iov.push(libc::iovec {
                        iov_base: (o.payload + from) as *mut _,
                        iov_len: o.len - from,
                    });
                }
            }
            if iov.is_empty() {
                return Ok(());
            }
            // SAFETY: headers live in `self.out`, untouched during the call; payloads are
            // registered host window memory checked against the window when queued, which NCCL
            // keeps valid until the operation's request completes (deregMrSym waits for queued
            // answers), or staging buffers whose device-to-host copy has completed, held by
            // their operation until it is sent.
            let n = match unsafe { sys::send_iov(self.stream.as_raw_fd(), &iov) } {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io_error(Direction::Send, e)),
            };
            let mut left = n;
            while left > 0 {
                let o = self.out.front_mut().expect("sent bytes belong to queued operations");
                let take = left.min(o.total() - o.sent);
                o.sent += take;
                left -= take;
                if o.sent == o.total() {
                    let o = self.out.pop_front().unwrap();
                    if let (Some(st), Some((_, Some(s)))) = (stager.as_mut(), o.stage) {
                        st.release(s);
                    }
                    if let Some(r) = o.request {
                        done(r);
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads what has arrived, handing each complete header (and each landed payload) to
    /// `arrived`, which answers a Put with where its payload lands (other answers are ignored).
    /// Stops when the socket is empty, after [`READ_PER_PASS`] bytes, or when a payload for GPU
    /// memory finds no free staging buffer; what a pass received for GPU memory is copied on
    /// before it returns (a buffer is copied as soon as it is full, the rest at the end of the
    /// pass).
    pub fn receive(
        &mut self,
        stager: &mut Option<Stager>,
        mut arrived: impl FnMut(&mut Peer, &mut Option<Stager>, Arrived) -> Result<Dest>,
    ) -> Result<()> {
        let mut budget = READ_PER_PASS;
        loop {
            if budget == 0 {
                return self.land_filled(stager);
            }
            let next = match self.inbound {
                Inbound::Header { .. } => self.receive_header(stager, &mut budget, &mut arrived)?,
                Inbound::Payload { .. } => self.receive_payload(stager, &mut budget, &mut arrived)?,
            };
            match next {
                Next::More => {}
                Next::Stop => return Ok(()),
                Next::LandAndStop => return self.land_filled(stager),
            }
        }
    }

    /// One read toward the next header; a complete one goes to `arrived`, and a Put or a get's
    /// answer with a payload starts receiving it.
    fn receive_header(
        &mut self,
        stager: &mut Option<Stager>,
        budget: &mut usize,
        arrived: &mut impl FnMut(&mut Peer, &mut Option<Stager>, Arrived) -> Result<Dest>,
    ) -> Result<Next> {
        let Inbound::Header { buf, got } = &mut self.inbound else {
            return Err(Error::internal("receive_header called outside the header state"));
        };
        let n = match read(&self.stream, &mut buf[*got..]) {
            Ok(0) => return Ok(Next::Stop),
            Ok(n) => n,
            Err(e) => {
                // An end of stream only: a reset says the peer's kernel threw away bytes this rank
                // sent and counted done (a put whose test said done), which no one else will report.
                self.eof_between_ops = *got == 0 && e.kind() == ErrorKind::UnexpectedEof;
                return Err(self.io_error(Direction::Recv, e));
            }
        };
        *got += n;
        *budget = budget.saturating_sub(n);
        if *got < HEADER_BYTES {
            return Ok(Next::More);
        }
        let head = Header::decode(buf)?;
        self.inbound = Inbound::Header {
            buf: [0; HEADER_BYTES],
            got: 0,
        };
        let (dst, get) = match head.op {
            Op::Put => (arrived(self, stager, Arrived::Put(head))?, None),
            Op::Reg => {
                let reg = Arrived::Reg {
                    win: head.win,
                    size: head.len,
                };
                arrived(self, stager, reg)?;
                return Ok(Next::More);
            }
            Op::GetReq => {
                arrived(self, stager, Arrived::GetReq(head))?;
                return Ok(Next::More);
            }
            Op::GetResp => {
                let get = self.gets.pop_front().ok_or_else(|| {
                    Error::remote(format!("rank {} answered a get this rank never asked for", self.rank))
                })?;
                if get.len != head.len {
                    return Err(Error::remote(format!(
                        "rank {} answered a get of {} bytes with {}",
                        self.rank, get.len, head.len
                    )));
                }
                (get.dst, Some(get))
            }
        };
        if head.len == 0 {
            arrived(self, stager, Arrived::Landed { head, get })?;
            return Ok(Next::More);
        }
        self.inbound = Inbound::Payload {
            head,
            dst,
            done: 0,
            get,
            buf: None,
            filled: 0,
        };
        Ok(Next::More)
    }

    /// One read of the payload being received, into its window (host) or a staging buffer (GPU,
    /// copied on when full or complete); a complete payload goes to `arrived` as landed.
    fn receive_payload(
        &mut self,
        stager: &mut Option<Stager>,
        budget: &mut usize,
        arrived: &mut impl FnMut(&mut Peer, &mut Option<Stager>, Arrived) -> Result<Dest>,
    ) -> Result<Next> {
        let Inbound::Payload {
            head,
            dst,
            done,
            buf,
            filled,
            ..
        } = &mut self.inbound
        else {
            return Err(Error::internal("receive_payload called outside the payload state"));
        };
        let total = head.len as usize;
        let (at, want) = match *dst {
            Dest::Host(a) => (a + *done, (total - *done).min(*budget)),
            Dest::Gpu(_) => {
                let st = stager
                    .as_mut()
                    .ok_or_else(|| Error::internal("a GPU landing on a group without GPU staging"))?;
                let b = match *buf {
                    Some(b) => b,
                    None => match st.take_buf() {
                        Some(b) => *buf.insert(b),
                        // Every buffer is in a copy: read on once one is back.
                        None => return Ok(Next::Stop),
                    },
                };
                let room = (total - *done).min(STAGE_BYTES - *filled).min(*budget);
                (st.host(b) as usize + *filled, room)
            }
        };
        let iov = [libc::iovec {
            iov_base: at as *mut _,
            iov_len: want,
        }];
        // SAFETY: `at` lies in `want` bytes of a registered host window checked to hold
        // `head.len` bytes (group.rs, when the header arrived), which NCCL keeps mapped until
        // deregMrSym, or of a staging buffer this landing holds; nothing else writes those bytes
        // meanwhile.
        let n = match unsafe { sys::recv_iov(self.stream.as_raw_fd(), &iov) } {
            Ok(0) => return Err(self.io_error(Direction::Recv, ErrorKind::UnexpectedEof.into())),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(Next::LandAndStop),
            Err(e) if e.kind() == ErrorKind::Interrupted => return Ok(Next::More),
            Err(e) => return Err(self.io_error(Direction::Recv, e)),
        };
        *done += n;
        *budget = budget.saturating_sub(n);
        if let Dest::Gpu(dev) = *dst {
            *filled += n;
            if *filled == STAGE_BYTES || *done == total {
                let st = stager.as_mut().expect("checked above");
                let b = buf.take().expect("a buffer is being filled");
                st.land(dev + (*done - *filled) as u64, b, *filled)?;
                *filled = 0;
            }
        }
        if *done == total {
            let Inbound::Payload { head, get, .. } = std::mem::replace(
                &mut self.inbound,
                Inbound::Header {
                    buf: [0; HEADER_BYTES],
                    got: 0,
                },
            ) else {
                unreachable!()
            };
            arrived(self, stager, Arrived::Landed { head, get })?;
        }
        Ok(Next::More)
    }

    /// Copies what this pass received into a staging buffer on to the GPU (or gives the buffer
    /// back when it received nothing), so that no landing holds a buffer while it waits for the
    /// network: landing buffers then come back within a copy's time whatever the peers do, which
    /// the pool's rule (stage.rs's `Buffers`) needs to be deadlock-free.
    fn land_filled(&mut self, stager: &mut Option<Stager>) -> Result<()> {
        if let Inbound::Payload {
            dst: Dest::Gpu(dev),
            done,
            buf,
            filled,
            ..
        } = &mut self.inbound
        {
            if let Some(b) = buf.take() {
                let st = stager
                    .as_mut()
                    .ok_or_else(|| Error::internal("a GPU landing on a group without GPU staging"))?;
                if *filled > 0 {
                    st.land(*dev + (*done - *filled) as u64, b, *filled)?;
                } else {
                    st.untake(b);
                }
                *filled = 0;
            }
        }
        Ok(())
    }

    /// Whether an operation reading window `win` is still queued, a get landing in it pending, or
    /// the peer's put into it part-way through its payload (the rest would land in memory its
    /// owner may have freed once deregMrSym returned).
    pub fn uses(&self, win: u32) -> bool {
        self.out.iter().any(|o| o.window == Some(win))
            || self.gets.iter().any(|g| g.window == win)
            || match &self.inbound {
                Inbound::Payload { get: Some(g), .. } => g.window == win,
                Inbound::Payload { head, get: None, .. } => matches!(head.op, Op::Put) && head.win == win,
                Inbound::Header { .. } => false,
            }
    }
}

/// One non-blocking read: the bytes read, 0 when none are there; the peer closing is an error.
fn read(stream: &TcpStream, buf: &mut [u8]) -> std::io::Result<usize> {
    use std::io::Read;
    loop {
        return match (&*stream).read(buf) {
            Ok(0) => Err(ErrorKind::UnexpectedEof.into()),
            Ok(n) => Ok(n),
            Err(e) if e.kind() == ErrorKind::WouldBlock => Ok(0),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => Err(e),
        };
    }
}
