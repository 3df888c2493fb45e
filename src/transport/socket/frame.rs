//! The header in front of every chunk on a stripe: which chunk of the stripe it is and how long.
//!
//! Both ends of a stripe know the sequence of chunks (the engine posts the same chunks in the same
//! order on both sides), so the header carries nothing the receiver needs to find the data; it is
//! there so the receiver can check that what arrives is what it posted. A mismatch means the two
//! ends are out of step, and it is reported as such instead of being written into the wrong
//! buffer unnoticed.
//!
//! Layout, little-endian: magic u32 ("TXRF"), payload length u32, sequence u64 (per stripe,
//! starting at 0).
use crate::error::{Error, Result};

pub const HEADER_BYTES: usize = 16;
const MAGIC: u32 = 0x4652_5854; // "TXRF" little-endian

/// The largest payload one frame carries (the length field is 32 bits).
pub const MAX_PAYLOAD: usize = u32::MAX as usize;

/// The header of chunk `seq` of `len` bytes.
pub fn encode(seq: u64, len: usize) -> [u8; HEADER_BYTES] {
    debug_assert!(len <= MAX_PAYLOAD);
    let mut h = [0u8; HEADER_BYTES];
    h[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    h[4..8].copy_from_slice(&(len as u32).to_le_bytes());
    h[8..16].copy_from_slice(&seq.to_le_bytes());
    h
}

/// Checks a received header against the chunk the receiver posted (`seq`, `len` bytes).
pub fn check(h: &[u8; HEADER_BYTES], seq: u64, len: usize) -> Result<()> {
    let magic = u32::from_le_bytes(h[0..4].try_into().unwrap());
    let got_len = u32::from_le_bytes(h[4..8].try_into().unwrap());
    let got_seq = u64::from_le_bytes(h[8..16].try_into().unwrap());
    if magic != MAGIC {
        return Err(Error::remote(format!(
            "stripe out of step: expected the header of chunk {seq} ({len} bytes), got bytes that are \
             no tcpxr frame header (magic {magic:#010x})"
        )));
    }
    if got_seq != seq || got_len as usize != len {
        return Err(Error::remote(format!(
            "stripe out of step: chunk {got_seq} of {got_len} bytes arrived where chunk {seq} of {len} \
             bytes was posted"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::ncclResult_t;

    #[test]
    fn a_header_checks_against_the_chunk_it_was_made_for_and_no_other() {
        let h = encode(7, 4096);
        check(&h, 7, 4096).unwrap();
        for (seq, len) in [(8, 4096), (6, 4096), (7, 4095), (7, 0)] {
            let e = check(&h, seq, len).unwrap_err();
            assert_eq!(e.code, ncclResult_t::ncclRemoteError);
            assert!(e.msg.contains("chunk 7 of 4096 bytes arrived"), "{}", e.msg);
        }
        check(&encode(u64::MAX, MAX_PAYLOAD), u64::MAX, MAX_PAYLOAD).unwrap();
        check(&encode(0, 0), 0, 0).unwrap();
    }

    #[test]
    fn garbage_is_reported_as_not_a_header() {
        let mut h = encode(1, 10);
        h[0] ^= 1;
        let e = check(&h, 1, 10).unwrap_err();
        assert!(e.msg.contains("no tcpxr frame header"), "{}", e.msg);
        // Every single-byte corruption of a header is caught.
        let good = encode(0x0102_0304_0506_0708, 0x1000);
        for i in 0..HEADER_BYTES {
            for bit in 0..8 {
                let mut h = good;
                h[i] ^= 1 << bit;
                assert!(check(&h, 0x0102_0304_0506_0708, 0x1000).is_err(), "byte {i} bit {bit}");
            }
        }
    }
}
