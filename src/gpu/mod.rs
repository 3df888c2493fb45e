//! The GPU side of tcpxr, loaded at run time: nothing here links CUDA, and a host without a driver
//! simply reports `available() == false`.
//!
//! * `Gpu` (one per device, made once): the device's primary context (the one NCCL uses), one
//!   persistent non-blocking stream, and the unpack kernel compiled once with NVRTC.
//! * `Mapped`: pinned host memory mapped into the device, allocated once and reused.
//! * `unpack::Unpacker`: batches of fragment records placed by one kernel launch, each batch gated
//!   by a CUDA event from a fixed pool; nothing is created, allocated or synchronised per chunk.
//! * `cpu::scatter`: the same placement on the CPU, for host destinations.
pub mod cpu;
pub mod unpack;

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

    /// Launches `f` on tcpxr's stream as one block of `threads` threads.
    ///
    /// # Safety
    /// `params` must be the parameters `f` takes, each pointing at a live value.
    unsafe fn launch_one_block(
        &self,
        f: sys::CUfunction,
        threads: u32,
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
                self.stream,
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
        unsafe { self.launch_one_block(k.unpack, 32, &mut params, "cuLaunchKernel(tcpxr_unpack, warm-up)")? };
        let (mut p, mut v): (u64, u64) = (0, 0);
        let mut params: [*mut c_void; 2] = [&mut p as *mut u64 as *mut c_void, &mut v as *mut u64 as *mut c_void];
        // SAFETY: tcpxr_signal_add(unsigned long long*, unsigned long long) with a NULL pointer,
        // which it ignores; both values alive across the call.
        unsafe {
            self.launch_one_block(
                k.signal_add,
                1,
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

/// Host memory of the caller's (page-aligned, mapped by the caller) pinned and mapped into every
/// GPU of the process at its own address, so that one base serves memory registered in pieces.
/// Unregistered on drop, in `gpu`'s context.
pub struct HostRegistration {
    gpu: Arc<Gpu>,
    host: *mut u8,
}

// SAFETY: a registration handle; the driver call on drop may run on any thread.
unsafe impl Send for HostRegistration {}

impl HostRegistration {
    /// Registers `len` bytes at `host` with `gpu`'s driver. Fails, registering nothing, where the
    /// GPU would see the memory at another address (no unified addressing for registered memory).
    ///
    /// # Safety
    /// `host .. host + len` must be mapped, page aligned, and stay mapped until the registration
    /// is dropped.
    pub unsafe fn new(gpu: &Arc<Gpu>, host: *mut u8, len: usize) -> Result<HostRegistration> {
        let _current = gpu.enter()?;
        let flags = sys::CU_MEMHOSTREGISTER_DEVICEMAP | sys::CU_MEMHOSTREGISTER_PORTABLE;
        check(
            // SAFETY: the caller vouches for the range; PORTABLE pins it for every context.
            unsafe { sys::cuMemHostRegister_v2(host as *mut c_void, len, flags) },
            "cuMemHostRegister",
        )?;
        let reg = HostRegistration { gpu: gpu.clone(), host };
        let mut dev: sys::CUdeviceptr = 0;
        check(
            // SAFETY: valid out-pointer; host was registered with DEVICEMAP just above.
            unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dev, host as *mut c_void, 0) },
            "cuMemHostGetDevicePointer",
        )?;
        if dev != host as u64 {
            return Err(Error::new(
                ncclResult_t::ncclUnhandledCudaError,
                format!(
                    "GPU {} maps registered host memory at {dev:#x}, not at its host address {host:p}; \
                     tcpxr's device unpack over the socket needs unified addressing for registered memory",
                    gpu.ordinal
                ),
            ));
        }
        Ok(reg)
    }
}

impl Drop for HostRegistration {
    fn drop(&mut self) {
        let r = self.gpu.enter().and_then(|_current| {
            // SAFETY: host was registered by new and is unregistered once, in the GPU's context.
            check(
                unsafe { sys::cuMemHostUnregister(self.host as *mut c_void) },
                "cuMemHostUnregister",
            )
        });
        if let Err(e) = r {
            log::warn!("releasing bounce memory at {:p}: {}", self.host, e.msg);
        }
    }
}

/// Pinned host memory mapped into the device: the CPU and the GPU see the same bytes.
pub struct Mapped {
    pub host: *mut u8,
    pub dev: u64,
    pub len: usize,
    /// The primary context it was allocated in, entered to free it.
    ctx: sys::CUcontext,
}

// SAFETY: the allocation is plain (pinned, PORTABLE) memory owned by this value, usable from any
// thread; it is freed once, by Drop, in `ctx` (a retained primary context, valid on any thread).
unsafe impl Send for Mapped {}
// SAFETY: through `&Mapped` only the raw addresses can be read; every access to the memory
// dereferences them in an unsafe block of its own, which says why it does not race.
unsafe impl Sync for Mapped {}

impl Mapped {
    pub fn new(gpu: &Gpu, len: usize) -> Result<Mapped> {
        let _current = gpu.enter()?;
        let (host, dev) = alloc_mapped(
            || {
                let mut host: *mut c_void = std::ptr::null_mut();
                // SAFETY: a valid out-pointer; PORTABLE makes it usable from every context.
                let r = unsafe {
                    sys::cuMemHostAlloc(
                        &mut host,
                        len.max(1),
                        sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE,
                    )
                };
                check(r, "cuMemHostAlloc").map(|()| host)
            },
            |host| {
                let mut dev: sys::CUdeviceptr = 0;
                // SAFETY: a valid out-pointer; `host` is the mapped allocation just made.
                let r = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dev, host, 0) };
                check(r, "cuMemHostGetDevicePointer").map(|()| dev)
            },
            // SAFETY: `host` came from cuMemHostAlloc above and nothing else holds it.
            |host| check(unsafe { sys::cuMemFreeHost(host) }, "cuMemFreeHost"),
        )?;
        Ok(Mapped {
            host: host as *mut u8,
            dev,
            len,
            ctx: gpu.ctx,
        })
    }
}

/// Allocates with `alloc` and maps with `map`; when mapping fails the allocation is given back
/// with `free` (a failure to free is logged), so an error leaks no pinned memory.
fn alloc_mapped(
    alloc: impl FnOnce() -> Result<*mut c_void>,
    map: impl FnOnce(*mut c_void) -> Result<u64>,
    free: impl FnOnce(*mut c_void) -> Result<()>,
) -> Result<(*mut c_void, u64)> {
    let host = alloc()?;
    match map(host) {
        Ok(dev) => Ok((host, dev)),
        Err(e) => {
            if let Err(f) = free(host) {
                log::warn!("giving back pinned memory that could not be mapped: {}", f.msg);
            }
            Err(e)
        }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        let host = self.host as *mut c_void;
        // SAFETY: host came from cuMemHostAlloc and is freed once; whoever queued GPU work on it
        // has waited for that work, or kept this value alive (see SendLane's drop).
        free_in(self.ctx, "pinned memory (cuMemFreeHost)", || unsafe {
            sys::cuMemFreeHost(host)
        });
    }
}

/// A CUDA event without timing, created once and recorded many times.
pub struct Event {
    raw: sys::CUevent,
    /// The primary context it was made in, entered to destroy it.
    ctx: sys::CUcontext,
}

// SAFETY: an event handle may be used from any thread with the context current; `ctx` is a
// retained primary context, valid on any thread.
unsafe impl Send for Event {}

impl Event {
    pub fn new(gpu: &Gpu) -> Result<Event> {
        let _current = gpu.enter()?;
        let mut raw: sys::CUevent = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the GPU's context is current (`_current`).
        let r = unsafe { sys::cuEventCreate(&mut raw, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32) };
        check(r, "cuEventCreate")?;
        Ok(Event { raw, ctx: gpu.ctx })
    }

    /// Records the event behind the work queued so far on `gpu`'s stream.
    pub fn record(&self, gpu: &Gpu) -> Result<()> {
        let _current = gpu.enter()?;
        // SAFETY: live event and stream.
        check(unsafe { sys::cuEventRecord(self.raw, gpu.stream) }, "cuEventRecord")
    }

    /// Whether the recorded work has finished; never blocks.
    pub fn done(&self) -> Result<bool> {
        // SAFETY: live event.
        match unsafe { sys::cuEventQuery(self.raw) } {
            sys::CUresult::CUDA_SUCCESS => Ok(true),
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            e => Err(Error::new(
                ncclResult_t::ncclUnhandledCudaError,
                format!("cuEventQuery: {e:?}"),
            )),
        }
    }

    /// Polls [`Event::done`] until the recorded work has finished (true) or `deadline` passes
    /// (false); for closing, never on a data path.
    pub fn done_by(&self, deadline: std::time::Instant) -> Result<bool> {
        loop {
            if self.done()? {
                return Ok(true);
            }
            if std::time::Instant::now() >= deadline {
                return Ok(false);
            }
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }
}

impl Drop for Event {
    /// Destroys the event in its own context without waiting: the driver lets an event go while
    /// recorded work is pending and releases it once that work completes. Memory such work writes
    /// is its owner's to wait for (SendLane's drop), so a close waits on no copy here.
    fn drop(&mut self) {
        let raw = self.raw;
        // SAFETY: the event is live and destroyed once.
        free_in(self.ctx, "a CUDA event (cuEventDestroy)", || unsafe {
            sys::cuEventDestroy_v2(raw)
        });
    }
}

/// Queues a device-to-host copy on the GPU's persistent stream (the copy engine does it).
///
/// # Safety
/// `dst` must stay valid, and `src .. src + len` unchanged, until work recorded after it completes.
pub unsafe fn copy_dtoh_async(gpu: &Gpu, dst: *mut u8, src: u64, len: usize) -> Result<()> {
    let _current = gpu.enter()?;
    // SAFETY: the caller keeps both ranges valid until the copy is known complete; the GPU's
    // stream is live and its context current (`_current`).
    let r = unsafe { sys::cuMemcpyDtoHAsync_v2(dst as *mut c_void, src, len, gpu.stream) };
    check(r, "cuMemcpyDtoHAsync")
}

/// Copies `len` bytes of device memory at `src` into pinned host memory at `dst` on the legacy
/// default stream (CU_STREAM_LEGACY), and records `event` behind it. That stream runs after
/// everything already queued on it and on every blocking stream (per-thread default streams
/// included), such as the `cudaMemset` NCCL queues on a signal buffer just before it registers it:
/// a copy on tcpxr's non-blocking stream could read the memory before that memset. For
/// registration only: it may wait behind any kernel on those streams (the caller bounds the wait).
///
/// # Safety
/// `dst .. dst + len` must be pinned host memory and `src` device memory, both valid until
/// `event` has completed.
pub unsafe fn copy_dtoh_after_queued_work(gpu: &Gpu, dst: *mut u8, src: u64, len: usize, event: &Event) -> Result<()> {
    let _current = gpu.enter()?;
    // CU_STREAM_LEGACY (cuda.h: ((CUstream)0x1)).
    let legacy = 1usize as sys::CUstream;
    // SAFETY: the caller keeps both ranges valid until the event completes; the GPU's context is
    // current (`_current`); the event is live.
    unsafe {
        check(
            sys::cuMemcpyDtoHAsync_v2(dst as *mut c_void, src, len, legacy),
            "cuMemcpyDtoHAsync(legacy stream)",
        )?;
        check(sys::cuEventRecord(event.raw, legacy), "cuEventRecord(legacy stream)")
    }
}

/// Queues a host-to-device copy on the GPU's persistent stream (the copy engine does it).
///
/// # Safety
/// `src .. src + len` must be pinned host memory that stays valid and unchanged, and `dst` device
/// memory that stays allocated, until work recorded after the copy completes.
pub unsafe fn copy_htod_async(gpu: &Gpu, dst: u64, src: *const u8, len: usize) -> Result<()> {
    let _current = gpu.enter()?;
    // SAFETY: the caller keeps both ranges valid until the copy is known complete; the GPU's
    // stream is live and its context current (`_current`).
    let r = unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src as *const c_void, len, gpu.stream) };
    check(r, "cuMemcpyHtoDAsync")
}

/// Queues a copy between any two addresses CUDA knows (device or pinned host memory, unified
/// addressing) on the GPU's persistent stream.
///
/// # Safety
/// Both ranges must stay valid (and `src` unchanged) until work recorded after the copy completes.
pub unsafe fn copy_async(gpu: &Gpu, dst: u64, src: u64, len: usize) -> Result<()> {
    let _current = gpu.enter()?;
    // SAFETY: the caller keeps both ranges valid until the copy is known complete; the GPU's
    // stream is live and its context current (`_current`).
    check(
        unsafe { sys::cuMemcpyAsync(dst, src, len, gpu.stream) },
        "cuMemcpyAsync",
    )
}

/// Queues an atomic add of `add` to the 64-bit word of device memory at `addr` on the GPU's
/// persistent stream, after everything queued before it: kernel.cu's `tcpxr_signal_add`, one
/// thread, fenced (system scope) before and after the add, so a kernel that sees the new value
/// sees every byte the stream's earlier copies wrote. The add applies to whatever the word holds
/// then, so whoever else writes it (NCCL resetting a signal) is never overwritten with a stale
/// value. (cuStreamBatchMemOp's atomic reduction would do it without a kernel, from CUDA 13.1.)
/// The kernels must have been loaded ([`Gpu::prepare_kernels`]) before anything waits on this.
///
/// # Safety
/// `addr` must be 8-aligned device memory that stays allocated until work recorded after it
/// completes.
pub unsafe fn add_u64_async(gpu: &Gpu, addr: u64, add: u64) -> Result<()> {
    let f = gpu.kernels()?.signal_add;
    let _current = gpu.enter()?;
    let (mut p, mut v) = (addr, add);
    let mut params: [*mut c_void; 2] = [&mut p as *mut u64 as *mut c_void, &mut v as *mut u64 as *mut c_void];
    // SAFETY: tcpxr_signal_add(unsigned long long*, unsigned long long) with the caller's aligned
    // device word and the addend, both alive across the call (the driver copies them); the GPU's
    // context is current (`_current`).
    unsafe { gpu.launch_one_block(f, 1, &mut params, "cuLaunchKernel(tcpxr_signal_add)") }
}

/// Queues a write of `value` to the 64-bit word of device memory at `addr` on the GPU's persistent
/// stream, after everything queued before it, without a kernel: the GPU's front end performs it
/// (cuStreamWriteValue64), so it needs no multiprocessor and cannot wait for one that a kernel
/// holds. Its default flags fence the stream's earlier writes before it, so a kernel that sees the
/// value sees every byte the stream's earlier copies wrote.
///
/// # Safety
/// `addr` must be 8-aligned device memory that stays allocated until work recorded after it
/// completes.
pub unsafe fn write_u64_async(gpu: &Gpu, addr: u64, value: u64) -> Result<()> {
    let _current = gpu.enter()?;
    // SAFETY: the caller's aligned device word; the GPU's stream is live and its context current
    // (`_current`).
    check(
        unsafe { sys::cuStreamWriteValue64_v2(gpu.stream, addr, value, 0) },
        "cuStreamWriteValue64_v2",
    )
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

    /// The error `alloc_mapped`'s steps fail with in these tests.
    fn cuda_error(what: &str) -> Error {
        Error::new(ncclResult_t::ncclUnhandledCudaError, format!("{what} failed"))
    }

    #[test]
    fn pinned_memory_that_cannot_be_mapped_is_given_back() {
        let block = 0x1000 as *mut c_void;
        let freed = std::cell::Cell::new(None);
        let r = alloc_mapped(
            || Ok(block),
            |_| Err(cuda_error("cuMemHostGetDevicePointer")),
            |p| {
                freed.set(Some(p));
                Ok(())
            },
        );
        assert!(r.unwrap_err().msg.contains("cuMemHostGetDevicePointer"));
        assert_eq!(freed.get(), Some(block), "the allocation is freed when mapping fails");
        // Mapped: kept; an allocation that fails: nothing to free.
        let freed = std::cell::Cell::new(false);
        let free = |_| {
            freed.set(true);
            Ok(())
        };
        assert_eq!(alloc_mapped(|| Ok(block), |_| Ok(7), free).unwrap(), (block, 7));
        assert!(!freed.get());
        let r = alloc_mapped(|| Err(cuda_error("cuMemHostAlloc")), |_| Ok(7), |_| Ok(()));
        assert!(r.is_err());
    }

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
