//! The bounce pool: where received bytes land, in 4 KiB pages, like the per-GPU RX pool RxDM
//! gives TCPX (reference/tcpx.md 2.1). One pool per process, shared by every receive comm, so
//! records of different comms index the same base.
//!
//! A page stays with its receive until that receive is consumed; then it is poisoned (every byte
//! set to [`POISON`]) and goes back to the free list, most recently freed first, so the next
//! receive is likely to reuse it. A consumer that read a page after consuming it sees poison or
//! another receive's bytes: wrong data, which the tests' content checks catch.
use crate::gpu::Gpu;
use crate::PAGE;
use std::io::Read;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The byte a recycled page is filled with.
pub const POISON: u8 = 0xA5;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Pool, metadata and device handle in host memory (CI).
    Host,
    /// Pool in device memory (cuMemAlloc), metadata in pinned host memory mapped into the device,
    /// the device handle in device memory: TCPX's own layout.
    Gpu,
    /// As Gpu, but the pool is pinned host memory mapped into the device (the CPU can read it).
    GpuMapped,
}

impl Mode {
    pub fn parse(s: &str) -> Option<Mode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "host" => Some(Mode::Host),
            "gpu" => Some(Mode::Gpu),
            "gpu-mapped" => Some(Mode::GpuMapped),
            _ => None,
        }
    }
}

pub struct Pool {
    mode: Mode,
    gpu: Option<Arc<Gpu>>,
    /// CPU view of the pool (Host, GpuMapped); null for Gpu.
    host: *mut u8,
    /// The pool's address as the device handle publishes it (`bounce_buf`).
    base: u64,
    len: usize,
    free: Mutex<Vec<u32>>,
    freed: Condvar,
}

// SAFETY: the pool's memory is only written through pages a caller owns (taken, not yet
// recycled); the free list is behind a mutex.
unsafe impl Send for Pool {}
unsafe impl Sync for Pool {}

impl Pool {
    /// The GPU holding the pool (None in host mode).
    pub fn gpu(&self) -> Option<Arc<Gpu>> {
        self.gpu.clone()
    }

    pub fn new(mode: Mode, gpu: Option<Arc<Gpu>>, bytes: usize) -> Result<Pool, String> {
        let pages = bytes / PAGE;
        if pages == 0 || pages > u32::MAX as usize / PAGE {
            return Err(format!("a bounce pool of {bytes} bytes: between 4 KiB and 4 GiB"));
        }
        let len = pages * PAGE;
        let (host, base) = match mode {
            Mode::Host => {
                // SAFETY: a fresh private anonymous mapping; MAP_NORESERVE so untouched pages cost
                // nothing.
                let p = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        len,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                        -1,
                        0,
                    )
                };
                if p == libc::MAP_FAILED {
                    return Err(format!(
                        "mmap of a {len}-byte bounce pool: {}",
                        std::io::Error::last_os_error()
                    ));
                }
                (p as *mut u8, p as u64)
            }
            Mode::Gpu => (
                std::ptr::null_mut(),
                gpu.as_ref().ok_or("GPU mode without a GPU")?.alloc(len)?,
            ),
            Mode::GpuMapped => gpu.as_ref().ok_or("GPU mode without a GPU")?.alloc_mapped(len)?,
        };
        Ok(Pool {
            mode,
            gpu,
            host,
            base,
            len,
            free: Mutex::new((0..pages as u32).rev().collect()),
            freed: Condvar::new(),
        })
    }

    pub fn base(&self) -> u64 {
        self.base
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// A free page; waits while none is free (the NIC's RX ring starving), None once `stop` is set.
    pub fn take(&self, stop: &AtomicBool) -> Option<u32> {
        let mut free = self.free.lock().unwrap();
        loop {
            if stop.load(Ordering::Acquire) {
                return None;
            }
            if let Some(p) = free.pop() {
                return Some(p);
            }
            free = self.freed.wait_timeout(free, Duration::from_millis(20)).unwrap().0;
        }
    }

    /// Reads exactly `len` bytes from `stream` into page `page` at `offset`. For a pool in device
    /// memory the copy is queued; `landed` waits for every queued copy.
    pub fn recv_into(
        &self,
        stream: &TcpStream,
        page: u32,
        offset: usize,
        len: usize,
        staging: &mut [u8],
    ) -> Result<(), String> {
        let at = page as usize * PAGE + offset;
        assert!(offset + len <= PAGE && at + len <= self.len);
        if self.host.is_null() {
            let buf = &mut staging[..len];
            read_exact(stream, buf)?;
            return self.gpu.as_ref().unwrap().htod_async(self.base + at as u64, buf);
        }
        // SAFETY: the page is owned by the caller until recycled, and at + len is inside the pool.
        let dst = unsafe { std::slice::from_raw_parts_mut(self.host.add(at), len) };
        read_exact(stream, dst)
    }

    /// Waits until the bytes of every `recv_into` so far are in the pool (before their records are
    /// published).
    pub fn landed(&self) -> Result<(), String> {
        match &self.gpu {
            Some(g) if self.host.is_null() => g.sync(),
            _ => Ok(()),
        }
    }

    /// Poisons the pages and frees them.
    pub fn recycle(&self, pages: &[u32]) {
        for &p in pages {
            let at = p as usize * PAGE;
            if self.host.is_null() {
                if let Err(e) = self
                    .gpu
                    .as_ref()
                    .unwrap()
                    .memset_async(self.base + at as u64, POISON, PAGE)
                {
                    crate::warn(&format!("poisoning a recycled page: {e}"));
                }
            } else {
                // SAFETY: the page was owned by the consumed receive and is inside the pool.
                unsafe { std::ptr::write_bytes(self.host.add(at), POISON, PAGE) };
            }
        }
        // Poisoned before anyone can take them again.
        if let Err(e) = self.landed() {
            crate::warn(&format!("poisoning recycled pages: {e}"));
        }
        self.free.lock().unwrap().extend(pages.iter().rev());
        self.freed.notify_all();
    }
}

fn read_exact(mut stream: &TcpStream, buf: &mut [u8]) -> Result<(), String> {
    stream
        .read_exact(buf)
        .map_err(|e| format!("receive failed, peer gone: {e}"))
}

impl Drop for Pool {
    fn drop(&mut self) {
        match self.mode {
            // SAFETY: host/len are the mapping made in new.
            Mode::Host => unsafe {
                libc::munmap(self.host as *mut libc::c_void, self.len);
            },
            Mode::Gpu => self.gpu.as_ref().unwrap().free(self.base),
            Mode::GpuMapped => self.gpu.as_ref().unwrap().free_mapped(self.host),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_come_back_poisoned_most_recent_first_and_take_waits_for_them() {
        let pool = Arc::new(Pool::new(Mode::Host, None, 2 * PAGE).unwrap());
        let stop = AtomicBool::new(false);
        let a = pool.take(&stop).unwrap();
        let b = pool.take(&stop).unwrap();
        assert_ne!(a, b);
        // SAFETY: page a is ours.
        unsafe { std::ptr::write_bytes(pool.host.add(a as usize * PAGE), 1, PAGE) };
        let p2 = pool.clone();
        let waiter = std::thread::spawn(move || p2.take(&AtomicBool::new(false)));
        std::thread::sleep(Duration::from_millis(30));
        pool.recycle(&[a]);
        assert_eq!(waiter.join().unwrap(), Some(a));
        // SAFETY: page a is inside the pool; it was poisoned on recycle.
        let bytes = unsafe { std::slice::from_raw_parts(pool.host.add(a as usize * PAGE), PAGE) };
        assert!(bytes.iter().all(|x| *x == POISON));
        stop.store(true, Ordering::Release);
        assert_eq!(pool.take(&stop), None);
    }
}
