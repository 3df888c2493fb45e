//! The application's kernel of the GPU tests: a kernel that holds the GPU (one thread spinning on a
//! flag in mapped host memory) while the plugin has to move bytes, as NCCL's kernel holds it while
//! it waits for the data the plugin delivers.
use cudarc::driver::sys;
use std::ffi::c_void;
use std::time::{Duration, Instant};

/// A kernel that spins until the u32 at `flag` is not 0 or `limit_ns` have passed, then writes
/// what it read to `out` (0: it gave up); it writes 1 to `started` first. PTX, loaded by the
/// driver: no compiler needed.
const SPIN_PTX: &str = r#".version 7.0
.target sm_52
.address_size 64

.visible .entry spin(
    .param .u64 flag,
    .param .u64 out,
    .param .u64 started,
    .param .u64 limit_ns
)
{
    .reg .pred %p<3>;
    .reg .b32 %r<3>;
    .reg .b64 %rd<9>;

    ld.param.u64 %rd1, [flag];
    ld.param.u64 %rd2, [out];
    ld.param.u64 %rd7, [started];
    ld.param.u64 %rd3, [limit_ns];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    cvta.to.global.u64 %rd7, %rd7;
    mov.u32 %r2, 1;
    st.volatile.global.u32 [%rd7], %r2;
    membar.sys;
    mov.u64 %rd4, %globaltimer;
LOOP:
    ld.volatile.global.u32 %r1, [%rd1];
    setp.ne.s32 %p1, %r1, 0;
    @%p1 bra DONE;
    mov.u64 %rd5, %globaltimer;
    sub.s64 %rd6, %rd5, %rd4;
    setp.lt.u64 %p2, %rd6, %rd3;
    @%p2 bra LOOP;
DONE:
    st.volatile.global.u32 [%rd2], %r1;
    ret;
}
"#;

pub fn cu(r: sys::CUresult, what: &str) {
    assert_eq!(r, sys::CUresult::CUDA_SUCCESS, "{what}");
}

/// The application's kernel: the spin kernel (one thread, or every thread slot of the GPU) on a
/// stream of the calling thread's context (the primary one), which holds the GPU until released. With
/// `CUDA_DEVICE_MAX_CONNECTIONS=1` every stream of that context shares its hardware queue, so
/// work queued there after it waits for it, as work queued behind NCCL's kernel does.
///
/// An event is recorded on the stream right after the launch, as NCCL and its callers do after
/// a collective's kernel (the event later work waits on). The event completes only when the
/// kernel does, and on a single hardware queue everything queued after it waits too: without it a
/// one-block kernel leaves the queue free once its block is dispatched, and work queued behind it
/// runs beside it (run 35: tcpxr's own unpack kernel got through).
pub struct Spin {
    stream: sys::CUstream,
    module: sys::CUmodule,
    after: sys::CUevent,
    /// Mapped host memory: [flag, out, started] as u32s.
    host: *mut u32,
    released: Option<bool>,
}

impl Spin {
    /// One thread: it holds the hardware queue, and leaves the multiprocessors free.
    pub fn start(limit: Duration) -> Spin {
        Spin::launch(limit, 1, 1)
    }

    /// Blocks of 1024 threads enough to fill every thread slot of every multiprocessor, all
    /// spinning, as a persistent kernel of the device API may: no other kernel's block can start
    /// until it ends.
    pub fn start_filling_every_sm(limit: Duration) -> Spin {
        let (mut dev, mut sms, mut per_sm) = (0, 0, 0);
        // SAFETY: valid out-pointers; the context is current (the caller bound it).
        unsafe {
            cu(sys::cuCtxGetDevice(&mut dev), "cuCtxGetDevice");
            cu(
                sys::cuDeviceGetAttribute(
                    &mut sms,
                    sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                    dev,
                ),
                "cuDeviceGetAttribute(SMs)",
            );
            cu(
                sys::cuDeviceGetAttribute(
                    &mut per_sm,
                    sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                    dev,
                ),
                "cuDeviceGetAttribute(threads per SM)",
            );
        }
        Spin::launch(limit, (sms * per_sm / 1024) as u32, 1024)
    }

    fn launch(limit: Duration, blocks: u32, threads: u32) -> Spin {
        let mut s = Spin {
            stream: std::ptr::null_mut(),
            module: std::ptr::null_mut(),
            after: std::ptr::null_mut(),
            host: std::ptr::null_mut(),
            released: None,
        };
        let mut f: sys::CUfunction = std::ptr::null_mut();
        let mut dev: sys::CUdeviceptr = 0;
        let ptx = format!("{SPIN_PTX}\0");
        // SAFETY: valid out-pointers; the context is current (gpu_here bound it); the PTX is a
        // NUL-terminated string; the kernel's four u64 arguments are passed by address and read at
        // the launch.
        unsafe {
            let mut host: *mut c_void = std::ptr::null_mut();
            cu(
                sys::cuMemHostAlloc(
                    &mut host,
                    64,
                    sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE,
                ),
                "cuMemHostAlloc",
            );
            std::ptr::write_bytes(host as *mut u8, 0, 64);
            s.host = host as *mut u32;
            cu(
                sys::cuMemHostGetDevicePointer_v2(&mut dev, host, 0),
                "cuMemHostGetDevicePointer",
            );
            cu(
                sys::cuModuleLoadData(&mut s.module, ptx.as_ptr() as *const c_void),
                "cuModuleLoadData(spin)",
            );
            cu(
                sys::cuModuleGetFunction(&mut f, s.module, c"spin".as_ptr()),
                "cuModuleGetFunction",
            );
            cu(
                sys::cuStreamCreate(&mut s.stream, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32),
                "cuStreamCreate",
            );
            let mut args: [u64; 4] = [dev, dev + 4, dev + 8, limit.as_nanos() as u64];
            let mut params: Vec<*mut c_void> = args.iter_mut().map(|a| a as *mut u64 as *mut c_void).collect();
            cu(
                sys::cuLaunchKernel(
                    f,
                    blocks,
                    1,
                    1,
                    threads,
                    1,
                    1,
                    0,
                    s.stream,
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                ),
                "cuLaunchKernel(spin)",
            );
            cu(
                sys::cuEventCreate(&mut s.after, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32),
                "cuEventCreate",
            );
            cu(sys::cuEventRecord(s.after, s.stream), "cuEventRecord(after spin)");
        }
        let t0 = Instant::now();
        // SAFETY: host[2] lies in the live mapped allocation; the kernel writes it.
        while unsafe { std::ptr::read_volatile(s.host.add(2)) } == 0 {
            assert!(t0.elapsed() < Duration::from_secs(10), "the spin kernel did not start");
            std::thread::yield_now();
        }
        s
    }

    /// Releases the kernel and waits for it: whether it was still spinning (had not given up).
    pub fn release(&mut self) -> bool {
        if let Some(held) = self.released {
            return held;
        }
        // SAFETY: host[0] and host[1] lie in the live mapped allocation; the stream is ours.
        let held = unsafe {
            std::ptr::write_volatile(self.host, 1);
            cu(sys::cuStreamSynchronize(self.stream), "cuStreamSynchronize(spin)");
            std::ptr::read_volatile(self.host.add(1)) == 1
        };
        self.released = Some(held);
        held
    }
}

impl Drop for Spin {
    fn drop(&mut self) {
        self.release();
        // SAFETY: made in start, freed once, the kernel has finished.
        unsafe {
            sys::cuEventDestroy_v2(self.after);
            sys::cuStreamDestroy_v2(self.stream);
            sys::cuModuleUnload(self.module);
            sys::cuMemFreeHost(self.host as *mut c_void);
        }
    }
}
