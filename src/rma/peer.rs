//! One peer of a group: a single full-duplex TCP connection carrying both ranks' operations in
//! order. The sending half is a queue of headers and borrowed payloads moved by gathered
//! non-blocking `sendmsg`; the receiving half parses headers and lands payloads with
//! non-blocking `recv` straight into the target window. Ordering: everything one rank sends
//! another travels on this one stream and is applied in stream order, so a signal is applied
//! after every put sent before it (strong and weak alike).
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
    pub payload: usize,
    pub len: usize,
    /// Bytes of header and payload already sent.
    pub sent: usize,
    /// The request completed when the last byte is handed to the kernel.
    pub request: Option<u64>,
    /// The local window the payload is read from, so deregMrSym can wait for it.
    pub window: Option<u32>,
}

impl Out {
    pub fn new(h: &Header, payload: usize, request: Option<u64>, window: Option<u32>) -> Out {
        Out {
            head: h.encode(),
            payload,
            len: h.payload() as usize,
            sent: 0,
            request,
            window,
        }
    }

    fn total(&self) -> usize {
        HEADER_BYTES + self.len
    }
}

/// A get this rank asked the peer for: where its answer lands.
pub struct PendingGet {
    pub dst: usize,
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
        dst: usize,
        done: usize,
        get: Option<PendingGet>,
    },
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
    pub fn send(&mut self, mut done: impl FnMut(u64)) -> Result<()> {
        while !self.out.is_empty() {
            let mut iov: Vec<libc::iovec> = Vec::with_capacity(2 * GATHER);
            for o in self.out.iter().take(GATHER) {
                let head_left = HEADER_BYTES.saturating_sub(o.sent);
                if head_left > 0 {
                    iov.push(libc::iovec {
                        iov_base: o.head[o.sent..].as_ptr() as *mut _,
                        iov_len: head_left,
                    });
                }
                let from = o.sent.saturating_sub(HEADER_BYTES);
                if o.len > from {
                    iov.push(libc::iovec {
                        iov_base: (o.payload + from) as *mut _,
                        iov_len: o.len - from,
                    });
                }
            }
            // SAFETY: headers live in `self.out`, untouched during the call; payloads are
            // registered window memory checked against the window when queued, which NCCL keeps
            // valid until the operation's request completes (deregMrSym waits for queued answers).
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
                    if let Some(r) = o.request {
                        done(r);
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads what has arrived, handing each complete header (and each landed payload) to
    /// `arrived`, which answers a Put with the address its payload lands at (other answers are
    /// ignored). Stops when the socket is empty or after [`READ_PER_PASS`] bytes.
    pub fn receive(&mut self, mut arrived: impl FnMut(&mut Peer, Arrived) -> Result<usize>) -> Result<()> {
        let mut budget = READ_PER_PASS;
        loop {
            if budget == 0 {
                return Ok(());
            }
            match &mut self.inbound {
                Inbound::Header { buf, got } => {
                    let n = match read(&self.stream, &mut buf[*got..]) {
                        Ok(0) => return Ok(()),
                        Ok(n) => n,
                        Err(e) => {
                            self.eof_between_ops =
                                *got == 0 && matches!(e.kind(), ErrorKind::UnexpectedEof | ErrorKind::ConnectionReset);
                            return Err(self.io_error(Direction::Recv, e));
                        }
                    };
                    *got += n;
                    budget = budget.saturating_sub(n);
                    if *got < HEADER_BYTES {
                        continue;
                    }
                    let head = Header::decode(buf)?;
                    self.inbound = Inbound::Header {
                        buf: [0; HEADER_BYTES],
                        got: 0,
                    };
                    let (dst, get) = match head.op {
                        Op::Put => (arrived(self, Arrived::Put(head))?, None),
                        Op::Reg => {
                            arrived(
                                self,
                                Arrived::Reg {
                                    win: head.win,
                                    size: head.len,
                                },
                            )?;
                            continue;
                        }
                        Op::GetReq => {
                            arrived(self, Arrived::GetReq(head))?;
                            continue;
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
                        arrived(self, Arrived::Landed { head, get })?;
                        continue;
                    }
                    self.inbound = Inbound::Payload {
                        head,
                        dst,
                        done: 0,
                        get,
                    };
                }
                Inbound::Payload { head, dst, done, .. } => {
                    let want = (head.len as usize - *done).min(budget);
                    let iov = [libc::iovec {
                        iov_base: (*dst + *done) as *mut _,
                        iov_len: want,
                    }];
                    // SAFETY: `dst` was checked to hold `head.len` bytes of a registered window
                    // (group.rs, when the header arrived), which NCCL keeps mapped until
                    // deregMrSym; nothing else writes those bytes while a put lands.
                    let n = match unsafe { sys::recv_iov(self.stream.as_raw_fd(), &iov) } {
                        Ok(0) => return Err(self.io_error(Direction::Recv, ErrorKind::UnexpectedEof.into())),
                        Ok(n) => n,
                        Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                        Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                        Err(e) => return Err(self.io_error(Direction::Recv, e)),
                    };
                    *done += n;
                    budget = budget.saturating_sub(n);
                    if *done == head.len as usize {
                        let Inbound::Payload { head, get, .. } = std::mem::replace(
                            &mut self.inbound,
                            Inbound::Header {
                                buf: [0; HEADER_BYTES],
                                got: 0,
                            },
                        ) else {
                            unreachable!()
                        };
                        arrived(self, Arrived::Landed { head, get })?;
                    }
                }
            }
        }
    }

    /// Whether an operation reading window `win` is still queued, or a get landing in it pending.
    pub fn uses(&self, win: u32) -> bool {
        self.out.iter().any(|o| o.window == Some(win))
            || self.gets.iter().any(|g| g.window == win)
            || matches!(&self.inbound, Inbound::Payload { get: Some(g), .. } if g.window == win)
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
