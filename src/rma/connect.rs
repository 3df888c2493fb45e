//! The group's mesh: a few TCP connections (lanes) per pair of ranks, as many as the lower rank's
//! listener takes (NCCL_TCPXR_STRIPES, carried in its handle, as the net's listening side decides
//! its stripes). Each rank connects every lane to every lower rank (each with a hello naming that
//! rank's nonce, its own rank and the lane) and accepts every higher one's lanes on its listener,
//! whose acceptor drops strangers without letting them hold up a peer. connect is collective and
//! NCCL expects the group back from one call, so this blocks until every lane of every pair is up,
//! the handshake timeout passes, or NCCL aborts (v17).
//!
//! Why lanes: ordering holds within an RMA context and not across contexts (NCCL's RMA contract,
//! as InfiniBand gives each context its own queue pair), so context c travels on lane c mod lanes
//! of its pair (group.rs): NCCL's GIN proxy, which spreads its work over contexts, gets that many
//! connections' worth of sockets and staging pipelines per peer.
use super::wire::{self, Handle, HELLO_BYTES};
use crate::error::{Error, Result};
use crate::net::acceptor::{Acceptor, Verdict};
use crate::net::sys;
use std::io::{ErrorKind, Write};
use std::net::{IpAddr, TcpStream};
use std::time::{Duration, Instant};

/// A listen comm: the acceptor, the nonce its handle carries and the lanes it takes per rank.
pub struct Listener {
    pub acceptor: std::sync::Mutex<Acceptor>,
    pub nonce: u64,
    pub lanes: u16,
}

impl Listener {
    pub fn bind(ip: IpAddr, timeout: Duration, lanes: u16, handle: &mut [u8; 128]) -> Result<Listener> {
        let acceptor = Acceptor::bind(ip, HELLO_BYTES, timeout, "RMA listener")?;
        let nonce = crate::net::nonce();
        Handle {
            nonce,
            lanes,
            addr: acceptor.local_addr()?,
        }
        .write(handle);
        Ok(Listener {
            acceptor: std::sync::Mutex::new(acceptor),
            nonce,
            lanes,
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

/// Connects `rank` to every other rank of `handles`: the lanes by rank (none at `rank`),
/// non-blocking, with the peer timeout set. Gives up at the handshake timeout, or as soon as
/// `abort` is set.
pub fn mesh(
    listener: &Listener,
    handles: &[Handle],
    rank: usize,
    opts: Options,
    abort: Abort,
) -> Result<Vec<Vec<TcpStream>>> {
    let nranks = handles.len();
    let deadline = Instant::now() + opts.timeout;
    let wait = |what: &dyn Fn() -> String| wait(deadline, abort, what);
    let mut links: Vec<Vec<Option<TcpStream>>> = (0..nranks)
        .map(|p| match p {
            p if p < rank => (0..handles[p].lanes).map(|_| None).collect(),
            p if p > rank => (0..listener.lanes).map(|_| None).collect(),
            _ => Vec::new(),
        })
        .collect();
    // Lower ranks: connect each lane and say hello.
    for (peer, h) in handles.iter().enumerate().take(rank) {
        for lane in 0..h.lanes {
            let stream = sys::connect_start(&h.addr, None)
                .map_err(|e| Error::os(&format!("RMA connect to rank {peer} at {}", h.addr), e))?;
            while !sys::connect_finished(&stream)
                .map_err(|e| Error::remote(format!("RMA connect to rank {peer} at {} failed: {e}", h.addr)))?
            {
                wait(&|| format!("connecting to rank {peer} at {}", h.addr))?;
            }
            let hello = wire::hello(h.nonce, rank as u32, nranks as u32, lane, h.lanes);
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
            links[peer][lane as usize] = Some(stream);
        }
    }
    // Higher ranks: accept each lane's hello.
    let mut acceptor = listener.acceptor.lock().unwrap_or_else(|e| e.into_inner());
    let missing = |links: &[Vec<Option<TcpStream>>]| -> Vec<usize> {
        (rank + 1..nranks)
            .filter(|&p| links[p].iter().any(Option::is_none))
            .collect()
    };
    while !missing(&links).is_empty() {
        let read = |b: &[u8]| wire::read_hello(b, listener.nonce, nranks as u32, listener.lanes);
        let accepted = acceptor.poll(|b| match read(b) {
            Ok((p, lane))
                if (p as usize) > rank && (p as usize) < nranks && links[p as usize][lane as usize].is_none() =>
            {
                Verdict::Accept
            }
            Ok((p, lane)) => Verdict::Reject(format!(
                "rank {p}'s connection {lane} is not one this rank {rank} still waits for"
            )),
            Err(why) => Verdict::Reject(why),
        })?;
        match accepted {
            Some((stream, hello)) => {
                let (p, lane) = read(&hello).expect("accepted");
                links[p as usize][lane as usize] = Some(stream);
            }
            None => wait(&|| {
                let ranks: Vec<String> = missing(&links).iter().map(|p| p.to_string()).collect();
                format!("waiting for ranks {} to connect", ranks.join(","))
            })?,
        }
    }
    let links: Vec<Vec<TcpStream>> = links
        .into_iter()
        .map(|lanes| lanes.into_iter().map(|l| l.expect("every lane connected")).collect())
        .collect();
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
