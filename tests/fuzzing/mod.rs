//! What the fuzz tests share (tests/fuzz_decoders.rs, tests/fuzz_live.rs): a small PRNG, the
//! hostile variants of a valid message, and the case budget and seed from the environment.
#![allow(dead_code)]

use nccl_net_tcpxr::engine::wire::{MAX_CHUNK_BYTES, MAX_INLINE_BYTES, MAX_STRIPES};

/// xorshift64*: small, fast, and good enough to pick mutations.
pub struct Rng(pub u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Values that break length and count checks: zero, one, the edges of every integer width, and
/// just past tcpxr's own bounds.
pub const INTERESTING: &[u64] = &[
    0,
    1,
    2,
    0x7f,
    0x80,
    0xff,
    0x100,
    0x7fff,
    0x8000,
    0xffff,
    0x1_0000,
    4095,
    4096,
    4097,
    MAX_STRIPES as u64,
    MAX_STRIPES as u64 + 1,
    MAX_CHUNK_BYTES as u64,
    MAX_CHUNK_BYTES as u64 + 4096,
    MAX_INLINE_BYTES as u64,
    MAX_INLINE_BYTES as u64 + 1,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_fffe,
    0xffff_ffff,
    1 << 32,
    1 << 40,
    0x7fff_ffff_ffff_ffff,
    0x8000_0000_0000_0000,
    u64::MAX,
];

/// A hostile variant of `valid`: usually a few mutations of it, sometimes truncated or extended,
/// sometimes random bytes. `fixed`: the decoder takes exactly that many bytes, so truncation is a
/// zeroed tail (a short read into a cleared buffer) and the length never changes.
pub fn hostile(rng: &mut Rng, valid: &[u8], other: &[u8], fixed: Option<usize>) -> Vec<u8> {
    let mut b = valid.to_vec();
    match rng.below(100) {
        // Unchanged: the decoder must accept what is valid.
        0..=4 => {}
        // Random bytes.
        5..=19 => {
            let n = fixed.unwrap_or_else(|| rng.below(valid.len() * 2 + 8));
            b = rng.bytes(n);
        }
        // Truncated.
        20..=29 => {
            let keep = rng.below(valid.len());
            match fixed {
                Some(_) => b[keep..].fill(0),
                None => b.truncate(keep),
            }
        }
        // A few mutations.
        _ => {
            for _ in 0..1 + rng.below(8) {
                mutate_once(rng, &mut b, other, fixed.is_none());
            }
        }
    }
    if let Some(n) = fixed {
        b.resize(n, 0);
    }
    b
}

pub fn mutate_once(rng: &mut Rng, b: &mut Vec<u8>, other: &[u8], resize: bool) {
    if b.is_empty() {
        b.push(rng.next() as u8);
        return;
    }
    let at = rng.below(b.len());
    match rng.below(9) {
        0 => b[at] ^= 1 << rng.below(8),
        1 => b[at] = rng.next() as u8,
        2 => b[at] = [0u8, 1, 0x7f, 0x80, 0xff][rng.below(5)],
        // A boundary value over a field: 2, 4 or 8 bytes, little-endian, at a field-aligned offset
        // more often than not (that is where tcpxr's lengths and counts sit).
        3 | 4 => {
            let width = [2usize, 4, 8][rng.below(3)];
            let at = if rng.chance(70) { at & !(width.min(4) - 1) } else { at };
            let v = INTERESTING[rng.below(INTERESTING.len())].to_le_bytes();
            for (k, byte) in v.iter().take(width).enumerate() {
                if let Some(slot) = b.get_mut(at + k) {
                    *slot = *byte;
                }
            }
        }
        5 => {
            let j = rng.below(b.len());
            b.swap(at, j);
        }
        // Splice in a piece of another valid message.
        6 if !other.is_empty() => {
            let from = rng.below(other.len());
            let n = rng.below(other.len() - from) + 1;
            for k in 0..n {
                if let Some(slot) = b.get_mut(at + k) {
                    *slot = other[from + k];
                }
            }
        }
        7 if resize => b.truncate(at),
        8 if resize => {
            let n = 1 + rng.below(24);
            let extra = rng.bytes(n);
            b.extend_from_slice(&extra);
        }
        _ => b[at] = !b[at],
    }
}

pub fn cases() -> u64 {
    std::env::var("TCPXR_FUZZ_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(500_000)
}

pub fn seed() -> u64 {
    match std::env::var("TCPXR_FUZZ_SEED")
        .ok()
        .and_then(|v| v.trim().parse().ok())
    {
        Some(s) => s,
        None => {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos() as u64;
            t ^ (std::process::id() as u64) << 32
        }
    }
}
