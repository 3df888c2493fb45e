//! Random 64-bit values that a peer must echo (the NCCL handle's nonce, a stripe listener's token)
//! or that must not collide (connect tickets).
use std::time::Instant;

/// A fresh random 64-bit value, for nonces and tokens.
pub fn nonce() -> u64 {
    let mut v = [0u8; 8];
    // SAFETY: getrandom writes at most v.len() bytes into v.
    let n = unsafe { libc::getrandom(v.as_mut_ptr() as *mut libc::c_void, v.len(), 0) };
    if n != 8 {
        // getrandom cannot fail for 8 bytes on Linux >= 3.17; still never hand out a fixed value.
        let t = Instant::now().elapsed().as_nanos() as u64 ^ std::process::id() as u64;
        return t.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (&v as *const _ as u64);
    }
    u64::from_ne_bytes(v)
}
