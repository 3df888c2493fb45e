//! listen, connect and accept: making the comms NCCL sends and receives on. A connect in progress
//! is kept between NCCL's calls in [`CONNECTING`], under a ticket inside NCCL's handle buffer.
use super::live::{check_live, comm_ref, hand_out, Handed};
use super::{get, tuning};
use crate::abi::{
    ncclNetDeviceHandle_v7_t, unpackNetDeviceHandle, NCCL_NET_DEVICE_UNPACK, NCCL_NET_DEVICE_UNPACK_VERSION,
};
use crate::engine::wire::{HANDLE_BYTES, HANDLE_TICKET_OFFSET};
use crate::engine::{CommTag, Connecting, ListenComm, Tuning};
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Opens a listen comm on device `dev` and writes the handle the peer connects with into `handle`
/// (NCCL's NCCL_NET_HANDLE_MAXSIZE-byte buffer).
pub fn listen(dev: c_int, handle: &mut [u8; HANDLE_BYTES]) -> Result<*mut c_void> {
    let p = get()?;
    let nics = p.devices.nics(&*p.devices.get(dev, "listen")?);
    let t = tuning(&p, 0, false);
    // A fused device puts at least one stripe on each of its members.
    let stripes = p.config.stripes.max(nics.members().count());
    let comm = ListenComm::listen(p.transport.clone(), &nics, stripes, p.chunk_bytes, &t, handle)?;
    Ok(hand_out(Box::into_raw(comm) as *mut c_void, Handed::Listen))
}

/// In-progress connects, keyed by a random ticket kept inside NCCL's handle buffer (NCCL calls
/// connect again with the same buffer until a comm comes back), each with the handle it started
/// from: a handle that carries another connect's ticket (the bytes came from the peer) does not
/// take that connect over.
///
/// The lock is held only to take an entry out, put it back or drop expired ones, never across a
/// connect's own steps (`Connecting::start`, `poll`), so connects of different communicators do
/// not wait for each other. An entry NCCL has not polled for longer than the handshake timeout
/// (a connect abandoned mid-way, as NCCL's abort leaves it) is dropped with its sockets by the
/// next connect or close of any comm.
static CONNECTING: Mutex<BTreeMap<u64, InProgress>> = Mutex::new(BTreeMap::new());

struct InProgress {
    /// The handle the connect started from (ticket zeroed).
    started_from: [u8; HANDLE_BYTES],
    state: Connecting,
    /// When NCCL last called connect for it.
    polled: Instant,
}

fn connecting() -> std::sync::MutexGuard<'static, BTreeMap<u64, InProgress>> {
    CONNECTING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Takes out of `table` the connects not polled for longer than `timeout`; the caller drops them
/// (closing their sockets) after letting go of the lock.
fn expired(table: &mut BTreeMap<u64, InProgress>, timeout: Duration, now: Instant) -> Vec<InProgress> {
    let old: Vec<u64> = table
        .iter()
        .filter(|(_, c)| now.saturating_duration_since(c.polled) > timeout)
        .map(|(&t, _)| t)
        .collect();
    old.iter().filter_map(|t| table.remove(t)).collect()
}

/// Drops the abandoned connects (see [`CONNECTING`]), and lets the transport finish what earlier
/// dropped ones left under way ([`Transport::sweep`]: TCPX's connects, which cannot be cancelled);
/// called at every close and finalize (connect does the same itself).
///
/// [`Transport::sweep`]: crate::transport::Transport::sweep
pub(super) fn sweep_connects() {
    let Ok(p) = get() else { return };
    let timeout = Duration::from_millis(p.config.handshake_timeout_ms);
    let gone = expired(&mut connecting(), timeout, Instant::now());
    if !gone.is_empty() {
        log::info!(
            "dropped {} connect(s) NCCL abandoned more than {} ms ago",
            gone.len(),
            timeout.as_millis()
        );
    }
    drop(gone);
    p.transport.sweep();
}

/// The last communicator's finalize: no connect can go on (each belonged to a communicator), and
/// nothing sweeps after it (NCCL unloads the plugin), so every connect still in [`CONNECTING`] is
/// dropped, and the transport finishes what dropped connects left under way within a bound
/// ([`Transport::drain`]).
///
/// [`Transport::drain`]: crate::transport::Transport::drain
pub(super) fn drain_connects() {
    let Ok(p) = get() else { return };
    let gone = std::mem::take(&mut *connecting());
    if !gone.is_empty() {
        log::info!("dropped {} connect(s) still under way at the last finalize", gone.len());
    }
    drop(gone);
    p.transport.drain();
}

/// Connects to the peer whose handle NCCL passes in `bytes` (NCCL's NCCL_NET_HANDLE_MAXSIZE-byte
/// buffer, the same on every call of one connect). Returns NULL while the connection is still
/// being made. `traffic_class`: NCCL's for the communicator (v10+), see [`super::traffic_class`].
/// `p2p`: NCCL's hints, set just before it connects (v11+), say the connection is for
/// point-to-point operations; its messages then travel inline while idle up to
/// NCCL_TCPXR_INLINE_IDLE_P2P_BYTES. Read when the connect starts.
pub fn connect(
    dev: c_int,
    bytes: &mut [u8; HANDLE_BYTES],
    max_requests: usize,
    traffic_class: Option<u8>,
    p2p: bool,
) -> Result<*mut c_void> {
    let p = get()?;
    let nics = p.devices.nics(&*p.devices.get(dev, "connect")?);
    let t = Tuning {
        traffic_class,
        ..tuning(&p, max_requests, p2p)
    };
    let ticket = u64::from_le_bytes(
        bytes[HANDLE_TICKET_OFFSET..HANDLE_TICKET_OFFSET + 8]
            .try_into()
            .unwrap(),
    );
    let mut fresh = *bytes;
    fresh[HANDLE_TICKET_OFFSET..HANDLE_TICKET_OFFSET + 8].fill(0);
    // Under the lock: drop abandoned connects, and take this one out if it is under way.
    let (ticket, resumed, gone) = {
        let mut table = connecting();
        let gone = expired(&mut table, t.handshake_timeout, Instant::now());
        match table.remove(&ticket) {
            Some(c) if c.started_from == fresh => (ticket, Some(c.state), gone),
            other => {
                // The handle travelled from the peer with a zero ticket; a ticket we do not know,
                // or one of a connect that started from another handle, is stale or foreign, and
                // starting afresh is right in every case (the other connect keeps its state). A
                // new ticket is one of 2^64 - 1 random values; it is checked against the connects
                // in the table, not against those being polled right now (out of it).
                if let Some(theirs) = other {
                    table.insert(ticket, theirs);
                }
                let ticket = loop {
                    let t = crate::net::nonce();
                    if t != 0 && !table.contains_key(&t) {
                        break t;
                    }
                };
                (ticket, None, gone)
            }
        }
    };
    drop(gone);
    p.transport.sweep();
    // The connect's own steps, with no lock held.
    let mut state = match resumed {
        Some(s) => s,
        None => Connecting::start(p.transport.clone(), nics, &fresh, &t)?,
    };
    match state.poll(&t)? {
        Some(comm) => {
            bytes[HANDLE_TICKET_OFFSET..HANDLE_TICKET_OFFSET + 8].fill(0);
            Ok(hand_out(Box::into_raw(comm) as *mut c_void, Handed::Send))
        }
        None => {
            connecting().insert(
                ticket,
                InProgress {
                    started_from: fresh,
                    state,
                    polled: Instant::now(),
                },
            );
            bytes[HANDLE_TICKET_OFFSET..HANDLE_TICKET_OFFSET + 8].copy_from_slice(&ticket.to_le_bytes());
            Ok(std::ptr::null_mut())
        }
    }
}

/// Returns NULL while the peer has not connected yet. `dev_handle`: NCCL's request for the
/// receive comm's device handle (v7+), filled in once the comm is made. `p2p`: NCCL's hints, set
/// just before it accepts (v11+), say the connection is for point-to-point operations only.
///
/// # Safety
/// `listen` may be any pointer (it is looked up in the registry before it is read); a live
/// listen comm must not be closed during the call.
pub unsafe fn accept(
    listen: *mut c_void,
    max_requests: usize,
    dev_handle: Option<&mut ncclNetDeviceHandle_v7_t>,
    p2p: bool,
) -> Result<*mut c_void> {
    let p = get()?;
    check_live(listen, Handed::Listen, "accept")?;
    // SAFETY: a live listen comm (the registry says so), not closed during the call (the
    // caller's promise).
    let l: &ListenComm = unsafe { comm_ref(listen, CommTag::Listen, "listen comm") }?;
    if let Some(h) = &dev_handle {
        if h.netDeviceType != NCCL_NET_DEVICE_UNPACK || h.netDeviceVersion != NCCL_NET_DEVICE_UNPACK_VERSION {
            return Err(Error::internal(format!(
                "accept asked for a device handle of type {} version {:#x}; tcpxr offers NCCL_NET_DEVICE_UNPACK ({}) version {:#x}",
                h.netDeviceType, h.netDeviceVersion, NCCL_NET_DEVICE_UNPACK, NCCL_NET_DEVICE_UNPACK_VERSION
            )));
        }
    }
    // The receive side's idle limit is unused (the sender decides what goes inline).
    let Some(comm) = l.accept(&tuning(&p, max_requests, false))? else {
        return Ok(std::ptr::null_mut());
    };
    if let Some(h) = dev_handle {
        // NCCL's service thread has the receiving GPU's context current.
        let gpu = crate::gpu::current()?;
        let rules = p.message_rules();
        let copy_bytes = if p2p { rules.gpu_copy_p2p } else { rules.gpu_copy };
        h.handle = comm.enable_device_unpack(gpu.as_ref(), copy_bytes)?;
        super::device_unpack_enabled(&p, copy_bytes);
        h.size = std::mem::size_of::<unpackNetDeviceHandle>();
        h.needsProxyProgress = 1;
        log::debug!(
            "receive comm with NCCL's device unpack, GPU {:?}, {}point-to-point, copies from {copy_bytes} bytes (0: none)",
            gpu.map(|g| g.ordinal),
            if p2p { "" } else { "not " }
        );
    }
    Ok(hand_out(Box::into_raw(comm) as *mut c_void, Handed::Recv))
}
