//! The GPU side of tcpxr, loaded at run time: nothing here links CUDA, and a host without a driver
//! simply reports `available() == false`.
//!
//! * this file: whether a driver is there, what a pointer is, and `Gpu` (one per device, made
//!   once): the device's primary context (the one NCCL uses), one persistent non-blocking stream,
//!   and tcpxr's kernels compiled once with NVRTC; whether the process is an MPS client;
//! * memory.rs: pinned host memory the GPU maps (`Mapped`, `HostRegistration`);
//! * host.rs: pinned host pages made through CUDA's virtual memory API (`HostPages`), whose
//!   free does not wait for the GPU's running kernels, as `cuMemFreeHost` does;
//! * event.rs: `Event`, recorded behind stream work and queried, never waited on a data path;
//! * stream.rs: the copies, signal add and signal write tcpxr queues, and `Stream`, a stream of
//!   a receive comm's own for its copies into GPU memory;
//! * unpack.rs: `Unpacker`, batches of fragment records placed by one kernel launch, each batch
//!   gated by a CUDA event from a fixed pool; nothing is created, allocated or synchronised per
//!   chunk;
//! * cpu.rs: `scatter`, the same placement on the CPU, for host destinations.
pub mod cpu;
mod event;
pub mod host;
mod memory;
mod stream;
pub mod unpack;

pub use event::Event;
pub use memory::{HostRegistration, Mapped};
pub use stream::*;

use crate::abi::ncclResult_t;
use crate::error::{Error, Result};
use cudarc::driver::sys;
use std::ffi::{c_void, CString};
use std::sync::{Arc, Mutex, OnceLock};

pub(crate) fn check(r: sys::CUresult, what: &str) -> Result<()> {
    if r == sys::CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    Err(Error::new(
        ncclResult_t::ncclUnhandledCudaError,
        format!("{what} failed: {r:?}"),
    ))
}

/// Whether a CUDA driver can be loaded and initialised on this host (checked once).
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        // SAFETY: is_culib_present only tries to dlopen the driver library.
        if !unsafe { sys::is_culib_present() } {
            return false;
        }
        // SAFETY: cuInit has no preconditions.
        unsafe { sys::cuInit(0) == sys::CUresult::CUDA_SUCCESS }
    })
}

/// Whether `ptr` is device memory (not host memory, pinned or not). Without a driver nothing can
/// be device memory.
pub fn is_device_memory(ptr: *const u8) -> bool {
    if ptr.is_null() || !available() {
        return false;
    }
    let mut mem_type: u32 = 0;
    // SAFETY: MEMORY_TYPE writes one unsigned int; a pointer CUDA does not know is an error return.
    let r = unsafe {
        sys::cuPointerGetAttribute(
            &mut mem_type as *mut u32 as *mut c_void,
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            ptr as sys::CUdeviceptr,
        )
    };
    r == sys::CUresult::CUDA_SUCCESS && mem_type == sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32
}

/// The device address of pinned host memory mapped into the GPUs (such as TCPX's unpack ring), or
/// None when the driver does not know `ptr` as such.
///
/// The lookup needs a current context. NCCL calls accept from a thread that has its GPU's, but
/// a caller without one (a direct integration, a bench's helper thread) must not silently lose the
/// direct GPU path: then the lookup is made in the context that allocated `ptr`, and the thread
/// is left without a context again.
pub fn device_address(ptr: *const u8) -> Option<u64> {
    if ptr.is_null() || !available() {
        return None;
    }
    let lookup = || {
        let mut dev: sys::CUdeviceptr = 0;
        // SAFETY: valid out-pointer; an unknown pointer is an error return.
        let r = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dev, ptr as *mut c_void, 0) };
        (r, dev)
    };
    match lookup() {
        (sys::CUresult::CUDA_SUCCESS, dev) => Some(dev),
        (sys::CUresult::CUDA_ERROR_INVALID_CONTEXT, _) => {
            let mut owner: sys::CUcontext = std::ptr::null_mut();
            // SAFETY: CONTEXT writes one CUcontext; the query needs no current context.
            let r = unsafe {
                sys::cuPointerGetAttribute(
                    &mut owner as *mut sys::CUcontext as *mut c_void,
                    sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT,
                    ptr as sys::CUdeviceptr,
                )
            };
            if r != sys::CUresult::CUDA_SUCCESS || owner.is_null() {
                return None;
            }
            // SAFETY: the owning context is alive (it holds `ptr`); the thread had none current,
            // and gets none back.
            unsafe {
                if sys::cuCtxSetCurrent(owner) != sys::CUresult::CUDA_SUCCESS {
                    return None;
                }
                let (r, dev) = lookup();
                sys::cuCtxSetCurrent(std::ptr::null_mut());
                (r == sys::CUresult::CUDA_SUCCESS).then_some(dev)
            }
        }
        _ => None,
    }
}

/// Copies `out.len()` bytes at `src` (device or host memory) into `out`, and waits for the copy.
/// For a few bytes read once (TCPX's device handle, at accept), never on a data path. The copy
/// runs in a CUDA context of tcpxr's own on the owning device, never in the application's: work
/// queued there could wait behind a running kernel of the application (one hardware queue, MPS)
/// while that kernel waits for a connection tcpxr is still making.
///
/// # Safety
/// `src` must point to `out.len()` readable bytes of host or device memory.
pub unsafe fn copy_to_host(src: *const u8, out: &mut [u8]) -> Result<()> {
    let Some(gpu) = Gpu::of_pointer(src as *const c_void)? else {
        // SAFETY: the caller vouches for src..src+len; `out` is ours.
        unsafe { std::ptr::copy_nonoverlapping(src, out.as_mut_ptr(), out.len()) };
        return Ok(());
    };
    let ctx = private_context(gpu.ordinal)?;
    // SAFETY: a live context of ours, pushed for the copy and popped right after, so the calling
    // thread's own context is current again; `out` outlives the synchronous copy.
    unsafe {
        check(sys::cuCtxPushCurrent_v2(ctx.0), "cuCtxPushCurrent")?;
        let r = check(
            sys::cuMemcpyDtoH_v2(out.as_mut_ptr() as *mut c_void, src as sys::CUdeviceptr, out.len()),
            "cuMemcpyDtoH (in tcpxr's own context)",
        );
        let mut popped: sys::CUcontext = std::ptr::null_mut();
        sys::cuCtxPopCurrent_v2(&mut popped);
        r
    }
}

/// A CUDA context of tcpxr's own (not the device's primary context), for work that must not share
/// the application's hardware queues.
#[derive(Clone, Copy)]
struct PrivateContext(sys::CUcontext);

// SAFETY: a context handle may be pushed on any thread.
unsafe impl Send for PrivateContext {}

/// The private context of device `ordinal`, made on first use and kept for the process.
fn private_context(ordinal: usize) -> Result<PrivateContext> {
    static CONTEXTS: Mutex<Vec<(usize, PrivateContext)>> = Mutex::new(Vec::new());
    let mut all = CONTEXTS.lock().unwrap();
    if let Some((_, c)) = all.iter().find(|(o, _)| *o == ordinal) {
        return Ok(*c);
    }
    let mut dev: sys::CUdevice = 0;
    let mut ctx: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: valid out-pointers; a NULL parameter block asks for a plain context, which
    // cuCtxCreate makes current: it is popped at once, restoring the caller's.
    unsafe {
        check(sys::cuDeviceGet(&mut dev, ordinal as i32), "cuDeviceGet")?;
        check(
            sys::cuCtxCreate_v4(&mut ctx, std::ptr::null_mut(), 0, dev),
            "cuCtxCreate (tcpxr's own context)",
        )?;
        let mut popped: sys::CUcontext = std::ptr::null_mut();
        check(sys::cuCtxPopCurrent_v2(&mut popped), "cuCtxPopCurrent")?;
    }
    all.push((ordinal, PrivateContext(ctx)));
    Ok(PrivateContext(ctx))
}

/// NVRTC is looked for under its usual names by cudarc; CUDA toolkits keep it in lib64, which is
/// often not on the library path. Loading it from there first makes the by-name lookup succeed.
fn preload_nvrtc() {
    let mut dirs: Vec<String> = vec![];
    if let Ok(home) = std::env::var("CUDA_HOME") {
        dirs.push(format!("{home}/lib64"));
    }
    dirs.push("/usr/local/cuda/lib64".into());
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("libnvrtc.so.") && !name.contains("alt") {
                // SAFETY: loading NVRTC runs no code of ours; the handle is kept for the process.
                if let Ok(lib) = unsafe { libloading::Library::new(e.path()) } {
                    std::mem::forget(lib);
                    return;
                }
            }
        }
    }
}

const KERNEL_SOURCE: &str = include_str!("kernel.cu");

/// One GPU: its primary context, tcpxr's persistent stream, the unpack kernel.
pub struct Gpu {
    pub ordinal: usize,
    ctx: sys::CUcontext,
    /// tcpxr's stream on this GPU: staging copies, and every other unpack launch.
    pub stream: sys::CUstream,
    /// The second unpack stream: launches alternate between the two, so one batch's last blocks
    /// overlap the next batch's first instead of draining the GPU between launches (measured:
    /// 74-76 % of memcpy on one stream, 90-92 % alternating; docs/BENCHMARKS.md#gpu-buffers).
    pub(crate) unpack_alt: sys::CUstream,
    dev: sys::CUdevice,
    /// tcpxr's kernels (kernel.cu: the unpack kernel and the RMA signal add), compiled (NVRTC)
    /// and loaded the first time a comm or an RMA group needs them; NCCL's device unpack never
    /// does.
    kernels: OnceLock<std::result::Result<Kernels, Error>>,
    /// How pinned host pages are made for this GPU (host.rs), found the first time one is needed.
    host_pages: OnceLock<Option<host::HostPagesKind>>,
    pub sm_count: u32,
}

/// The loaded kernel functions of kernel.cu (driver handles, valid for the process).
#[derive(Clone, Copy)]
struct Kernels {
    unpack: sys::CUfunction,
    signal_add: sys::CUfunction,
}

// SAFETY: a CUfunction handle is not tied to a thread: it may be launched from any thread with its
// context current.
unsafe impl Send for Kernels {}
// SAFETY: the handles are only copied out and passed to the (thread-safe) driver, never mutated.
unsafe impl Sync for Kernels {}

// SAFETY: CUDA driver handles (context, streams, device) are not tied to a thread: they may be used
// from any thread once the context is made current (`enter` does that before every use).
unsafe impl Send for Gpu {}
// SAFETY: the handles are set once in `open` and never changed; the driver API is thread-safe,
// and the lazily compiled kernel sits in a OnceLock.
unsafe impl Sync for Gpu {}

static GPUS: Mutex<Vec<(usize, Arc<Gpu>)>> = Mutex::new(Vec::new());

impl Gpu {
    /// The GPU of `ordinal`, opened on first use.
    pub fn get(ordinal: usize) -> Result<Arc<Gpu>> {
        let mut gpus = GPUS.lock().unwrap();
        if let Some((_, g)) = gpus.iter().find(|(o, _)| *o == ordinal) {
            return Ok(g.clone());
        }
        let g = Arc::new(Gpu::open(ordinal)?);
        gpus.push((ordinal, g.clone()));
        Ok(g)
    }

    /// The GPU that owns device pointer `ptr`, or None when `ptr` is not device memory.
    pub fn of_pointer(ptr: *const c_void) -> Result<Option<Arc<Gpu>>> {
        if !is_device_memory(ptr as *const u8) {
            return Ok(None);
        }
        let mut ordinal: i32 = -1;
        // SAFETY: DEVICE_ORDINAL writes one int, into `ordinal`; the driver only looks `ptr` up.
        let r = unsafe {
            sys::cuPointerGetAttribute(
                &mut ordinal as *mut i32 as *mut c_void,
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                ptr as sys::CUdeviceptr,
            )
        };
        check(r, "cuPointerGetAttribute(DEVICE_ORDINAL)")?;
        Ok(Some(Gpu::get(ordinal as usize)?))
    }

    fn open(ordinal: usize) -> Result<Gpu> {
        if !available() {
            return Err(Error::new(
                ncclResult_t::ncclUnhandledCudaError,
                "no CUDA driver on this host",
            ));
        }
        let mut dev: sys::CUdevice = 0;
        // SAFETY: a valid out-pointer; an ordinal without a device is an error return.
        check(unsafe { sys::cuDeviceGet(&mut dev, ordinal as i32) }, "cuDeviceGet")?;
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        // The primary context is the one the CUDA runtime, and so NCCL, uses.
        // SAFETY: a valid out-pointer and a device the driver just returned.
        let r = unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, dev) };
        check(r, "cuDevicePrimaryCtxRetain")?;
        let mut g = Gpu {
            ordinal,
            ctx,
            stream: std::ptr::null_mut(),
            unpack_alt: std::ptr::null_mut(),
            kernels: OnceLock::new(),
            host_pages: OnceLock::new(),
            sm_count: 0,
            dev,
        };
        let _current = g.enter()?;
        let mut sms = 0;
        // SAFETY: a valid out-pointer and a device the driver returned.
        let r = unsafe {
            sys::cuDeviceGetAttribute(
                &mut sms,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                dev,
            )
        };
        check(r, "cuDeviceGetAttribute")?;
        g.sm_count = sms.max(1) as u32;
        // Non-blocking: never synchronises with the legacy default stream NCCL's users may use.
        // Highest priority: NCCL waits for every unpack, so when the application's kernels
        // fill the GPU the block scheduler gives tcpxr's few blocks the first free slots
        // (priority orders waiting blocks; it never preempts running ones).
        let (mut least, mut greatest) = (0, 0);
        // SAFETY: valid out-pointers; the GPU's context is current (`_current`).
        let r = unsafe { sys::cuCtxGetStreamPriorityRange(&mut least, &mut greatest) };
        check(r, "cuCtxGetStreamPriorityRange")?;
        for stream in [&mut g.stream, &mut g.unpack_alt] {
            // SAFETY: a valid out-pointer; the stream is made in the current context (`_current`).
            let r = unsafe {
                sys::cuStreamCreateWithPriority(stream, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32, greatest)
            };
            check(r, "cuStreamCreateWithPriority")?;
        }
        log::info!(
            target: "tcpxr::init",
            "GPU {ordinal}: {} SMs, stream priority {greatest} (range {least}..{greatest})",
            g.sm_count
        );
        Ok(g)
    }

    /// tcpxr's kernels, compiled and loaded on first use (a comm that places GPU pages with the
    /// unpack kernel asks while it is being set up, before its first receive; an RMA group at its
    /// first GPU window's registration).
    fn kernels(&self) -> Result<Kernels> {
        let k = self.kernels.get_or_init(|| {
            let _current = self.enter()?;
            let k = compile_kernels(self.dev)?;
            self.load_now(k)?;
            log::info!(target: "tcpxr::init", "GPU {}: tcpxr's kernels ready", self.ordinal);
            Ok(k)
        });
        k.clone()
    }

    /// tcpxr's unpack kernel (see [`Gpu::kernels`]).
    pub(crate) fn unpack_fn(&self) -> Result<sys::CUfunction> {
        self.kernels().map(|k| k.unpack)
    }

    /// Whether the GPU takes 64-bit stream memory operations ([`write_u64_async`]): every GPU
    /// CUDA 12+ drives on Linux does; the driver says so per device.
    pub fn writes_u64_on_stream(&self) -> bool {
        let mut on = 0;
        // SAFETY: a valid out-pointer and the device this Gpu was made for.
        let r = unsafe {
            sys::cuDeviceGetAttribute(
                &mut on,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS,
                self.dev,
            )
        };
        r == sys::CUresult::CUDA_SUCCESS && on == 1
    }

    /// Compiles and loads tcpxr's kernels now, if not done yet, so that no later launch (an RMA
    /// signal) waits for module loading while a kernel spins.
    pub fn prepare_kernels(&self) -> Result<()> {
        self.kernels().map(|_| ())
    }

    /// Launches `f` on `stream` (one of this GPU's) as one block of `threads` threads.
    ///
    /// # Safety
    /// `params` must be the parameters `f` takes, each pointing at a live value; `stream` a live
    /// stream of this GPU.
    unsafe fn launch_one_block(
        &self,
        f: sys::CUfunction,
        threads: u32,
        stream: sys::CUstream,
        params: &mut [*mut c_void],
        what: &str,
    ) -> Result<()> {
        // SAFETY: the caller vouches for the parameters (the driver copies them at launch); the
        // stream is live and the GPU's context current (the caller entered it).
        let r = unsafe {
            sys::cuLaunchKernel(
                f,
                1,
                1,
                1,
                threads,
                1,
                1,
                0,
                stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        check(r, what)
    }

    /// Launches each kernel once with no work and waits for them. With CUDA's lazy module
    /// loading (the default) a kernel is loaded at its first launch, and loading can wait for the
    /// context's running kernels. The first real unpack (or RMA signal) runs while NCCL's kernel
    /// spins, waiting for exactly that launch: a deadlock. This runs while the connection is being
    /// made (or the first GPU window registered), before NCCL launches anything that waits on
    /// tcpxr.
    fn load_now(&self, k: Kernels) -> Result<()> {
        let mut empty = unpack::empty_batch();
        let mut params: [*mut c_void; 1] = [empty.as_mut() as *mut _ as *mut c_void];
        // SAFETY: tcpxr_unpack(const TcpxrBatch), here given a batch of zero jobs, alive across
        // the call.
        unsafe {
            self.launch_one_block(
                k.unpack,
                32,
                self.stream,
                &mut params,
                "cuLaunchKernel(tcpxr_unpack, warm-up)",
            )?
        };
        let (mut p, mut v): (u64, u64) = (0, 0);
        let mut params: [*mut c_void; 2] = [&mut p as *mut u64 as *mut c_void, &mut v as *mut u64 as *mut c_void];
        // SAFETY: tcpxr_signal_add(unsigned long long*, unsigned long long) with a NULL pointer,
        // which it ignores; both values alive across the call.
        unsafe {
            self.launch_one_block(
                k.signal_add,
                1,
                self.stream,
                &mut params,
                "cuLaunchKernel(tcpxr_signal_add, warm-up)",
            )?
        };
        // SAFETY: the GPU's live stream.
        check(
            unsafe { sys::cuStreamSynchronize(self.stream) },
            "cuStreamSynchronize(warm-up)",
        )
    }

    /// How tcpxr makes pinned host pages for this GPU ([`host::HostPages`]), or None where it
    /// falls back to `cuMemHostAlloc` and host registration (host.rs says when).
    pub fn host_pages(&self) -> Option<host::HostPagesKind> {
        *self.host_pages.get_or_init(|| host::probe(self))
    }

    /// Makes this GPU's context current on the calling thread until the returned guard drops,
    /// which restores the thread's previous context. On NCCL's threads, which already have it,
    /// this is one query. A thread that had another GPU's context (one process driving several
    /// GPUs) gets it back: tcpxr never leaves a caller's CUDA state changed, or NCCL's next
    /// runtime call on that thread would go to the wrong device.
    pub fn enter(&self) -> Result<Current> {
        enter_primary(self.ctx)
    }

    /// Makes this GPU's context current on the calling thread and leaves it so (for threads of
    /// tcpxr's own tests and benchmarks; the plugin itself uses [`Gpu::enter`]).
    pub fn bind(&self) -> Result<()> {
        let mut cur: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: valid out-pointer; setting the primary context is always allowed.
        unsafe {
            check(sys::cuCtxGetCurrent(&mut cur), "cuCtxGetCurrent")?;
            if cur != self.ctx {
                check(sys::cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")?;
            }
        }
        Ok(())
    }
}

/// [`Gpu::enter`] for a primary context `ctx` that a [`Gpu`] retained (GPUs are opened once and
/// kept for the process, so their context handle stays valid): what a GPU resource that outlives
/// the call that made it keeps to free itself in its own context.
fn enter_primary(ctx: sys::CUcontext) -> Result<Current> {
    let mut cur: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: valid out-pointer; setting a retained primary context is always allowed.
    unsafe {
        check(sys::cuCtxGetCurrent(&mut cur), "cuCtxGetCurrent")?;
        if cur == ctx {
            return Ok(Current { previous: None });
        }
        check(sys::cuCtxSetCurrent(ctx), "cuCtxSetCurrent")?;
    }
    Ok(Current { previous: Some(cur) })
}

/// Frees a GPU resource in the context `ctx` it was made in, whatever context the freeing thread
/// has (NCCL closes comms from its service thread, whose context may be another GPU's or none),
/// and logs a failure instead of ignoring it: a drop has no caller to return it to. `what` names
/// the resource for the log.
fn free_in(ctx: sys::CUcontext, what: &str, free: impl FnOnce() -> sys::CUresult) {
    let current = enter_primary(ctx);
    if let Err(e) = &current {
        log::warn!(
            "freeing {what}: cannot enter its GPU's context ({}); freeing it anyway",
            e.msg
        );
    }
    if let Err(e) = check(free(), what) {
        log::warn!("freeing {}", e.msg);
    }
    drop(current);
}

/// Restores the thread's previous CUDA context when dropped (see [`Gpu::enter`]).
#[must_use = "the context is restored when this guard drops"]
pub struct Current {
    previous: Option<sys::CUcontext>,
}

impl Drop for Current {
    fn drop(&mut self) {
        if let Some(p) = self.previous {
            // SAFETY: p was current on this thread a moment ago (or NULL: none).
            unsafe { sys::cuCtxSetCurrent(p) };
        }
    }
}

/// The unpack kernel's handle, for benchmarks that launch it the naive way.
pub fn unpack_function(gpu: &Gpu) -> Result<sys::CUfunction> {
    gpu.unpack_fn()
}

/// The GPU of the calling thread's current CUDA context (NCCL's threads have theirs), None when
/// there is no driver or no current context.
pub fn current() -> Result<Option<Arc<Gpu>>> {
    if !available() {
        return Ok(None);
    }
    let mut dev: sys::CUdevice = 0;
    // SAFETY: valid out-pointer; without a current context this is an error return.
    if unsafe { sys::cuCtxGetDevice(&mut dev) } != sys::CUresult::CUDA_SUCCESS {
        return Ok(None);
    }
    Gpu::get(dev as usize).map(Some)
}

fn compile_kernels(dev: sys::CUdevice) -> Result<Kernels> {
    preload_nvrtc();
    // SAFETY: is_culib_present only tries to dlopen NVRTC.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(Error::new(
            ncclResult_t::ncclUnhandledCudaError,
            "NVRTC (libnvrtc.so) not found: add the CUDA toolkit's lib64 to LD_LIBRARY_PATH or set CUDA_HOME",
        ));
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: valid out-pointers.
    unsafe {
        check(
            sys::cuDeviceGetAttribute(
                &mut major,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                dev,
            ),
            "compute capability",
        )?;
        check(
            sys::cuDeviceGetAttribute(
                &mut minor,
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                dev,
            ),
            "compute capability",
        )?;
    }
    let arch: &'static str = Box::leak(format!("compute_{major}{minor}").into_boxed_str());
    let opts = cudarc::nvrtc::CompileOptions {
        arch: Some(arch),
        ..Default::default()
    };
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(KERNEL_SOURCE, opts).map_err(|e| {
        Error::new(
            ncclResult_t::ncclUnhandledCudaError,
            format!("NVRTC could not compile tcpxr's kernels (kernel.cu): {e:?}"),
        )
    })?;
    let image = CString::new(ptx.to_src()).map_err(|_| Error::internal("PTX with a NUL byte"))?;
    let mut module: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: image is NUL-terminated PTX; the module lives for the process.
    let r = unsafe { sys::cuModuleLoadData(&mut module, image.as_ptr() as *const c_void) };
    check(r, "cuModuleLoadData")?;
    let function = |name: &std::ffi::CStr| {
        let mut f: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: a module just loaded, a NUL-terminated name and a valid out-pointer.
        let r = unsafe { sys::cuModuleGetFunction(&mut f, module, name.as_ptr()) };
        check(r, &format!("cuModuleGetFunction({name:?})"))?;
        Ok::<_, Error>(f)
    };
    Ok(Kernels {
        unpack: function(c"tcpxr_unpack")?,
        signal_add: function(c"tcpxr_signal_add")?,
    })
}

/// Whether this process is a client of the CUDA MPS server: Some(true) when any device says its
/// contexts are shared through MPS (CU_DEVICE_ATTRIBUTE_MPS_ENABLED), None without a driver or
/// when the driver cannot say.
pub fn mps_client() -> Option<bool> {
    if !available() {
        return None;
    }
    let mut n = 0;
    // SAFETY: a valid out-pointer; the driver is initialised (available()).
    if unsafe { sys::cuDeviceGetCount(&mut n) } != sys::CUresult::CUDA_SUCCESS {
        return None;
    }
    let mut any = false;
    for ordinal in 0..n {
        let (mut dev, mut on) = (0, 0);
        // SAFETY: valid out-pointers; an ordinal below the count the driver gave.
        let r = unsafe {
            if sys::cuDeviceGet(&mut dev, ordinal) != sys::CUresult::CUDA_SUCCESS {
                return None;
            }
            sys::cuDeviceGetAttribute(&mut on, sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MPS_ENABLED, dev)
        };
        if r != sys::CUresult::CUDA_SUCCESS {
            return None;
        }
        any |= on != 0;
    }
    Some(any)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_memory_is_not_device_memory_and_copies_plainly() {
        let data = [1u8, 2, 3, 4];
        assert!(!is_device_memory(data.as_ptr()));
        assert!(!is_device_memory(std::ptr::null()));
        let mut out = [0u8; 4];
        // SAFETY: data is 4 readable bytes.
        unsafe { copy_to_host(data.as_ptr(), &mut out) }.unwrap();
        assert_eq!(out, data);
    }
}
