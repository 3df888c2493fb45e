//! GPU buffers over the tcpx transport, with the TCPX-ABI emulator in its GPU layouts, and the
//! emulator's own GPU self-check. Every test is `#[ignore]`d (a plain `cargo test` counts them
//! as ignored); on the GPU machine: `cargo test --release --test gpu_tcpx -- --include-ignored`
//! (or the built test binary with `--include-ignored` and `TCPX_EMU_LIB` naming the emulator).
//! Run so without a usable CUDA driver, every test is SKIPPED, visibly, with the reason (cuInit's
//! error); with `TCPXR_REQUIRE_GPU=1` a skip is a failure instead.
//!
//! * The tcpxr tests (`gpu_buffers_*`): sends go from GPU memory straight to TCPX; receives land
//!   in TCPX's pool and the unpack kernel places them from TCPX's records, before the pages are
//!   consumed.
//! * The emulator's self-check (`the_emulator_*`), through its own v7 table: it must move bytes
//!   from and to GPU memory while a kernel of the application's context holds the GPU, as the NIC
//!   and TCPX do, or GPU tests over it prove nothing (tests/tcpx-emu/src/lib.rs).
//!
//! This process runs them in the emulator mode of `TCPX_EMU_MODE` (`gpu` unless set: bounce pool
//! in device memory, unpack ring in mapped host memory, device handle in device memory, as TCPX
//! has them). `every_gpu_test_passes_in_both_emulator_modes_with_and_without_one_hardware_queue_or_skipped`
//! runs them again in child processes of this binary: modes `gpu` and `gpu-mapped`, each with and
//! without `CUDA_DEVICE_MAX_CONNECTIONS=1` (CUDA reads it once, at initialisation).
#[allow(clippy::duplicate_mod)]
mod common;

use common::gpu::{gpu_or_skip, DevBuf};
use common::spin::{cu, Spin};
use common::*;
use cudarc::driver::sys;
use nccl_net_tcpxr::abi::{loadMeta, ncclNetDeviceHandle_v7_t, ncclNet_v7_t, unpackNetDeviceHandle, NCCL_PTR_CUDA};
use std::ffi::{c_int, c_void};
use std::time::{Duration, Instant};

/// Set in the child processes `every_gpu_test_passes_in_...` starts.
const CHILD: &str = "TCPXR_GPU_TCPX_CHILD";

/// The tests a child process runs.
const GPU_TESTS: [&str; 3] = [
    "gpu_buffers_cross_tcpx_stripes_and_are_placed_from_tcpx_records_or_skipped",
    "gpu_buffers_go_direct_on_a_pair_made_without_a_current_context_or_skipped",
    "the_emulator_moves_gpu_bytes_while_a_kernel_of_the_application_context_holds_the_gpu_or_skipped",
];

// Before main: tcpxr reads its configuration once per process.
before_main! {
    if std::env::var_os(CHILD).is_some() {
        // The parent's settings are inherited; it gives the child its mode and counters file.
        return;
    }
    let mode = std::env::var("TCPX_EMU_MODE").unwrap_or_else(|_| "gpu".into());
    select_tcpx(&[("TCPX_EMU_MODE", &mode)]);
}

/// Why no GPU test can run here, naming the CUDA result, or None when one can.
fn no_gpu() -> Option<String> {
    // SAFETY: is_culib_present only tries to dlopen the driver library.
    if !unsafe { sys::is_culib_present() } {
        return Some("no CUDA driver library (libcuda.so) on this host".into());
    }
    // SAFETY: cuInit has no preconditions.
    let r = unsafe { sys::cuInit(0) };
    (r != sys::CUresult::CUDA_SUCCESS).then(|| format!("cuInit(0) failed with {r:?}"))
}

/// GPU 0 with its (primary) context current on this thread, as `gpu_or_skip`; without a usable
/// driver a SKIPPED line naming why, or a failure when TCPXR_REQUIRE_GPU=1.
fn gpu_here(test: &str) -> Option<std::sync::Arc<nccl_net_tcpxr::gpu::Gpu>> {
    if let Some(why) = no_gpu() {
        if std::env::var("TCPXR_REQUIRE_GPU").is_ok_and(|v| v == "1") {
            panic!("{test}: TCPXR_REQUIRE_GPU=1, but {why}");
        }
        use std::io::Write;
        // The stderr handle directly: the test harness does not capture it.
        let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
        return None;
    }
    gpu_or_skip(test)
}

/// Held by each test while it runs: the emulator's self-check holds the GPU with a kernel, which
/// (with one hardware queue) would stall another test's kernels meanwhile.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Registers `len` bytes at `p` of memory `kind` with `comm` through the table's regMr.
fn reg_mr(net: &V12, comm: *mut c_void, p: u64, len: usize, kind: c_int) -> *mut c_void {
    let mut mh = std::ptr::null_mut();
    assert_eq!(
        // SAFETY: the table's regMr with a live pointer of at least `len` bytes and a live out-pointer.
        unsafe { net.0.regMr.unwrap()(comm, p as *mut c_void, len, kind, &mut mh) },
        OK
    );
    mh
}

#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_buffers_cross_tcpx_stripes_and_are_placed_from_tcpx_records_or_skipped() {
    let Some(_gpu) = gpu_here("gpu_buffers_cross_tcpx_stripes_and_are_placed_from_tcpx_records") else {
        return;
    };
    let _serial = one_at_a_time();
    let net = v12();
    let pair = Pair::new(&net);
    let max = 64 << 20;
    let (sdev, rdev) = (DevBuf::new(max), DevBuf::new(max));
    let mut shost = vec![0u8; max];
    let reg = |comm, p: u64, kind| reg_mr(&net, comm, p, max, kind);
    let (host, cuda) = (nccl_net_tcpxr::abi::NCCL_PTR_HOST, nccl_net_tcpxr::abi::NCCL_PTR_CUDA);
    let rmh = reg(pair.recv, rdev.0, cuda);
    let smh_dev = reg(pair.send, sdev.0, cuda);
    let smh_host = reg(pair.send, shost.as_mut_ptr() as u64, host);
    for from_gpu in [true, false] {
        for (i, n) in [1usize, 4097, 600 << 10, (3 << 20) + 5, max].into_iter().enumerate() {
            let data = pattern(n, 7000 + i as u64 + 100 * from_gpu as u64);
            let sptr = if from_gpu {
                sdev.upload(&data);
                sdev.0 as *mut c_void
            } else {
                shost[..n].copy_from_slice(&data);
                shost.as_mut_ptr() as *mut c_void
            };
            let smh = if from_gpu { smh_dev } else { smh_host };
            let (mut rq, mut sq) = (null(), null());
            assert_eq!(net.irecv(pair.recv, rdev.0 as *mut c_void, max, rmh, &mut rq), OK);
            assert_eq!(net.isend(pair.send, sptr, n, smh, &mut sq), OK);
            let (rs, ss) = wait_both(&net, rq, sq);
            assert_eq!((rs as usize, ss as usize), (n, n));
            assert!(
                rdev.download(n) == data,
                "{n} bytes from GPU {from_gpu}: content differs"
            );
        }
    }
    assert_eq!(net.dereg_mr(pair.recv, rmh), OK);
    assert_eq!(net.dereg_mr(pair.send, smh_dev), OK);
    assert_eq!(net.dereg_mr(pair.send, smh_host), OK);
    drop(pair);
    let comms = assert_tcpx_rules_kept(12);
    // Every receive went to GPU memory directly, and so did the sends from GPU memory (no
    // staging through host memory on either side).
    let posts =
        |kind: &str, field: &str| -> u64 { comms.iter().filter(|c| c.kind == kind).map(|c| c.get(field)).sum() };
    assert!(
        posts("recv", "posts") > 0 && posts("recv", "cuda_posts") == posts("recv", "posts"),
        "{comms:?}"
    );
    assert!(
        posts("send", "cuda_posts") > 0,
        "no send went from GPU memory directly: {comms:?}"
    );
}

/// NCCL calls connect and accept from a thread with its GPU's context current; tcpxr must not
/// depend on it. A pair made on a thread without any CUDA context still receives GPU buffers
/// straight from TCPX's pages (the unpack ring's device address is found in the context that
/// owns it). Before, such a comm fell back to host bounce memory, which TCPX with its pool in GPU
/// memory cannot fill, and every receive failed with ncclInternalError.
#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_buffers_go_direct_on_a_pair_made_without_a_current_context_or_skipped() {
    let Some(gpu) = gpu_here("gpu_buffers_go_direct_on_a_pair_made_without_a_current_context") else {
        return;
    };
    let _serial = one_at_a_time();
    let net = v12();
    std::thread::scope(|s| {
        s.spawn(|| {
            // A fresh thread: no CUDA context is current on it.
            let pair = Pair::new(&net);
            gpu.bind().expect("GPU 0's context, for the buffers");
            let n = (3 << 20) + 5;
            let (sdev, rdev) = (DevBuf::new(n), DevBuf::new(n));
            let data = pattern(n, 4242);
            sdev.upload(&data);
            let cuda = nccl_net_tcpxr::abi::NCCL_PTR_CUDA;
            let (rmh, smh) = (
                reg_mr(&net, pair.recv, rdev.0, n, cuda),
                reg_mr(&net, pair.send, sdev.0, n, cuda),
            );
            let (mut rq, mut sq) = (null(), null());
            assert_eq!(net.irecv(pair.recv, rdev.0 as *mut c_void, n, rmh, &mut rq), OK);
            assert_eq!(net.isend(pair.send, sdev.0 as *mut c_void, n, smh, &mut sq), OK);
            assert_eq!(wait_both(&net, rq, sq), (n as _, n as _));
            assert!(rdev.download(n) == data, "content differs");
            assert_eq!(net.dereg_mr(pair.recv, rmh), OK);
            assert_eq!(net.dereg_mr(pair.send, smh), OK);
        });
    });
}

// --- both emulator modes, with and without one hardware queue ---------------------------------

/// The GPU tests above and below again, in child processes of this binary: the emulator in `gpu`
/// and in `gpu-mapped` mode, each with and without `CUDA_DEVICE_MAX_CONNECTIONS=1` (one hardware
/// queue per context, so work queued behind a running kernel waits for it; CUDA reads the
/// variable once, at initialisation, hence processes). A child that skips fails.
#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn every_gpu_test_passes_in_both_emulator_modes_with_and_without_one_hardware_queue_or_skipped() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let Some(_gpu) = gpu_here("every_gpu_test_passes_in_both_emulator_modes_with_and_without_one_hardware_queue")
    else {
        return;
    };
    let _serial = one_at_a_time();
    let exe = std::env::current_exe().unwrap();
    let stats = std::env::var("TCPX_EMU_STATS").expect("TCPX_EMU_STATS (select_tcpx sets it)");
    for mode in ["gpu", "gpu-mapped"] {
        for queues in [None, Some("1")] {
            let label = format!(
                "TCPX_EMU_MODE={mode} CUDA_DEVICE_MAX_CONNECTIONS={}",
                queues.unwrap_or("(unset)")
            );
            // Counters of its own: this process's file stays this process's.
            let child_stats = format!("{stats}.{mode}.{}", queues.unwrap_or("default"));
            let _ = std::fs::remove_file(&child_stats);
            let mut cmd = std::process::Command::new(&exe);
            cmd.args(GPU_TESTS)
                .args(["--exact", "--include-ignored", "--test-threads=1"])
                .env(CHILD, "1")
                .env("TCPX_EMU_MODE", mode)
                .env("TCPX_EMU_STATS", &child_stats)
                .env("TCPXR_REQUIRE_GPU", "1");
            match queues {
                Some(q) => cmd.env("CUDA_DEVICE_MAX_CONNECTIONS", q),
                None => cmd.env_remove("CUDA_DEVICE_MAX_CONNECTIONS"),
            };
            let started = Instant::now();
            let out = cmd.output().expect("run this test binary again");
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                out.status.success() && text.contains(&format!("ok. {} passed", GPU_TESTS.len())),
                "{label}: {}\n{text}",
                out.status
            );
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "{label}: {} GPU tests passed in {:.1} s",
                GPU_TESTS.len(),
                started.elapsed().as_secs_f64()
            );
        }
    }
}

// --- the emulator's own GPU self-check --------------------------------------------------------

/// The emulator's v7 table: the library tcpxr loads in this process, so one emulator state.
fn emulator() -> &'static ncclNet_v7_t {
    static LIB: std::sync::OnceLock<libloading::Library> = std::sync::OnceLock::new();
    let lib = LIB.get_or_init(|| {
        // SAFETY: the emulator's initialisers have no side effects.
        unsafe { libloading::Library::new(build_emulator()).expect("dlopen the emulator") }
    });
    // SAFETY: ncclNetPlugin_v7 is the emulator's v7 table, a static of a library this process
    // keeps loaded (LIB is never dropped).
    let t = unsafe {
        &**lib
            .get::<*const ncclNet_v7_t>(b"ncclNetPlugin_v7")
            .expect("ncclNetPlugin_v7")
    };
    // SAFETY: init with no logger; the plugin takes repeated inits (tcpxr's, then this one).
    assert_eq!(unsafe { t.init.unwrap()(None) }, OK);
    t
}

/// Device memory of the calling thread's context mapped with the VMM API (cuMemCreate +
/// cuMemMap), as NCCL allocates its buffers where it can.
struct VmmBuf {
    ptr: u64,
    size: usize,
    handle: sys::CUmemGenericAllocationHandle,
}

impl VmmBuf {
    fn new(len: usize) -> VmmBuf {
        // SAFETY: all-zero is a valid CUmemAllocationProp; valid out-pointers; GPU 0's context is
        // current.
        unsafe {
            let mut prop: sys::CUmemAllocationProp = std::mem::zeroed();
            prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
            prop.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
            prop.location.id = 0;
            let mut gran = 0usize;
            cu(
                sys::cuMemGetAllocationGranularity(
                    &mut gran,
                    &prop,
                    sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
                ),
                "cuMemGetAllocationGranularity",
            );
            let size = len.div_ceil(gran) * gran;
            let mut b = VmmBuf {
                ptr: 0,
                size,
                handle: 0,
            };
            cu(sys::cuMemCreate(&mut b.handle, size, &prop, 0), "cuMemCreate");
            cu(
                sys::cuMemAddressReserve(&mut b.ptr, size, 0, 0, 0),
                "cuMemAddressReserve",
            );
            cu(sys::cuMemMap(b.ptr, size, 0, b.handle, 0), "cuMemMap");
            let desc = sys::CUmemAccessDesc {
                location: prop.location,
                flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            };
            cu(sys::cuMemSetAccess(b.ptr, size, &desc, 1), "cuMemSetAccess");
            b
        }
    }
}

impl Drop for VmmBuf {
    fn drop(&mut self) {
        // SAFETY: the mapping made in new, undone once.
        unsafe {
            sys::cuMemUnmap(self.ptr, self.size);
            sys::cuMemAddressFree(self.ptr, self.size);
            sys::cuMemRelease(self.handle);
        }
    }
}

/// Device-handle storage as tcpxr keeps it: 512 bytes, 16-byte aligned.
#[repr(C, align(16))]
struct Storage([u8; 512]);

/// A connected pair of emulator comms.
struct EmuPair {
    net: &'static ncclNet_v7_t,
    send: *mut c_void,
    recv: *mut c_void,
    storage: Box<Storage>,
    /// Completed, not yet consumed receives, oldest first.
    held: Vec<*mut c_void>,
    receives: u64,
}

/// Registered memory: address, length, the comm's memory handle.
#[derive(Clone, Copy)]
struct Reg(u64, usize, *mut c_void);

// Every unsafe block of EmuPair calls the table's functions with live buffers, out-pointers to
// locals, and comms, handles and requests the same table returned, as NCCL would.
impl EmuPair {
    fn new(net: &'static ncclNet_v7_t) -> EmuPair {
        let mut handle = [0u8; 128];
        let mut l = null();
        assert_eq!(
            // SAFETY: the emulator's table given a live 128-byte handle buffer and a live out-pointer.
            unsafe { net.listen.unwrap()(0, handle.as_mut_ptr() as *mut c_void, &mut l) },
            OK
        );
        let mut storage = Box::new(Storage([0; 512]));
        let mut dh = storage.0.as_mut_ptr() as *mut ncclNetDeviceHandle_v7_t;
        let mut no_dh: *mut ncclNetDeviceHandle_v7_t = std::ptr::null_mut();
        let (mut s, mut r) = (null(), null());
        let t0 = Instant::now();
        while s.is_null() || r.is_null() {
            if s.is_null() {
                assert_eq!(
                    // SAFETY: the listener's 128-byte handle buffer, the same on every call, and live out-pointers.
                    unsafe { net.connect.unwrap()(0, handle.as_mut_ptr() as *mut c_void, &mut s, &mut no_dh) },
                    OK
                );
            }
            if r.is_null() {
                // SAFETY: the listen comm and live out-pointers; `dh` points to 16-byte aligned storage.
                assert_eq!(unsafe { net.accept.unwrap()(l, &mut r, &mut dh) }, OK);
            }
            assert!(t0.elapsed() < DEADLINE, "emulator connect/accept did not complete");
        }
        // SAFETY: comms of this table, each closed once, nothing outstanding.
        assert_eq!(unsafe { net.closeListen.unwrap()(l) }, OK);
        EmuPair {
            net,
            send: s,
            recv: r,
            storage,
            held: Vec::new(),
            receives: 0,
        }
    }

    /// Registers `len` bytes of GPU memory at `p` with `comm` (one of this pair's).
    fn reg(&self, comm: *mut c_void, p: u64, len: usize) -> Reg {
        let mut mh = null();
        assert_eq!(
            // SAFETY: a comm of this pair and `len` bytes of the test's device memory at `p`; a live
            // out-pointer.
            unsafe { self.net.regMr.unwrap()(comm, p as *mut c_void, len as c_int, NCCL_PTR_CUDA, &mut mh) },
            OK
        );
        Reg(p, len, mh)
    }

    /// Sends `n` bytes at `at` of `from` into a receive of all of `into`; waits for both until
    /// `deadline`. The receive stays held (unconsumed).
    fn transfer(&mut self, from: Reg, at: usize, n: usize, into: Reg, deadline: Instant) {
        let (mut rq, mut sq) = (null(), null());
        let mut d = [into.0 as *mut c_void];
        let (mut sz, mut tag, mut mhs) = ([into.1 as c_int], [0], [into.2]);
        let recv = self.net.irecv.unwrap();
        // SAFETY: one-entry arrays on the stack; the pair's comms and handles from `reg`; `into` and
        // `from` are device memory the caller keeps until the transfer completes (waited for below).
        unsafe {
            assert_eq!(
                recv(
                    self.recv,
                    1,
                    d.as_mut_ptr(),
                    sz.as_mut_ptr(),
                    tag.as_mut_ptr(),
                    mhs.as_mut_ptr(),
                    &mut rq
                ),
                OK
            );
            let src = (from.0 + at as u64) as *mut c_void;
            assert_eq!(
                self.net.isend.unwrap()(self.send, src, n as c_int, 0, from.2, &mut sq),
                OK
            );
        }
        let (mut rd, mut sd, mut size) = (0, 0, 0);
        while rd == 0 || sd == 0 {
            // SAFETY: the two requests just posted, tested until done, and live out-pointers.
            unsafe {
                if sd == 0 {
                    assert_eq!(self.net.test.unwrap()(sq, &mut sd, &mut size), OK);
                }
                if rd == 0 {
                    assert_eq!(self.net.test.unwrap()(rq, &mut rd, &mut size), OK);
                }
            }
            assert!(
                Instant::now() < deadline,
                "a {n}-byte transfer from GPU memory did not complete in time"
            );
        }
        self.held.push(rq);
        self.receives += 1;
    }

    /// The device handle accept wrote, read the way tcpxr reads it (a copy in the calling
    /// thread's context: it is device memory in the GPU modes).
    fn unpack(&self) -> unpackNetDeviceHandle {
        // SAFETY: accept wrote a device handle into this 16-byte aligned storage.
        let dev = unsafe { std::ptr::read(self.storage.0.as_ptr() as *const ncclNetDeviceHandle_v7_t) };
        assert_eq!(dev.netDeviceType, nccl_net_tcpxr::abi::NCCL_NET_DEVICE_UNPACK);
        let mut h = std::mem::MaybeUninit::<unpackNetDeviceHandle>::uninit();
        cu(
            // SAFETY: `h` has room for one unpackNetDeviceHandle, and accept's device handle points to
            // one, in memory of the emulator's context that cuMemcpy (unified addressing) can read.
            unsafe {
                sys::cuMemcpy(
                    h.as_mut_ptr() as u64,
                    dev.handle as u64,
                    std::mem::size_of::<unpackNetDeviceHandle>(),
                )
            },
            "cuMemcpy of the device handle",
        );
        // SAFETY: the copy above wrote every byte.
        unsafe { h.assume_init() }
    }

    /// Checks that the records of the `k`-th receive (from 0) place `data` exactly: every byte
    /// once, read from the pool with copies in the calling thread's context.
    fn check(&self, h: &unpackNetDeviceHandle, k: u64, data: &[u8]) {
        let slot = (k % 16) as usize;
        // SAFETY: meta is mapped host memory, one address for host and device; cnt was published
        // with release ordering before test said done.
        let records: Vec<loadMeta> = unsafe {
            let cnt = std::sync::atomic::AtomicU64::from_ptr(std::ptr::addr_of_mut!((*h.meta).cnt[slot]))
                .load(std::sync::atomic::Ordering::Acquire);
            (0..cnt as usize).map(|i| (*h.meta).mem[slot][i]).collect()
        };
        let mut placed = vec![0u8; data.len()];
        let mut next = 0u64;
        for r in &records {
            assert_eq!(r.dst_off, next, "receive {k}: records out of order or overlapping");
            assert!(r.len as usize <= 4096 && (r.src_off % 4096) + r.len <= 4096, "{r:?}");
            let d = r.dst_off as usize;
            assert!(
                d + r.len as usize <= placed.len(),
                "receive {k}: {r:?} leaves the receive"
            );
            cu(
                // SAFETY: placed[d..d + len] is inside `placed` (checked above); the record's source
                // lies in one 4 KiB page (checked above) of the emulator's bounce pool (its contract).
                unsafe {
                    sys::cuMemcpy(
                        placed[d..].as_mut_ptr() as u64,
                        h.bounce_buf as u64 + r.src_off as u64,
                        r.len as usize,
                    )
                },
                "cuMemcpy from the bounce pool",
            );
            next += r.len as u64;
        }
        assert_eq!(next as usize, data.len(), "receive {k}: the records cover {next} bytes");
        assert!(
            placed == data,
            "receive {k} of {} bytes: the pool holds other bytes",
            data.len()
        );
    }

    /// Consumes every held receive, oldest first.
    fn consume_all(&mut self) {
        for rq in std::mem::take(&mut self.held) {
            // SAFETY: the pair's receive comm and its held receives, oldest first.
            assert_eq!(unsafe { self.net.irecvConsumed.unwrap()(self.recv, 1, rq) }, OK);
        }
    }
}

impl Drop for EmuPair {
    fn drop(&mut self) {
        // SAFETY: the pair's two comms, each closed once, here.
        unsafe {
            self.net.closeSend.unwrap()(self.send);
            self.net.closeRecv.unwrap()(self.recv);
        }
    }
}

/// The emulator moves bytes from and to GPU memory while a kernel of the application's context
/// holds the GPU, as the NIC and TCPX do: connect, accept (device handle written into device
/// memory), regMr of GPU memory, sends from `cuMemAlloc` and from VMM memory (read from the GPU),
/// receives landed in the pool and published, all while the spin kernel runs, and finished before
/// it is released. Only then are the pool and records read, in the application's context, and
/// every byte checked. Two pairs' handles must name the same pool (one per GPU, as TCPX's).
#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn the_emulator_moves_gpu_bytes_while_a_kernel_of_the_application_context_holds_the_gpu_or_skipped() {
    let name = "the_emulator_moves_gpu_bytes_while_a_kernel_of_the_application_context_holds_the_gpu";
    let Some(_gpu) = gpu_here(name) else {
        return;
    };
    let _serial = one_at_a_time();
    let mode = std::env::var("TCPX_EMU_MODE").unwrap_or_default();
    if !mode.starts_with("gpu") {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "SKIPPED {name}: TCPX_EMU_MODE={mode} is no GPU mode");
        return;
    }
    let net = emulator();
    // Before the kernel, in the application's context: its buffers and their contents.
    let sizes = [1usize, 4097, (4 << 20) - 3];
    let offsets: Vec<usize> = sizes
        .iter()
        .scan(0, |at, n| {
            let here = *at;
            *at += n.next_multiple_of(4096);
            Some(here)
        })
        .collect();
    let span = offsets[2] + sizes[2];
    let (from_alloc, from_vmm, into) = (DevBuf::new(span), VmmBuf::new(span), DevBuf::new(4 << 20));
    assert!(from_alloc.0 % 4096 == 0 && into.0 % 4096 == 0);
    let data = |source: u64, i: usize| pattern(sizes[i], 9100 + 10 * source + i as u64);
    for (source, ptr) in [(0, from_alloc.0), (1, from_vmm.ptr)] {
        for (i, at) in offsets.iter().enumerate() {
            DevBuf(ptr + *at as u64).upload_forget(&data(source, i));
        }
    }

    let mut spin = Spin::start(Duration::from_secs(60));
    let started = Instant::now();
    let deadline = started + Duration::from_secs(30);
    let mut a = EmuPair::new(net);
    let mut b = EmuPair::new(net);
    let into_a = a.reg(a.recv, into.0, 4 << 20);
    let into_b = b.reg(b.recv, into.0, 4 << 20);
    let sources = [a.reg(a.send, from_alloc.0, span), a.reg(a.send, from_vmm.ptr, span)];
    let from_b = b.reg(b.send, from_alloc.0, span);
    for source in sources {
        for (at, n) in offsets.iter().zip(sizes) {
            a.transfer(source, *at, n, into_a, deadline);
        }
    }
    b.transfer(from_b, offsets[1], sizes[1], into_b, deadline);
    let took = started.elapsed();
    assert!(
        spin.release(),
        "the application's kernel gave up after 60 s before the emulator finished ({took:?}): the emulator waited for it"
    );

    // After it, in the application's context: what the emulator published.
    let (ha, hb) = (a.unpack(), b.unpack());
    assert_eq!(ha.head, u64::MAX);
    assert_eq!(
        ha.bounce_buf, hb.bounce_buf,
        "two receive comms on one GPU must share one bounce pool"
    );
    let mut k = 0;
    for source in 0..2 {
        for i in 0..sizes.len() {
            a.check(&ha, k, &data(source, i));
            k += 1;
        }
    }
    b.check(&hb, 0, &data(0, 1));
    a.consume_all();
    b.consume_all();
    for (pair, regs) in [
        (&a, vec![(a.recv, into_a), (a.send, sources[0]), (a.send, sources[1])]),
        (&b, vec![(b.recv, into_b), (b.send, from_b)]),
    ] {
        for (comm, r) in regs {
            // SAFETY: handles registered on these comms above, deregistered once.
            assert_eq!(unsafe { pair.net.deregMr.unwrap()(comm, r.2) }, OK);
        }
    }
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "{name} (TCPX_EMU_MODE={mode}): {} transfers under the kernel in {took:?}",
        a.receives + b.receives
    );
}
