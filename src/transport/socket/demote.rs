//! Moving the lines a read just wrote out of the reading core's private caches.
//!
//! A receive bound for GPU memory lands in pinned bounce memory, and the GPU reads it (the copy
//! engine, or NCCL's kernel across PCIe) as soon as the receive completes. The lines are then
//! still modified in the L2 of the I/O thread's core, so every line the GPU reads is a snoop into
//! that core, and the core's next socket copies run up to 1.7x slower while it answers them (runs
//! 262-266, perf). `cldemote` after each read hands the lines to the shared L3 at once, where the
//! GPU's read finds them without the snoop: each copy's wait halved and sendrecv took 12-17 %
//! less time at 8-16 MiB at 2 ranks (runs 272-273, 278; docs/BENCHMARKS.md, GPU buffers). It is
//! not free: the loop below took more of the I/O threads' time than it saved in their socket
//! copies (run 280, perf), and the collectives, whose bounce pages NCCL's kernel reads, took
//! 4-26 % longer with it at 2 ranks (run 279), so only the receives the copy engine places are
//! demoted (engine/lanes/recv.rs, RecvCtx): sendrecv keeps its gain and the collectives their
//! time (run 285). NCCL_TCPXR_BOUNCE_DEMOTE=0 turns it off.
//! Host buffers are not demoted: NCCL reads them later, from the cache, and demoting cost them up
//! to 17 % (run 272).
//!
//! `cldemote` is a hint: it never changes memory. CPUs without it (before Sapphire Rapids, and
//! AMD's) decode it as a no-op (it sits in the reserved-NOP opcodes); they are skipped all the
//! same, so as not to spend an instruction a line on nothing.

/// Bytes of a cache line.
const LINE: usize = 64;

/// Whether this CPU has `cldemote` (CPUID leaf 7, ECX bit 25); asked once.
pub fn supported() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *HAS.get_or_init(|| std::arch::x86_64::__cpuid_count(7, 0).ecx >> 25 & 1 == 1)
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Demotes every line of `ptr .. ptr + len`, memory this process has mapped, from this core's
/// private caches to the shared L3. Memory is unchanged; lines not cached here are left alone.
pub fn lines(ptr: usize, len: usize) {
    if len == 0 || !supported() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        let mut line = ptr & !(LINE - 1);
        while line < ptr + len {
            // SAFETY: cldemote is a hint that changes no memory; the CPU has it (checked), and the
            // caller's range is memory this process has mapped (a buffer a read just wrote).
            unsafe { std::arch::asm!("cldemote [{}]", in(reg) line, options(nostack, preserves_flags)) };
            line += LINE;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demoting_leaves_every_byte_as_it_was_at_any_alignment() {
        let data: Vec<u8> = (0..9000u32).map(|i| (i * 7 + 3) as u8).collect();
        let mut buf = data.clone();
        for (off, len) in [(0, 9000), (1, 63), (63, 2), (100, 4096), (8999, 1), (5, 0)] {
            lines(buf.as_mut_ptr() as usize + off, len);
        }
        assert_eq!(buf, data);
    }
}
