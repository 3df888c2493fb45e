//! Request handles given to NCCL. Each comm takes a fixed table of them when it is made, so a
//! request pointer costs no allocation per message; a free list hands them out, and NULL is
//! returned to NCCL when all are in use.
//!
//! A table is never given back to the allocator: when its comm closes, every request in it is
//! marked retired and the table waits in a process-wide pool for a later comm with the same
//! number of requests (oldest retired first). A request pointer NCCL still holds after the close
//! therefore always points to readable memory that says the request is gone, and `test` or
//! `irecvConsumed` on it is an error found without reading the freed comm. The memory kept is
//! bounded by the most comms ever open at once.
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::Mutex;

/// The request belongs to an open comm.
const REQUEST_MAGIC: u32 = 0x5251_5854; // "TXQR"
/// The request's comm has closed (or the table waits for its next comm).
const RETIRED_MAGIC: u32 = 0x4451_5854; // "TXQD"

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Kind {
    Send = 1,
    Recv = 2,
}

/// What NCCL's `void* request` points at. `magic` comes first (`repr(C)`), so a pointer is checked
/// by reading one u32 before anything else is. A table moves from comm to comm over the process's
/// life, so every field a later comm rewrites is atomic.
#[repr(C)]
pub struct Request {
    magic: AtomicU32,
    kind: AtomicU32,
    /// The comm (`SendComm` or `RecvComm`) that owns this request while `magic` says live.
    owner: AtomicPtr<c_void>,
    /// Its place in the table, fixed.
    slot: u32,
}

/// A live request, as read from NCCL's pointer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Live {
    pub kind: Kind,
    /// The comm that owns it (open while the request is live).
    pub owner: *const c_void,
    pub slot: u32,
}

/// What a pointer NCCL passes as a request turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    Live(Live),
    /// One of tcpxr's requests whose comm has closed.
    Closed,
    /// NULL, misaligned, or not a request tcpxr handed out.
    Foreign,
}

impl Request {
    /// Reads a request pointer from NCCL, refusing anything tcpxr did not hand out and any request
    /// of a closed comm.
    ///
    /// # Safety
    /// `ptr` must be NULL or point to readable memory of at least `size_of::<Request>()` bytes;
    /// when it holds REQUEST_MAGIC it must be one of tcpxr's requests, whose comm stays open for as
    /// long as the caller uses the answer. A pointer tcpxr returned from isend/irecv always is
    /// (its table is never freed), whether or not its comm has closed since.
    pub unsafe fn lookup(ptr: *mut c_void) -> Lookup {
        if ptr.is_null() || (ptr as usize) % std::mem::align_of::<Request>() != 0 {
            return Lookup::Foreign;
        }
        // SAFETY: non-NULL and aligned, so readable (the caller's promise); `magic` is the first
        // field. Only the u32 is read before it says the bytes are a Request.
        let magic = unsafe { &*(ptr as *const AtomicU32) }.load(Ordering::Acquire);
        match magic {
            REQUEST_MAGIC => {}
            RETIRED_MAGIC => return Lookup::Closed,
            _ => return Lookup::Foreign,
        }
        // SAFETY: the magic says one of tcpxr's requests (the caller's promise), in a table that
        // is never freed.
        let r = unsafe { &*(ptr as *const Request) };
        let kind = if r.kind.load(Ordering::Relaxed) == Kind::Send as u32 {
            Kind::Send
        } else {
            Kind::Recv
        };
        let live = Live {
            kind,
            owner: r.owner.load(Ordering::Relaxed),
            slot: r.slot,
        };
        // A close that retired the table between the two reads wins. As a seqlock's reader: the
        // fence orders the reads above before the second read of the magic, so an owner the close
        // cleared (written after its RETIRED magic and its release fence) is never seen with the
        // live magic.
        std::sync::atomic::fence(Ordering::Acquire);
        match r.magic.load(Ordering::Relaxed) {
            REQUEST_MAGIC => Lookup::Live(live),
            _ => Lookup::Closed,
        }
    }
}

/// Retired tables, waiting for a comm with as many requests; the oldest is taken first, so a
/// stale pointer stays refused as long as possible.
static RETIRED: Mutex<VecDeque<&'static [Request]>> = Mutex::new(VecDeque::new());

/// A table of `count` retired requests: a recycled one, or a new one that is never freed.
fn table(count: usize) -> &'static [Request] {
    let mut pool = RETIRED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = pool.iter().position(|t| t.len() == count) {
        return pool.remove(i).unwrap();
    }
    drop(pool);
    let fresh: Vec<Request> = (0..count as u32)
        .map(|slot| Request {
            magic: AtomicU32::new(RETIRED_MAGIC),
            kind: AtomicU32::new(0),
            owner: AtomicPtr::new(std::ptr::null_mut()),
            slot,
        })
        .collect();
    Box::leak(fresh.into_boxed_slice())
}

pub struct Requests {
    table: &'static [Request],
    kind: Kind,
    free: Vec<u32>,
}

impl Requests {
    /// `count` requests, retired until [`Requests::set_owner`] names their comm.
    pub fn new(count: usize, kind: Kind) -> Self {
        let free = (0..count as u32).rev().collect();
        Requests {
            table: table(count),
            kind,
            free,
        }
    }

    /// Points every request at its owning comm once that comm has its final address, and makes
    /// them live.
    pub fn set_owner(&mut self, owner: *const c_void) {
        for r in self.table {
            r.kind.store(self.kind as u32, Ordering::Relaxed);
            r.owner.store(owner as *mut c_void, Ordering::Relaxed);
            r.magic.store(REQUEST_MAGIC, Ordering::Release);
        }
    }

    pub fn take(&mut self) -> Option<u32> {
        self.free.pop()
    }

    pub fn give_back(&mut self, slot: u32) {
        debug_assert!(!self.free.contains(&slot));
        self.free.push(slot);
    }

    pub fn ptr(&mut self, slot: u32) -> *mut c_void {
        &self.table[slot as usize] as *const Request as *mut c_void
    }

    pub fn capacity(&self) -> usize {
        self.table.len()
    }

    pub fn in_use(&self) -> usize {
        self.table.len() - self.free.len()
    }
}

impl Drop for Requests {
    /// The comm closes: its requests are retired (a later `test` on one is refused) and the table
    /// goes back to the pool.
    fn drop(&mut self) {
        // Every magic retired before any owner is cleared (see `lookup`'s second read).
        for r in self.table {
            r.magic.store(RETIRED_MAGIC, Ordering::Release);
        }
        std::sync::atomic::fence(Ordering::Release);
        for r in self.table {
            r.owner.store(std::ptr::null_mut(), Ordering::Relaxed);
        }
        RETIRED.lock().unwrap_or_else(|e| e.into_inner()).push_back(self.table);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_run_out_and_come_back() {
        let mut r = Requests::new(2, Kind::Send);
        let a = r.take().unwrap();
        let b = r.take().unwrap();
        assert_ne!(a, b);
        assert_eq!(r.take(), None);
        r.give_back(a);
        assert_eq!(r.take(), Some(a));
        assert_eq!(r.in_use(), 2);
    }

    #[test]
    fn lookup_refuses_foreign_pointers() {
        // A count no other test uses, so the table is this test's alone.
        let mut r = Requests::new(3, Kind::Recv);
        let owner = 0x1000 as *const c_void;
        r.set_owner(owner);
        let p = r.ptr(2);
        // SAFETY: p points into r's table.
        let live = unsafe { Request::lookup(p) };
        assert_eq!(
            live,
            Lookup::Live(Live {
                kind: Kind::Recv,
                owner,
                slot: 2
            })
        );
        let junk = [0u64; 4];
        // SAFETY: junk is readable and large enough.
        let junk = unsafe { Request::lookup(junk.as_ptr() as *mut c_void) };
        assert_eq!(junk, Lookup::Foreign);
        // SAFETY: NULL is rejected before any read.
        assert_eq!(unsafe { Request::lookup(std::ptr::null_mut()) }, Lookup::Foreign);
        // SAFETY: a misaligned pointer is rejected before any read.
        let misaligned = unsafe { Request::lookup(std::ptr::without_provenance_mut(1)) };
        assert_eq!(misaligned, Lookup::Foreign);
    }

    #[test]
    fn a_closed_comms_requests_are_refused_and_their_table_serves_a_later_comm() {
        // A count no other test uses, so the pool's only table of it is this test's.
        let mut r = Requests::new(5, Kind::Send);
        r.set_owner(0x2000 as *const c_void);
        let slot = r.take().unwrap();
        let p = r.ptr(slot);
        drop(r);
        // SAFETY: the table is never freed; p still points into it.
        assert_eq!(unsafe { Request::lookup(p) }, Lookup::Closed);
        let mut again = Requests::new(5, Kind::Recv);
        assert_eq!(again.ptr(slot), p, "the retired table is reused");
        // SAFETY: as above.
        let before_owner = unsafe { Request::lookup(p) };
        assert_eq!(before_owner, Lookup::Closed, "retired until its new comm names itself");
        again.set_owner(0x3000 as *const c_void);
        // SAFETY: as above.
        let Lookup::Live(live) = (unsafe { Request::lookup(p) }) else {
            panic!("live again")
        };
        assert_eq!((live.kind, live.owner), (Kind::Recv, 0x3000 as *const c_void));
    }
}
