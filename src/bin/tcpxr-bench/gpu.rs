//! `tcpxr-bench gpu`: the unpack kernel against cudaMemcpy device-to-device on the same bytes
//! (timed in turn, from the host and on the GPU alone), batched against per-chunk launches and
//! against the naive per-chunk way of the prototype (stream create, descriptor malloc + copy,
//! launch, synchronise, free, destroy), the latency from
//! launch to a completed event, and exact placement of random fragment lists; last, the same
//! fragments placed by the copy engines (a probe: no multiprocessor taken from the application).
use cudarc::driver::sys;
use nccl_net_tcpxr::gpu::unpack::{Job, Unpacker, MAX_JOBS};

/// The kernel's parameter block, as the naive per-chunk path passes it.
#[repr(C)]
struct NaiveParam {
    njobs: i32,
    total: u32,
    jobs: [Job; MAX_JOBS],
}
use nccl_net_tcpxr::gpu::{Gpu, Mapped};
use std::ffi::c_void;
use std::time::Instant;

fn ok(r: sys::CUresult, what: &str) {
    if r != sys::CUresult::CUDA_SUCCESS {
        eprintln!("tcpxr-bench gpu: {what} failed: {r:?}");
        std::process::exit(5);
    }
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn dev_alloc(len: usize) -> u64 {
    let mut p: sys::CUdeviceptr = 0;
    // SAFETY: valid out-pointer.
    ok(unsafe { sys::cuMemAlloc_v2(&mut p, len) }, "cuMemAlloc");
    p
}

fn htod(dst: u64, src: &[u8]) {
    // SAFETY: dst was allocated with at least src.len() bytes.
    ok(
        unsafe { sys::cuMemcpyHtoD_v2(dst, src.as_ptr() as *const c_void, src.len()) },
        "cuMemcpyHtoD",
    );
}

fn dtoh(dst: &mut [u8], src: u64) {
    // SAFETY: src holds at least dst.len() bytes.
    ok(
        unsafe { sys::cuMemcpyDtoH_v2(dst.as_mut_ptr() as *mut c_void, src, dst.len()) },
        "cuMemcpyDtoH",
    );
}

struct Timer(sys::CUevent, sys::CUevent);
impl Timer {
    fn new() -> Timer {
        let (mut a, mut b) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: a valid out-pointer; the GPU's context is current (bound by the caller).
        ok(unsafe { sys::cuEventCreate(&mut a, 0) }, "cuEventCreate");
        // SAFETY: as above.
        ok(unsafe { sys::cuEventCreate(&mut b, 0) }, "cuEventCreate");
        Timer(a, b)
    }
    /// Milliseconds `f` takes on `stream`.
    fn time(&self, stream: sys::CUstream, f: impl FnOnce()) -> f64 {
        let mut ms = 0f32;
        // SAFETY: the timer's live event and the caller's live stream.
        ok(unsafe { sys::cuEventRecord(self.0, stream) }, "record");
        f();
        // SAFETY: as above.
        ok(unsafe { sys::cuEventRecord(self.1, stream) }, "record");
        // SAFETY: the timer's live event.
        ok(unsafe { sys::cuEventSynchronize(self.1) }, "sync");
        // SAFETY: the timer's two events, both recorded and complete; a valid out-pointer.
        ok(
            unsafe { sys::cuEventElapsedTime_v2(&mut ms, self.0, self.1) },
            "elapsed",
        );
        ms as f64
    }

    /// Milliseconds the GPU takes for what `f` issues on `stream`, without the time to issue it:
    /// the stream waits on `gate` (host-mapped, set once `f` has issued everything), and `f` gets
    /// the start event so work on other streams can wait for it too. None where the GPU cannot
    /// wait on host memory.
    fn time_gpu_only(&self, stream: sys::CUstream, gate: &Mapped, f: impl FnOnce(sys::CUevent)) -> Option<f64> {
        /// Opens the gate when dropped, so a panic in `f` cannot leave the streams held.
        struct Open(*mut u32);
        impl Drop for Open {
            fn drop(&mut self) {
                // SAFETY: the gate's 4 mapped bytes, alive for the whole timing.
                unsafe { self.0.write_volatile(1) }
            }
        }
        let flag = gate.host as *mut u32;
        let mut ms = 0f32;
        // SAFETY: the gate's 4 mapped, aligned bytes, written here with volatile stores (the GPU
        // only reads them).
        unsafe { flag.write_volatile(0) };
        let open = Open(flag);
        // SAFETY: the caller's live stream waits on the gate's device address.
        let wait = unsafe {
            sys::cuStreamWaitValue32_v2(
                stream,
                gate.dev,
                1,
                sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_GEQ as u32,
            )
        };
        if wait != sys::CUresult::CUDA_SUCCESS {
            return None;
        }
        // SAFETY: the timer's live event and the caller's live stream.
        ok(unsafe { sys::cuEventRecord(self.0, stream) }, "record");
        f(self.0);
        // SAFETY: as above.
        ok(unsafe { sys::cuEventRecord(self.1, stream) }, "record");
        drop(open);
        // SAFETY: the timer's live event.
        ok(unsafe { sys::cuEventSynchronize(self.1) }, "sync");
        // SAFETY: the timer's two events, both recorded and complete; a valid out-pointer.
        ok(
            unsafe { sys::cuEventElapsedTime_v2(&mut ms, self.0, self.1) },
            "elapsed",
        );
        Some(ms as f64)
    }
}

/// The fragments of `total` bytes cut into `frag` byte pieces, read from shuffled places in the
/// bounce buffer (`stride` apart) with `misalign` random extra bytes, written contiguously.
fn fragments(total: usize, frag: usize, stride: usize, misalign: u64, rng: &mut Rng) -> Vec<(u32, u32, u64)> {
    let n = total / frag;
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    (0..n)
        .map(|i| {
            (
                (order[i] * stride) as u32 + rng.below(misalign + 1) as u32,
                frag as u32,
                (i * frag) as u64,
            )
        })
        .collect()
}

fn write_records(m: &Mapped, recs: &[(u32, u32, u64)]) {
    assert!(recs.len() * 16 <= m.len);
    for (i, (s, l, d)) in recs.iter().enumerate() {
        let meta = nccl_net_tcpxr::abi::loadMeta {
            src_off: *s,
            len: *l,
            dst_off: *d,
        };
        // SAFETY: i * 16 + 16 <= m.len; loadMeta is 16 bytes.
        unsafe { std::ptr::write((m.host as *mut nccl_net_tcpxr::abi::loadMeta).add(i), meta) };
    }
}

fn expected(src: &[u8], recs: &[(u32, u32, u64)], dst_len: usize, base: &[u8]) -> Vec<u8> {
    let mut out = base.to_vec();
    out.resize(dst_len, 0);
    for (s, l, d) in recs {
        out[*d as usize..*d as usize + *l as usize].copy_from_slice(&src[*s as usize..*s as usize + *l as usize]);
    }
    out
}

pub fn run(args: &[String]) -> i32 {
    let a = super::parse_or_exit!("gpu", args, &[super::cli::value("--mib")]);
    let mib = super::read_or_exit!(a, "--mib", "64", |s| super::cli::int_in(s, 1, 4096)) as usize;
    let total = mib << 20;
    let frag = 4096usize;
    let stride = frag + 64;
    let chunk = 512 << 10;
    let gpu = match Gpu::get(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("tcpxr-bench gpu: {}", e.msg);
            return 5;
        }
    };
    // The bench's own allocations, copies and events use GPU 0's context on this thread.
    if let Err(e) = gpu.bind() {
        eprintln!("tcpxr-bench gpu: {}", e.msg);
        return 5;
    }
    let stream = gpu.stream;
    let timer = Timer::new();
    let nfrag = total / frag;
    let src_len = nfrag * stride + 4096;
    let src_host: Vec<u8> = (0..src_len).map(|i| (i * 7 + i / 4093) as u8).collect();
    let src = dev_alloc(src_len);
    let dst = dev_alloc(total);
    htod(src, &src_host);
    let records = Mapped::new(&gpu, nfrag * 16).expect("mapped records");
    let per_chunk = chunk / frag;
    let nchunks = nfrag / per_chunk;
    let launches = nchunks.div_ceil(MAX_JOBS);
    // A slot per launch of a batch: the GPU-only timing holds every launch until all are issued.
    let mut unpacker = Unpacker::new(gpu.clone(), launches.max(4)).expect("unpacker");
    let gate = Mapped::new(&gpu, 4).expect("mapped gate");
    let mut rng = Rng(0x1234_5678);
    let gbps = |ms: f64| total as f64 / (ms / 1e3) / 1e9;
    let memcpy = || {
        // SAFETY: src and dst are device allocations of at least `total` bytes; a live stream.
        ok(unsafe { sys::cuMemcpyDtoDAsync_v2(dst, src, total, stream) }, "memcpy")
    };

    // cudaMemcpy device-to-device of the same number of bytes: the reference.
    let memcpy_ms = (0..10).map(|_| timer.time(stream, memcpy)).fold(f64::MAX, f64::min);
    println!(
        "GPU memcpy D2D {mib} MiB: {:.3} ms = {:.1} GB/s",
        memcpy_ms,
        gbps(memcpy_ms)
    );

    for (label, misalign) in [
        ("4 KiB fragments, aligned", 0u64),
        ("4 KiB fragments, random alignment", 63),
    ] {
        let recs = fragments(total, frag, stride, misalign, &mut rng);
        write_records(&records, &recs);
        // Batched: every chunk of the buffer, as few launches as the batch limit allows.
        let batched = |u: &mut Unpacker| {
            for c in 0..nchunks {
                let rec = records.dev + (c * per_chunk * 16) as u64;
                if !u.add(rec, per_chunk as u32, src, dst) {
                    while u.launch().unwrap().is_none() {}
                    assert!(u.add(rec, per_chunk as u32, src, dst));
                }
            }
            while u.launch().unwrap().is_none() {}
            // Launches alternate over two streams: the end of the timing waits for both.
            // SAFETY: the GPU's own stream.
            unsafe { u.join_into(stream) }.unwrap();
        };
        // Best of 30 each, memcpy and unpack in turn so both see the same conditions; timed from
        // the host (issuing included, as tcpxr-bench always reported) and on the GPU alone. A
        // 64 MiB copy takes about 36 us, so single runs move by several percent.
        let (mut host, mut alone) = ([f64::MAX; 2], [f64::MAX; 2]);
        for _ in 0..30 {
            host[0] = host[0].min(timer.time(stream, memcpy));
            host[1] = host[1].min(timer.time(stream, || batched(&mut unpacker)));
            if let Some(ms) = timer.time_gpu_only(stream, &gate, |_| memcpy()) {
                alone[0] = alone[0].min(ms);
            }
            let unpack_alone = timer.time_gpu_only(stream, &gate, |start| {
                // SAFETY: the timer's live event.
                unsafe { unpacker.start_after(start) }.unwrap();
                batched(&mut unpacker);
            });
            if let Some(ms) = unpack_alone {
                alone[1] = alone[1].min(ms);
            }
        }
        let mut got = vec![0u8; total];
        dtoh(&mut got, dst);
        let want = expected(&src_host, &recs, total, &[]);
        let correct = got == want;
        let gpu_alone = if alone[1] < f64::MAX {
            format!(
                "; GPU time alone {:.3} ms = {:.0}% of memcpy's {:.3} ms",
                alone[1],
                100.0 * alone[0] / alone[1],
                alone[0]
            )
        } else {
            "; GPU time alone: not measured (no stream wait on host memory)".to_string()
        };
        println!(
            "GPU unpack batched ({label}, {nchunks} chunks of {} KiB in {launches} launches): {:.3} ms = {:.1} GB/s = {:.0}% of memcpy{gpu_alone}, correct: {correct}",
            chunk >> 10,
            host[1],
            gbps(host[1]),
            100.0 * host[0] / host[1]
        );
        if !correct {
            return 6;
        }
    }
    // One launch per chunk on the persistent stream, no synchronisation in between.
    let recs = fragments(total, frag, stride, 0, &mut rng);
    write_records(&records, &recs);
    let ms = timer.time(stream, || {
        for c in 0..nchunks {
            unpacker.add(records.dev + (c * per_chunk * 16) as u64, per_chunk as u32, src, dst);
            while unpacker.launch().unwrap().is_none() {}
        }
        // SAFETY: the GPU's own stream.
        unsafe { unpacker.join_into(stream) }.unwrap();
    });
    println!(
        "GPU unpack per-chunk launches ({nchunks} launches, persistent stream): {ms:.3} ms = {:.1} GB/s",
        gbps(ms)
    );
    // The naive way of seed 001, per chunk: stream create, descriptor alloc + copy, launch, sync, free, destroy.
    let start = Instant::now();
    let naive_chunks = nchunks.min(32);
    let host_desc: Vec<u8> = recs[..per_chunk]
        .iter()
        .flat_map(|(s, l, d)| {
            [
                s.to_le_bytes().to_vec(),
                l.to_le_bytes().to_vec(),
                d.to_le_bytes().to_vec(),
            ]
            .concat()
        })
        .collect();
    for _ in 0..naive_chunks {
        let mut st: sys::CUstream = std::ptr::null_mut();
        // Each handle is created and destroyed within the iteration.
        // SAFETY: a valid out-pointer; the GPU's context is current.
        ok(unsafe { sys::cuStreamCreate(&mut st, 0) }, "cuStreamCreate");
        let desc = dev_alloc(host_desc.len());
        // SAFETY: desc holds host_desc.len() bytes; host_desc outlives the copy (synchronised below).
        let r = unsafe { sys::cuMemcpyHtoDAsync_v2(desc, host_desc.as_ptr() as *const c_void, host_desc.len(), st) };
        ok(r, "htod");
        let mut param = NaiveParam {
            njobs: 1,
            total: per_chunk as u32,
            jobs: [Job::default(); MAX_JOBS],
        };
        param.jobs[0] = Job {
            records: desc,
            bounce: src,
            dst,
            first: 0,
            count: per_chunk as u32,
        };
        let mut params: [*mut c_void; 1] = [&mut param as *mut NaiveParam as *mut c_void];
        let kernel = nccl_net_tcpxr::gpu::unpack_function(&gpu).expect("the unpack kernel");
        // SAFETY: the parameter matches tcpxr_unpack(const TcpxrBatch) and lives across the call;
        // its records and both ranges are device allocations it stays inside.
        let r = unsafe {
            sys::cuLaunchKernel(
                kernel,
                16,
                1,
                1,
                256,
                1,
                1,
                0,
                st,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        ok(r, "launch");
        // SAFETY: the stream made above.
        ok(unsafe { sys::cuStreamSynchronize(st) }, "sync");
        // SAFETY: desc from dev_alloc, no longer used by the finished stream; freed once.
        ok(unsafe { sys::cuMemFree_v2(desc) }, "free");
        // SAFETY: the stream made above, idle, destroyed once.
        ok(unsafe { sys::cuStreamDestroy_v2(st) }, "destroy");
    }
    let naive_ms = start.elapsed().as_secs_f64() * 1e3 / naive_chunks as f64;
    println!(
        "GPU naive per-chunk (create stream, alloc + copy descriptors, launch, synchronize, free, destroy): {naive_ms:.3} ms per {} KiB chunk = {:.2} GB/s",
        chunk >> 10,
        chunk as f64 / (naive_ms / 1e3) / 1e9
    );
    // Launch to completed event, one small chunk, host polling like test() does.
    let iters = 2000;
    let start = Instant::now();
    for _ in 0..iters {
        unpacker.add(records.dev, 1, src, dst);
        let b = unpacker.launch().unwrap().unwrap();
        while !unpacker.done(b).unwrap() {}
    }
    let us = start.elapsed().as_secs_f64() * 1e6 / iters as f64;
    println!("GPU launch-to-completion, 1 chunk of 1 fragment, polled: {us:.1} us");
    let start = Instant::now();
    for _ in 0..iters / 10 {
        for c in 0..16 {
            let _ = unpacker.add(records.dev + (c * per_chunk * 16) as u64, per_chunk as u32, src, dst);
        }
        let b = unpacker.launch().unwrap().unwrap();
        while !unpacker.done(b).unwrap() {}
    }
    let us = start.elapsed().as_secs_f64() * 1e6 / (iters / 10) as f64;
    println!(
        "GPU launch-to-completion, batch of 16 chunks x 512 KiB, polled: {us:.1} us ({:.2} us per chunk)",
        us / 16.0
    );
    println!("GPU unpack launches in this run: {}", unpacker.launches());
    if !random_lists_are_exact(&gpu, &mut unpacker, &mut rng) {
        return 7;
    }
    copy_engine_probe(&timer, stream, src, dst, total, memcpy_ms, &src_host, &mut rng);
    0
}

/// cuMemcpyBatchAsync (CUDA 12.8+) as the driver exports it: `_v2` (CUDA 13) has no failIdx.
type BatchV2 = unsafe extern "C" fn(
    *mut sys::CUdeviceptr,
    *mut sys::CUdeviceptr,
    *mut usize,
    usize,
    *mut sys::CUmemcpyAttributes,
    *mut usize,
    usize,
    sys::CUstream,
) -> sys::CUresult;
type BatchV1 = unsafe extern "C" fn(
    *mut sys::CUdeviceptr,
    *mut sys::CUdeviceptr,
    *mut usize,
    usize,
    *mut sys::CUmemcpyAttributes,
    *mut usize,
    usize,
    *mut usize,
    sys::CUstream,
) -> sys::CUresult;

/// The same 4 KiB fragments placed by the copy engines instead of the kernel: one batched copy
/// call per 512 KiB chunk, asking the driver to prefer overlap with compute. A probe for placing
/// TCPX's pages without taking multiprocessors from the application (docs/BENCHMARKS.md section
/// 10); it reports and returns when the driver has no batched copies.
#[allow(clippy::too_many_arguments)]
fn copy_engine_probe(
    timer: &Timer,
    stream: sys::CUstream,
    src: u64,
    dst: u64,
    total: usize,
    memcpy_ms: f64,
    src_host: &[u8],
    rng: &mut Rng,
) {
    // SAFETY: loading the driver library tcpxr already uses; symbols are looked up, not assumed.
    let lib = match unsafe { libloading::Library::new("libcuda.so.1") } {
        Ok(l) => l,
        Err(e) => {
            println!("GPU copy-engine placement: libcuda.so.1 not loadable: {e}");
            return;
        }
    };
    // SAFETY: BatchV2 is cuda.h's signature of this symbol; `lib` stays loaded while it is used.
    let v2 = unsafe { lib.get::<BatchV2>(b"cuMemcpyBatchAsync_v2") }.ok().map(|f| *f);
    // SAFETY: BatchV1 is cuda.h's signature of this symbol; `lib` stays loaded while it is used.
    let v1 = unsafe { lib.get::<BatchV1>(b"cuMemcpyBatchAsync") }.ok().map(|f| *f);
    if v2.is_none() && v1.is_none() {
        println!("GPU copy-engine placement: this driver has no cuMemcpyBatchAsync (CUDA 12.8+)");
        return;
    }
    let frag = 4096usize;
    let per_chunk = (512usize << 10) / frag;
    let recs = fragments(total, frag, frag + 64, 63, rng);
    let mut dsts: Vec<sys::CUdeviceptr> = recs.iter().map(|r| dst + r.2).collect();
    let mut srcs: Vec<sys::CUdeviceptr> = recs.iter().map(|r| src + r.0 as u64).collect();
    let mut sizes: Vec<usize> = recs.iter().map(|r| r.1 as usize).collect();
    let device = sys::CUmemLocation {
        type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        id: 0,
    };
    let mut attrs = [sys::CUmemcpyAttributes {
        srcAccessOrder: sys::CUmemcpySrcAccessOrder::CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,
        srcLocHint: device,
        dstLocHint: device,
        flags: sys::CUmemcpyFlags::CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE as u32,
    }];
    let mut attr_idx = [0usize];
    let mut failed = None;
    let ms = timer.time(stream, || {
        for c in (0..recs.len()).step_by(per_chunk) {
            let n = per_chunk.min(recs.len() - c);
            // SAFETY: n entries from c on in each array; every range lies in src or dst.
            let r = unsafe {
                match (v2, v1) {
                    (Some(f), _) => f(
                        dsts.as_mut_ptr().add(c),
                        srcs.as_mut_ptr().add(c),
                        sizes.as_mut_ptr().add(c),
                        n,
                        attrs.as_mut_ptr(),
                        attr_idx.as_mut_ptr(),
                        1,
                        stream,
                    ),
                    (None, Some(f)) => {
                        let mut fail_idx = 0usize;
                        f(
                            dsts.as_mut_ptr().add(c),
                            srcs.as_mut_ptr().add(c),
                            sizes.as_mut_ptr().add(c),
                            n,
                            attrs.as_mut_ptr(),
                            attr_idx.as_mut_ptr(),
                            1,
                            &mut fail_idx,
                            stream,
                        )
                    }
                    (None, None) => unreachable!(),
                }
            };
            if r != sys::CUresult::CUDA_SUCCESS && failed.is_none() {
                failed = Some(r);
            }
        }
    });
    if let Some(r) = failed {
        println!("GPU copy-engine placement: cuMemcpyBatchAsync failed: {r:?}");
        return;
    }
    let mut got = vec![0u8; total];
    dtoh(&mut got, dst);
    let correct = got == expected(src_host, &recs, total, &[]);
    println!(
        "GPU copy-engine placement (cuMemcpyBatchAsync{}, one call per 512 KiB chunk, 4 KiB fragments at random alignment): {ms:.3} ms = {:.1} GB/s = {:.0}% of memcpy, correct: {correct}",
        if v2.is_some() { "_v2" } else { "" },
        total as f64 / (ms / 1e3) / 1e9,
        100.0 * memcpy_ms / ms
    );
}

/// Random fragment lists with every length from 1 byte up and every alignment, host-mapped
/// bounce and device destination, in batches of several jobs: placed byte for byte.
fn random_lists_are_exact(gpu: &std::sync::Arc<Gpu>, unpacker: &mut Unpacker, rng: &mut Rng) -> bool {
    let bounce = Mapped::new(gpu, 1 << 20).unwrap();
    // SAFETY: bounce.host holds bounce.len bytes.
    let bounce_host = unsafe { std::slice::from_raw_parts_mut(bounce.host, bounce.len) };
    for (i, b) in bounce_host.iter_mut().enumerate() {
        *b = (i * 13 + (i >> 9)) as u8;
    }
    let dst_len = 1 << 20;
    let dst = dev_alloc(dst_len);
    let records = Mapped::new(gpu, 8 * 2048 * 16).unwrap();
    let mut all_ok = true;
    for round in 0..20 {
        let zero = vec![0u8; dst_len];
        htod(dst, &zero);
        let mut recs_all = vec![];
        let mut cursor = 0u64;
        let jobs = 1 + rng.below(8) as usize;
        for j in 0..jobs {
            let n = 1 + rng.below(300) as usize;
            let mut recs = vec![];
            for _ in 0..n {
                let len = match rng.below(4) {
                    0 => 1 + rng.below(15),
                    1 => 1 + rng.below(4096),
                    2 => 4096,
                    _ => 16 * (1 + rng.below(256)),
                } as u32;
                let gap = rng.below(17);
                if cursor + gap + len as u64 > dst_len as u64 {
                    break;
                }
                let src = rng.below((bounce.len - len as usize) as u64) as u32;
                recs.push((src, len, cursor + gap));
                cursor += gap + len as u64;
            }
            let base = j * 2048 * 16;
            for (k, (s, l, d)) in recs.iter().enumerate() {
                let meta = nccl_net_tcpxr::abi::loadMeta {
                    src_off: *s,
                    len: *l,
                    dst_off: *d,
                };
                // SAFETY: base + k*16 stays within the records buffer (at most 300 records per job).
                unsafe {
                    std::ptr::write(
                        (records.host.add(base) as *mut nccl_net_tcpxr::abi::loadMeta).add(k),
                        meta,
                    )
                };
            }
            assert!(unpacker.add(records.dev + base as u64, recs.len() as u32, bounce.dev, dst));
            recs_all.extend(recs);
        }
        let b = unpacker.launch().unwrap().unwrap();
        while !unpacker.done(b).unwrap() {}
        let mut got = vec![0u8; dst_len];
        dtoh(&mut got, dst);
        let want = expected(bounce_host, &recs_all, dst_len, &[]);
        if got != want {
            let first = got.iter().zip(&want).position(|(a, b)| a != b).unwrap();
            println!("GPU random fragment list round {round}: WRONG at byte {first}");
            all_ok = false;
        }
    }
    println!("GPU random fragment lists (1 B - 4 KiB, any alignment, 1-8 jobs per launch, 20 rounds): exact: {all_ok}");
    all_ok
}
