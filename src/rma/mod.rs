//! tcpxr's RMA backend, the core of the `ncclRmaPlugin_v14` table NCCL finds in the net plugin's
//! library: one-sided puts, puts with a signal, and gets between the ranks of a group, over plain
//! TCP, which NCCL's GIN proxy (device API kernels) and its host RMA API (ncclPutSignal) drive.
//!
//! No thread of tcpxr's own: every byte moves on the thread that calls (NCCL's GIN or RMA proxy
//! thread, which calls rmaProgress in a loop; the application's thread in regMrSym). Sockets are
//! non-blocking except that connect and regMrSym, collective calls NCCL expects finished on
//! return, wait for the peers.
//!
//! One file per job:
//! * this one: init/finalize, devices, listen, connect, contexts, and the calls on a group;
//! * handles.rs: the tokens NCCL holds instead of pointers, and the registries behind them;
//! * connect.rs: the listener and the mesh of connections;
//! * group.rs: a group's windows, requests and the operations on them;
//! * peer.rs: one peer connection: queued sends, headers and payloads landing in place;
//! * window.rs: a window, where bytes land in it, and the GPU-window rule;
//! * stage.rs: GPU windows: pinned staging, copies and signals on the group's own stream;
//! * stats.rs: a group's counters (NCCL_TCPXR_STATS=1), logged when it closes;
//! * wire.rs: handle, hello and operation header.
mod connect;
mod group;
mod handles;
mod peer;
mod stage;
mod stats;
mod window;
mod wire;

pub use connect::Abort;
pub use group::{At, SignalArgs};
pub use window::{gpu_window_rule, process_rule, Facts, GpuPlacement};

use crate::abi::{ncclDebugLogger_t, NCCL_PTR_CUDA, NCCL_PTR_HOST};
use crate::error::{Error, Result};
use crate::net::ifaces;
use connect::{Listener, Options};
use group::Group;
use handles::{Kind, Registry};
use std::ffi::{c_int, c_void, CString};
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// One network interface RMA groups may use.
pub struct Device {
    pub name: CString,
    pub pci_path: Option<CString>,
    pub addr: IpAddr,
    pub speed_mbps: i32,
    pub guid: u64,
}

/// The memory types a window may be in: host and GPU memory (window.rs, stage.rs). Where the
/// GPU-window rule refuses, no device is reported at all.
pub const PTR_SUPPORT: c_int = NCCL_PTR_HOST | NCCL_PTR_CUDA;

/// A context (rmaCtx): the group it belongs to and how many ordering contexts NCCL asked for.
pub struct Context {
    group: Arc<Group>,
    contexts: u32,
}

static INITS: Registry<u64> = Registry::new(Kind::Init);
static LISTENERS: Registry<Listener> = Registry::new(Kind::Listen);
static GROUPS: Registry<Group> = Registry::new(Kind::Group);
static CONTEXTS: Registry<Context> = Registry::new(Kind::Context);
static DEVICES: OnceLock<std::result::Result<Vec<Device>, Error>> = OnceLock::new();

/// init, called once per NCCL communicator (twice when the GIN proxy maps itself onto tcpxr):
/// a token for finalize.
pub fn init(logger: ncclDebugLogger_t, comm_id: u64) -> Result<*mut c_void> {
    // Without a logger of its own, the call keeps whatever NCCL gave the net.
    match logger {
        Some(_) => crate::log::install(logger),
        None => crate::log::install_fallback(),
    }
    let config = crate::config::global()?;
    let n = devices()?.len();
    let (t, _) = INITS.add(comm_id);
    log::info!(
        target: "tcpxr::init",
        "RMA: tcpxr's RMA over TCP for communicator {comm_id:#x}: {n} device(s){}",
        if config.rma { "" } else { " (off: NCCL_TCPXR_RMA=0)" }
    );
    Ok(t)
}

pub fn finalize(ctx: *mut c_void) -> Result<()> {
    INITS.take(ctx, "finalize: ctx").map(|_| ())
}

/// The interfaces the net's socket transport would use (NCCL_TCPXR_IFNAME, else
/// NCCL_SOCKET_IFNAME, else the first that is up and not loopback); none with NCCL_TCPXR_RMA=0,
/// so that NCCL moves on to its next RMA backend, and none, with one WARN saying why, where the
/// GPU-window rule ([`gpu_window_rule`]) finds no placement that cannot wait behind NCCL's kernel:
/// NCCL registers GPU memory (its signal buffers) with every RMA backend it uses, so a backend
/// that cannot serve it would fail NCCL's setup, or hang it.
pub fn devices() -> Result<&'static [Device]> {
    let found = DEVICES.get_or_init(|| {
        let config = crate::config::global()?;
        if !config.rma {
            return Ok(Vec::new());
        }
        if let Err(why) = process_rule() {
            log::warn!(
                "RMA: tcpxr offers no RMA device, so NCCL goes on without tcpxr's RMA \
                 (NCCL_TCPXR_RMA=1 asked for it): {why}"
            );
            return Ok(Vec::new());
        }
        let all = ifaces::list().map_err(|e| Error::os("getifaddrs", e))?;
        let spec = crate::plugin::ifname_setting(config);
        let chosen = ifaces::select(&all, spec.as_ref().map(|(_, s)| s.as_str()));
        Ok(chosen
            .iter()
            .map(|i| Device {
                name: CString::new(i.name.clone()).unwrap_or_default(),
                pci_path: ifaces::pci_path(&i.name).and_then(|p| CString::new(p).ok()),
                addr: i.addr,
                speed_mbps: ifaces::speed_mbps(&i.name).unwrap_or(10_000),
                guid: ifaces::guid(i),
            })
            .collect())
    });
    found.as_deref().map_err(Clone::clone)
}

pub fn device(dev: c_int) -> Result<&'static Device> {
    let all = devices()?;
    usize::try_from(dev)
        .ok()
        .and_then(|d| all.get(d))
        .ok_or_else(|| Error::invalid_argument(format!("RMA device {dev} does not exist ({} devices)", all.len())))
}

fn options() -> Result<Options> {
    let c = crate::config::global()?;
    Ok(Options {
        timeout: Duration::from_millis(c.handshake_timeout_ms),
        peer_timeout_ms: c.peer_timeout_ms,
        sndbuf: c.sndbuf,
        rcvbuf: c.rcvbuf,
    })
}

pub fn listen(dev: c_int, handle: &mut [u8; 128]) -> Result<*mut c_void> {
    let d = device(dev)?;
    // Lanes per connecting rank: the net's stripes setting (1-16, checked at init).
    let lanes = crate::config::global()?.stripes as u16;
    let l = Listener::bind(d.addr, options()?.timeout, lanes, handle)?;
    Ok(LISTENERS.add(l).0)
}

pub fn close_listen(listen: *mut c_void) -> Result<()> {
    LISTENERS.take(listen, "closeListen: listenComm").map(|_| ())
}

/// connect: the group of `handles.len()` ranks, this one being `rank`, once every pair is
/// connected (or NCCL sets `abort`, v17).
pub fn connect(handles: &[[u8; 128]], rank: c_int, listen: *mut c_void, abort: Abort) -> Result<*mut c_void> {
    let listener = LISTENERS.get(listen, "connect: listenComm")?;
    let nranks = handles.len();
    let rank = usize::try_from(rank)
        .ok()
        .filter(|&r| r < nranks)
        .ok_or_else(|| Error::invalid_argument(format!("connect: rank {rank} is not in a group of {nranks}")))?;
    let peers: Vec<wire::Handle> = handles
        .iter()
        .enumerate()
        .map(|(r, h)| wire::Handle::read(h, r))
        .collect::<Result<_>>()?;
    let opts = options()?;
    let links = connect::mesh(&listener, &peers, rank, opts, abort)?;
    let lanes: Vec<usize> = links.iter().map(Vec::len).filter(|&n| n > 0).collect();
    let stats = crate::config::global()?.stats;
    let group = Group::new(rank, links, Duration::from_millis(opts.peer_timeout_ms), stats);
    log::info!(
        "RMA: rank {rank} of {nranks} connected to every peer, {} connection(s) each (context c on connection c mod that)",
        match (lanes.iter().min(), lanes.iter().max()) {
            (Some(a), Some(b)) if a != b => format!("{a}-{b}"),
            (Some(a), _) => a.to_string(),
            _ => "0".into(),
        }
    );
    Ok(GROUPS.add(group).0)
}

pub fn close_group(coll: *mut c_void) -> Result<()> {
    let group = GROUPS.take(coll, "closeColl: collComm")?;
    if let Some(line) = group.report() {
        log::info!("{line}");
    }
    Ok(())
}

/// Which ranks a context talks to, as createContext's config says: every `stride`-th (v14-v16),
/// or a list (v17). tcpxr connects every pair of ranks whatever it is, so it is only checked.
pub enum Reach<'a> {
    Stride(c_int),
    Peers(&'a [c_int]),
}

/// createContext: `n` ordering contexts over the group, reaching the ranks `reach` names.
pub fn create_context(coll: *mut c_void, n: c_int, reach: Reach) -> Result<*mut c_void> {
    let group = GROUPS.get(coll, "createContext: collComm")?;
    let contexts = u32::try_from(n)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| Error::invalid_argument(format!("createContext: nContexts {n} is not positive")))?;
    match reach {
        Reach::Stride(stride) if stride <= 0 || group.nranks % stride as usize != 0 => {
            return Err(Error::invalid_argument(format!(
                "createContext: rankStride {stride} does not divide the group of {} ranks",
                group.nranks
            )))
        }
        Reach::Peers(peers) => {
            if let Some(bad) = peers
                .iter()
                .find(|&&p| usize::try_from(p).map_or(true, |p| p >= group.nranks))
            {
                return Err(Error::invalid_argument(format!(
                    "createContext: peerArray names rank {bad}, which is not in the group of {} ranks (0-{})",
                    group.nranks,
                    group.nranks - 1
                )));
            }
        }
        Reach::Stride(_) => {}
    }
    Ok(CONTEXTS.add(Context { group, contexts }).0)
}

/// getRmaProperties (v16+): whether any signal's arrival makes every put already received, from
/// any peer, visible. No: each pair of ranks has its own connection, so one peer's signal says
/// nothing of another's puts still in flight, and NCCL keeps its per-peer flush.
pub fn flushes_all_puts_on_any_signal(coll: *mut c_void) -> Result<bool> {
    GROUPS.get(coll, "getRmaProperties: collComm")?;
    Ok(false)
}

/// The `optFlags` of v15+ iput, iputSignal and iget: hints that change neither data nor order.
/// tcpxr sends every operation as soon as it can, so it has nothing to aggregate; a bit it does
/// not know is refused.
pub fn check_opt_flags(flags: u32, what: &str) -> Result<()> {
    let known = crate::abi::ncclRmaOptFlagsAggregateRequests;
    if flags & !known != 0 {
        return Err(Error::invalid_argument(format!(
            "{what}: optFlags {flags:#x} has bits no RMA table version defines (accepted: 0 or \
             ncclRmaOptFlagsAggregateRequests {known:#x})"
        )));
    }
    Ok(())
}

pub fn destroy_context(ctx: *mut c_void) -> Result<()> {
    CONTEXTS.take(ctx, "destroyContext: rmaCtx").map(|_| ())
}

pub fn reg(coll: *mut c_void, data: *mut c_void, size: usize, mem_type: c_int, flags: u64) -> Result<*mut c_void> {
    let group = GROUPS.get(coll, "regMrSym: collComm")?;
    group.register(data as usize, size, mem_type, flags).map_err(|e| {
        e.context(&format!(
            "regMrSym of {size} bytes of {} memory",
            window::type_name(mem_type)
        ))
    })
}

pub fn dereg(coll: *mut c_void, mhandle: *mut c_void) -> Result<()> {
    GROUPS.get(coll, "deregMrSym: collComm")?.deregister(mhandle)
}

/// The group of a context and the context number checked against it.
fn context(ctx: *mut c_void, context: c_int, what: &str) -> Result<(Arc<Group>, u32)> {
    let c = CONTEXTS.get(ctx, &format!("{what}: rmaCtx"))?;
    match u32::try_from(context) {
        Ok(n) if n < c.contexts => Ok((c.group.clone(), n)),
        _ => Err(Error::invalid_argument(format!(
            "{what}: context {context} is not one of the {} this rmaCtx has",
            c.contexts
        ))),
    }
}

/// iput and iputSignal.
pub fn put(
    ctx: *mut c_void,
    ctx_index: c_int,
    src: Option<At>,
    size: usize,
    dst: Option<At>,
    rank: u32,
    signal: Option<SignalArgs>,
) -> Result<*mut c_void> {
    let what = if signal.is_some() { "iputSignal" } else { "iput" };
    let (group, c) = context(ctx, ctx_index, what)?;
    group
        .put(c, src, size, dst, rank as usize, signal)
        .map_err(|e| tag(e, what))
}

pub fn get(ctx: *mut c_void, ctx_index: c_int, remote: At, size: usize, local: At, rank: u32) -> Result<*mut c_void> {
    let (group, c) = context(ctx, ctx_index, "iget")?;
    group
        .get(c, remote, size, local, rank as usize)
        .map_err(|e| tag(e, "iget"))
}

/// iflush: nothing to wait for (None, which NCCL takes as done at once): gets complete only
/// once their bytes have landed in host memory, where every reader sees them.
pub fn flush(ctx: *mut c_void, ctx_index: c_int, rank: u32) -> Result<Option<*mut c_void>> {
    let (group, _) = context(ctx, ctx_index, "iflush")?;
    if rank as usize >= group.nranks {
        return Err(Error::invalid_argument(format!(
            "iflush: rank {rank} is not in this group of {} ranks",
            group.nranks
        )));
    }
    Ok(None)
}

pub fn test(coll: *mut c_void, request: *mut c_void) -> Result<bool> {
    GROUPS.get(coll, "test: collComm")?.test(request)
}

pub fn progress(ctx: *mut c_void) -> Result<()> {
    CONTEXTS.get(ctx, "rmaProgress: rmaCtx")?.group.progress()
}

/// queryLastError: whether the group has failed (its error was logged when it happened).
pub fn has_error(ctx: *mut c_void) -> Result<bool> {
    Ok(CONTEXTS.get(ctx, "queryLastError: rmaCtx")?.group.error().is_some())
}

/// Names the call in an error that does not already.
fn tag(e: Error, what: &str) -> Error {
    if e.msg.starts_with(what) {
        e
    } else {
        e.context(what)
    }
}

/// Objects of the RMA plugin alive in this process (for tests and leak checks).
pub fn live_objects() -> usize {
    INITS.count() + LISTENERS.count() + GROUPS.count() + CONTEXTS.count()
}
