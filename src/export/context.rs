//! The per-communicator context of the v11+ tables: NCCL's init makes one per communicator,
//! connect reads its traffic class, setNetAttr leaves NCCL's latest hints in it (connect reads
//! whether they are a point-to-point connection's), finalize frees it.
use crate::abi::{ncclNetAttr_v11_t, ncclNetCommAttr_v11_t, NCCL_ALGO_RING, NCCL_PROTO_LL, NCCL_PROTO_SIMPLE};
use crate::error::{Error, Result};
use std::ffi::c_void;
use std::fmt;
use std::sync::Mutex;

/// `repr(C)`: the tag comes first, so a pointer is checked by reading one u64.
#[repr(C)]
pub struct Context {
    tag: u64,
    pub comm_id: u64,
    pub traffic_class: Option<u8>,
    /// NCCL's latest hints for the communicator (setNetAttr), kept to log only what changes; NCCL
    /// sets them from its connect thread and, per operation, from its progress thread.
    hints: Mutex<Option<Hints>>,
}

const CONTEXT_TAG: u64 = u64::from_le_bytes(*b"tcpxrCtx");

impl Context {
    /// A new context, as the pointer NCCL keeps (recorded as live until finalize).
    pub fn create(comm_id: u64, traffic_class: Option<u8>) -> *mut c_void {
        let ctx = Box::into_raw(Box::new(Context {
            tag: CONTEXT_TAG,
            comm_id,
            traffic_class,
            hints: Mutex::new(None),
        })) as *mut c_void;
        crate::plugin::hand_out(ctx, crate::plugin::Handed::Context)
    }

    /// The context behind NCCL's pointer; None for NULL (a caller of the tables that made none).
    /// `what` names the call for the error when the pointer is not one of tcpxr's contexts.
    ///
    /// # Safety
    /// `ctx` is NULL or a pointer `create` returned that [`Context::free`] has not freed.
    pub unsafe fn of<'a>(ctx: *mut c_void, what: &str) -> Result<Option<&'a Context>> {
        if ctx.is_null() {
            return Ok(None);
        }
        // SAFETY: the caller's promise; the tag is checked before any other field is trusted.
        let c = unsafe { &*(ctx as *const Context) };
        if c.tag != CONTEXT_TAG {
            return Err(Error::invalid_argument(format!(
                "{what}: ctx is not a context tcpxr's init returned"
            )));
        }
        Ok(Some(c))
    }

    /// Frees the context (finalize); returns its communicator id. A context that is not live (a
    /// second finalize) is refused without reading it.
    ///
    /// # Safety
    /// `ctx` may be any pointer; a live context is used by nothing afterwards.
    pub unsafe fn free(ctx: *mut c_void) -> Result<u64> {
        if ctx.is_null() {
            return Err(Error::invalid_argument("finalize: ctx is NULL"));
        }
        crate::plugin::take_back(ctx, crate::plugin::Handed::Context, "finalize")
            .map_err(|e| Error::invalid_argument(e.msg))?;
        // SAFETY: the registry held it as a live context from `create`, now taken out of it.
        let Some(c) = (unsafe { Context::of(ctx, "finalize") })? else {
            unreachable!("not NULL")
        };
        let id = c.comm_id;
        // SAFETY: `create` boxed it, the tag says so, and the caller hands it over.
        drop(unsafe { Box::from_raw(ctx as *mut Context) });
        Ok(id)
    }

    /// Keeps NCCL's hints and logs them when they change: the communicator's first at INFO
    /// (NET), later ones (NCCL gives one per change of operation) at TRACE.
    pub fn hint(&self, attr: &ncclNetAttr_v11_t) {
        let new = Hints(*attr);
        let mut last = self.hints.lock().unwrap();
        match *last {
            None => log::info!("communicator {:#x}: NCCL's hints: {new}", self.comm_id),
            Some(old) if old != new => log::debug!("communicator {:#x}: NCCL's hints: {new}", self.comm_id),
            Some(_) => return,
        }
        *last = Some(new);
    }

    /// NCCL's latest hints say the operations ahead are point-to-point only. NCCL sets a
    /// connection's hints just before it connects it (its proxy's connect step), so at connect
    /// this says what the new connection is for.
    pub fn p2p_hinted(&self) -> bool {
        self.hints.lock().unwrap().is_some_and(|h| h.p2p_only())
    }

    #[cfg(test)]
    fn hints(&self) -> Option<Hints> {
        *self.hints.lock().unwrap()
    }
}

/// The context each v11+ listen comm was made with, by listen comm: NCCL sets a connection's
/// hints on its communicator's context just before it accepts it, and accept, unlike listen, is
/// not given the context. Entries go at closeListen.
static LISTEN_CONTEXTS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Records that `listen` was made for the communicator of `ctx` (NULL: none).
pub fn remember_listen(listen: *mut c_void, ctx: *mut c_void) {
    if !ctx.is_null() {
        let mut all = LISTEN_CONTEXTS.lock().unwrap_or_else(|p| p.into_inner());
        all.retain(|&(l, _)| l != listen as usize);
        all.push((listen as usize, ctx as usize));
    }
}

/// Forgets `listen`'s context (closeListen).
pub fn forget_listen(listen: *mut c_void) {
    let mut all = LISTEN_CONTEXTS.lock().unwrap_or_else(|p| p.into_inner());
    all.retain(|&(l, _)| l != listen as usize);
}

/// Whether NCCL's latest hints on the context `listen` was made with name point-to-point
/// operations only: at accept, what the connection being accepted is for. False for a listen
/// of the v7-v10 tables, or whose context is no longer live.
pub fn listen_p2p_hinted(listen: *mut c_void) -> bool {
    let all = LISTEN_CONTEXTS.lock().unwrap_or_else(|p| p.into_inner());
    let Some(&(_, ctx)) = all.iter().find(|&&(l, _)| l == listen as usize) else {
        return false;
    };
    let ctx = ctx as *mut c_void;
    if !crate::plugin::is_live(ctx, crate::plugin::Handed::Context) {
        return false;
    }
    // SAFETY: a live context (the registry says so; finalize takes it out before freeing it,
    // and NCCL does not finalize a communicator while it accepts its connections).
    matches!(unsafe { Context::of(ctx, "accept") }, Ok(Some(c)) if c.p2p_hinted())
}

/// NCCL's `ncclNetAttr_t`: how many peers and flows per peer a communicator's connections carry,
/// and the operation, algorithm and protocol they carry now (bit masks; -1: undefined).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Hints(pub ncclNetAttr_v11_t);

/// NCCL's collective functions, the low bits of its operation mask (ncclFuncBroadcast, Reduce,
/// AllGather, ReduceScatter, AllReduce); the bits above are point-to-point (SendRecv, Send, Recv,
/// AlltoAll, Scatter, Gather, ...).
const COLLECTIVE_OPS: u32 = (1 << 5) - 1;

impl Hints {
    /// The operation mask is defined and names point-to-point operations only (NCCL's hints for
    /// its p2p connections: Send | Recv | AlltoAll | Scatter | Gather).
    pub fn p2p_only(&self) -> bool {
        let op = self.0.op;
        op != u32::MAX && op != 0 && op & COLLECTIVE_OPS == 0
    }
}

impl fmt::Display for Hints {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let range = |lo: i32, hi: i32| match (lo, hi) {
            (-1, -1) => "?".to_string(),
            (lo, hi) if lo == hi => lo.to_string(),
            (lo, hi) => format!("{lo}-{hi}"),
        };
        let side = |a: &ncclNetCommAttr_v11_t| {
            format!(
                "{} peers, {} flows each",
                range(a.minConcurrentPeers, a.maxConcurrentPeers),
                range(a.minFlowsPerPeer, a.maxFlowsPerPeer)
            )
        };
        let bits = |mask: u32, names: &[(usize, &str)]| -> String {
            if mask == u32::MAX {
                return "?".into();
            }
            let known: Vec<&str> = names
                .iter()
                .filter(|(b, _)| mask & (1 << b) != 0)
                .map(|(_, n)| *n)
                .collect();
            match known.len() {
                0 => format!("{mask:#x}"),
                _ => known.join("|"),
            }
        };
        let a = &self.0;
        write!(
            f,
            "send {}; receive {}; op mask {}, algo {}, proto {}",
            side(&a.sendCommAttr),
            side(&a.recvCommAttr),
            if a.op == u32::MAX {
                "?".into()
            } else {
                format!("{:#x}", a.op)
            },
            bits(a.algo, &[(0, "tree"), (NCCL_ALGO_RING, "ring")]),
            bits(
                a.proto,
                &[(NCCL_PROTO_LL, "LL"), (1, "LL128"), (NCCL_PROTO_SIMPLE, "Simple")]
            )
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(peers: (i32, i32), flows: (i32, i32)) -> ncclNetCommAttr_v11_t {
        ncclNetCommAttr_v11_t {
            minConcurrentPeers: peers.0,
            maxConcurrentPeers: peers.1,
            minFlowsPerPeer: flows.0,
            maxFlowsPerPeer: flows.1,
        }
    }

    #[test]
    fn only_a_defined_mask_of_point_to_point_operations_is_p2p() {
        let with_op = |op: u32| {
            Hints(ncclNetAttr_v11_t {
                sendCommAttr: side((1, 2), (1, 2)),
                recvCommAttr: side((1, 2), (1, 2)),
                op,
                algo: u32::MAX,
                proto: u32::MAX,
            })
        };
        // NCCL's hint for a p2p connection: Send | Recv | AlltoAll | Scatter | Gather.
        assert!(with_op(0x7c0).p2p_only());
        assert!(with_op(1 << 6).p2p_only(), "a send");
        assert!(with_op(1 << 5).p2p_only(), "a sendrecv");
        for op in [u32::MAX, 0, 1 << 4, 1, 0x7c0 | (1 << 2)] {
            assert!(!with_op(op).p2p_only(), "{op:#x}");
        }
    }

    #[test]
    fn accept_reads_the_hints_of_the_context_its_listen_was_made_with() {
        let attr = |op: u32| ncclNetAttr_v11_t {
            sendCommAttr: side((1, 1), (1, 1)),
            recvCommAttr: side((1, 1), (1, 1)),
            op,
            algo: u32::MAX,
            proto: u32::MAX,
        };
        let ctx = Context::create(7, None);
        // Any address serves as the listen comm: only its value is kept.
        let listen = 0x1000 as *mut c_void;
        remember_listen(listen, ctx);
        assert!(!listen_p2p_hinted(listen), "no hints yet");
        // SAFETY: the live context just made.
        let c = unsafe { Context::of(ctx, "test") }.unwrap().unwrap();
        c.hint(&attr(1 << 6));
        assert!(listen_p2p_hinted(listen), "a send's hint");
        c.hint(&attr(1 << 4));
        assert!(!listen_p2p_hinted(listen), "an all_reduce's hint");
        c.hint(&attr(1 << 6));
        assert!(!listen_p2p_hinted(0x2000 as *mut c_void), "another listen");
        forget_listen(listen);
        assert!(!listen_p2p_hinted(listen), "forgotten at closeListen");
        remember_listen(listen, ctx);
        remember_listen(0x3000 as *mut c_void, std::ptr::null_mut());
        assert!(!listen_p2p_hinted(0x3000 as *mut c_void), "a listen without a context");
        // SAFETY: the live context, freed once.
        unsafe { Context::free(ctx) }.unwrap();
        assert!(!listen_p2p_hinted(listen), "a finalized context is not read");
        forget_listen(listen);
    }

    #[test]
    fn hints_read_as_nccl_meant_them() {
        let h = Hints(ncclNetAttr_v11_t {
            sendCommAttr: side((1, 2), (4, 4)),
            recvCommAttr: side((-1, -1), (1, 8)),
            op: 1 << 4,
            algo: 1 << NCCL_ALGO_RING,
            proto: 1 << NCCL_PROTO_SIMPLE,
        });
        assert_eq!(
            h.to_string(),
            "send 1-2 peers, 4 flows each; receive ? peers, 1-8 flows each; op mask 0x10, algo ring, proto Simple"
        );
        let undefined = Hints(ncclNetAttr_v11_t {
            op: u32::MAX,
            algo: u32::MAX,
            proto: 1 << 5,
            ..h.0
        });
        assert!(
            undefined.to_string().ends_with("op mask ?, algo ?, proto 0x20"),
            "{undefined}"
        );
    }

    #[test]
    fn contexts_are_checked_before_use_and_keep_the_latest_hints() {
        let ctx = Context::create(7, Some(3));
        // SAFETY: ctx came from create and is freed below, once.
        let c = unsafe { Context::of(ctx, "test") }.unwrap().unwrap();
        assert_eq!((c.comm_id, c.traffic_class), (7, Some(3)));
        assert!(c.hints().is_none());
        let attr = ncclNetAttr_v11_t {
            sendCommAttr: side((1, 1), (2, 2)),
            recvCommAttr: side((1, 1), (2, 2)),
            op: u32::MAX,
            algo: u32::MAX,
            proto: u32::MAX,
        };
        c.hint(&attr);
        c.hint(&ncclNetAttr_v11_t { op: 1, ..attr });
        assert_eq!(c.hints().unwrap().0.op, 1);
        // SAFETY: NULL is allowed.
        assert!(unsafe { Context::of(std::ptr::null_mut(), "test") }.unwrap().is_none());
        let mut not_ours = [0u64; 32];
        // SAFETY: a readable, aligned buffer the size of a context.
        let e = unsafe { Context::of(not_ours.as_mut_ptr() as *mut c_void, "connect") }
            .err()
            .unwrap();
        assert!(e.msg.contains("connect: ctx is not a context"), "{}", e.msg);
        // SAFETY: ctx came from create, and nothing uses it afterwards.
        assert_eq!(unsafe { Context::free(ctx) }.unwrap(), 7);
    }
}
