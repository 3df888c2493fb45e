//! The group's mesh: one TCP connection per pair of ranks. Each rank connects to every lower rank
//! (sending a hello with that rank's nonce and its own rank) and accepts every higher one on its
//! listener, whose acceptor drops strangers without letting them hold up a peer. connect is
//! collective and NCCL expects the group back from one call, so this blocks until every pair is
//! up or the handshake timeout passes.
use super::wire::{self, Handle, HELLO_BYTES};
use crate::error::{Error, Result};
use crate::net::acceptor::{Acceptor, Verdict};
use crate::net::sys;
use std::io::{ErrorKind, Write};
use std::net::{IpAddr, TcpStream};
use std::time::{Duration, Instant};

/// A listen comm: the acceptor and the nonce its handle carries.
pub struct Listener {
    pub acceptor: std::sync::Mutex<Acceptor>,
    pub nonce: u64,
}

impl Listener {
    pub fn bind(ip: IpAddr, timeout: Duration, handle: &mut [u8; 128]) -> Result<Listener> {
        let acceptor = Acceptor::bind(ip, HELLO_BYTES, timeout, "RMA listener")?;
        let nonce = crate::net::nonce();
        Handle {
            nonce,
            addr: acceptor.local_addr()?,
        }
        .write(handle);
        Ok(Listener {
            acceptor: std::sync::Mutex::new(acceptor),
            nonce,
        })
    }
}

/// Socket settings of the mesh's connections.
#[derive(Clone, Copy)]
pub struct Options {
    pub timeout: Duration,
    pub peer_timeout_ms: u64,
    pub sndbuf: usize,
    pub rcvbuf: usize,
}

/// NCCL's abort flag (v17's connect): a `volatile uint32_t` NCCL sets, from another thread, to
/// stop a connect still waiting for its peers. None where the table has no flag or NCCL passed
/// NULL.
#[derive(Clone, Copy)]
pub struct Abort(Option<*const u32>);

impl Abort {
    pub const NONE: Abort = Abort(None);

    /// # Safety
    /// `flag` is NULL or stays readable for the whole connect call (NCCL's contract).
    pub unsafe fn from_ptr(flag: *const u32) -> Abort {
        Abort((!flag.is_null()).then_some(flag))
    }

    fn is_set(self) -> bool {
        // SAFETY: `from_ptr`'s contract; a volatile read, as NCCL writes the flag from another
        // thread.
        self.0.is_some_and(|f| unsafe { std::ptr::read_volatile(f) } != 0)
    }
}

/// Connects `rank` to every other rank of `handles`: the connections by rank (None at `rank`),
/// non-blocking, with the peer timeout set. Gives up at the handshake timeout, or as soon as
/// `abort` is set.
pub fn mesh(
    listener: &Listener,
    handles: &[Handle],
    rank: usize,
    opts: Options,
    abort: Abort,
) -> Result<Vec<Option<TcpStream>>> {
    let nranks = handles.len();
    let deadline = Instant::now() + opts.timeout;
    let wait = |what: &dyn Fn() -> String| wait(deadline, abort, what);
    let mut links: Vec<Option<TcpStream>> = (0..nranks).map(|_| None).collect();
    // Lower ranks: connect and say hello.
    for (peer, h) in handles.iter().enumerate().take(rank) {
        let stream = sys::connect_start(&h.addr, None)
            .map_err(|e| Error::os(&format!("RMA connect to rank {peer} at {}", h.addr), e))?;
        while !sys::connect_finished(&stream)
            .map_err(|e| Error::remote(format!("RMA connect to rank {peer} at {} failed: {e}", h.addr)))?
        {
            wait(&|| format!("connecting to rank {peer} at {}", h.addr))?;
        }
        let hello = wire::hello(h.nonce, rank as u32, nranks as u32);
        let mut sent = 0;
        while sent < hello.len() {
            match (&stream).write(&hello[sent..]) {
                Ok(n) => sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                    wait(&|| format!("greeting rank {peer}"))?
                }
                Err(e) => return Err(Error::remote(format!("RMA hello to rank {peer} failed: {e}"))),
            }
        }
        links[peer] = Some(stream);
    }
    // Higher ranks: accept their hellos.
    let mut acceptor = listener.acceptor.lock().unwrap_or_else(|e| e.into_inner());
    while links.iter().enumerate().any(|(p, l)| p > rank && l.is_none()) {
        let accepted = acceptor.poll(|b| match wire::read_hello(b, listener.nonce, nranks as u32) {
            Ok(p) if (p as usize) > rank && (p as usize) < nranks && links[p as usize].is_none() => Verdict::Accept,
            Ok(p) => Verdict::Reject(format!("rank {p} is not a rank this rank {rank} still waits for")),
            Err(why) => Verdict::Reject(why),
        })?;
        match accepted {
            Some((stream, hello)) => {
                let p = wire::read_hello(&hello, listener.nonce, nranks as u32).expect("accepted") as usize;
                links[p] = Some(stream);
            }
            None => wait(&|| {
                let missing: Vec<String> = (rank + 1..nranks)
                    .filter(|&p| links[p].is_none())
                    .map(|p| p.to_string())
                    .collect();
                format!("waiting for ranks {} to connect", missing.join(","))
            })?,
        }
    }
    for s in links.iter().flatten() {
        s.set_nodelay(true).map_err(|e| Error::os("TCP_NODELAY", e))?;
        sys::set_buffers(s, opts.sndbuf, opts.rcvbuf).map_err(|e| Error::os("socket buffers", e))?;
        sys::set_peer_timeout(s, opts.peer_timeout_ms).map_err(|e| Error::os("peer timeout", e))?;
    }
    Ok(links)
}

/// A short pause while the mesh forms; an error naming what it waited for past the deadline or
/// when NCCL aborts (ncclInternalError, as NCCL's own sockets return on abort).
fn wait(deadline: Instant, abort: Abort, what: &dyn Fn() -> String) -> Result<()> {
    if abort.is_set() {
        return Err(Error::internal(format!(
            "RMA connect stopped: NCCL set its abort flag while {}",
            what()
        )));
    }
    if Instant::now() > deadline {
        return Err(Error::remote(format!(
            "RMA connect timed out (NCCL_TCPXR_HANDSHAKE_TIMEOUT_MS) {}",
            what()
        )));
    }
    std::thread::sleep(Duration::from_micros(200));
    Ok(())
}
