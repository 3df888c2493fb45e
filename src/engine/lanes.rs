//! The striper's lanes: one per stripe, over the inner transport. Host chunks go straight to the
//! inner connection. Chunks in GPU memory go straight to a stripe that takes GPU memory
//! (`gpu_direct`: TCPX sends from it and lands receives in its own bounce pool, whose fragment
//! records the comm's `RecvStage` places with the unpack kernel before the pages are released).
//! Over a stripe that does not (the socket), they take a detour:
//!
//! * sending (send.rs): the copy engine copies the chunk into pinned staging on the GPU's
//!   persistent stream; an event says when, and only then is staging handed to the inner send;
//! * receiving (recv.rs): the chunk lands in pinned, device-mapped bounce memory of tcpxr's own;
//!   its 4 KiB fragment records go to the comm's `RecvStage` (stage.rs), which the receive comm
//!   owns and lends to its lanes on each post and test.
//!
//! Either way `RecvStage` places every chunk that arrived in one progress pass with one kernel
//! launch, and a chunk completes (its bounce memory reused or released) only after that launch's
//! event.
//!
//! Staging and bounce slots and their events are allocated once per lane, on its first GPU chunk;
//! nothing is created, allocated or synchronised per chunk. Inner posts stay in chunk order even
//! when a GPU chunk waits for its copy, so both ends of a stripe still agree.
//!
//! A host chunk of registered memory is posted with this stripe's handle for it
//! ([`Registration::stripe`]); staging and bounce slots, and memory NCCL did not register, are
//! posted without one (the inner transport registers them per post if it must).
mod recv;
mod send;

pub use recv::{RecvCtx, RecvLane};
pub use send::{SendCtx, SendLane};

use super::memory::Registration;
use crate::error::Result;
use crate::gpu::{Gpu, Mapped};
use crate::transport::InnerMr;
use std::sync::Arc;

/// GPU staging or bounce slots per lane: enough to keep a stripe busy while earlier chunks are
/// copied or unpacked.
const GPU_SLOTS: usize = 4;

/// Pinned slots of `slot_bytes` each, allocated on first use.
struct Slots {
    mem: Mapped,
    slot_bytes: usize,
    free: Vec<usize>,
}

impl Slots {
    fn new(gpu: &Gpu, slot_bytes: usize) -> Result<Slots> {
        Ok(Slots {
            mem: Mapped::new(gpu, slot_bytes * GPU_SLOTS)?,
            slot_bytes,
            free: (0..GPU_SLOTS).rev().collect(),
        })
    }
    fn host(&self, slot: usize) -> *mut u8 {
        // SAFETY: slot < GPU_SLOTS, so the offset stays inside the allocation.
        unsafe { self.mem.host.add(slot * self.slot_bytes) }
    }
    fn dev(&self, slot: usize) -> u64 {
        self.mem.dev + (slot * self.slot_bytes) as u64
    }
}

/// Stripe `index`'s handle for a registration, or none.
fn stripe_mr(reg: &Option<Arc<Registration>>, index: usize) -> InnerMr {
    reg.as_ref().map_or(InnerMr::NONE, |r| r.stripe(index))
}
