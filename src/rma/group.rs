//! A group (NCCL's collComm): its peers, its windows, what each peer told of its windows, and the
//! requests NCCL holds, all behind one mutex. Every call on the group, from whichever thread
//! (NCCL's GIN or RMA proxy thread for the data calls, the application's for registration),
//! takes the lock, moves what the sockets take without blocking, and lets go.
//!
//! Windows are numbered by registration order, which regMrSym being collective makes the same
//! on every rank; numbers are never reused, so an operation naming a deregistered window is
//! refused, never landed in a newer one. At regMrSym each rank tells every peer its window's
//! size, so a put or get is checked against the target's window before anything is sent (a WARN
//! and ncclInvalidArgument on the caller's side), and once more by the target when it arrives.
use super::handles::{self, Kind};
use super::peer::{Arrived, Out, Peer, PendingGet};
use super::stage::Stager;
use super::stats::Stats;
use super::window::{add_host_signal, Dest, Placement, Window};
use super::wire::{Header, Op, Signal};
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::net::TcpStream;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A registration still waiting for some peers logs a line this often.
const WAIT_REPORT: Duration = Duration::from_secs(10);

pub struct Group {
    serial: u64,
    pub rank: usize,
    pub nranks: usize,
    /// How long deregMrSym waits for queued operations on the window to leave.
    drain: Duration,
    state: Mutex<State>,
}

/// A request NCCL holds: whether it is done, and with NCCL_TCPXR_STATS when it was posted and
/// marked done.
#[derive(Clone, Copy)]
struct Pending {
    done: bool,
    posted: Option<Instant>,
    done_at: Option<Instant>,
}

impl Pending {
    fn new(done: bool, stats: bool) -> Pending {
        let posted = stats.then(Instant::now);
        Pending {
            done,
            posted,
            done_at: if done { posted } else { None },
        }
    }
}

/// Marks request `r` done (a request NCCL already tested done is gone: nothing to mark).
fn mark_done(requests: &mut HashMap<u64, Pending>, r: u64) {
    if let Some(p) = requests.get_mut(&r) {
        p.done = true;
        if p.posted.is_some() {
            p.done_at = Some(Instant::now());
        }
    }
}

struct State {
    /// By rank, its connections (lanes): context c travels on lane c mod their number, so that
    /// order holds within a context (connect.rs says why); none at this rank.
    peers: Vec<Vec<Peer>>,
    windows: HashMap<u32, Window>,
    /// By rank: the sizes of its windows, by registration number.
    remote: Vec<HashMap<u32, u64>>,
    next_window: u32,
    requests: HashMap<u64, Pending>,
    /// The first error: every later call on the group returns it.
    error: Option<Error>,
    /// Staging and the group's own stream for GPU windows, made at the first one's registration.
    stager: Option<Stager>,
    /// Counters, with NCCL_TCPXR_STATS=1 (stats.rs).
    stats: Option<Stats>,
}

/// Where a put or get reads or writes on one side: a window's memory handle and an offset.
#[derive(Clone, Copy)]
pub struct At {
    pub mhandle: *mut c_void,
    pub offset: u64,
}

/// The signal part of iputSignal.
#[derive(Clone, Copy)]
pub struct SignalArgs {
    pub at: At,
    pub add: u64,
    pub strong: bool,
}

const WINDOW_BITS: u32 = 24;

impl Group {
    pub fn new(rank: usize, links: Vec<Vec<TcpStream>>, drain: Duration, stats: bool) -> Group {
        let nranks = links.len();
        let peers = links
            .into_iter()
            .enumerate()
            .map(|(p, lanes)| lanes.into_iter().map(|s| Peer::new(p, s)).collect())
            .collect();
        Group {
            serial: handles::serial(),
            rank,
            nranks,
            drain,
            state: Mutex::new(State {
                peers,
                windows: HashMap::new(),
                remote: vec![HashMap::new(); nranks],
                next_window: 1,
                requests: HashMap::new(),
                error: None,
                stager: None,
                stats: stats.then(Stats::default),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn window_token(&self, win: u32) -> *mut c_void {
        handles::token(Kind::Window, ((self.serial & 0xffff_ffff) << WINDOW_BITS) | win as u64)
    }

    /// The window number an mhandle of this group names.
    fn window_of(&self, mhandle: *mut c_void, what: &str) -> Result<u32> {
        let s = handles::serial_of(Kind::Window, mhandle, what)?;
        if s >> WINDOW_BITS != self.serial & 0xffff_ffff {
            return Err(Error::invalid_argument(format!(
                "{what} {mhandle:p} was registered with another collComm"
            )));
        }
        Ok((s & ((1 << WINDOW_BITS) - 1)) as u32)
    }

    /// regMrSym: registers `size` bytes at `base` and waits until every peer has registered its
    /// window of the same number (each tells the others its size); a peer that closes its
    /// connection first is ncclRemoteError.
    pub fn register(&self, base: usize, size: usize, mem_type: c_int, flags: u64) -> Result<*mut c_void> {
        let window = Window::new(base, size, mem_type, flags)?;
        let win = {
            let mut st = self.lock();
            st.check()?;
            if let Placement::Gpu { ordinal } = window.placement {
                match &st.stager {
                    None => st.stager = Some(Stager::new(ordinal)?),
                    Some(s) if s.gpu.ordinal != ordinal => {
                        return Err(Error::invalid_usage(format!(
                            "regMrSym: this collComm has windows on GPU {}; one on GPU {ordinal} too is not served",
                            s.gpu.ordinal
                        )))
                    }
                    Some(_) => {}
                }
            }
            let win = st.next_window;
            if win >= 1 << WINDOW_BITS {
                return Err(Error::internal(
                    "regMrSym: this collComm has used up its window numbers",
                ));
            }
            st.next_window += 1;
            if let (Placement::Gpu { .. }, Some(stager)) = (window.placement, st.stager.as_mut()) {
                // Signals into a GPU window are written without a kernel where tcpxr alone writes
                // its words (stage.rs); else a one-thread kernel adds them. Said once per window
                // NCCL marks as a signal window (FORCE_SO), as that is where it matters.
                let never_reset = flags & crate::abi::NCCL_NET_MR_FLAG_SIGNAL_NEVER_RESET != 0;
                let written = never_reset && stager.track_signals(win, base as u64, size);
                if !written && flags & crate::abi::NCCL_NET_MR_FLAG_FORCE_SO != 0 {
                    log::info!(
                        "RMA window {win}: any signal into these {size} bytes of GPU memory is added by a \
                         one-thread kernel on the group's stream ({}), so a kernel that holds every multiprocessor \
                         while it waits for one delays it until a block ends; never-reset signal windows (NCCL \
                         2.30.5+ device code) are written without one",
                        if !never_reset {
                            "registered without NCCL_NET_MR_FLAG_SIGNAL_NEVER_RESET: NCCL may reset them"
                        } else {
                            "a window over a staging buffer, a GPU without 64-bit stream writes, or a failed read of its values (its WARN)"
                        }
                    );
                }
            }
            st.windows.insert(win, window);
            st.remote[self.rank].insert(win, size as u64);
            let reg = Header {
                op: Op::Reg,
                context: 0,
                win,
                offset: 0,
                len: size as u64,
                signal: None,
            };
            // On each peer's first lane: a registration orders nothing but itself.
            for lanes in st.peers.iter_mut() {
                if let Some(p) = lanes.first_mut() {
                    p.out.push_back(Out::new(&reg, 0, None, None));
                }
            }
            win
        };
        let start = Instant::now();
        let mut reported = start;
        loop {
            let mut st = self.lock();
            st.progress_all()?;
            let missing: Vec<usize> = (0..self.nranks).filter(|&p| !st.remote[p].contains_key(&win)).collect();
            if missing.is_empty() {
                // Windows are few (NCCL's signal buffers and each symmetric window), and which
                // number a rank gave which memory is what a put names: worth a line each.
                log::info!(
                    "RMA window {win}: {size} bytes of {} memory at {base:#x} (flags {flags:#x}) registered on all {} ranks; {} windows now",
                    super::window::type_name(mem_type),
                    self.nranks,
                    st.windows.len()
                );
                return Ok(self.window_token(win));
            }
            // A peer that closed its connection will never register: waiting on would hang the
            // caller (NCCL's init) for good instead of failing.
            if let Some(&gone) = missing.iter().find(|&&p| st.closed(p)) {
                let e = Error::remote(format!(
                    "regMrSym of window {win}: rank {gone} closed its RMA connection (its process ended or it closed the group) before registering its window"
                ));
                st.error = Some(e.clone());
                return Err(e);
            }
            drop(st);
            if reported.elapsed() > WAIT_REPORT {
                reported = Instant::now();
                log::warn!(
                    "regMrSym of window {win} has waited {} s for ranks {missing:?} to register theirs",
                    start.elapsed().as_secs()
                );
            }
            std::thread::sleep(Duration::from_micros(20));
        }
    }

    /// deregMrSym: forgets the window once no queued operation reads it and no get lands in it
    /// (after the group's error: once no copy queued on the stream does), waiting at most `drain`.
    pub fn deregister(&self, mhandle: *mut c_void) -> Result<()> {
        let win = self.window_of(mhandle, "deregMrSym: mhandle")?;
        let start = Instant::now();
        loop {
            let mut st = self.lock();
            if !st.windows.contains_key(&win) {
                return Err(Error::invalid_argument(format!(
                    "deregMrSym: mhandle {mhandle:p} is deregistered already"
                )));
            }
            let State {
                error, stager, peers, ..
            } = &mut *st;
            let busy = match (error, stager.as_mut()) {
                // After the group's error nothing moves on its sockets, but copies queued on
                // the group's stream before it still land in this window or read it for a send: the
                // window goes once they have run (until 2026-11-28 it went at once, and a queued
                // landing could write memory its owner had freed on return).
                (Some(_), Some(stager)) => !stager.settled()?,
                (Some(_), None) => false,
                (None, stager) => stager.is_some_and(|s| s.busy()) || peers.iter().flatten().any(|p| p.uses(win)),
            };
            if !busy {
                st.windows.remove(&win);
                if let Some(stager) = st.stager.as_mut() {
                    stager.untrack(win);
                }
                log::info!("RMA window {win} deregistered; {} windows now", st.windows.len());
                return Ok(());
            }
            if start.elapsed() > self.drain {
                return Err(Error::invalid_usage(format!(
                    "deregMrSym: window {win} is still used by queued operations after {} ms",
                    self.drain.as_millis()
                )));
            }
            let _ = st.progress_all();
            drop(st);
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    /// iput / iputSignal: `size` bytes from this rank's `src` to `rank`'s `dst`, then the signal.
    /// Completes (for `test`) once its bytes are handed to the kernel.
    pub fn put(
        &self,
        context: u32,
        src: Option<At>,
        size: usize,
        dst: Option<At>,
        rank: usize,
        signal: Option<SignalArgs>,
    ) -> Result<*mut c_void> {
        let mut st = self.lock();
        st.check()?;
        st.called();
        self.check_rank(rank, "iput")?;
        let (src_win, src_addr, dst_win, dst_off) = match (src, dst, size) {
            (_, _, 0) => (None, Dest::Host(0), 0, 0),
            (Some(s), Some(d), _) => {
                let sw = self.window_of(s.mhandle, "iput: srcMhandle")?;
                let w = st.local(sw)?;
                let addr = w.dest(w.range(s.offset, size as u64, "source window")?);
                let dw = self.window_of(d.mhandle, "iput: dstMhandle")?;
                st.remote_fits(rank, dw, d.offset, size as u64, "iput")?;
                (Some(sw), addr, dw, d.offset)
            }
            _ => {
                return Err(Error::invalid_argument(
                    "iput: a put of bytes needs both memory handles",
                ))
            }
        };
        let signal = match signal {
            Some(s) => {
                let sw = self.window_of(s.at.mhandle, "iputSignal: signalMhandle")?;
                if s.at.offset % 8 != 0 {
                    return Err(Error::invalid_argument(format!(
                        "iputSignal: signal offset {} is not 8-byte aligned",
                        s.at.offset
                    )));
                }
                st.remote_fits(rank, sw, s.at.offset, 8, "iputSignal's signal")?;
                Some(Signal {
                    win: sw,
                    offset: s.at.offset,
                    add: s.add,
                    strong: s.strong,
                })
            }
            None => None,
        };
        let head = Header {
            op: Op::Put,
            context,
            win: dst_win,
            offset: dst_off,
            len: size as u64,
            signal,
        };
        let id = handles::serial();
        if let Some(s) = &mut st.stats {
            s.posted(size as u64, head.signal.is_some(), false);
        }
        let stats = st.stats.is_some();
        if rank == self.rank {
            let done = st.land_locally(&head, src_addr, id)?;
            st.requests.insert(id, Pending::new(done, stats));
        } else {
            st.requests.insert(id, Pending::new(false, stats));
            Out::queue(&mut st.lane(rank, context)?.out, &head, src_addr, Some(id), src_win);
            st.progress_one(rank)?;
        }
        Ok(handles::token(Kind::Request, id))
    }

    /// iget: `size` bytes of `rank`'s `remote` into this rank's `local`; completes once they
    /// have landed.
    pub fn get(&self, context: u32, remote: At, size: usize, local: At, rank: usize) -> Result<*mut c_void> {
        let mut st = self.lock();
        st.check()?;
        st.called();
        self.check_rank(rank, "iget")?;
        let rw = self.window_of(remote.mhandle, "iget: remoteMhandle")?;
        st.remote_fits(rank, rw, remote.offset, size as u64, "iget")?;
        let lw = self.window_of(local.mhandle, "iget: localMhandle")?;
        let l = st.local(lw)?;
        let dst = l.dest(l.range(local.offset, size as u64, "local window")?);
        let id = handles::serial();
        if let Some(s) = &mut st.stats {
            s.posted(size as u64, false, true);
        }
        let stats = st.stats.is_some();
        if rank == self.rank {
            let r = st.local(rw)?;
            let src = r.dest(r.range(remote.offset, size as u64, "remote window")?);
            let done = st.copy_locally(dst, src, size, id)?;
            st.requests.insert(id, Pending::new(done, stats));
        } else {
            let head = Header {
                op: Op::GetReq,
                context,
                win: rw,
                offset: remote.offset,
                len: size as u64,
                signal: None,
            };
            st.requests.insert(id, Pending::new(false, stats));
            let peer = st.lane(rank, context)?;
            peer.out.push_back(Out::new(&head, 0, None, None));
            peer.gets.push_back(PendingGet {
                dst,
                len: size as u64,
                request: id,
                window: lw,
            });
            st.progress_one(rank)?;
        }
        Ok(handles::token(Kind::Request, id))
    }

    /// test: whether the request is done (it is then forgotten). A pending request moves every
    /// connection first, not only its own peer's: this rank's answers to other ranks' gets (and
    /// its landings of their puts) must not wait for an rmaProgress call, or a caller that only
    /// tests its own requests could wait on a peer that waits on this rank.
    pub fn test(&self, request: *mut c_void) -> Result<bool> {
        let id = handles::serial_of(Kind::Request, request, "test: request")?;
        let mut st = self.lock();
        st.called();
        st.poll_stager()?;
        let Some(p) = st.requests.get(&id).copied() else {
            return Err(Error::invalid_argument(format!(
                "test: request {request:p} is no pending operation of this collComm (tested done already?)"
            )));
        };
        if !p.done {
            st.progress_all()?;
        }
        let done = st.requests.get(&id).is_some_and(|p| p.done);
        if done {
            let p = st.requests.remove(&id).expect("done");
            if let (Some(s), Some(posted), Some(at)) = (&mut st.stats, p.posted, p.done_at) {
                s.tested(posted, at);
            }
        }
        Ok(done)
    }

    /// rmaProgress: moves every connection.
    pub fn progress(&self) -> Result<()> {
        let mut st = self.lock();
        st.called();
        st.progress_all()
    }

    /// The counters' INFO line, with NCCL_TCPXR_STATS=1 (for the group's close).
    pub fn report(&self) -> Option<String> {
        let st = self.lock();
        let s = st.stats.as_ref()?;
        Some(s.report(self.rank, self.nranks, st.stager.as_ref()))
    }

    pub fn error(&self) -> Option<Error> {
        self.lock().error.clone()
    }

    fn check_rank(&self, rank: usize, what: &str) -> Result<()> {
        if rank >= self.nranks {
            return Err(Error::invalid_argument(format!(
                "{what}: rank {rank} is not in this group of {} ranks",
                self.nranks
            )));
        }
        Ok(())
    }
}

impl State {
    fn check(&self) -> Result<()> {
        self.error.clone().map_or(Ok(()), Err)
    }

    /// Counts a call from NCCL's proxy (stats.rs: the gaps between them while work waited).
    fn called(&mut self) {
        if let Some(s) = &mut self.stats {
            s.call(!self.requests.is_empty() || self.stager.as_ref().is_some_and(|s| s.busy()));
        }
    }

    fn local(&self, win: u32) -> Result<&Window> {
        self.windows
            .get(&win)
            .ok_or_else(|| Error::invalid_argument(format!("memory handle names window {win}, which is deregistered")))
    }

    /// Whether `rank` closed a connection between operations: it finished first (or ended).
    fn closed(&self, rank: usize) -> bool {
        self.peers[rank].iter().any(|l| l.closed)
    }

    /// The connection context `context`'s operations to `rank` travel on.
    fn lane(&mut self, rank: usize, context: u32) -> Result<&mut Peer> {
        if self.closed(rank) {
            return Err(Error::remote(format!(
                "rank {rank} has closed its RMA connection (its process ended or it closed the group)"
            )));
        }
        let lanes = &mut self.peers[rank];
        let n = lanes.len();
        if n == 0 {
            return Err(Error::internal(format!("no connection to rank {rank}")));
        }
        Ok(&mut lanes[context as usize % n])
    }

    /// Checks `len` bytes at `offset` against the size `rank` gave its window `win`.
    fn remote_fits(&self, rank: usize, win: u32, offset: u64, len: u64, what: &str) -> Result<()> {
        let Some(&size) = self.remote[rank].get(&win) else {
            return Err(Error::invalid_argument(format!(
                "{what}: rank {rank} has no window {win} (registrations out of step?)"
            )));
        };
        match offset.checked_add(len) {
            Some(end) if end <= size => Ok(()),
            _ => Err(Error::invalid_argument(format!(
                "{what}: {len} bytes at offset {offset} do not fit rank {rank}'s window {win} ({size} bytes)"
            ))),
        }
    }

    /// A put to this rank itself: copied, then signalled; whether it is done already (else
    /// request `id` is finished when its stream work is).
    fn land_locally(&mut self, head: &Header, src: Dest, id: u64) -> Result<bool> {
        let mut done = true;
        if head.len > 0 {
            let w = self.local(head.win)?;
            let dst = w.dest(w.range(head.offset, head.len, "destination window")?);
            done = self.copy_locally(dst, src, head.len as usize, id)?;
        }
        if let Some(s) = head.signal {
            let w = *self.local(s.win)?;
            let addr = w.signal_at(s.offset, "signal window")?;
            signal(self.stager.as_mut(), s.win, &w, addr, s.add)?;
        }
        Ok(done)
    }

    /// A rank's copy within itself: in place between host windows (done), else on the group's
    /// stream, request `id` finished once it has run (not done yet).
    ///
    /// A rank's operations on itself apply in the order posted, as those to a peer do (one
    /// connection per context). So while this group's stream work is pending (an earlier copy
    /// involving GPU memory may still write or read these bytes, or a signal after it be
    /// queued), a host-to-host copy takes its place in stream order too, on the CPU
    /// ([`Stager::copy_host`]); until 2026-11-28 it was done at once, before them. A group with
    /// no GPU window, or nothing pending, copies at once as before.
    fn copy_locally(&mut self, dst: Dest, src: Dest, len: usize, id: u64) -> Result<bool> {
        match (dst, src) {
            (Dest::Host(d), Dest::Host(s)) => {
                self.poll_stager()?;
                if let Some(st) = self.stager.as_mut().filter(|st| st.pending()) {
                    st.copy_host(d, s, len, id)?;
                    return Ok(false);
                }
                // SAFETY: both ranges lie inside registered host windows (checked when the
                // operation was posted), which NCCL keeps mapped while it runs; `copy` allows
                // overlap.
                unsafe { std::ptr::copy(s as *const u8, d as *mut u8, len) };
                Ok(true)
            }
            (d, s) => {
                let addr = |x: Dest| match x {
                    Dest::Host(a) => a as u64,
                    Dest::Gpu(a) => a,
                };
                let st = self.stager_mut()?;
                st.copy(addr(d), addr(s), len, id)?;
                Ok(false)
            }
        }
    }

    fn stager_mut(&mut self) -> Result<&mut Stager> {
        self.stager
            .as_mut()
            .ok_or_else(|| Error::internal("GPU memory on a group without GPU staging"))
    }

    /// Retires the GPU work that has completed, finishing the requests that waited for it.
    fn poll_stager(&mut self) -> Result<()> {
        let State { stager, requests, .. } = self;
        if let Some(s) = stager.as_mut() {
            s.poll(|r| mark_done(requests, r))?;
        }
        Ok(())
    }

    fn progress_all(&mut self) -> Result<()> {
        self.check()?;
        let r = self.poll_stager();
        if let Err(e) = &r {
            self.error = Some(e.clone());
        }
        r?;
        for p in 0..self.peers.len() {
            self.progress_one(p)?;
        }
        Ok(())
    }

    /// Moves one peer's connection both ways; the first error is kept for every later call (and
    /// logged by the call that returns it).
    fn progress_one(&mut self, rank: usize) -> Result<()> {
        self.check()?;
        let r = self.move_peer(rank);
        if let Err(e) = &r {
            self.error = Some(e.clone());
        }
        r
    }

    fn move_peer(&mut self, rank: usize) -> Result<()> {
        let State {
            peers,
            windows,
            remote,
            requests,
            stager,
            next_window,
            stats,
            ..
        } = self;
        let mut finished = |r: u64| mark_done(requests, r);
        for peer in peers[rank].iter_mut().filter(|l| !l.closed) {
            peer.send(stager, &mut finished)?;
            let received = peer.receive(stager, |peer, stager, arrived| {
                if let (Some(s), Arrived::Put(h)) = (stats.as_mut(), &arrived) {
                    s.arrived(h.len, h.signal.is_some());
                }
                arrive(
                    peer,
                    stager,
                    arrived,
                    (windows, *next_window),
                    &mut remote[rank],
                    &mut finished,
                )
            });
            match received {
                Err(e) if e.code == crate::abi::ncclResult_t::ncclRemoteError && peer.closed_cleanly() => {
                    peer.closed = true;
                    log::debug!("RMA: rank {rank} closed a connection");
                    continue;
                }
                r => r?,
            }
            // Answers to gets the peer asked for.
            peer.send(stager, &mut finished)?;
        }
        Ok(())
    }
}

/// What the group does with what a peer sent: `finished` marks a request done. Anything that
/// does not fit this rank's windows (`windows`, and the number the next registration takes) is
/// the peer's error.
fn arrive(
    peer: &mut Peer,
    stager: &mut Option<Stager>,
    arrived: Arrived,
    (windows, next_window): (&HashMap<u32, Window>, u32),
    sizes: &mut HashMap<u32, u64>,
    finished: &mut impl FnMut(u64),
) -> Result<Dest> {
    let nowhere = Dest::Host(0);
    let rank = peer.rank;
    let window = |win: u32| {
        windows.get(&win).ok_or_else(|| {
            let why = if win < next_window {
                "deregistered here"
            } else {
                "not yet registered here"
            };
            let mut have: Vec<u32> = windows.keys().copied().collect();
            have.sort_unstable();
            Error::remote(format!(
                "rank {rank} named window {win}, which this rank does not have ({why}; it has windows {have:?})"
            ))
        })
    };
    let theirs = |e: Error| Error::remote(format!("rank {rank} sent an operation this rank refuses: {}", e.msg));
    match arrived {
        Arrived::Put(h) => {
            if let Some(s) = h.signal {
                window(s.win)?.signal_at(s.offset, "signal window").map_err(theirs)?;
            }
            if h.len == 0 {
                return Ok(nowhere);
            }
            let w = window(h.win)?;
            Ok(w.dest(w.range(h.offset, h.len, "destination window").map_err(theirs)?))
        }
        Arrived::Reg { win, size } => {
            sizes.insert(win, size);
            Ok(nowhere)
        }
        Arrived::GetReq(h) => {
            let w = window(h.win)?;
            let src = w.dest(w.range(h.offset, h.len, "window a get reads").map_err(theirs)?);
            let answer = Header {
                op: Op::GetResp,
                signal: None,
                ..h
            };
            Out::queue(&mut peer.out, &answer, src, None, Some(h.win));
            Ok(nowhere)
        }
        Arrived::Landed { head, get } => {
            match get {
                // A get into GPU memory is done once its copies have run.
                Some(g) => match (g.dst, stager.as_mut()) {
                    (Dest::Gpu(_), Some(st)) => st.finish_after(g.request)?,
                    _ => finished(g.request),
                },
                None => {
                    if let Some(s) = head.signal {
                        let w = window(s.win)?;
                        let addr = w.signal_at(s.offset, "signal window").map_err(theirs)?;
                        signal(stager.as_mut(), s.win, w, addr, s.add)?;
                    }
                }
            }
            Ok(nowhere)
        }
    }
}

/// Adds `add` to the signal at `addr` of window `w` (number `win`) after every byte placed before
/// it: a GPU signal on the group's stream behind the copies (stage.rs says how), a host signal by an
/// atomic add, in stream order while the group's stream work is pending.
fn signal(stager: Option<&mut Stager>, win: u32, w: &Window, addr: usize, add: u64) -> Result<()> {
    match (w.placement, stager) {
        (Placement::Gpu { .. }, Some(st)) => st.signal_gpu(win, addr as u64, add),
        (Placement::Gpu { .. }, None) => Err(Error::internal("a GPU signal on a group without GPU staging")),
        (Placement::Host, Some(st)) => st.signal_host(addr, add),
        (Placement::Host, None) => {
            add_host_signal(addr, add);
            Ok(())
        }
    }
}
