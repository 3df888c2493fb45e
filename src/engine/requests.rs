//! Request handles given to NCCL. Each comm owns a fixed array of them, allocated once, so a
//! request pointer stays valid for the comm's life and costs no allocation per message; a free
//! list hands them out. NULL is returned to NCCL when all are in use.
use std::ffi::c_void;

const REQUEST_MAGIC: u32 = 0x5251_5854; // "TXQR"

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Kind {
    Send = 1,
    Recv = 2,
}

/// What NCCL's `void* request` points at. `magic` comes first (`repr(C)`), so a pointer is checked
/// by reading one u32 before it is treated as a Request.
#[repr(C)]
pub struct Request {
    magic: u32,
    pub kind: Kind,
    /// The comm (`SendComm` or `RecvComm`) that owns this request.
    pub owner: *const c_void,
    pub slot: u32,
}

impl Request {
    /// Reads a request pointer from NCCL, refusing anything tcpxr did not hand out.
    ///
    /// # Safety
    /// `ptr` must be NULL or point to readable memory of at least `size_of::<Request>()` bytes,
    /// and when it holds REQUEST_MAGIC be a request of a comm that stays open for `'a`; a pointer
    /// tcpxr returned from isend/irecv always does until its comm is closed.
    pub unsafe fn from_ptr<'a>(ptr: *mut c_void) -> Option<&'a Request> {
        if ptr.is_null() || (ptr as usize) % std::mem::align_of::<Request>() != 0 {
            return None;
        }
        // SAFETY: non-NULL and aligned, so readable (the caller's promise); `magic` is the first
        // field. Only the u32 is read: foreign bytes need not be a valid Request (its `kind`).
        if unsafe { std::ptr::read(ptr as *const u32) } != REQUEST_MAGIC {
            return None;
        }
        // SAFETY: the magic matches, so (the caller's promise) one of tcpxr's live requests.
        Some(unsafe { &*(ptr as *const Request) })
    }
}

pub struct Requests {
    table: Box<[Request]>,
    free: Vec<u32>,
}

impl Requests {
    pub fn new(count: usize, kind: Kind) -> Self {
        let table = (0..count as u32)
            .map(|slot| Request {
                magic: REQUEST_MAGIC,
                kind,
                owner: std::ptr::null(),
                slot,
            })
            .collect::<Vec<_>>()
            .into_boxed_slice();
        let free = (0..count as u32).rev().collect();
        Requests { table, free }
    }

    /// Points every request at its owning comm, once that comm has its final address.
    pub fn set_owner(&mut self, owner: *const c_void) {
        for r in self.table.iter_mut() {
            r.owner = owner;
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
        &mut self.table[slot as usize] as *mut Request as *mut c_void
    }

    pub fn capacity(&self) -> usize {
        self.table.len()
    }

    pub fn in_use(&self) -> usize {
        self.table.len() - self.free.len()
    }
}

// SAFETY: the only raw pointer is each request's `owner`, the comm that holds this table; it is
// dereferenced only by plugin::test, through a shared reference to that (Sync) comm.
unsafe impl Send for Requests {}

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
    fn from_ptr_refuses_foreign_pointers() {
        let mut r = Requests::new(1, Kind::Recv);
        let p = r.ptr(0);
        // SAFETY: p points into r's table.
        assert_eq!(unsafe { Request::from_ptr(p) }.unwrap().kind, Kind::Recv);
        let junk = [0u64; 4];
        // SAFETY: junk is readable and large enough.
        assert!(unsafe { Request::from_ptr(junk.as_ptr() as *mut c_void) }.is_none());
        // SAFETY: NULL is rejected before any read.
        assert!(unsafe { Request::from_ptr(std::ptr::null_mut()) }.is_none());
        // SAFETY: a misaligned pointer is rejected before any read.
        assert!(unsafe { Request::from_ptr(std::ptr::without_provenance_mut(1)) }.is_none());
    }
}
