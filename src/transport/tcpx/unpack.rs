//! The unpack step: a completed TCPX receive's bytes lie in the bounce pool as fragments, each
//! described by a `loadMeta {src_off, len, dst_off}` record; unpacking copies every fragment to
//! `dst + dst_off`. Records in, bytes placed: that is the whole interface ([`Unpack`]), so the GPU
//! kernel can take the CPU scatter's place without the transport changing.
//!
//! Ordering rule (TCPX's, docs/TCPX.md): a receive's bounce pages may be released
//! (`irecvConsumed`) only after its unpack has finished reading them. The CPU scatter finishes
//! before it returns; a GPU unpack finishes when its event does, and consume must wait for that.
use crate::abi::loadMeta;
use crate::error::{Error, Result};

/// One completed receive to place.
pub struct Job<'a> {
    /// The receive's records, as TCPX published them (at most 2048).
    pub records: &'a [loadMeta],
    /// Base of the bounce pool the records' `src_off` count from.
    pub bounce: *const u8,
    /// The receive's destination and its length (what tcpxr posted: TCPX reports no size).
    pub dst: *mut u8,
    pub len: usize,
}

impl Job<'_> {
    /// Every record must land inside the destination, and together they must fill exactly `len`
    /// bytes; checked before anything is copied, so a bad record corrupts nothing.
    pub fn check(&self) -> Result<()> {
        let mut total = 0usize;
        for (i, r) in self.records.iter().enumerate() {
            let end = (r.dst_off as usize).checked_add(r.len as usize);
            if end.is_none_or(|e| e > self.len) {
                return Err(Error::internal(format!(
                    "TCPX unpack record {i} puts {} bytes at offset {} of a {}-byte receive",
                    r.len, r.dst_off, self.len
                )));
            }
            total += r.len as usize;
        }
        if total != self.len {
            return Err(Error::internal(format!(
                "TCPX unpack records carry {total} bytes for a {}-byte receive ({} records)",
                self.len,
                self.records.len()
            )));
        }
        Ok(())
    }
}

/// Places a job's fragments; when `unpack` returns, the bounce pages are no longer read.
pub trait Unpack: Send {
    fn unpack(&mut self, job: &Job) -> Result<()>;
}

/// The CPU scatter: for a bounce pool and a destination both in host memory (the emulator's host
/// mode; pinned, device-mapped pools too).
pub struct CpuScatter;

impl Unpack for CpuScatter {
    fn unpack(&mut self, job: &Job) -> Result<()> {
        job.check()?;
        for r in job.records {
            // SAFETY: `check` proved dst_off + len lies inside the destination, which the engine
            // keeps valid and untouched until the receive completes; the source lies in TCPX's
            // bounce pool, readable on the host (why this unpacker was chosen), and TCPX keeps those
            // pages until irecvConsumed, which comes after this returns. Pool and destination are
            // different allocations, so the ranges do not overlap.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    job.bounce.add(r.src_off as usize),
                    job.dst.add(r.dst_off as usize),
                    r.len as usize,
                )
            };
        }
        Ok(())
    }
}

/// Stands in where no unpacker can run yet: the bounce pool is GPU memory and the GPU kernel is
/// not part of this build. Receives that TCPX landed in place (no records) still work.
pub struct Unavailable(pub String);

impl Unpack for Unavailable {
    fn unpack(&mut self, job: &Job) -> Result<()> {
        job.check()?;
        Err(Error::internal(self.0.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(src_off: u32, len: u32, dst_off: u64) -> loadMeta {
        loadMeta { src_off, len, dst_off }
    }

    #[test]
    fn scatter_places_fragments_at_any_offset_in_any_order() {
        let bounce: Vec<u8> = (0..8192u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut dst = vec![0u8; 20];
        let records = [rec(4095, 3, 17), rec(1, 10, 0), rec(5000, 7, 10)];
        let job = Job {
            records: &records,
            bounce: bounce.as_ptr(),
            dst: dst.as_mut_ptr(),
            len: dst.len(),
        };
        CpuScatter.unpack(&job).unwrap();
        assert_eq!(&dst[0..10], &bounce[1..11]);
        assert_eq!(&dst[10..17], &bounce[5000..5007]);
        assert_eq!(&dst[17..20], &bounce[4095..4098]);
    }

    #[test]
    fn records_outside_the_receive_or_short_of_it_are_refused_before_copying() {
        let bounce = [9u8; 64];
        let mut dst = [0u8; 16];
        for bad in [
            vec![rec(0, 17, 0)],
            vec![rec(0, 8, 9)],
            vec![rec(0, 8, u64::MAX)],
            vec![rec(0, 8, 0)],
            vec![rec(0, 8, 0), rec(8, 8, 0), rec(16, 8, 8)],
        ] {
            let job = Job {
                records: &bad,
                bounce: bounce.as_ptr(),
                dst: dst.as_mut_ptr(),
                len: 16,
            };
            assert!(CpuScatter.unpack(&job).is_err(), "{bad:?}");
        }
        assert!(dst.iter().all(|b| *b == 0));
    }

    #[test]
    fn the_unavailable_unpacker_refuses_every_job_without_writing_and_reports_bad_records_first() {
        let bounce = [9u8; 8];
        let mut dst = [0u8; 4];
        let mut u = Unavailable("no GPU unpack".into());
        let mut place = |records: &[loadMeta]| {
            let job = Job {
                records,
                bounce: bounce.as_ptr(),
                dst: dst.as_mut_ptr(),
                len: 4,
            };
            u.unpack(&job)
        };
        // A job it could place: refused (an error NCCL sees), with why.
        let e = place(&[rec(0, 4, 0)]).unwrap_err();
        assert_eq!(e.code, crate::abi::ncclResult_t::ncclInternalError);
        assert!(e.msg.contains("no GPU unpack"), "{}", e.msg);
        // A job with a record beyond the receive: that record is what is reported.
        let e = place(&[rec(0, 8, 0)]).unwrap_err();
        assert!(
            e.msg.contains("record 0 puts 8 bytes at offset 0 of a 4-byte receive"),
            "{}",
            e.msg
        );
        assert_eq!(dst, [0u8; 4], "nothing is ever placed");
    }
}
