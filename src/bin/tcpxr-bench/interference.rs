//! `tcpxr-bench interference`: what tcpxr's own GPU work costs a GEMM on the same GPU.
//!
//! A bf16 GEMM (cuBLAS, loaded at run time) runs on a stream of its own, in batches, the whole
//! time, while two endpoints of this process move messages GPU 0 -> GPU 0 through tcpxr's table as
//! fast as loopback carries them, in periods on and off by turns; the ratio compares the batches
//! that ran wholly with traffic to those that ran wholly without (a GPU warming up and clocking
//! down weighs on both alike). With GPU buffers that traffic is all of tcpxr's GPU work: the sender's
//! device-to-host staging copies and the receiver's unpack kernels (bounce pages placed by the
//! kernel, events polled). With host buffers the same traffic does no GPU work, which makes it the
//! control: its ratio shows what the measurement itself costs (CPU load, noise).
//!
//! One process and one context, as under NCCL, so tcpxr's kernels and the GEMM share the GPU's
//! multiprocessors instead of time-slicing between processes. NCCL's own kernels are not here:
//! this isolates tcpxr's share (ncclTests/interference.py measures the whole of NCCL).
use super::{check, cli, connect_pair, init, parse_or_exit, read_or_exit, run_side, Slot, NET};
use cudarc::driver::sys;
use nccl_net_tcpxr::abi::{NCCL_PTR_CUDA, NCCL_PTR_HOST};
use nccl_net_tcpxr::gpu::Gpu;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

fn ok(r: sys::CUresult, what: &str) {
    if r != sys::CUresult::CUDA_SUCCESS {
        eprintln!("tcpxr-bench interference: {what} failed: {r:?}");
        std::process::exit(5);
    }
}

/// The three cuBLAS entry points a GEMM needs, from the library found at run time.
struct Cublas {
    _lib: libloading::Library,
    handle: *mut c_void,
    gemm_ex: GemmEx,
}

type GemmEx = unsafe extern "C" fn(
    *mut c_void,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    c_int,
    c_int,
    *const c_void,
    c_int,
    c_int,
    *const c_void,
    *mut c_void,
    c_int,
    c_int,
    c_int,
    c_int,
) -> c_int;

const CUBLAS_OP_N: c_int = 0;
const CUDA_R_16BF: c_int = 14;
const CUBLAS_COMPUTE_32F: c_int = 68;
const CUBLAS_GEMM_DEFAULT: c_int = -1;

impl Cublas {
    fn load(stream: sys::CUstream) -> Result<Cublas, String> {
        let names = ["libcublas.so.13", "libcublas.so.12", "libcublas.so"];
        // SAFETY: loading cuBLAS runs its initialisers, which only set up the library.
        let lib = names
            .iter()
            .find_map(|n| unsafe { libloading::Library::new(*n) }.ok())
            .ok_or_else(|| format!("cuBLAS not found (tried {names:?}; add its directory to LD_LIBRARY_PATH)"))?;
        // SAFETY: the symbol has the C signature of cublas_api.h.
        let create: libloading::Symbol<unsafe extern "C" fn(*mut *mut c_void) -> c_int> =
            unsafe { lib.get(b"cublasCreate_v2") }.map_err(|e| e.to_string())?;
        // SAFETY: the symbol has the C signature of cublas_api.h.
        let set_stream: libloading::Symbol<unsafe extern "C" fn(*mut c_void, sys::CUstream) -> c_int> =
            unsafe { lib.get(b"cublasSetStream_v2") }.map_err(|e| e.to_string())?;
        // SAFETY: the symbol has the C signature of cublas_api.h (GemmEx); the copied function
        // pointer stays valid while `lib`, kept in the Cublas beside it, is loaded.
        let gemm_ex: GemmEx = *unsafe { lib.get::<GemmEx>(b"cublasGemmEx") }.map_err(|e| e.to_string())?;
        let mut handle = std::ptr::null_mut();
        // SAFETY: a valid out-pointer for the new handle.
        let r = unsafe { create(&mut handle) };
        if r != 0 {
            return Err(format!("cublasCreate failed: {r}"));
        }
        // SAFETY: the handle just made and the caller's live stream.
        let r = unsafe { set_stream(handle, stream) };
        if r != 0 {
            return Err(format!("cublasSetStream failed: {r}"));
        }
        Ok(Cublas {
            _lib: lib,
            handle,
            gemm_ex,
        })
    }

    /// C = A * B, all n x n bf16, accumulated in f32, queued on the handle's stream.
    fn gemm(&self, n: i32, a: u64, b: u64, c: u64) {
        let (alpha, beta) = (1f32, 0f32);
        // SAFETY: a, b and c are device buffers of n * n bf16 each.
        let r = unsafe {
            (self.gemm_ex)(
                self.handle,
                CUBLAS_OP_N,
                CUBLAS_OP_N,
                n,
                n,
                n,
                &alpha as *const f32 as *const c_void,
                a as *const c_void,
                CUDA_R_16BF,
                n,
                b as *const c_void,
                CUDA_R_16BF,
                n,
                &beta as *const f32 as *const c_void,
                c as *mut c_void,
                CUDA_R_16BF,
                n,
                CUBLAS_COMPUTE_32F,
                CUBLAS_GEMM_DEFAULT,
            )
        };
        if r != 0 {
            eprintln!("tcpxr-bench interference: cublasGemmEx failed: {r}");
            std::process::exit(5);
        }
    }
}

fn dev_alloc(len: usize) -> u64 {
    let mut p = 0;
    // SAFETY: valid out-pointer; GPU 0's context is current.
    ok(unsafe { sys::cuMemAlloc_v2(&mut p, len) }, "cuMemAlloc");
    p
}

fn upload(dst: u64, src: &[u8]) {
    // SAFETY: dst holds at least src.len() bytes.
    ok(
        unsafe { sys::cuMemcpyHtoD_v2(dst, src.as_ptr() as *const c_void, src.len()) },
        "cuMemcpyHtoD",
    );
}

/// Random bf16 values in +-[1, 2): never zeros, which a GEMM may run faster on.
fn random_bf16(count: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(count * 2);
    for _ in 0..count {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let v: u16 = 0x3f80 | (x as u16 & 0x7f) | ((x >> 20) as u16 & 0x8000);
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// The GEMM side: its own stream, its matrices, and a timer.
struct Gemm {
    blas: Cublas,
    stream: sys::CUstream,
    n: i32,
    mats: [u64; 3],
    events: [sys::CUevent; 2],
}

impl Gemm {
    fn new(n: i32) -> Gemm {
        let mut stream = std::ptr::null_mut();
        // SAFETY: valid out-pointer; a non-blocking stream of normal priority, as an application's.
        ok(
            unsafe { sys::cuStreamCreate(&mut stream, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32) },
            "cuStreamCreate",
        );
        let blas = Cublas::load(stream).unwrap_or_else(|e| {
            eprintln!("tcpxr-bench interference: {e}");
            std::process::exit(5)
        });
        let elems = (n as usize) * (n as usize);
        let mats = [dev_alloc(elems * 2), dev_alloc(elems * 2), dev_alloc(elems * 2)];
        upload(mats[0], &random_bf16(elems, 0x9e37_79b9));
        upload(mats[1], &random_bf16(elems, 0x7f4a_7c15));
        let mut events = [std::ptr::null_mut(); 2];
        for e in &mut events {
            // SAFETY: valid out-pointer.
            ok(unsafe { sys::cuEventCreate(e, 0) }, "cuEventCreate");
        }
        Gemm {
            blas,
            stream,
            n,
            mats,
            events,
        }
    }

    /// Runs `count` GEMMs back to back; returns their TFLOP/s from the stream's own timing.
    fn batch(&self, count: usize) -> f64 {
        // SAFETY: live events and stream.
        unsafe { ok(sys::cuEventRecord(self.events[0], self.stream), "cuEventRecord") };
        for _ in 0..count {
            self.blas.gemm(self.n, self.mats[0], self.mats[1], self.mats[2]);
        }
        let mut ms = 0f32;
        // SAFETY: as above.
        unsafe {
            ok(sys::cuEventRecord(self.events[1], self.stream), "cuEventRecord");
            ok(sys::cuEventSynchronize(self.events[1]), "cuEventSynchronize");
            ok(
                sys::cuEventElapsedTime_v2(&mut ms, self.events[0], self.events[1]),
                "cuEventElapsedTime",
            );
        }
        let flops = 2.0 * (self.n as f64).powi(3) * count as f64;
        flops / (ms as f64 / 1e3) / 1e12
    }
}

/// One endpoint's buffers: `depth` message slots, in device or host memory, registered.
struct Slots {
    slots: Vec<Slot>,
    _host: Vec<Vec<u8>>,
}

impl Slots {
    fn new(comm: *mut c_void, gpu: bool, n: usize, depth: usize, fill: Option<&[u8]>) -> Slots {
        let mut host = vec![];
        let kind = if gpu { NCCL_PTR_CUDA } else { NCCL_PTR_HOST };
        let slots = (0..depth)
            .map(|_| {
                let p = if gpu {
                    let p = dev_alloc(n);
                    upload(p, fill.unwrap_or(&vec![0u8; n]));
                    p
                } else {
                    host.push(fill.map(<[u8]>::to_vec).unwrap_or_else(|| vec![0u8; n]));
                    host.last_mut().unwrap().as_mut_ptr() as u64
                };
                let mut mh = std::ptr::null_mut();
                // SAFETY: a live buffer of n bytes, registered with its own comm.
                check(
                    unsafe { NET.regMr.unwrap()(comm, p as *mut c_void, n, kind, &mut mh) },
                    "regMr",
                );
                (p as usize, mh as usize)
            })
            .collect();
        Slots { slots, _host: host }
    }
}

/// A connected pair with its slots, moving messages on two threads of their own.
struct Traffic {
    send: usize,
    recv: usize,
    tx: Arc<Slots>,
    rx: Arc<Slots>,
    n: usize,
    gpu: Arc<Gpu>,
}

impl Traffic {
    /// Moves `iters` messages; returns GB/s.
    fn run(&self, iters: usize) -> f64 {
        let (recv, rx, n, g) = (self.recv, self.rx.clone(), self.n, self.gpu.clone());
        let receiver = std::thread::spawn(move || {
            g.bind().expect("GPU 0");
            run_side(false, recv as *mut c_void, &rx.slots, n, iters)
        });
        let sent = run_side(true, self.send as *mut c_void, &self.tx.slots, self.n, iters);
        let recvd = receiver.join().unwrap();
        (self.n * iters) as f64 / sent.max(recvd) / 1e9
    }
}

/// GEMM batches while the traffic is switched on and off in turns: only batches that ran wholly
/// in one state count, so a GPU that slows as it warms up weighs on both sides alike.
struct Interleaved {
    gemm_off: Vec<f64>,
    gemm_on: Vec<f64>,
    traffic_on: Vec<f64>,
}

fn interleave(gemm: &Gemm, batch: usize, traffic: &Traffic, iters: usize, cycles: usize, pause: f64) -> Interleaved {
    let on = AtomicBool::new(false);
    let epoch = AtomicU64::new(0);
    let finished = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let t = sc.spawn(|| {
            traffic.gpu.bind().expect("GPU 0");
            let mut rates = vec![];
            for _ in 0..cycles {
                std::thread::sleep(std::time::Duration::from_secs_f64(pause));
                // The state changes before the epoch does: a batch that saw this epoch saw the state.
                on.store(true, Ordering::SeqCst);
                epoch.fetch_add(1, Ordering::SeqCst);
                rates.push(traffic.run(iters));
                on.store(false, Ordering::SeqCst);
                epoch.fetch_add(1, Ordering::SeqCst);
            }
            std::thread::sleep(std::time::Duration::from_secs_f64(pause));
            finished.store(true, Ordering::SeqCst);
            rates
        });
        let (mut gemm_off, mut gemm_on) = (vec![], vec![]);
        while !finished.load(Ordering::SeqCst) {
            let e0 = epoch.load(Ordering::SeqCst);
            let state = on.load(Ordering::SeqCst);
            let r = gemm.batch(batch);
            if epoch.load(Ordering::SeqCst) == e0 {
                if state {
                    gemm_on.push(r);
                } else {
                    gemm_off.push(r);
                }
            }
        }
        Interleaved {
            gemm_off,
            gemm_on,
            traffic_on: t.join().unwrap(),
        }
    })
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

pub fn run(args: &[String]) -> i32 {
    let a = parse_or_exit!(
        "interference",
        args,
        &[
            cli::value("--sizes"),
            cli::value("--period"),
            cli::value("--cycles"),
            cli::value("--gemm"),
            cli::value("--buffers"),
        ]
    );
    let sizes = read_or_exit!(a, "--sizes", "512K,4M", |s| cli::list(s, cli::size));
    let period = read_or_exit!(a, "--period", "0.3", |s| cli::seconds_up_to(s, 60.0));
    let cycles = read_or_exit!(a, "--cycles", "4", |s| cli::int_in(s, 1, 1000)) as usize;
    let n = read_or_exit!(a, "--gemm", "8192", |s| cli::int_in(s, 64, 32768)) as i32;
    // Which buffers to measure: host (the control) and GPU by default.
    let kinds: Vec<bool> = read_or_exit!(a, "--buffers", "host,gpu", |s| {
        cli::one_of(s, &["host", "gpu", "host,gpu", "gpu,host"]).map(|k| match k {
            "host" => vec![false],
            "gpu" => vec![true],
            _ => vec![false, true],
        })
    });
    // GPU buffers are what is measured; the plugin reads this once, at init.
    std::env::set_var("NCCL_TCPXR_GPU_BUFFERS", "1");
    let depth = 8;
    let gpu = match Gpu::get(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("tcpxr-bench interference: {}", e.msg);
            return 5;
        }
    };
    gpu.bind().expect("GPU 0");
    init();
    let gemm = Gemm::new(n);
    gemm.batch(3); // warm-up: cuBLAS picks its kernel
    let probe = Instant::now();
    gemm.batch(10);
    let per_gemm = probe.elapsed().as_secs_f64() / 10.0;
    let batch = ((0.025 / per_gemm) as usize).max(1); // batches of about 25 ms
    println!(
        "GEMM: bf16 {n}x{n}x{n} on its own stream, batches of {batch}, running throughout; traffic: GPU 0 -> GPU 0 \
         through tcpxr's table, {depth} messages in flight, {cycles} periods of about {period} s on, {period} s off"
    );
    println!(
        "transport: NCCL_TCPXR_TRANSPORT={}",
        std::env::var("NCCL_TCPXR_TRANSPORT").unwrap_or_else(|_| "(unset: the default)".into())
    );
    println!(
        "{:>8} {:>8} {:>11} {:>11} {:>7} {:>9} {:>11} {:>11}",
        "buffers", "size", "GEMM off", "GEMM on", "ratio", "batches", "GB/s alone", "GB/s beside"
    );
    for &gpu_bufs in &kinds {
        for &size in &sizes {
            let (s, r) = connect_pair();
            let pattern: Vec<u8> = (0..size).map(|i| (i * 31 + (i >> 12)) as u8).collect();
            let traffic = Traffic {
                send: s as usize,
                recv: r as usize,
                tx: Arc::new(Slots::new(s, gpu_bufs, size, depth, Some(&pattern))),
                rx: Arc::new(Slots::new(r, gpu_bufs, size, depth, None)),
                n: size,
                gpu: gpu.clone(),
            };
            // Traffic alone, which also sizes each period beside the GEMM.
            let warm = traffic.run(depth * 2);
            let iters = ((period * warm * 1e9 / size as f64) as usize).max(depth * 2);
            let alone_gbps = mean(&(0..3).map(|_| traffic.run(iters)).collect::<Vec<_>>());
            if !received_correctly(&traffic, gpu_bufs, &pattern) {
                eprintln!("tcpxr-bench interference: received data differs from what was sent ({size} B)");
                return 6;
            }
            let m = interleave(&gemm, batch, &traffic, iters, cycles, period);
            if m.gemm_on.is_empty() || m.gemm_off.is_empty() {
                eprintln!("tcpxr-bench interference: no GEMM batch ran wholly with or without traffic; raise --period");
                return 7;
            }
            let (off, on) = (mean(&m.gemm_off), mean(&m.gemm_on));
            println!(
                "{:>8} {:>8} {:>11.1} {:>11.1} {:>7.3} {:>4}/{:<4} {:>11.2} {:>11.2}",
                if gpu_bufs { "GPU" } else { "host" },
                super::human(size),
                off,
                on,
                on / off,
                m.gemm_off.len(),
                m.gemm_on.len(),
                alone_gbps,
                mean(&m.traffic_on)
            );
            for (comm, slots) in [(s, &traffic.tx), (r, &traffic.rx)] {
                for &(_, mh) in &slots.slots {
                    // SAFETY: a live comm with no request outstanding, and a handle regMr gave it,
                    // deregistered once.
                    check(unsafe { NET.deregMr.unwrap()(comm, mh as *mut c_void) }, "deregMr");
                }
            }
            // SAFETY: the send comm from connect_pair, nothing outstanding, not used again.
            check(unsafe { NET.closeSend.unwrap()(s) }, "closeSend");
            // SAFETY: the receive comm from connect_pair, nothing outstanding, not used again.
            check(unsafe { NET.closeRecv.unwrap()(r) }, "closeRecv");
            free_slots(&traffic, gpu_bufs);
        }
    }
    println!("(GEMM TFLOP/s without (off) and with (on) the traffic, ratio = on / off, batches counted off/on; traffic GB/s one direction, 1 GB = 1e9 B, alone and while the GEMM runs)");
    0
}

fn received_correctly(t: &Traffic, gpu: bool, pattern: &[u8]) -> bool {
    t.rx.slots.iter().all(|&(p, _)| {
        let mut got = vec![0u8; pattern.len()];
        if gpu {
            // SAFETY: p is a device buffer of pattern.len() bytes.
            ok(
                unsafe { sys::cuMemcpyDtoH_v2(got.as_mut_ptr() as *mut c_void, p as u64, got.len()) },
                "cuMemcpyDtoH",
            );
        } else {
            // SAFETY: p is a host buffer of pattern.len() bytes owned by the slots.
            got.copy_from_slice(unsafe { std::slice::from_raw_parts(p as *const u8, pattern.len()) });
        }
        got == pattern
    })
}

fn free_slots(t: &Traffic, gpu: bool) {
    if gpu {
        for &(p, _) in t.tx.slots.iter().chain(&t.rx.slots) {
            // SAFETY: allocated by cuMemAlloc, freed once, no transfer outstanding.
            unsafe { sys::cuMemFree_v2(p as u64) };
        }
    }
}
