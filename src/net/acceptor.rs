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
//! an INFO line. Those WARNs are limited per process, so that a port scanner cannot flood NCCL's
//! log: the first [`WARN_FREE`] in [`SUMMARY_EVERY`] get a line each, the rest are counted and
//! summarised in one line (at the next stranger or poll after the interval, or when a listener
//! closes).
use crate::error::{Error, Result};
use std::io::{ErrorKind, Read};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// WARN lines about strangers (refused, cut-short or crowded-out connections) each process logs
/// one by one per [`SUMMARY_EVERY`]; the rest are counted and summarised.
pub const WARN_FREE: u32 = 10;
pub const SUMMARY_EVERY: Duration = Duration::from_secs(60);

/// The process's count of strangers' WARN lines (all listeners together: a scanner tries them all).
static STRANGERS: Mutex<Limiter> = Mutex::new(Limiter::new());

/// What a stranger did to earn its WARN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stranger {
    /// Sent a complete hello that was refused.
    Refused,
    /// Sent part of a hello, then closed or went silent past the deadline.
    CutShort,
    /// Was dropped unheard to make room for a newer connection.
    CrowdedOut,
}

/// Logs `line` about a stranger at WARN, within the process's limit.
fn warn_stranger(kind: Stranger, line: String) {
    let lines = STRANGERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .note(Instant::now(), kind, line);
    for l in lines {
        log::warn!("{l}");
    }
}

/// Logs the summary of strangers not logged one by one, if there are any (`due`: only once the
/// interval has passed).
fn summarise_strangers(due: bool) {
    let line = STRANGERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .summary(Instant::now(), due);
    if let Some(l) = line {
        log::warn!("{l}");
    }
}

/// One line per stranger up to [`WARN_FREE`] per interval, then a count.
struct Limiter {
    /// When the current interval began; None before the first stranger.
    since: Option<Instant>,
    /// Lines logged in this interval.
    logged: u32,
    /// Strangers counted but not logged, by kind ([`Stranger`] order), and the latest of them.
    counted: [u64; 3],
    latest: String,
}

impl Limiter {
    const fn new() -> Limiter {
        Limiter {
            since: None,
            logged: 0,
            counted: [0; 3],
            latest: String::new(),
        }
    }

    /// The lines to log for one more stranger at `now`: the summary of the interval that ended,
    /// if it left any uncounted, and this stranger's own line while the interval has room.
    fn note(&mut self, now: Instant, kind: Stranger, line: String) -> Vec<String> {
        let mut out: Vec<String> = self.summary(now, true).into_iter().collect();
        let since = *self.since.get_or_insert(now);
        if self.logged < WARN_FREE {
            self.logged += 1;
            if self.logged == WARN_FREE {
                let left = SUMMARY_EVERY.saturating_sub(now - since).as_secs();
                out.push(format!(
                    "{line} (the {WARN_FREE}th such line; further ones in the next {left} s are counted and summarised)"
                ));
            } else {
                out.push(line);
            }
        } else {
            self.counted[kind as usize] += 1;
            self.latest = line;
        }
        out
    }

    /// The summary of strangers counted but not logged, if any; with `due`, only once the
    /// interval has passed. Either way an interval that has passed starts afresh.
    fn summary(&mut self, now: Instant, due: bool) -> Option<String> {
        let since = self.since?;
        let ended = now - since >= SUMMARY_EVERY;
        if due && !ended {
            return None;
        }
        let [refused, cut, crowded] = self.counted;
        let total = refused + cut + crowded;
        let line = (total > 0).then(|| {
            format!(
                "{total} more connections to tcpxr's listen ports refused or dropped in the last {} s, not \
                 logged one by one: {refused} refused, {cut} with a cut-short hello, {crowded} crowded out; \
                 the latest: {}",
                (now - since).as_secs(),
                self.latest
            )
        });
        self.counted = [0; 3];
        self.latest.clear();
        if ended {
            *self = Limiter::new();
        }
        line
    }
}

/// What the owner says of a complete hello.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Accept,
    Reject(String),
}

/// What became of a pending connection ([`Acceptor::settle`]).
enum Settled {
    Waiting,
    Dropped,
    Accepted((TcpStream, Vec<u8>)),
}

/// At most this many connections wait for their hello; beyond it the oldest silent one is dropped.
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
    /// Whether this listener has said it is out of a resource (it says so once).
    starved_said: bool,
}

/// What an error of accept(2) means for the listener.
#[derive(Debug, PartialEq, Eq)]
enum AcceptError {
    /// The process or host is out of descriptors or memory: the connection stays in the backlog
    /// and a later poll takes it, once some are free again.
    OutOfResources,
    /// Something went wrong with that one connection, which is gone (accept(2) asks callers to
    /// retry these, as EAGAIN); take the next.
    ThisConnection,
    /// The listening socket itself failed.
    Fatal,
}

impl AcceptError {
    fn of(e: &std::io::Error) -> AcceptError {
        match e.kind() {
            ErrorKind::Interrupted | ErrorKind::ConnectionAborted => return AcceptError::ThisConnection,
            _ => {}
        }
        match e.raw_os_error().unwrap_or(0) {
            libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM => AcceptError::OutOfResources,
            libc::ENETDOWN
            | libc::EPROTO
            | libc::ENOPROTOOPT
            | libc::EHOSTDOWN
            | libc::ENONET
            | libc::EHOSTUNREACH
            | libc::EOPNOTSUPP
            | libc::ENETUNREACH
            | libc::ECONNABORTED
            | libc::EPERM => AcceptError::ThisConnection,
            _ => AcceptError::Fatal,
        }
    }
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
            starved_said: false,
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
        summarise_strangers(true);
        loop {
            match self.listener.accept() {
                Ok((stream, peer)) => {
                    stream
                        .set_nonblocking(true)
                        .map_err(|e| Error::os("set_nonblocking", e))?;
                    if self.pending.len() >= MAX_PENDING {
                        self.crowd_out();
                    }
                    let hello = Vec::with_capacity(self.hello_len);
                    self.pending.push(Pending {
                        stream,
                        peer,
                        hello,
                        since: Instant::now(),
                    });
                    // A connection that waited in the backlog often has its hello in already: read
                    // it now, so that silent connections accepted after it cannot crowd it out.
                    if let Settled::Accepted(found) = self.settle(self.pending.len() - 1, &mut check) {
                        return Ok(Some(found));
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => match AcceptError::of(&e) {
                    AcceptError::ThisConnection => continue,
                    AcceptError::OutOfResources => {
                        if !std::mem::replace(&mut self.starved_said, true) {
                            log::warn!(
                                "{}: cannot take a connection now ({e}); it waits in the backlog and is \
                                 taken once descriptors or memory are free (raise the open-files limit, \
                                 ulimit -n, if this recurs)",
                                self.what
                            );
                        }
                        break;
                    }
                    AcceptError::Fatal => return Err(Error::os(&format!("{}: accept", self.what), e)),
                },
            }
        }
        let mut i = 0;
        while i < self.pending.len() {
            match self.settle(i, &mut check) {
                Settled::Accepted(found) => return Ok(Some(found)),
                Settled::Waiting => i += 1,
                Settled::Dropped => {}
            }
        }
        Ok(None)
    }

    /// Makes room for one more connection: drops the oldest that has sent nothing (a connection
    /// part-way through its hello is more likely a peer than a probe), else the oldest.
    fn crowd_out(&mut self) {
        let i = self.pending.iter().position(|p| p.hello.is_empty()).unwrap_or(0);
        let old = self.pending.remove(i);
        warn_stranger(
            Stranger::CrowdedOut,
            format!(
                "{}: too many connections without a hello; dropped {}",
                self.what, old.peer
            ),
        );
    }

    /// Reads what has come of pending connection `i`'s hello and acts on it: kept while it is
    /// incomplete and young, dropped once closed, late or refused, handed out once `check`
    /// accepts it.
    fn settle(&mut self, i: usize, check: &mut impl FnMut(&[u8]) -> Verdict) -> Settled {
        match self.read_hello(i) {
            HelloState::Incomplete => {
                if self.pending[i].since.elapsed() <= self.timeout {
                    return Settled::Waiting;
                }
                let p = self.pending.remove(i);
                let line = format!(
                    "{}: dropped {} after {} ms without a complete hello ({} of {} bytes)",
                    self.what,
                    p.peer,
                    self.timeout.as_millis(),
                    p.hello.len(),
                    self.hello_len
                );
                if p.hello.is_empty() {
                    log::info!("{line}");
                } else {
                    warn_stranger(Stranger::CutShort, line);
                }
            }
            HelloState::Closed(why) => {
                let p = self.pending.remove(i);
                if p.hello.is_empty() {
                    log::info!("{}: dropped {} before it sent a hello: {why}", self.what, p.peer);
                } else {
                    warn_stranger(
                        Stranger::CutShort,
                        format!(
                            "{}: dropped {} with a truncated hello ({} of {} bytes): {why}",
                            self.what,
                            p.peer,
                            p.hello.len(),
                            self.hello_len
                        ),
                    );
                }
            }
            HelloState::Complete => {
                let p = self.pending.remove(i);
                match check(&p.hello) {
                    Verdict::Accept => return Settled::Accepted((p.stream, p.hello)),
                    Verdict::Reject(why) => {
                        warn_stranger(
                            Stranger::Refused,
                            format!("{}: refused connection from {}: {why}", self.what, p.peer),
                        );
                    }
                }
            }
        }
        Settled::Dropped
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

impl Drop for Acceptor {
    /// A listener that closes says how many strangers went unlogged, rather than leaving the count
    /// to a later one that may never come.
    fn drop(&mut self) {
        summarise_strangers(false);
    }
}

enum HelloState {
    Incomplete,
    Complete,
    Closed(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_errors_of_resources_wait_those_of_one_connection_skip_it_and_the_rest_fail() {
        let of = |errno| AcceptError::of(&std::io::Error::from_raw_os_error(errno));
        for e in [libc::EMFILE, libc::ENFILE, libc::ENOBUFS, libc::ENOMEM] {
            assert_eq!(of(e), AcceptError::OutOfResources, "errno {e}");
        }
        for e in [
            libc::ECONNABORTED,
            libc::EINTR,
            libc::EPROTO,
            libc::ENETDOWN,
            libc::EHOSTUNREACH,
        ] {
            assert_eq!(of(e), AcceptError::ThisConnection, "errno {e}");
        }
        for e in [libc::EBADF, libc::EINVAL, libc::ENOTSOCK] {
            assert_eq!(of(e), AcceptError::Fatal, "errno {e}");
        }
    }

    #[test]
    fn strangers_get_a_line_each_up_to_the_limit_then_a_count_and_a_summary() {
        let t0 = Instant::now();
        let mut l = Limiter::new();
        let mut lines = vec![];
        for i in 0..40 {
            let kind = [Stranger::Refused, Stranger::CutShort][i as usize % 2];
            lines.extend(l.note(t0 + Duration::from_millis(i), kind, format!("stranger {i}")));
        }
        assert_eq!(lines.len(), WARN_FREE as usize, "{lines:?}");
        assert!(
            lines
                .last()
                .unwrap()
                .contains("further ones in the next 59 s are counted"),
            "{lines:?}"
        );
        // Not yet due; a closing listener asks anyway.
        assert_eq!(l.summary(t0 + Duration::from_secs(1), true), None);
        let s = l.summary(t0 + Duration::from_secs(1), false).unwrap();
        assert!(s.starts_with("30 more connections"), "{s}");
        assert!(
            s.contains("15 refused, 15 with a cut-short hello, 0 crowded out"),
            "{s}"
        );
        assert!(s.ends_with("the latest: stranger 39"), "{s}");
        assert_eq!(l.summary(t0 + Duration::from_secs(2), false), None, "counted once");
        // Still the same interval: no free lines left, counted again.
        assert!(l
            .note(t0 + Duration::from_secs(3), Stranger::CrowdedOut, "stranger 40".into())
            .is_empty());
        // The next stranger after the interval brings the summary, then gets a line of its own.
        let later = l.note(
            t0 + SUMMARY_EVERY + Duration::from_secs(1),
            Stranger::Refused,
            "stranger 41".into(),
        );
        assert_eq!(later.len(), 2, "{later:?}");
        assert!(
            later[0].starts_with("1 more connections")
                && later[0].contains("0 refused, 0 with a cut-short hello, 1 crowded out")
        );
        assert!(later[0].ends_with("stranger 40"), "{later:?}");
        assert_eq!(later[1], "stranger 41");
    }

    #[test]
    fn a_quiet_interval_ends_without_a_summary() {
        let t0 = Instant::now();
        let mut l = Limiter::new();
        assert_eq!(l.note(t0, Stranger::Refused, "one".into()), vec!["one".to_string()]);
        assert_eq!(l.summary(t0 + SUMMARY_EVERY, true), None);
        assert_eq!(l.since, None, "the next stranger starts a new interval");
    }
}
