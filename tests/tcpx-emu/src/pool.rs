//! The bounce pool: where received bytes land, in 4 KiB pages, like the per-GPU RX pool RxDM
//! gives TCPX (reference/tcpx.md 2.1). One pool per device for the process (one in host mode),
//! shared by every receive comm, so records of different comms index the same base.
//!
//! A page stays with its receive until that receive is consumed; then it is poisoned (every byte
//! set to [`POISON`]) and goes back to the free list, most recently freed first, so the next
//! receive is likely to reuse it. A consumer that read a page after consuming it sees poison or
//! another receive's bytes: wrong data, which the tests' content checks catch.
//!
//! How bytes land, by mode (never GPU work in the application's context, see gpu.rs):
//! * host, gpu-mapped: the CPU can write the pool (anonymous memory; pinned host memory mapped
//!   into the device). The receive thread reads the socket straight into the pages, up to
//!   [`BATCH`] fragments per `readv`; recycling poisons with the CPU.
//! * gpu: the pool is device memory, which the CPU cannot write. The receive thread reads the
//!   socket into pinned staging pages laid out as the pool pages they are for, and each run of
//!   consecutive pool pages crosses in one `cuMemcpyHtoDAsync` on the thread's own stream of the
//!   emulator's context; the records are published only after those copies completed. Recycled
//!   pages are poisoned with `cuMemsetD8Async` in the emulator's context, and handed out again
//!   only once the fill has completed (an event), so NCCL's thread never waits on the GPU.
use crate::gpu::{DeviceMem, Event, Gpu, HostMem, Stream};
use crate::PAGE;
use std::collections::VecDeque;
use std::io::{IoSliceMut, Read};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// The byte a recycled page is filled with.
pub const POISON: u8 = 0xA5;

/// Why bytes did not land: the socket (its peer closed or reset it: what TCPX's helper threads
/// meet when the peer dies), or anything else (a GPU copy).
#[derive(Debug)]
pub enum LandFail {
    Socket(String),
    Other(String),
}

impl From<String> for LandFail {
    fn from(m: String) -> LandFail {
        LandFail::Other(m)
    }
}

impl std::fmt::Display for LandFail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LandFail::Socket(m) | LandFail::Other(m) => f.write_str(m),
        }
    }
}

/// Fragments read per socket read (at most 512 KiB); also the pages of one staging half.
pub const BATCH: usize = 128;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Pool, metadata and device handle in host memory (CI).
    Host,
    /// Pool in device memory (VMM, the emulator's context), metadata in pinned host memory
    /// mapped into the device, the device handle in device memory: TCPX's own layout.
    Gpu,
    /// As Gpu, but the pool is pinned host memory mapped into the device (the CPU writes it).
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

/// Where the pool's bytes are.
enum Mem {
    /// An anonymous mapping (host mode).
    Host,
    /// Kept for its lifetime: the pool's bytes, written through `Pool::host`.
    Mapped {
        _mem: HostMem,
    },
    Device(DeviceMem),
}

/// One fragment of a receive: `len` bytes at `at` in pool page `page`.
#[derive(Clone, Copy, Debug)]
pub struct Frag {
    pub page: u32,
    pub at: usize,
    pub len: usize,
}

#[derive(Default)]
struct Free {
    pages: Vec<u32>,
    /// Device pool: recycled pages whose poison fill is queued, oldest first, each batch with the
    /// event recorded after its fill.
    poisoning: VecDeque<(Event, Vec<u32>)>,
    spare_events: Vec<Event>,
}

pub struct Pool {
    mode: Mode,
    gpu: Option<Arc<Gpu>>,
    mem: Mem,
    /// CPU view of the pool (Host, GpuMapped); null for Gpu.
    host: *mut u8,
    /// The pool's address as the device handle publishes it (`bounce_buf`).
    base: u64,
    len: usize,
    free: Mutex<Free>,
    freed: Condvar,
}

// SAFETY: the memory is owned by this value (freed once, by its Mem) and usable from any thread.
unsafe impl Send for Pool {}
// SAFETY: the pool's memory is only written through pages a caller owns (taken, not yet
// recycled); the free list is behind a mutex.
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
        let (mem, host, base) = match mode {
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
                (Mem::Host, p as *mut u8, p as u64)
            }
            Mode::Gpu => {
                let g = gpu.as_ref().ok_or("GPU mode without a GPU")?;
                let m = DeviceMem::new(g, len)?;
                // Poison from the start, as every recycled page is.
                let done = Event::new(g.ctx)?;
                g.fill_async(&[(m.ptr, m.size)], POISON, &done)?;
                done.wait()?;
                let base = m.ptr;
                (Mem::Device(m), std::ptr::null_mut(), base)
            }
            Mode::GpuMapped => {
                let m = HostMem::new(gpu.as_ref().ok_or("GPU mode without a GPU")?, len, true, POISON)?;
                let (host, base) = (m.host, m.dev);
                (Mem::Mapped { _mem: m }, host, base)
            }
        };
        Ok(Pool {
            mode,
            gpu,
            mem,
            host,
            base,
            len,
            free: Mutex::new(Free {
                pages: (0..pages as u32).rev().collect(),
                ..Free::default()
            }),
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
    #[cfg(test)]
    pub fn take(&self, stop: &AtomicBool) -> Option<u32> {
        let mut one = Vec::with_capacity(1);
        self.take_up_to(1, stop, &mut one).then(|| one[0])
    }

    /// Appends up to `n` free pages to `out`, in the order one-at-a-time takes would give them;
    /// waits until at least one is free; false (nothing taken) once `stop` is set.
    pub fn take_up_to(&self, n: usize, stop: &AtomicBool, out: &mut Vec<u32>) -> bool {
        let mut free = self.free.lock().unwrap();
        loop {
            if stop.load(Ordering::Acquire) {
                return false;
            }
            free = self.reap(free, false);
            if !free.pages.is_empty() {
                let k = n.min(free.pages.len());
                let from = free.pages.len() - k;
                out.extend(free.pages.drain(from..).rev());
                return true;
            }
            if !free.poisoning.is_empty() {
                free = self.reap(free, true);
                continue;
            }
            free = self.freed.wait_timeout(free, Duration::from_millis(20)).unwrap().0;
        }
    }

    /// Device pool: moves recycled pages whose poison has landed to the free list; with `wait`,
    /// waits for the oldest batch first (the lock is released meanwhile).
    fn reap<'a>(&'a self, mut free: MutexGuard<'a, Free>, wait: bool) -> MutexGuard<'a, Free> {
        if wait {
            let Some((ev, pages)) = free.poisoning.pop_front() else {
                return free;
            };
            drop(free);
            if let Err(e) = ev.wait() {
                crate::warn(&format!("poisoning recycled pages: {e}"));
            }
            free = self.free.lock().unwrap();
            free.pages.extend(pages.iter().rev());
            free.spare_events.push(ev);
        }
        while let Some((ev, _)) = free.poisoning.front() {
            match ev.done() {
                Ok(false) => break,
                Ok(true) => {}
                Err(e) => crate::warn(&format!("poisoning recycled pages: {e}")),
            }
            let (ev, pages) = free.poisoning.pop_front().unwrap();
            free.pages.extend(pages.iter().rev());
            free.spare_events.push(ev);
        }
        free
    }

    /// Reads the fragments' bytes, in order, from `stream` into their pages. For a pool in
    /// device memory `lander` (the receive thread's, see [`Lander`]) queues the copies; its
    /// `landed` waits for them.
    pub fn land(&self, stream: &TcpStream, frags: &[Frag], lander: Option<&mut Lander>) -> Result<(), LandFail> {
        for f in frags {
            assert!(f.at + f.len <= PAGE && (f.page as usize + 1) * PAGE <= self.len);
        }
        if self.host.is_null() {
            return lander
                .expect("a device pool lands through a Lander")
                .land(self, stream, frags);
        }
        let mut bufs: Vec<IoSliceMut> = frags
            .iter()
            .map(|f| {
                // SAFETY: the page is owned by the caller until recycled, and at + len lies inside
                // it (checked above); the fragments of one receive never overlap.
                IoSliceMut::new(unsafe {
                    std::slice::from_raw_parts_mut(self.host.add(f.page as usize * PAGE + f.at), f.len)
                })
            })
            .collect();
        read_all(stream, &mut bufs)
    }

    /// Poisons the pages and frees them (device pool: frees them once the fill has landed).
    pub fn recycle(&self, pages: &[u32]) {
        if pages.is_empty() {
            return;
        }
        match &self.mem {
            Mem::Device(m) => {
                let g = self.gpu.as_ref().unwrap();
                let runs: Vec<(u64, usize)> = runs(pages)
                    .map(|(p, n)| (m.ptr + (p as usize * PAGE) as u64, n * PAGE))
                    .collect();
                let mut free = self.free.lock().unwrap();
                let ev = match free.spare_events.pop() {
                    Some(ev) => Ok(ev),
                    None => Event::new(g.ctx),
                };
                match ev.and_then(|ev| g.fill_async(&runs, POISON, &ev).map(|()| ev)) {
                    Ok(ev) => free.poisoning.push_back((ev, pages.to_vec())),
                    Err(e) => {
                        // The pages are lost to the pool rather than handed out unpoisoned.
                        crate::warn(&format!("poisoning {} recycled pages: {e}", pages.len()));
                        return;
                    }
                }
            }
            Mem::Host | Mem::Mapped { .. } => {
                for &p in pages {
                    // SAFETY: the page was owned by the consumed receive and is inside the pool.
                    unsafe { std::ptr::write_bytes(self.host.add(p as usize * PAGE), POISON, PAGE) };
                }
                self.free.lock().unwrap().pages.extend(pages.iter().rev());
            }
        }
        self.freed.notify_all();
    }
}

/// Runs of consecutive pages in `pages`: (first page, count).
fn runs(pages: &[u32]) -> impl Iterator<Item = (u32, usize)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        let first = *pages.get(i)?;
        let mut n = 1;
        while pages.get(i + n) == Some(&(first + n as u32)) {
            n += 1;
        }
        i += n;
        Some((first, n))
    })
}

/// The copies that move a batch from staging into the pool: (bytes of the staging half, offset in
/// the pool), one per run of fragments in consecutive pool pages. Staging page i mirrors pool page
/// `frags[i].page`, so a run's bytes lie alike on both sides, from its first fragment's start to
/// its last one's end.
fn copy_runs(frags: &[Frag]) -> impl Iterator<Item = (std::ops::Range<usize>, usize)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        let first = frags.get(i)?;
        let mut j = i;
        while frags.get(j + 1).is_some_and(|f| f.page == frags[j].page + 1) {
            j += 1;
        }
        let last = &frags[j];
        let from = i * PAGE + first.at..j * PAGE + last.at + last.len;
        let to = first.page as usize * PAGE + first.at;
        i = j + 1;
        Some((from, to))
    })
}

/// Fills every buffer from `stream` (readv, as many as the kernel takes per call).
fn read_all(mut stream: &TcpStream, mut bufs: &mut [IoSliceMut]) -> Result<(), LandFail> {
    while !bufs.is_empty() {
        match stream.read_vectored(bufs) {
            Ok(0) => return Err(LandFail::Socket("receive failed: connection closed".into())),
            Ok(n) => IoSliceMut::advance_slices(&mut bufs, n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(LandFail::Socket(format!("receive failed: {e}"))),
        }
    }
    Ok(())
}

/// A receive thread's way into a pool in device memory: pinned staging of two halves of
/// [`BATCH`] pages, a stream of the emulator's context, and an event per half. A batch is read
/// into one half, each fragment at its offset in its staging page, while the other half's copies
/// run; the half is reused only after its copies completed.
pub struct Lander {
    staging: HostMem,
    stream: Stream,
    done: [Event; 2],
    busy: [bool; 2],
    half: usize,
}

impl Lander {
    pub fn new(gpu: &Gpu) -> Result<Lander, String> {
        Ok(Lander {
            staging: HostMem::new(gpu, 2 * BATCH * PAGE, false, POISON)?,
            stream: Stream::new(gpu.ctx)?,
            done: [Event::new(gpu.ctx)?, Event::new(gpu.ctx)?],
            busy: [false; 2],
            half: 0,
        })
    }

    fn land(&mut self, pool: &Pool, stream: &TcpStream, frags: &[Frag]) -> Result<(), LandFail> {
        assert!(frags.len() <= BATCH);
        let h = self.half;
        if self.busy[h] {
            self.done[h].wait()?;
            self.busy[h] = false;
        }
        // SAFETY: half h of the staging memory (BATCH pages) is ours: its copies have completed.
        let half = unsafe { std::slice::from_raw_parts_mut(self.staging.host.add(h * BATCH * PAGE), BATCH * PAGE) };
        let mut bufs = Vec::with_capacity(frags.len());
        for (page, f) in half.chunks_exact_mut(PAGE).zip(frags) {
            // The bytes around a fragment are poison, as in the pool page it is copied to.
            let (head, rest) = page.split_at_mut(f.at);
            let (body, tail) = rest.split_at_mut(f.len);
            head.fill(POISON);
            tail.fill(POISON);
            bufs.push(IoSliceMut::new(body));
        }
        read_all(stream, &mut bufs)?;
        drop(bufs);
        for (from, to) in copy_runs(frags) {
            self.stream.htod(pool.base + to as u64, &half[from])?;
        }
        self.done[h].record(&self.stream)?;
        self.busy[h] = true;
        self.half ^= 1;
        Ok(())
    }

    /// Waits until every byte handed to `land` is in the pool (before the records are published).
    pub fn landed(&mut self) -> Result<(), String> {
        self.stream.sync()?;
        self.busy = [false; 2];
        Ok(())
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        if let Mem::Host = self.mem {
            // SAFETY: host/len are the mapping made in new.
            unsafe { libc::munmap(self.host as *mut libc::c_void, self.len) };
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

    #[test]
    fn batches_of_pages_come_in_the_order_single_takes_give() {
        let pool = Pool::new(Mode::Host, None, 8 * PAGE).unwrap();
        let stop = AtomicBool::new(false);
        let mut got = Vec::new();
        assert!(pool.take_up_to(3, &stop, &mut got));
        assert_eq!(got, [0, 1, 2]);
        pool.recycle(&got);
        let mut again = Vec::new();
        assert!(pool.take_up_to(16, &stop, &mut again));
        assert_eq!(again, [0, 1, 2, 3, 4, 5, 6, 7], "recycled pages first, in their order");
    }

    #[test]
    fn runs_of_consecutive_pages() {
        assert_eq!(runs(&[4, 5, 6, 9, 1, 2]).collect::<Vec<_>>(), [(4, 3), (9, 1), (1, 2)]);
        assert_eq!(runs(&[]).count(), 0);
    }

    #[test]
    fn a_batch_crosses_to_the_pool_in_one_copy_per_run_of_consecutive_pages() {
        let f = |page, at, len| Frag { page, at, len };
        let frags = [
            f(7, 0, PAGE),
            f(8, 100, 50), // gap before and after it: copied as staging's poison
            f(9, 0, PAGE),
            f(3, 5, 10), // not after 9: a new run
            f(4, 0, 1),
        ];
        let runs: Vec<_> = copy_runs(&frags).collect();
        assert_eq!(
            runs,
            [
                (0..2 * PAGE + PAGE, 7 * PAGE),
                (3 * PAGE + 5..4 * PAGE + 1, 3 * PAGE + 5),
            ]
        );
        assert_eq!(copy_runs(&[]).count(), 0);
    }

    #[test]
    fn fragments_are_read_in_order_into_their_pages_at_their_offsets() {
        use std::io::Write;
        let pool = Pool::new(Mode::Host, None, 4 * PAGE).unwrap();
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (rx, _) = l.accept().unwrap();
        let data: Vec<u8> = (0..PAGE + 100).map(|i| (i % 251) as u8).collect();
        tx.write_all(&data).unwrap();
        let frags = [
            Frag {
                page: 2,
                at: 0,
                len: PAGE,
            },
            Frag {
                page: 0,
                at: 7,
                len: 100,
            },
        ];
        pool.land(&rx, &frags, None).unwrap();
        // SAFETY: pages 0 and 2 lie inside the pool; the reads above have completed.
        let at =
            |p: usize, off: usize, n: usize| unsafe { std::slice::from_raw_parts(pool.host.add(p * PAGE + off), n) };
        assert_eq!(at(2, 0, PAGE), &data[..PAGE]);
        assert_eq!(at(0, 7, 100), &data[PAGE..]);
    }
}
