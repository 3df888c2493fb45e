//! Placing fragments on the CPU, for destinations in host memory. Same records as the GPU kernel.
use crate::abi::loadMeta;
use crate::error::{Error, Result};

/// Copies every record's `len` bytes from `bounce + src_off` to `dst + dst_off`, after checking
/// each record stays inside both buffers.
///
/// # Safety
/// `bounce` must be readable for `bounce_len` bytes and `dst` writable for `dst_len` bytes, and
/// the two ranges must not overlap.
pub unsafe fn scatter(
    records: &[loadMeta],
    bounce: *const u8,
    bounce_len: usize,
    dst: *mut u8,
    dst_len: usize,
) -> Result<usize> {
    let mut total = 0usize;
    for (i, r) in records.iter().enumerate() {
        let (src_off, len, dst_off) = (r.src_off as usize, r.len as usize, r.dst_off as usize);
        if src_off.checked_add(len).is_none_or(|e| e > bounce_len)
            || dst_off.checked_add(len).is_none_or(|e| e > dst_len)
        {
            return Err(Error::internal(format!(
                "unpack record {i} ({len} bytes from {src_off} to {dst_off}) leaves its buffers ({bounce_len} / {dst_len} bytes)"
            )));
        }
        // SAFETY: both ranges lie inside their buffers (checked above), which the caller promises
        // are readable / writable and disjoint.
        unsafe { std::ptr::copy_nonoverlapping(bounce.add(src_off), dst.add(dst_off), len) };
        total += len;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(src_off: u32, len: u32, dst_off: u64) -> loadMeta {
        loadMeta { src_off, len, dst_off }
    }

    #[test]
    fn scatters_misaligned_and_one_byte_records_exactly() {
        let bounce: Vec<u8> = (0..=255u8).collect();
        let mut dst = vec![0u8; 64];
        let records = [rec(3, 1, 0), rec(100, 7, 1), rec(17, 13, 40), rec(255, 1, 63)];
        // SAFETY: both buffers are live and disjoint.
        let n = unsafe { scatter(&records, bounce.as_ptr(), bounce.len(), dst.as_mut_ptr(), dst.len()) }.unwrap();
        assert_eq!(n, 22);
        assert_eq!(dst[0], 3);
        assert_eq!(&dst[1..8], &[100, 101, 102, 103, 104, 105, 106]);
        assert_eq!(&dst[40..53], &(17..30).collect::<Vec<u8>>()[..]);
        assert_eq!(dst[63], 255);
        assert!(dst[8..40].iter().all(|b| *b == 0));
    }

    #[test]
    fn a_record_outside_its_buffers_is_refused_before_any_copy() {
        let bounce = [1u8; 16];
        let mut dst = [0u8; 16];
        for bad in [rec(10, 7, 0), rec(0, 4, 13), rec(u32::MAX, 2, 0)] {
            // SAFETY: buffers are live; the record is checked before copying.
            let r = unsafe { scatter(&[bad], bounce.as_ptr(), 16, dst.as_mut_ptr(), 16) };
            assert!(r.is_err());
        }
        assert_eq!(dst, [0u8; 16]);
    }
}
