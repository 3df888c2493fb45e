//! Memory on TCPX comms: registration (CUDA ranges on whole 4 KiB pages), the handle a post
//! uses, and registrations whose deregistration waits for the requests in flight that use them.
use super::ffi::{Comm, Lib, Mr};
use crate::error::Result;
use crate::transport::{InnerMr, MemKind};

/// TCPX registers CUDA memory only from a 4 KiB boundary (it exports whole pages as a dmabuf).
const CUDA_PAGE: usize = 4096;

/// Registers a range on one TCPX comm: CUDA ranges widened to whole 4 KiB pages.
pub(super) fn register(lib: &Lib, comm: Comm, ptr: *mut u8, len: usize, kind: MemKind) -> Result<Mr> {
    match kind {
        MemKind::Host => lib.reg_mr(comm, ptr, len, kind),
        MemKind::Cuda => {
            let (start, len) = page_range(ptr as usize, len);
            lib.reg_mr(comm, start as *mut u8, len, kind)
        }
    }
}

/// The whole 4 KiB pages holding `ptr .. ptr + len`: TCPX refuses CUDA memory that does not start
/// on a page (it exports the range as a dmabuf).
pub(super) fn page_range(ptr: usize, len: usize) -> (usize, usize) {
    let start = ptr & !(CUDA_PAGE - 1);
    let end = (ptr + len).div_ceil(CUDA_PAGE) * CUDA_PAGE;
    (start, end - start)
}

pub(super) fn kind_of(ptr: *const u8) -> MemKind {
    if crate::gpu::is_device_memory(ptr) {
        MemKind::Cuda
    } else {
        MemKind::Host
    }
}

/// The handle a post uses: the stripe's registration of the message's memory, or one made for
/// this post alone (returned as the second value, to deregister when the request is done).
pub(super) fn handle_for(lib: &Lib, comm: Comm, ptr: *mut u8, len: usize, mr: InnerMr) -> Result<(Mr, Option<Mr>)> {
    if mr != InnerMr::NONE {
        return Ok((Mr::from_usize(mr.0), None));
    }
    let m = register(lib, comm, ptr, len.max(1), kind_of(ptr))?;
    Ok((m, Some(m)))
}

pub(super) fn drop_adhoc(lib: &Lib, comm: Comm, adhoc: Option<Mr>) -> Result<()> {
    match adhoc {
        Some(m) => lib.dereg_mr(comm, m),
        None => Ok(()),
    }
}

/// Registrations a stripe was asked to drop while a request of its used them, and deregisters
/// once none does: TCPX's deregMr of CUDA memory closes the dmabuf fd its helper threads send a
/// request in flight from (net_tcpx.cc, tcpxDeregMr and the helper's gpudirectTCPXPostSend).
#[derive(Default)]
pub(super) struct Deferred(Vec<Mr>);

impl Deferred {
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Deregisters `mr` now, or once no request in `in_use` uses it.
    pub(super) fn deregister(
        &mut self,
        lib: &Lib,
        comm: Comm,
        mr: Mr,
        mut in_use: impl Iterator<Item = Mr>,
    ) -> Result<()> {
        if in_use.any(|m| m == mr) {
            self.0.push(mr);
            return Ok(());
        }
        lib.dereg_mr(comm, mr)
    }

    /// Deregisters those no request in `in_use` uses any more (all of them after the close).
    pub(super) fn settle(&mut self, lib: &Lib, comm: Comm, in_use: &[Mr]) -> Result<()> {
        let mut first = Ok(());
        self.0.retain(|m| {
            if in_use.contains(m) {
                return true;
            }
            if let Err(e) = lib.dereg_mr(comm, *m) {
                if first.is_ok() {
                    first = Err(e);
                }
            }
            false
        });
        first
    }

    /// [`settle`](Self::settle) on the data path, once a request has completed: a failed
    /// deregistration of other memory is NCCL's to hear of at its own deregMr, not a reason to
    /// lose the completion just reported (it is logged, and the registration is dropped).
    pub(super) fn settle_after_completion(&mut self, lib: &Lib, comm: Comm, in_use: &[Mr]) {
        if let Err(e) = self.settle(lib, comm, in_use) {
            log::warn!(
                "a deferred TCPX deregistration failed after a request completed: {}",
                e.msg
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_ranges_are_widened_to_whole_4k_pages() {
        assert_eq!(page_range(0x10000, 4096), (0x10000, 4096));
        assert_eq!(page_range(0x10001, 10), (0x10000, 4096));
        assert_eq!(page_range(0x10ff0, 0x20), (0x10000, 0x2000));
        assert_eq!(page_range(0x20000, 1 << 20), (0x20000, 1 << 20));
    }
}
