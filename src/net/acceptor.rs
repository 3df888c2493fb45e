//! A listening socket that never lets a stranger block a real peer.
//!
//! Every accepted connection must send a fixed-size hello within a deadline. Connections are read
//! without blocking, side by side, so garbage is rejected at once, a half-sent hello waits only for
//! itself, and a connection that never speaks is dropped when its deadline passes.
//!
//! What a stranger can make it hold is bounded: at most [`MAX_PENDING`] connections, and of each
//! no more than the hello's fixed length (bytes after it are never read here). A refused hello, or
//! one cut short (closed or timed out after some of its bytes), is dropped with a WARN naming the
//! peer; a connection that closes or times out without sending anything (a port probe) only gets
//! an INFO line.
use crate::error::{Error, Result};
use std::io::{ErrorKind, Read};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// What the owner says of a complete hello.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accept,
    Reject(String),
}

/// At most this many connections wait for their hello; beyond it the oldest is dropped.
pub const MAX_PENDING: usize = 64;

struct Pending {
    stream: TcpStream,
    peer: SocketAddr,
    hello: Vec<u8>,
    since: Instant,
}

pub struct Acceptor {
    listener: TcpListener,
    pending: Vec<Pending>,
    hello_len: usize,
    timeout: Duration,
    what: &'static str,
}

impl Acceptor {
    /// Binds an ephemeral port on `ip`. `what` names the listener in log lines.
    pub fn bind(ip: IpAddr, hello_len: usize, timeout: Duration, what: &'static str) -> Result<Self> {
        let listener = TcpListener::bind(SocketAddr::new(ip, 0))
            .map_err(|e| Error::os(&format!("cannot listen on {ip} for {what}"), e))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| Error::os("set_nonblocking", e))?;
        Ok(Acceptor {
            listener,
            pending: Vec::new(),
            hello_len,
            timeout,
            what,
        })
    }

    /// Connections still waiting for their hello (never more than [`MAX_PENDING`]).
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    pub fn local_addr(&self) -> Result<SocketAddr> {
        self.listener.local_addr().map_err(|e| Error::os("getsockname", e))
    }

    /// Accepts what is waiting and reads hellos; returns the first connection whose hello `check`
    /// accepts, still non-blocking, with its hello. Rejected, closed and silent connections are
    /// dropped here.
    pub fn poll(&mut self, mut check: impl FnMut(&[u8]) -> Verdict) -> Result<Option<(TcpStream, Vec<u8>)>> {
        loop {
            match self.listener.accept() {
                Ok((stream, peer)) => {
                    stream
                        .set_nonblocking(true)
                        .map_err(|e| Error::os("set_nonblocking", e))?;
                    if self.pending.len() >= MAX_PENDING {
                        let old = self.pending.remove(0);
                        log::warn!(
                            "{}: too many connections without a hello; dropped {}",
                            self.what,
                            old.peer
                        );
                    }
                    let hello = Vec::with_capacity(self.hello_len);
                    self.pending.push(Pending {
                        stream,
                        peer,
                        hello,
                        since: Instant::now(),
                    });
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted || e.kind() == ErrorKind::ConnectionAborted => continue,
                Err(e) => return Err(Error::os(&format!("{}: accept", self.what), e)),
            }
        }
        let mut i = 0;
        while i < self.pending.len() {
            match self.read_hello(i) {
                HelloState::Incomplete => {
                    if self.pending[i].since.elapsed() > self.timeout {
                        let p = self.pending.remove(i);
                        let level = if p.hello.is_empty() {
                            log::Level::Info
                        } else {
                            log::Level::Warn
                        };
                        log::log!(
                            level,
                            "{}: dropped {} after {} ms without a complete hello ({} of {} bytes)",
                            self.what,
                            p.peer,
                            self.timeout.as_millis(),
                            p.hello.len(),
                            self.hello_len
                        );
                        continue;
                    }
                    i += 1;
                }
                HelloState::Closed(why) => {
                    let p = self.pending.remove(i);
                    if p.hello.is_empty() {
                        log::info!("{}: dropped {} before it sent a hello: {why}", self.what, p.peer);
                    } else {
                        log::warn!(
                            "{}: dropped {} with a truncated hello ({} of {} bytes): {why}",
                            self.what,
                            p.peer,
                            p.hello.len(),
                            self.hello_len
                        );
                    }
                }
                HelloState::Complete => {
                    let p = self.pending.remove(i);
                    match check(&p.hello) {
                        Verdict::Accept => return Ok(Some((p.stream, p.hello))),
                        Verdict::Reject(why) => {
                            log::warn!("{}: refused connection from {}: {why}", self.what, p.peer);
                        }
                    }
                }
            }
        }
        Ok(None)
    }

    fn read_hello(&mut self, i: usize) -> HelloState {
        let want = self.hello_len;
        let p = &mut self.pending[i];
        while p.hello.len() < want {
            let mut buf = [0u8; 256];
            let n = (want - p.hello.len()).min(buf.len());
            match (&p.stream).read(&mut buf[..n]) {
                Ok(0) => return HelloState::Closed("connection closed".into()),
                Ok(got) => p.hello.extend_from_slice(&buf[..got]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return HelloState::Incomplete,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return HelloState::Closed(e.to_string()),
            }
        }
        HelloState::Complete
    }
}

enum HelloState {
    Incomplete,
    Complete,
    Closed(String),
}
