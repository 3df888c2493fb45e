//! NCCL's device unpack for one receive comm (v7+ tables, `NCCL_NET_DEVICE_UNPACK` version 7):
//! the comm lands received bytes in bounce memory and describes them with `loadMeta` records in a
//! ring NCCL's own kernel reads; that kernel copies the bytes into place before it reduces. tcpxr
//! launches no kernel for such a receive, so nothing of tcpxr's that needs a multiprocessor can
//! queue behind NCCL's kernel, which waits for exactly this data (a deadlock with one hardware
//! work queue or under MPS); its only GPU work, the copy engine's copies of large receives over
//! the socket (copy_in.rs), completes beside such a kernel.
//!
//! What NCCL expects (src/device/network/unpack/, prims_simple.h, transport/net.cc):
//! * at accept, a device pointer to `unpackNetDeviceHandle {meta, bounce_buf, head}`; NCCL's
//!   kernel reads it at every launch and writes `head` back when it ends, so it lives in memory
//!   the GPU reads and writes (here: pinned host memory mapped into the GPU, no copy needed);
//!   `head` starts at -1 because the kernel increments it before each slice;
//! * the n-th receive of the comm (every receive: the kernel's head counts Simple slices, and
//!   with device unpack every receive is one) uses slot `n % 16` of `netUnpackMeta`: records in
//!   `mem[slot]`, their number published in `cnt[slot]` before `test` reports the receive done;
//! * `src_off` counts from the one `bounce_buf`; `dst_off` from the buffer posted to irecv;
//! * the pages stay untouched until NCCL calls `irecvConsumed` for that receive, in order.
//!
//! Where the bytes land depends on the inner transport:
//! * tcpx: in TCPX's per-GPU receive pool, shared by every TCPX comm of the GPU (so every stripe's
//!   records count from one base); each stripe's records are copied here with `dst_off` moved by
//!   the chunk's place in the message, and its TCPX slot is consumed when NCCL consumes the
//!   message ([`Bounce::External`]);
//! * socket: a receive into GPU memory is received into [`BouncePool`], this comm's section of the
//!   process's bounce arena (arena.rs: pinned host memory mapped into the GPUs), and described as
//!   4 KiB fragments ([`Bounce::Own`]), or, from `NCCL_TCPXR_GPU_COPY_BYTES`, copied into place by
//!   the copy engine before `test` reports it done and published with no records (copy_in.rs).
//!   Receives into host memory land in place and publish no records.
//!
//! NCCL's kernel applies one bounce base per thread block to the records of every peer the block
//! receives from (a tree step or a grouped point-to-point step has several), taking it from
//! whichever connection it set up last. So every ring of a process publishes the same base for a
//! GPU: the arena's start over the socket; over TCPX the base of the first comm on that GPU, which
//! later comms' pools must not lie below ([`BaseClaim`]); a comm that cannot count from it is
//! refused at accept, never left to place pages from the wrong memory.
use super::arena::{Section, SECTION_BYTES};
use super::copy_in::CopyIn;
use crate::abi::{
    loadMeta, netUnpackMeta, unpackNetDeviceHandle, NCCL_NET_DEVICE_UNPACK_MAX_QUEUE_DEPTH as DEPTH,
    NET_UNPACK_MAX_SLICE_PAGES as MAX_RECORDS, NET_UNPACK_MAX_SLICE_SIZE, SLICE_PAGE_SIZE,
};
use crate::error::{Error, Result};
use crate::gpu::{Gpu, Mapped};
use crate::transport::Landed;
use std::alloc::Layout;
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Messages a device-unpack comm may hold posted and not yet consumed: one per ring slot.
pub const RING_SLOTS: usize = DEPTH;
/// Largest receive NCCL's unpack path takes (`NET_UNPACK_MAX_SLICE_SIZE`).
pub const MAX_RECEIVE_BYTES: usize = NET_UNPACK_MAX_SLICE_SIZE;
/// Set in a test's environment, device-unpack comms over the socket land receives into host
/// memory in bounce memory too, so that the GPU path's records are exercised on a host without a
/// GPU (the test plays NCCL's kernel). Never set under NCCL: its proxy does not unpack host memory.
pub const TEST_BOUNCE_HOST: &str = "TCPXR_TEST_BOUNCE_HOST_RECEIVES";

/// Where the bounce memory the records point into comes from.
pub enum Bounce {
    /// The inner transport's pool (TCPX's per-GPU receive pool), at this device address.
    External(u64),
    /// Memory of this comm: pinned and mapped into `gpu` (the socket transport).
    Own,
}

/// Memory the CPU writes and NCCL's kernel reads: pinned host memory mapped into the receiving
/// GPU, or, on a host without CUDA (a program driving the tables, tcpxr's tests), plain host
/// memory whose "device address" is its host address.
struct SharedMem {
    host: *mut u8,
    dev: u64,
    /// Keeps the pinned allocation alive.
    _mapped: Option<Mapped>,
    /// Set when the memory is a plain host allocation, to free it.
    plain: Option<Layout>,
}

// SAFETY: plain memory owned by this value; every access goes through the comm's mutex.
unsafe impl Send for SharedMem {}

impl SharedMem {
    fn new(gpu: Option<&Gpu>, len: usize) -> Result<SharedMem> {
        if let Some(g) = gpu {
            let m = Mapped::new(g, len)?;
            // SAFETY: m.host points to len fresh bytes of pinned memory.
            unsafe { std::ptr::write_bytes(m.host, 0, len) };
            return Ok(SharedMem {
                host: m.host,
                dev: m.dev,
                _mapped: Some(m),
                plain: None,
            });
        }
        let layout = Layout::from_size_align(len.max(1), 4096).map_err(|e| Error::internal(e.to_string()))?;
        // SAFETY: a non-zero-sized layout.
        let host = unsafe { std::alloc::alloc_zeroed(layout) };
        if host.is_null() {
            return Err(Error::system(format!(
                "cannot allocate {len} bytes for the unpack ring"
            )));
        }
        Ok(SharedMem {
            host,
            dev: host as u64,
            _mapped: None,
            plain: Some(layout),
        })
    }
}

impl Drop for SharedMem {
    fn drop(&mut self) {
        if let Some(layout) = self.plain {
            // SAFETY: host came from alloc_zeroed with this layout and is freed once.
            unsafe { std::alloc::dealloc(self.host, layout) };
        }
    }
}

/// Bounce memory of a socket comm, handed out in message order and given back in the same order
/// (NCCL consumes in order), so it is a circular buffer: `head` is where the oldest held region
/// starts, `tail` the next free byte. A region that does not fit before the end starts over at 0,
/// and the end it skipped stays held with it.
struct BouncePool {
    mem: Section,
    capacity: usize,
    head: usize,
    tail: usize,
    /// Per message holding bounce memory, oldest first: its sequence and where its region starts
    /// (including a skipped end).
    held: VecDeque<(u64, usize)>,
}

impl BouncePool {
    fn new(mem: Section) -> BouncePool {
        BouncePool {
            mem,
            capacity: SECTION_BYTES,
            head: 0,
            tail: 0,
            held: VecDeque::new(),
        }
    }

    /// `len` bytes for message `seq`, 4 KiB aligned (NCCL's kernel copies widest when `src_off`
    /// is aligned like `dst_off`); None while earlier messages hold too much.
    fn take(&mut self, seq: u64, len: usize) -> Option<usize> {
        let want = len.max(1).next_multiple_of(SLICE_PAGE_SIZE);
        if want > self.capacity {
            return None;
        }
        let (at, start) = if self.held.is_empty() {
            (0, 0)
        } else if self.tail > self.head {
            // Held: head..tail. Free: tail..capacity, then 0..head.
            if self.capacity - self.tail >= want {
                (self.tail, self.tail)
            } else if self.head >= want {
                (0, self.tail)
            } else {
                return None;
            }
        } else if self.head - self.tail >= want {
            // Held: head..capacity and 0..tail. Free: tail..head.
            (self.tail, self.tail)
        } else {
            return None;
        };
        if self.held.is_empty() {
            self.head = start;
        }
        self.tail = at + want;
        self.held.push_back((seq, start));
        Some(at)
    }

    /// Gives back what message `seq` took; it must be the oldest holder.
    fn give_back(&mut self, seq: u64) -> Result<()> {
        match self.held.front() {
            Some(&(s, _)) if s == seq => {
                self.held.pop_front();
                match self.held.front() {
                    Some(&(_, start)) => self.head = start,
                    None => (self.head, self.tail) = (0, 0),
                }
                Ok(())
            }
            Some(&(s, _)) if s < seq => Err(Error::internal(format!(
                "bounce memory of receive {s} is still held while receive {seq} is consumed"
            ))),
            _ => Ok(()),
        }
    }
}

/// The bases TCPX comms publish, one per GPU (`None`: no CUDA here), with how many rings use it:
/// the first comm on a GPU sets it, and it holds until that GPU's last ring closes.
static EXTERNAL_BASES: Mutex<Vec<(Option<usize>, u64, usize)>> = Mutex::new(Vec::new());

/// A ring's hold on its GPU's published base ([`EXTERNAL_BASES`]), released on drop.
struct BaseClaim(Option<usize>);

impl BaseClaim {
    /// The base a TCPX comm on `gpu` whose stripes' pools start at `lowest` publishes.
    fn claim(gpu: Option<usize>, lowest: u64) -> Result<(BaseClaim, u64)> {
        let mut all = EXTERNAL_BASES.lock().unwrap_or_else(|p| p.into_inner());
        match all.iter_mut().find(|(g, _, _)| *g == gpu) {
            Some((_, base, _)) if lowest < *base => Err(Error::internal(format!(
                "TCPX's receive pool for this comm starts at {lowest:#x}, below {base:#x}, where the pool of an \
                 earlier comm on GPU {gpu:?} starts; NCCL's kernel counts every comm's pages of one GPU from one \
                 base, so this comm cannot use device unpack"
            ))),
            Some((_, base, refs)) => {
                *refs += 1;
                Ok((BaseClaim(gpu), *base))
            }
            None => {
                all.push((gpu, lowest, 1));
                Ok((BaseClaim(gpu), lowest))
            }
        }
    }
}

impl Drop for BaseClaim {
    fn drop(&mut self) {
        let mut all = EXTERNAL_BASES.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = all.iter().position(|(g, _, _)| *g == self.0) {
            all[i].2 -= 1;
            if all[i].2 == 0 {
                all.swap_remove(i);
            }
        }
    }
}

/// The ring of one device-unpack receive comm.
pub struct DeviceRing {
    /// `unpackNetDeviceHandle` at offset 0, `netUnpackMeta` at [`META_OFFSET`].
    mem: SharedMem,
    /// The device address records' `src_off` count from (published as `bounce_buf`): the same
    /// for every ring of the process on one GPU (see the module's notes).
    base: u64,
    /// Records written so far into each slot, not yet published.
    fill: [usize; DEPTH],
    /// Receives into GPU memory land in this comm's own bounce memory ([`Bounce::Own`]).
    own: bool,
    /// That memory; None without a GPU (no receive into GPU memory can come then).
    pool: Option<BouncePool>,
    /// Receives into host memory land in the pool too ([`TEST_BOUNCE_HOST`]).
    bounce_host: bool,
    /// Over TCPX: this ring's hold on its GPU's base.
    _claim: Option<BaseClaim>,
    /// Receives into GPU memory placed by the copy engine instead of records (copy_in.rs); only
    /// with this comm's own bounce memory on a GPU.
    copy_in: Option<Box<CopyIn>>,
}

/// Where the metadata ring starts in `mem` (the handle takes the first bytes).
const META_OFFSET: usize = 256;

impl DeviceRing {
    /// A ring for receives into `gpu`'s memory (None: host memory only, no CUDA here). Over the
    /// socket, receives into GPU memory of at least `copy_bytes` (0: none) are placed by the
    /// copy engine (copy_in.rs).
    pub fn new(gpu: Option<&Arc<Gpu>>, bounce: Bounce, copy_bytes: usize) -> Result<DeviceRing> {
        let bounce_host = std::env::var_os(TEST_BOUNCE_HOST).is_some_and(|v| v == "1");
        let mut ring = DeviceRing::with(gpu, bounce, bounce_host)?;
        // Not in the tests' mode where host-memory receives land in bounce memory too: a copy
        // engine copy goes to GPU memory only.
        if let (Some(g), Some(_), false) = (gpu, &ring.pool, ring.bounce_host) {
            ring.copy_in = CopyIn::new(g.clone(), copy_bytes).map(Box::new);
        }
        Ok(ring)
    }

    fn with(gpu: Option<&Arc<Gpu>>, bounce: Bounce, bounce_host: bool) -> Result<DeviceRing> {
        let mem = SharedMem::new(gpu.map(|g| &**g), META_OFFSET + std::mem::size_of::<netUnpackMeta>())?;
        let own = matches!(bounce, Bounce::Own);
        let bounce_host = own && bounce_host;
        let (base, pool, claim) = match bounce {
            Bounce::External(lowest) => {
                let (claim, base) = BaseClaim::claim(gpu.map(|g| g.ordinal), lowest)?;
                (base, None, Some(claim))
            }
            // Without a GPU every destination is host memory, which lands in place.
            Bounce::Own if gpu.is_none() && !bounce_host => (0, None, None),
            Bounce::Own => {
                let section = Section::take(gpu)?;
                (section.base(), Some(BouncePool::new(section)), None)
            }
        };
        let handle = unpackNetDeviceHandle {
            meta: (mem.dev + META_OFFSET as u64) as *mut netUnpackMeta,
            bounce_buf: base as *mut c_void,
            head: u64::MAX,
        };
        // SAFETY: mem holds at least META_OFFSET >= 24 bytes, page aligned; nothing reads it yet.
        unsafe { std::ptr::write(mem.host as *mut unpackNetDeviceHandle, handle) };
        Ok(DeviceRing {
            mem,
            base,
            fill: [0; DEPTH],
            own,
            pool,
            bounce_host,
            _claim: claim,
            copy_in: None,
        })
    }

    /// The device address of the `unpackNetDeviceHandle` NCCL's kernel reads.
    pub fn device_handle(&self) -> *mut c_void {
        self.mem.dev as *mut c_void
    }

    /// The handle as NCCL's kernel reads it (tests).
    #[cfg(test)]
    fn handle(&self) -> unpackNetDeviceHandle {
        // SAFETY: the handle is the first bytes of the ring's memory, written by `with`.
        unsafe { std::ptr::read(self.mem.host as *const unpackNetDeviceHandle) }
    }

    /// The bounce base records count from (the handle's `bounce_buf`).
    pub fn base(&self) -> u64 {
        self.base
    }

    fn meta(&self) -> *mut netUnpackMeta {
        // SAFETY: META_OFFSET + size_of::<netUnpackMeta>() bytes were allocated.
        unsafe { self.mem.host.add(META_OFFSET) as *mut netUnpackMeta }
    }

    /// Whether a receive into GPU memory (`gpu`), or into host memory, lands in this comm's own
    /// bounce memory (socket) rather than in place or in the inner transport's pool.
    pub fn bounces(&self, gpu: bool) -> bool {
        self.own && (gpu || self.bounce_host)
    }

    /// Bounce memory for the `len`-byte receive `seq` into GPU memory: its host address and its
    /// offset from the base (the arena's start, not the section's). None while earlier receives hold too much (try again after they are
    /// consumed). An error when it can never fit.
    pub fn take_bounce(&mut self, seq: u64, len: usize) -> Result<Option<(*mut u8, usize)>> {
        let pool = self.pool.as_mut().ok_or_else(|| {
            Error::internal(
                "a receive into GPU memory on a device-unpack comm accepted without a current CUDA context \
                 (its bounce memory could not be mapped into a GPU)",
            )
        })?;
        if len > MAX_RECEIVE_BYTES.min(pool.capacity) {
            return Err(Error::invalid_usage(format!(
                "a {len}-byte receive into GPU memory: NCCL's device unpack takes at most {MAX_RECEIVE_BYTES} bytes per receive"
            )));
        }
        Ok(pool.take(seq, len).map(|at| {
            // SAFETY: at + len lies inside the pool's section.
            (unsafe { pool.mem.host().add(at) }, pool.mem.offset() + at)
        }))
    }

    /// Describes `len` bytes received contiguously at bounce offset `at` for receive `seq`, as 4
    /// KiB fragments (TCPX's page size). Not larger: NCCL's kernel deals records among the
    /// channel's warps and each warp copies its records one 512-byte row per PCIe round trip, so
    /// fewer, larger records would leave warps idle (docs/BENCHMARKS.md, GPU buffers).
    pub fn add_contiguous(&mut self, seq: u64, at: usize, len: usize) -> Result<()> {
        let n = len.div_ceil(SLICE_PAGE_SIZE);
        let slot = (seq % DEPTH as u64) as usize;
        self.room(slot, n)?;
        let meta = self.meta();
        for i in 0..n {
            let off = i * SLICE_PAGE_SIZE;
            let rec = loadMeta {
                src_off: (at + off) as u32,
                len: SLICE_PAGE_SIZE.min(len - off) as u32,
                dst_off: off as u64,
            };
            // SAFETY: slot < DEPTH and fill + i < MAX_RECORDS (room checked); the slot is not
            // published, so NCCL's kernel does not read it.
            unsafe { (*meta).mem[slot][self.fill[slot] + i] = rec };
        }
        self.fill[slot] += n;
        Ok(())
    }

    /// Adds the records an inner transport published for one chunk of receive `seq`: the chunk
    /// starts `offset` bytes into the receive and is `len` bytes long. The records are checked
    /// first (inside the chunk, exactly `len` bytes, `src_off` reachable from this ring's base),
    /// so a bad record never reaches NCCL's kernel.
    pub fn add_chunk(&mut self, seq: u64, offset: usize, len: usize, landed: &Landed) -> Result<()> {
        let slot = (seq % DEPTH as u64) as usize;
        self.room(slot, landed.records.len())?;
        let rebase = landed.bounce.checked_sub(self.base).ok_or_else(|| {
            Error::internal(format!(
                "a stripe's bounce pool at {:#x} lies below the comm's base {:#x}",
                landed.bounce, self.base
            ))
        })?;
        let mut total = 0usize;
        for (i, r) in landed.records.iter().enumerate() {
            let end = (r.dst_off as usize).checked_add(r.len as usize);
            let src = rebase.checked_add(r.src_off as u64).filter(|s| *s <= u32::MAX as u64);
            if end.is_none_or(|e| e > len) || src.is_none() || r.len == 0 {
                return Err(Error::internal(format!(
                    "unpack record {i} of a {len}-byte chunk is out of bounds ({} bytes from {} to offset {})",
                    r.len, r.src_off, r.dst_off
                )));
            }
            total += r.len as usize;
        }
        if total != len {
            return Err(Error::internal(format!(
                "unpack records carry {total} bytes for a {len}-byte chunk ({} records)",
                landed.records.len()
            )));
        }
        let meta = self.meta();
        for (i, r) in landed.records.iter().enumerate() {
            let rec = loadMeta {
                src_off: (rebase + r.src_off as u64) as u32,
                len: r.len,
                dst_off: r.dst_off + offset as u64,
            };
            // SAFETY: as in add_contiguous.
            unsafe { (*meta).mem[slot][self.fill[slot] + i] = rec };
        }
        self.fill[slot] += landed.records.len();
        Ok(())
    }

    /// Whether a `len`-byte receive landing in this comm's bounce memory is placed by the copy
    /// engine rather than described by records.
    pub fn copies(&self, len: usize) -> bool {
        self.copy_in.as_ref().is_some_and(|c| c.wants(len))
    }

    /// Queues the copy of receive `seq`'s `len` bytes from the bounce memory at host address
    /// `from` (taken by [`DeviceRing::take_bounce`]) to the GPU buffer NCCL posted at `to`.
    ///
    /// # Safety
    /// `to .. to + len` must be the posted GPU buffer, untouched by others until the receive is
    /// reported done.
    pub unsafe fn start_copy(&mut self, seq: u64, from: usize, to: u64, len: usize) -> Result<()> {
        let c = self
            .copy_in
            .as_mut()
            .ok_or_else(|| Error::internal("a copy into GPU memory on a ring that makes none"))?;
        // SAFETY: `from` is bounce memory (pinned, mapped) held by receive `seq` until NCCL
        // consumes it, after test reported it done, after the copy completed; `to` the caller's.
        unsafe { c.start(seq, from as *const u8, to, len) }
    }

    /// Whether receive `seq`'s copy has completed (false before it is started).
    pub fn copied(&mut self, seq: u64) -> Result<bool> {
        self.copy_in.as_mut().map_or(Ok(false), |c| c.done(seq))
    }

    /// The stats line's words about this comm's copies, if it made any.
    pub fn copy_counts(&self) -> Option<String> {
        self.copy_in.as_ref().and_then(|c| c.counts.describe())
    }

    /// Lets every copy finish before the comm's bounce memory and NCCL's buffers go; a copy
    /// still running after `limit` keeps the bounce memory it reads allocated (leaked, WARN).
    pub fn quiesce(&mut self, limit: Duration) {
        if self.copy_in.as_ref().is_some_and(|c| !c.quiesce(limit)) {
            log::warn!(
                "closing a receive comm: a copy into GPU memory did not complete within {} s; its bounce memory stays allocated",
                limit.as_secs()
            );
            std::mem::forget(self.pool.take());
        }
    }

    fn room(&self, slot: usize, more: usize) -> Result<()> {
        if self.fill[slot] + more > MAX_RECORDS {
            return Err(Error::invalid_usage(format!(
                "one receive needs more than {MAX_RECORDS} unpack records (NCCL's limit per receive); \
                 keep receives at or below {MAX_RECEIVE_BYTES} bytes"
            )));
        }
        Ok(())
    }

    /// Publishes receive `seq`'s records: after this NCCL's kernel may read them. Called once,
    /// right before `test` reports the receive done.
    pub fn publish(&mut self, seq: u64) {
        let slot = (seq % DEPTH as u64) as usize;
        let count = std::mem::take(&mut self.fill[slot]) as u64;
        // SAFETY: cnt[slot] is an aligned u64 inside the ring; the release store orders the
        // records written above before the count, as NCCL's kernel reads the count first.
        unsafe {
            let cnt = std::ptr::addr_of_mut!((*self.meta()).cnt[slot]);
            AtomicU64::from_ptr(cnt).store(count, Ordering::Release);
        }
    }

    /// NCCL consumed receive `seq`: its bounce memory may be reused.
    pub fn consume(&mut self, seq: u64) -> Result<()> {
        match &mut self.pool {
            Some(p) => p.give_back(seq),
            None => Ok(()),
        }
    }

    /// The records and count of slot `seq % 16`, as NCCL's kernel would read them (tests).
    pub fn published(&self, seq: u64) -> Vec<loadMeta> {
        let slot = (seq % DEPTH as u64) as usize;
        // SAFETY: the slot's count and records lie inside the ring.
        unsafe {
            let meta = self.meta();
            let n = AtomicU64::from_ptr(std::ptr::addr_of_mut!((*meta).cnt[slot])).load(Ordering::Acquire) as usize;
            (&(*meta).mem[slot])[..n.min(MAX_RECORDS)].to_vec()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::arena::TEST_SERIAL;
    use super::*;
    use std::sync::MutexGuard;

    /// Rings share process-wide state (the arena, the TCPX bases): one test at a time.
    fn serial() -> MutexGuard<'static, ()> {
        TEST_SERIAL.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn pool(capacity: usize) -> BouncePool {
        let mut p = BouncePool::new(Section::take(None).unwrap());
        p.capacity = capacity;
        p
    }

    #[test]
    fn bounce_memory_is_handed_out_and_given_back_in_message_order() {
        let _one = serial();
        let page = SLICE_PAGE_SIZE;
        let mut p = pool(8 * page);
        assert_eq!(p.take(0, 3 * page), Some(0));
        assert_eq!(p.take(1, 3 * page), Some(3 * page));
        assert_eq!(p.take(2, 3 * page), None, "2 pages left at the end, none at the start");
        p.give_back(0).unwrap();
        // 3 pages free at the start now; the 2 at the end are skipped and held with message 2.
        assert_eq!(p.take(2, 3 * page), Some(0));
        assert_eq!(p.take(3, page), None, "only the skipped end is left, and it is held");
        p.give_back(1).unwrap();
        assert_eq!(p.take(3, 5 * page), None, "message 2 holds the start");
        assert_eq!(p.take(3, page), Some(3 * page));
        p.give_back(2).unwrap();
        p.give_back(3).unwrap();
        assert_eq!((p.held.len(), p.head, p.tail), (0, 0, 0));
        assert_eq!(p.take(4, 8 * page), Some(0), "all of it once everything is back");
        assert_eq!(p.take(5, 1), None);
        p.give_back(4).unwrap();
        assert!(p.give_back(5).is_ok(), "a receive that took nothing gives nothing back");
        assert!(pool(2 * page).take(0, 3 * page).is_none(), "larger than the pool");
    }

    #[test]
    fn a_receive_consumed_before_an_older_one_is_refused() {
        let _one = serial();
        let mut p = pool(4 * SLICE_PAGE_SIZE);
        p.take(0, 1).unwrap();
        p.take(1, 1).unwrap();
        assert!(p.give_back(1).is_err());
    }

    #[test]
    fn chunk_records_move_by_the_chunk_offset_and_publish_in_slot_n_mod_16() {
        let _one = serial();
        let mut ring = DeviceRing::new(None, Bounce::External(0x1000), 0).unwrap();
        let records = [
            loadMeta {
                src_off: 8192,
                len: 100,
                dst_off: 0,
            },
            loadMeta {
                src_off: 40,
                len: 28,
                dst_off: 100,
            },
        ];
        // A stripe whose pool lies 0x1000 above the ring's base: its offsets move by that much.
        let landed = Landed {
            records: &records,
            bounce: 0x2000,
        };
        ring.add_chunk(17, 512, 128, &landed).unwrap();
        assert!(ring.published(17).is_empty(), "nothing is visible before publish");
        ring.publish(17);
        let got = ring.published(17);
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].src_off, got[0].len, got[0].dst_off), (8192 + 0x1000, 100, 512));
        assert_eq!((got[1].src_off, got[1].len, got[1].dst_off), (40 + 0x1000, 28, 612));
        assert_eq!(ring.published(1).len(), 2, "17 % 16 == 1");
        // The next receive using that slot starts empty.
        ring.publish(33);
        assert!(ring.published(33).is_empty());
        // SAFETY: the handle is the first bytes of the ring's host memory.
        let h = unsafe { std::ptr::read(ring.mem.host as *const unpackNetDeviceHandle) };
        assert_eq!((h.bounce_buf as u64, h.head), (0x1000, u64::MAX));
        assert_eq!(h.meta as u64, ring.mem.dev + META_OFFSET as u64);
    }

    #[test]
    fn bad_records_never_reach_the_ring() {
        let _one = serial();
        let mut ring = DeviceRing::new(None, Bounce::External(0x1000), 0).unwrap();
        let rec = |src_off, len, dst_off| loadMeta { src_off, len, dst_off };
        let cases: [(&[loadMeta], u64); 4] = [
            (&[rec(0, 64, 0)], 0x1000),             // 64 bytes for a 128-byte chunk
            (&[rec(0, 128, 1)], 0x1000),            // past the chunk's end
            (&[rec(0, 128, 0)], 0x800),             // a pool below the base
            (&[rec(u32::MAX - 8, 128, 0)], 0x2000), // src_off past 4 GiB once rebased
        ];
        for (records, bounce) in cases {
            let landed = Landed { records, bounce };
            assert!(
                ring.add_chunk(0, 0, 128, &landed).is_err(),
                "{records:?} from {bounce:#x}"
            );
        }
        ring.publish(0);
        assert!(ring.published(0).is_empty(), "nothing was added");
    }

    #[test]
    fn contiguous_receives_become_4k_fragments() {
        let _one = serial();
        let mut ring = DeviceRing::new(None, Bounce::External(0), 0).unwrap();
        ring.add_contiguous(3, 8192, 10000).unwrap();
        ring.publish(3);
        let got: Vec<_> = ring
            .published(3)
            .iter()
            .map(|r| (r.src_off, r.len, r.dst_off))
            .collect();
        assert_eq!(got, vec![(8192, 4096, 0), (12288, 4096, 4096), (16384, 1808, 8192)]);
        assert!(ring.add_contiguous(4, 0, (MAX_RECORDS + 1) * 4096).is_err());
    }

    /// What NCCL's kernel does in one thread block: the base of the connection set up last, for
    /// the records of every peer the block receives from.
    fn place_with_one_base(rings: &[&DeviceRing], seq: u64, dsts: &mut [Vec<u8>]) {
        let base = rings.last().unwrap().handle().bounce_buf as u64;
        for (ring, dst) in rings.iter().zip(dsts.iter_mut()) {
            for r in ring.published(seq) {
                let src = (base + r.src_off as u64) as *const u8;
                // SAFETY: a record tcpxr published: src_off counts from the base into mapped
                // bounce memory that stays held until consume.
                let from = unsafe { std::slice::from_raw_parts(src, r.len as usize) };
                dst[r.dst_off as usize..][..r.len as usize].copy_from_slice(from);
            }
        }
    }

    #[test]
    fn a_block_receiving_from_several_socket_comms_places_each_from_its_own_pages() {
        let _one = serial();
        // A tree node: two children and a parent, each a receive comm of this process.
        let mut rings: Vec<DeviceRing> = (0..3)
            .map(|_| DeviceRing::with(None, Bounce::Own, true).unwrap())
            .collect();
        let bases: Vec<u64> = rings.iter().map(|r| r.handle().bounce_buf as u64).collect();
        assert!(bases.iter().all(|b| *b == bases[0] && *b != 0), "one base: {bases:x?}");
        let len = 3 * SLICE_PAGE_SIZE + 100;
        let sent: Vec<Vec<u8>> = (0..3u8).map(|i| vec![i + 1; len]).collect();
        for (ring, data) in rings.iter_mut().zip(&sent) {
            assert!(
                ring.bounces(false),
                "the test seam lands host receives in bounce memory"
            );
            let (host, at) = ring.take_bounce(0, len).unwrap().unwrap();
            // SAFETY: len bytes of the ring's bounce memory, taken for receive 0.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), host, len) };
            ring.add_contiguous(0, at, len).unwrap();
            ring.publish(0);
        }
        let mut got = vec![vec![0u8; len]; 3];
        place_with_one_base(&rings.iter().collect::<Vec<_>>(), 0, &mut got);
        assert!(got == sent, "every peer's bytes came from its own comm's pages");
        for ring in &mut rings {
            ring.consume(0).unwrap();
        }
    }

    #[test]
    fn tcpx_comms_of_one_gpu_publish_the_first_comms_base() {
        let _one = serial();
        let first = DeviceRing::with(None, Bounce::External(0x10_0000), false).unwrap();
        let above = DeviceRing::with(None, Bounce::External(0x20_0000), false).unwrap();
        assert_eq!(above.base(), 0x10_0000, "a pool above the base is reached by rebasing");
        let below = DeviceRing::with(None, Bounce::External(0x8_0000), false);
        let e = below
            .err()
            .expect("a pool below the published base cannot be described");
        assert!(e.msg.contains("one base"), "{}", e.msg);
        drop((first, above));
        let fresh = DeviceRing::with(None, Bounce::External(0x8_0000), false).unwrap();
        assert_eq!(
            fresh.base(),
            0x8_0000,
            "once the GPU's last ring closed, a new base may start"
        );
    }
}
