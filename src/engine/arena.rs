//! The bounce memory of every socket device-unpack receive comm of the process, in one arena.
//!
//! NCCL's unpack kernel keeps **one** bounce base per thread block
//! (`ncclShmem.devicePlugin.unpack.bounce_buf`: each receive connection's setup writes it, the last
//! one wins) and adds every record's 32-bit `src_off` to it, whichever peer the record came from.
//! A ring step receives from one peer; a tree step (children and parent) or a grouped
//! point-to-point step receives from several in one block. So the records of every device-unpack
//! comm of a process must count from the same base, or a block reads one peer's pages out of
//! another's memory: wrong data with no error.
//!
//! The arena is one reservation of address space, [`ARENA_BYTES`] long (the reach of a 32-bit
//! `src_off`), made when the first comm needs bounce memory and returned when the last one closes.
//! Each comm takes a [`Section`] of [`SECTION_BYTES`] at a fixed place in it, whose pages are
//! made when taken and given back when the comm closes, never on the data path. So the base every
//! comm publishes is the arena's start. Two ways, chosen when the arena is reserved:
//! * with a GPU whose driver makes VMM host pages (gpu/host.rs): the range is reserved in CUDA's
//!   unified address space and each section is pinned pages of the GPU's NUMA node mapped there
//!   for the CPU and that GPU. Giving them back does not wait for the GPU's running kernels;
//! * else (no GPU, or no VMM host pages): the range is reserved with `mmap`, each section's pages
//!   mapped there and, with a GPU, pinned and mapped into the GPUs at their own address
//!   (`HostRegistration`), whose unregistering waits until every kernel of the device has ended.
use crate::error::{Error, Result};
use crate::gpu::host::{self, HostPages, HostPagesKind};
use crate::gpu::{Gpu, HostRegistration};
use std::sync::{Arc, Mutex};

/// Bounce memory of one comm: NCCL keeps at most 8 receives of a connection unconsumed, and its
/// default buffer (NCCL_BUFFSIZE, 4 MiB) bounds what they hold; twice that leaves room for a
/// larger NCCL_BUFFSIZE before receives wait for consumes.
pub const SECTION_BYTES: usize = 16 << 20;
/// The span a record's 32-bit `src_off` reaches from the base.
pub const ARENA_BYTES: usize = 1 << 32;
/// Comms that can hold bounce memory at once in one process.
pub const SECTIONS: usize = ARENA_BYTES / SECTION_BYTES;

/// The reserved range and which sections are taken.
struct Arena {
    base: usize,
    taken: Vec<bool>,
    reserved: Reserved,
}

/// Who reserved the arena's range, and so how its sections get pages (module doc).
enum Reserved {
    /// `mmap`: sections are mapped there, and registered with a GPU's driver where there is one.
    Mmap,
    /// CUDA, in this GPU's context: sections are VMM host pages of this kind.
    Cuda(Arc<Gpu>, HostPagesKind),
}

/// The process's arena while any section lives.
static ARENA: Mutex<Option<Arena>> = Mutex::new(None);

/// One comm's bounce memory: `SECTION_BYTES` at `offset` from the arena's base.
pub struct Section {
    host: *mut u8,
    base: u64,
    offset: usize,
    pages: Pages,
}

/// A section's pages, by how the arena was reserved.
enum Pages {
    /// VMM host pages in CUDA's reservation: unmapped and released when dropped.
    Cuda(#[allow(dead_code)] HostPages),
    /// Pages `mmap`ped into the reservation, with the registration that pins them and maps them
    /// into the GPUs (dropped, unregistered, before the pages are unmapped).
    Mmap(Option<HostRegistration>),
}

// SAFETY: the section's pages belong to it alone; its owner (a receive comm) serialises access.
unsafe impl Send for Section {}

impl Section {
    /// Takes a free section, pinned for `gpu` when there is one (without CUDA, plain memory whose
    /// "device address" is its host address, for hosts and tests without a GPU). Its pages start
    /// zeroed.
    pub fn take(gpu: Option<&Arc<Gpu>>) -> Result<Section> {
        let mut arena = ARENA.lock().unwrap_or_else(|p| p.into_inner());
        if arena.is_none() {
            *arena = Some(Arena::reserve(gpu)?);
        }
        let a = arena.as_mut().expect("reserved just above");
        let Some(index) = a.taken.iter().position(|t| !t) else {
            return Err(Error::system(format!(
                "{SECTIONS} receive comms with NCCL's device unpack are open in this process, each with \
                 {} MiB of bounce memory, which is all NCCL's 32-bit page offsets reach; close some or \
                 receive into host memory (NCCL_TCPXR_GPU_BUFFERS=0)",
                SECTION_BYTES >> 20
            )));
        };
        let offset = index * SECTION_BYTES;
        let host = (a.base + offset) as *mut u8;
        let base = a.base as u64;
        let made = match &a.reserved {
            Reserved::Cuda(arena_gpu, arena_kind) => {
                // Mapped for the taker's GPU (the one whose kernel reads the section), in the
                // arena's granules, from the taker's NUMA node where its driver names one.
                let g = gpu.unwrap_or(arena_gpu);
                let kind = HostPagesKind {
                    numa: g.host_pages().map_or(arena_kind.numa, |k| k.numa),
                    ..*arena_kind
                };
                // SAFETY: the section's range lies inside CUDA's reservation, aligned to
                // SECTION_BYTES (a multiple of the granularity), and no other section maps it.
                unsafe { HostPages::map_at(g, kind, host as u64, SECTION_BYTES) }.map(|p| {
                    // SAFETY: SECTION_BYTES of fresh pages, mapped for the CPU just now.
                    unsafe { std::ptr::write_bytes(host, 0, SECTION_BYTES) };
                    Pages::Cuda(p)
                })
            }
            Reserved::Mmap => map_anonymous(host).map(|()| Pages::Mmap(None)),
        };
        let pages = match made {
            Ok(p) => p,
            Err(e) => {
                release_if_empty(&mut arena);
                return Err(e);
            }
        };
        a.taken[index] = true;
        drop(arena);
        let mut section = Section {
            host,
            base,
            offset,
            pages,
        };
        if let (Some(g), Pages::Mmap(registration)) = (gpu, &mut section.pages) {
            // SAFETY: the section's pages are mapped and page aligned, and stay mapped until
            // `section` drops, which drops the registration first.
            *registration = Some(unsafe { HostRegistration::new(g, host, SECTION_BYTES) }?);
        }
        Ok(section)
    }

    /// The section's first byte.
    pub fn host(&self) -> *mut u8 {
        self.host
    }

    /// The device address every section's records count from (the arena's start).
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Where this section starts, counted from [`Section::base`].
    pub fn offset(&self) -> usize {
        self.offset
    }
}

/// Maps `SECTION_BYTES` of fresh zeroed pages at `host`, inside the `mmap` reservation.
fn map_anonymous(host: *mut u8) -> Result<()> {
    // SAFETY: the range lies inside the arena's reservation and belongs to no other section;
    // MAP_FIXED replaces the reserved (inaccessible) pages with fresh zeroed ones.
    let mapped = unsafe {
        libc::mmap(
            host as *mut libc::c_void,
            SECTION_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    if mapped != host as *mut libc::c_void {
        return Err(Error::system(format!(
            "cannot map {} MiB of bounce memory: {}",
            SECTION_BYTES >> 20,
            std::io::Error::last_os_error()
        )));
    }
    Ok(())
}

impl Drop for Section {
    fn drop(&mut self) {
        match &mut self.pages {
            // Unmapped and released, without waiting for the GPU.
            Pages::Cuda(_) => drop(std::mem::replace(&mut self.pages, Pages::Mmap(None))),
            Pages::Mmap(registration) => {
                // Unpinned first, then unmapped: the driver must not hold pages that are gone.
                drop(registration.take());
                // SAFETY: the section's own range inside the reservation; it goes back to being
                // reserved and inaccessible, its pages are freed.
                let r = unsafe {
                    libc::mmap(
                        self.host as *mut libc::c_void,
                        SECTION_BYTES,
                        libc::PROT_NONE,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED | libc::MAP_NORESERVE,
                        -1,
                        0,
                    )
                };
                if r == libc::MAP_FAILED {
                    log::warn!(
                        "returning bounce memory at {:p}: {}; its pages stay mapped until the process ends",
                        self.host,
                        std::io::Error::last_os_error()
                    );
                }
            }
        }
        let mut arena = ARENA.lock().unwrap_or_else(|p| p.into_inner());
        let Some(a) = arena.as_mut() else { return };
        a.taken[self.offset / SECTION_BYTES] = false;
        release_if_empty(&mut arena);
    }
}

impl Arena {
    /// Reserves the address range: no memory behind it until a section is mapped. Through CUDA
    /// where `gpu` makes VMM host pages in whole sections, else with `mmap`.
    fn reserve(gpu: Option<&Arc<Gpu>>) -> Result<Arena> {
        let cuda = gpu.and_then(|g| g.host_pages().map(|k| (g, k)));
        if let Some((g, kind)) = cuda.filter(|(_, k)| SECTION_BYTES % k.granularity == 0) {
            let base = host::reserve(g, ARENA_BYTES, SECTION_BYTES)?;
            return Ok(Arena {
                base: base as usize,
                taken: vec![false; SECTIONS],
                reserved: Reserved::Cuda(g.clone(), kind),
            });
        }
        // SAFETY: a fresh anonymous mapping at an address of the kernel's choosing.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                ARENA_BYTES,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(Error::system(format!(
                "cannot reserve {} GiB of address space for bounce memory: {}",
                ARENA_BYTES >> 30,
                std::io::Error::last_os_error()
            )));
        }
        Ok(Arena {
            base: p as usize,
            taken: vec![false; SECTIONS],
            reserved: Reserved::Mmap,
        })
    }
}

/// Returns the reservation once no section is taken (the next comm reserves anew), so that an
/// unloaded library leaves nothing behind.
fn release_if_empty(arena: &mut Option<Arena>) {
    let Some(a) = arena else { return };
    if a.taken.iter().any(|t| *t) {
        return;
    }
    match &a.reserved {
        Reserved::Cuda(g, _) => host::unreserve(g, a.base as u64, ARENA_BYTES),
        // SAFETY: the whole reservation, no section of it in use.
        Reserved::Mmap => unsafe {
            libc::munmap(a.base as *mut libc::c_void, ARENA_BYTES);
        },
    }
    *arena = None;
}

/// Sections live in one process-wide arena: unit tests that take them run one at a time.
#[cfg(test)]
pub(crate) static TEST_SERIAL: Mutex<()> = Mutex::new(());

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_section_counts_from_one_base_and_has_its_own_pages() {
        let _one = TEST_SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let s: Vec<Section> = (0..3).map(|_| Section::take(None).unwrap()).collect();
        assert!(s.iter().all(|x| x.base() == s[0].base()), "one base for every comm");
        let mut offsets: Vec<usize> = s.iter().map(Section::offset).collect();
        offsets.sort();
        offsets.dedup();
        assert_eq!(offsets.len(), 3, "three distinct sections");
        for (i, x) in s.iter().enumerate() {
            assert_eq!(x.host() as u64, x.base() + x.offset() as u64);
            // SAFETY: the section's own pages, mapped and writable.
            unsafe { std::ptr::write_bytes(x.host(), i as u8 + 1, SECTION_BYTES) };
        }
        for (i, x) in s.iter().enumerate() {
            // SAFETY: as above.
            let last = unsafe { *x.host().add(SECTION_BYTES - 1) };
            assert_eq!(last, i as u8 + 1, "no section overlaps another");
        }
    }

    #[test]
    fn a_freed_section_is_taken_again_and_the_last_one_returns_the_arena() {
        let _one = TEST_SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let a = Section::take(None).unwrap();
        let b = Section::take(None).unwrap();
        let (base, b_offset) = (a.base(), b.offset());
        // SAFETY: b's own pages.
        unsafe { std::ptr::write_bytes(b.host(), 7, 4096) };
        drop(b);
        let c = Section::take(None).unwrap();
        assert_eq!((c.base(), c.offset()), (base, b_offset), "the freed place is reused");
        // SAFETY: c's own pages.
        assert_eq!(unsafe { *c.host() }, 0, "a section's pages start zeroed");
        drop((a, c));
        assert!(
            ARENA.lock().unwrap().is_none(),
            "no section left: the reservation is gone"
        );
    }

    #[test]
    fn more_comms_than_sections_are_refused_with_the_reason() {
        let _one = TEST_SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        let all: Vec<Section> = (0..SECTIONS).map(|_| Section::take(None).unwrap()).collect();
        let e = Section::take(None).err().expect("the arena is full");
        assert!(e.msg.contains("32-bit page offsets"), "{}", e.msg);
        let last = all.iter().map(|s| s.offset()).max().unwrap();
        assert!(
            last + SECTION_BYTES <= u32::MAX as usize + 1,
            "every offset fits a record"
        );
    }
}
