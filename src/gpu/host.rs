//! Pinned host memory made through CUDA's virtual memory API ([`HostPages`]): pages of the
//! GPU's NUMA node (`cuMemCreate`, `CU_MEM_LOCATION_TYPE_HOST_NUMA`) mapped at one address that
//! the CPU and the GPU both use.
//!
//! Why not `cuMemHostAlloc` or `cuMemHostRegister`: giving those back (`cuMemFreeHost`,
//! `cuMemHostUnregister`) waits until every kernel running on the device has ended, whoever
//! launched it, on every stream (run 400: 4.0 s, the whole life of a kernel that spun for 4 s, by
//! default, with one hardware queue and under MPS). A comm closing while another communicator's
//! kernel runs waited for that kernel, and forever when that kernel waited for something the
//! closing thread was to do next. Unmapping and releasing these pages does not wait (0.2-0.6 ms
//! in the same run); neither does making them. NCCL makes its own host memory this way since
//! 2.23 on drivers of CUDA 12.6 and later.
//!
//! The pages are used where a driver makes them (CUDA 12.2+, and a NUMA policy the container
//! allows: Docker without `SYS_NICE` refuses them) unless NCCL's own switches for the same
//! choice say not to (`NCCL_CUMEM_HOST_ENABLE=0`, or `NCCL_CUMEM_ENABLE=0`, without which NCCL
//! makes no VMM host memory either); elsewhere tcpxr falls back to `cuMemHostAlloc` and host
//! registration, whose frees wait.
use super::{check, Gpu};
use crate::error::Result;
use cudarc::driver::sys;

/// How this host makes VMM pages for a GPU, found once per GPU ([`Gpu::host_pages`]).
#[derive(Clone, Copy, Debug)]
pub struct HostPagesKind {
    /// The NUMA node whose memory the pages are (the GPU's, or 0 where the driver names none).
    pub numa: i32,
    /// Sizes and addresses are multiples of this.
    pub granularity: usize,
}

/// Whether VMM host pages can be made for `gpu`, and how: None where NCCL's switches turn them
/// off (module doc), or where the driver or the host refuses to make, map or give access to one
/// granule (the reason is logged).
pub(super) fn probe(gpu: &Gpu) -> Option<HostPagesKind> {
    for switch in ["NCCL_CUMEM_HOST_ENABLE", "NCCL_CUMEM_ENABLE"] {
        if std::env::var(switch).is_ok_and(|v| v.trim() == "0") {
            log::info!("NET/tcpxr : pinned host memory through cuMemHostAlloc ({switch}=0)");
            return None;
        }
    }
    let found = (|| -> Result<HostPagesKind> {
        let _current = gpu.enter()?;
        let mut numa = -1;
        // SAFETY: a valid out-pointer and the GPU's device handle.
        let r = unsafe {
            sys::cuDeviceGetAttribute(
                &mut numa,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID,
                gpu.dev,
            )
        };
        check(r, "cuDeviceGetAttribute(HOST_NUMA_ID)")?;
        let mut kind = HostPagesKind {
            numa: numa.max(0),
            granularity: 0,
        };
        let prop = properties(kind.numa);
        // SAFETY: valid out-pointer and properties.
        let r = unsafe {
            sys::cuMemGetAllocationGranularity(
                &mut kind.granularity,
                &prop,
                sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
            )
        };
        check(r, "cuMemGetAllocationGranularity(host)")?;
        // One granule made, mapped for both and given back: every step a later allocation takes.
        drop(HostPages::new(gpu, kind, kind.granularity)?);
        Ok(kind)
    })();
    match found {
        Ok(kind) => {
            log::info!(
                "NET/tcpxr : pinned host memory for GPU {} through cuMemCreate on NUMA node {} ({} KiB granules)",
                gpu.ordinal,
                kind.numa,
                kind.granularity >> 10
            );
            Some(kind)
        }
        Err(e) => {
            log::info!(
                "NET/tcpxr : pinned host memory for GPU {} through cuMemHostAlloc ({}); closing a comm then waits for the GPU's running kernels",
                gpu.ordinal,
                e.msg
            );
            None
        }
    }
}

fn properties(numa: i32) -> sys::CUmemAllocationProp {
    // SAFETY: a plain C struct; all zeroes is its documented default.
    let mut prop: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
    prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST_NUMA;
    prop.location.id = numa;
    prop
}

/// Reserves `len` bytes of the process's unified address space (a multiple of the granularity),
/// aligned to `align`; nothing is behind it until pages are mapped.
pub(crate) fn reserve(gpu: &Gpu, len: usize, align: usize) -> Result<u64> {
    let _current = gpu.enter()?;
    let mut at = 0;
    // SAFETY: a valid out-pointer; the driver picks the address.
    let r = unsafe { sys::cuMemAddressReserve(&mut at, len, align, 0, 0) };
    check(r, "cuMemAddressReserve")?;
    Ok(at)
}

/// Gives back a range [`reserve`] made, with no pages mapped in it any more.
pub(crate) fn unreserve(gpu: &Gpu, at: u64, len: usize) {
    let r = gpu.enter().and_then(|_current| {
        // SAFETY: a range reserve made, given back once.
        check(unsafe { sys::cuMemAddressFree(at, len) }, "cuMemAddressFree")
    });
    if let Err(e) = r {
        log::warn!("giving back {} MiB of reserved addresses: {}", len >> 20, e.msg);
    }
}

/// Pinned host pages at one address for the CPU and `gpu` (module doc). Unmapped and released
/// on drop, without waiting for the GPU: whoever queued GPU work on them must have seen it end.
pub struct HostPages {
    pub at: u64,
    pub len: usize,
    handle: sys::CUmemGenericAllocationHandle,
    /// Where the pages went into a range of this value's own (given back on drop), rather than
    /// into one the caller reserved.
    owns_range: bool,
    ctx: sys::CUcontext,
}

// SAFETY: plain pinned memory owned by this value; the driver calls on drop may run on any
// thread (in the primary context they were made in).
unsafe impl Send for HostPages {}
// SAFETY: through `&HostPages` only the addresses can be read.
unsafe impl Sync for HostPages {}

impl HostPages {
    /// At least `len` bytes (rounded up to the granularity) at an address of their own.
    pub fn new(gpu: &Gpu, kind: HostPagesKind, len: usize) -> Result<HostPages> {
        let len = len.max(1).div_ceil(kind.granularity) * kind.granularity;
        let at = reserve(gpu, len, kind.granularity)?;
        // SAFETY: the range was reserved just above, for these pages alone.
        match unsafe { HostPages::map(gpu, kind, at, len, true) } {
            Ok(p) => Ok(p),
            Err(e) => {
                unreserve(gpu, at, len);
                Err(e)
            }
        }
    }

    /// `len` bytes (a multiple of the granularity) mapped at `at`, in a range the caller reserved
    /// ([`reserve`]) and gives back only after these pages are dropped.
    ///
    /// # Safety
    /// `at .. at + len` must lie in a reserved range, aligned to the granularity, with nothing
    /// mapped there.
    pub unsafe fn map_at(gpu: &Gpu, kind: HostPagesKind, at: u64, len: usize) -> Result<HostPages> {
        // SAFETY: the caller's promise.
        unsafe { HostPages::map(gpu, kind, at, len, false) }
    }

    /// # Safety
    /// As for [`HostPages::map_at`].
    unsafe fn map(gpu: &Gpu, kind: HostPagesKind, at: u64, len: usize, owns_range: bool) -> Result<HostPages> {
        let _current = gpu.enter()?;
        let prop = properties(kind.numa);
        let mut handle = 0;
        // SAFETY: valid out-pointer and properties.
        let r = unsafe { sys::cuMemCreate(&mut handle, len, &prop, 0) };
        check(r, "cuMemCreate(host)")?;
        // SAFETY: the caller's range, unmapped; the handle is len bytes.
        if let Err(e) = check(unsafe { sys::cuMemMap(at, len, 0, handle, 0) }, "cuMemMap") {
            // SAFETY: the handle made just above, mapped nowhere, released once.
            unsafe { sys::cuMemRelease(handle) };
            return Err(e);
        }
        // From here on, dropping `pages` unmaps and releases them.
        let pages = HostPages {
            at,
            len,
            handle,
            owns_range,
            ctx: gpu.ctx,
        };
        // SAFETY: a plain C struct; all zeroes is its documented default.
        let mut access: [sys::CUmemAccessDesc; 2] = unsafe { std::mem::zeroed() };
        access[0].location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        access[0].location.id = gpu.dev;
        access[0].flags = sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        access[1].location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST_NUMA;
        access[1].location.id = kind.numa;
        access[1].flags = sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        // SAFETY: the range mapped just above; two descriptors.
        let r = unsafe { sys::cuMemSetAccess(at, len, access.as_ptr(), 2) };
        check(r, "cuMemSetAccess")?;
        Ok(pages)
    }

    pub fn host(&self) -> *mut u8 {
        self.at as *mut u8
    }
}

impl Drop for HostPages {
    fn drop(&mut self) {
        let (at, len, handle) = (self.at, self.len, self.handle);
        super::free_in(self.ctx, "pinned host pages (cuMemUnmap)", || {
            // SAFETY: this value's mapping, unmapped once.
            unsafe { sys::cuMemUnmap(at, len) }
        });
        super::free_in(self.ctx, "pinned host pages (cuMemRelease)", || {
            // SAFETY: this value's handle, released once; the mapping is gone.
            unsafe { sys::cuMemRelease(handle) }
        });
        if self.owns_range {
            super::free_in(self.ctx, "pinned host pages' addresses (cuMemAddressFree)", || {
                // SAFETY: the range new reserved for these pages, now unmapped.
                unsafe { sys::cuMemAddressFree(at, len) }
            });
        }
    }
}
