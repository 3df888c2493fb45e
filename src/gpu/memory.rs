//! Pinned host memory the GPU reads and writes: the caller's memory registered with the driver
//! ([`HostRegistration`]) and tcpxr's own mapped allocations ([`Mapped`]), each freed in the
//! context of the GPU that made it.
use super::host::HostPages;
use super::{check, free_in, Gpu};
use crate::abi::ncclResult_t;
use crate::error::{Error, Result};
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::Arc;

/// Host memory of the caller's (page-aligned, mapped by the caller) pinned and mapped into every
/// GPU of the process at its own address, so that one base serves memory registered in pieces.
/// Unregistered on drop, in `gpu`'s context.
pub struct HostRegistration {
    gpu: Arc<Gpu>,
    host: *mut u8,
}

// SAFETY: a registration handle; the driver call on drop may run on any thread.
unsafe impl Send for HostRegistration {}

impl HostRegistration {
    /// Registers `len` bytes at `host` with `gpu`'s driver. Fails, registering nothing, where the
    /// GPU would see the memory at another address (no unified addressing for registered memory).
    ///
    /// # Safety
    /// `host .. host + len` must be mapped, page aligned, and stay mapped until the registration
    /// is dropped.
    pub unsafe fn new(gpu: &Arc<Gpu>, host: *mut u8, len: usize) -> Result<HostRegistration> {
        let _current = gpu.enter()?;
        let flags = sys::CU_MEMHOSTREGISTER_DEVICEMAP | sys::CU_MEMHOSTREGISTER_PORTABLE;
        check(
            // SAFETY: the caller vouches for the range; PORTABLE pins it for every context.
            unsafe { sys::cuMemHostRegister_v2(host as *mut c_void, len, flags) },
            "cuMemHostRegister",
        )?;
        let reg = HostRegistration { gpu: gpu.clone(), host };
        let mut dev: sys::CUdeviceptr = 0;
        check(
            // SAFETY: valid out-pointer; host was registered with DEVICEMAP just above.
            unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dev, host as *mut c_void, 0) },
            "cuMemHostGetDevicePointer",
        )?;
        if dev != host as u64 {
            return Err(Error::new(
                ncclResult_t::ncclUnhandledCudaError,
                format!(
                    "GPU {} maps registered host memory at {dev:#x}, not at its host address {host:p}; \
                     tcpxr's device unpack over the socket needs unified addressing for registered memory",
                    gpu.ordinal
                ),
            ));
        }
        Ok(reg)
    }
}

impl Drop for HostRegistration {
    fn drop(&mut self) {
        let r = self.gpu.enter().and_then(|_current| {
            // SAFETY: host was registered by new and is unregistered once, in the GPU's context.
            check(
                unsafe { sys::cuMemHostUnregister(self.host as *mut c_void) },
                "cuMemHostUnregister",
            )
        });
        if let Err(e) = r {
            log::warn!("releasing bounce memory at {:p}: {}", self.host, e.msg);
        }
    }
}

/// Pinned host memory mapped into the device: the CPU and the GPU see the same bytes. Made as
/// [`HostPages`] where the GPU allows (their free does not wait for the GPU's running kernels,
/// host.rs), else by `cuMemHostAlloc`.
pub struct Mapped {
    pub host: *mut u8,
    pub dev: u64,
    pub len: usize,
    backing: Backing,
}

enum Backing {
    /// Unmapped and released when dropped (held for that alone).
    Pages(#[allow(dead_code)] HostPages),
    /// From `cuMemHostAlloc`, freed in the primary context it was allocated in.
    HostAlloc(sys::CUcontext),
}

// SAFETY: the allocation is plain pinned memory (VMM host pages, or cuMemHostAlloc's PORTABLE)
// owned by this value, usable from any thread; it is freed once, by Drop, in the primary context
// it was made in (a retained one, valid on any thread).
unsafe impl Send for Mapped {}
// SAFETY: through `&Mapped` only the raw addresses can be read; every access to the memory
// dereferences them in an unsafe block of its own, which says why it does not race.
unsafe impl Sync for Mapped {}

impl Mapped {
    pub fn new(gpu: &Gpu, len: usize) -> Result<Mapped> {
        if let Some(kind) = gpu.host_pages() {
            let pages = HostPages::new(gpu, kind, len)?;
            return Ok(Mapped {
                host: pages.host(),
                dev: pages.at,
                len,
                backing: Backing::Pages(pages),
            });
        }
        let _current = gpu.enter()?;
        let (host, dev) = alloc_mapped(
            || {
                let mut host: *mut c_void = std::ptr::null_mut();
                // SAFETY: a valid out-pointer; PORTABLE makes it usable from every context.
                let r = unsafe {
                    sys::cuMemHostAlloc(
                        &mut host,
                        len.max(1),
                        sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE,
                    )
                };
                check(r, "cuMemHostAlloc").map(|()| host)
            },
            |host| {
                let mut dev: sys::CUdeviceptr = 0;
                // SAFETY: a valid out-pointer; `host` is the mapped allocation just made.
                let r = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dev, host, 0) };
                check(r, "cuMemHostGetDevicePointer").map(|()| dev)
            },
            // SAFETY: `host` came from cuMemHostAlloc above and nothing else holds it.
            |host| check(unsafe { sys::cuMemFreeHost(host) }, "cuMemFreeHost"),
        )?;
        Ok(Mapped {
            host: host as *mut u8,
            dev,
            len,
            backing: Backing::HostAlloc(gpu.ctx),
        })
    }
}

/// Allocates with `alloc` and maps with `map`; when mapping fails the allocation is given back
/// with `free` (a failure to free is logged), so an error leaks no pinned memory.
fn alloc_mapped(
    alloc: impl FnOnce() -> Result<*mut c_void>,
    map: impl FnOnce(*mut c_void) -> Result<u64>,
    free: impl FnOnce(*mut c_void) -> Result<()>,
) -> Result<(*mut c_void, u64)> {
    let host = alloc()?;
    match map(host) {
        Ok(dev) => Ok((host, dev)),
        Err(e) => {
            if let Err(f) = free(host) {
                log::warn!("giving back pinned memory that could not be mapped: {}", f.msg);
            }
            Err(e)
        }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // Pages free themselves when the backing drops.
        let Backing::HostAlloc(ctx) = self.backing else { return };
        let host = self.host as *mut c_void;
        // SAFETY: host came from cuMemHostAlloc and is freed once; whoever queued GPU work on it
        // has waited for that work, or kept this value alive (see SendLane's drop).
        free_in(ctx, "pinned memory (cuMemFreeHost)", || unsafe {
            sys::cuMemFreeHost(host)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error `alloc_mapped`'s steps fail with in these tests.
    fn cuda_error(what: &str) -> Error {
        Error::new(ncclResult_t::ncclUnhandledCudaError, format!("{what} failed"))
    }

    #[test]
    fn pinned_memory_that_cannot_be_mapped_is_given_back() {
        let block = 0x1000 as *mut c_void;
        let freed = std::cell::Cell::new(None);
        let r = alloc_mapped(
            || Ok(block),
            |_| Err(cuda_error("cuMemHostGetDevicePointer")),
            |p| {
                freed.set(Some(p));
                Ok(())
            },
        );
        assert!(r.unwrap_err().msg.contains("cuMemHostGetDevicePointer"));
        assert_eq!(freed.get(), Some(block), "the allocation is freed when mapping fails");
        // Mapped: kept; an allocation that fails: nothing to free.
        let freed = std::cell::Cell::new(false);
        let free = |_| {
            freed.set(true);
            Ok(())
        };
        assert_eq!(alloc_mapped(|| Ok(block), |_| Ok(7), free).unwrap(), (block, 7));
        assert!(!freed.get());
        let r = alloc_mapped(|| Err(cuda_error("cuMemHostAlloc")), |_| Ok(7), |_| Ok(()));
        assert!(r.is_err());
    }
}
