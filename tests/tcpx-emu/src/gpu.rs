//! CUDA for the emulator's GPU modes, through the driver loaded at run time (nothing links CUDA).
//! Host mode never calls any of this.
//!
//! **Every piece of GPU work the emulator does runs in a CUDA context of its own**, made with
//! `cuCtxCreate` on the device (one per device for the process), never in the device's primary
//! context (the application's, NCCL's and the CUDA runtime's) and never on a stream of it. The
//! emulator plays the NIC and TCPX: work it queued in the application's context could wait
//! behind the application's kernel on a shared hardware queue (`CUDA_DEVICE_MAX_CONNECTIONS=1`,
//! MPS) while that kernel waits for the very bytes the work would deliver, a deadlock that real
//! TCPX (the NIC writes its pool by DMA) cannot cause.
//!
//! What crosses from one context to the other, as measured on an H100 (driver 580, CUDA 13; with
//! and without `CUDA_DEVICE_MAX_CONNECTIONS=1`, and under MPS), 2026-11-23:
//! * memory mapped with the VMM API (`cuMemCreate` + `cuMemMap` + `cuMemSetAccess` for the
//!   device) in the emulator's context is read by a kernel of the primary context and copied by
//!   the primary context (`cuPointerGetAttribute` says DEVICE memory of no context): the pool and
//!   the device handles are such memory, as TCPX's pool is (it imports RxDM's pool with
//!   `cuMemImportFromShareableHandle` + `cuMemMap`);
//! * pinned host memory allocated `DEVICEMAP | PORTABLE` in the emulator's context has one
//!   device address, equal to its host address, in every context;
//! * a `cuMemcpyDtoHAsync` in the emulator's context reads `cuMemAlloc` and VMM memory of the
//!   primary context directly (unified addressing), and `cuMemcpyPeerAsync` between the two
//!   contexts works too;
//! * nothing orders work of one context after work of another: the emulator waits for its own
//!   copies (stream or event) before anything it wrote is published.
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::{Mutex, OnceLock};

pub type Result<T> = std::result::Result<T, String>;

fn check(r: sys::CUresult, what: &str) -> Result<()> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what} failed: {r:?}"))
    }
}

/// Whether a driver loads and initialises here (checked once).
pub fn available() -> bool {
    static OK: OnceLock<bool> = OnceLock::new();
    // SAFETY: is_culib_present only dlopens the driver; cuInit has no preconditions.
    *OK.get_or_init(|| unsafe { sys::is_culib_present() && sys::cuInit(0) == sys::CUresult::CUDA_SUCCESS })
}

/// The device `ptr` (device memory of any context, or VMM memory) lives on.
pub fn ordinal_of(ptr: u64) -> Result<i32> {
    let mut ordinal: i32 = -1;
    // SAFETY: DEVICE_ORDINAL writes one int; an unknown pointer is an error return.
    let r = unsafe {
        sys::cuPointerGetAttribute(
            &mut ordinal as *mut i32 as *mut c_void,
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            ptr,
        )
    };
    check(r, "cuPointerGetAttribute(DEVICE_ORDINAL)")?;
    Ok(ordinal)
}

/// One of the emulator's own contexts. Never destroyed: the memory, streams and events made in
/// it live as long as the process (tcpxr never unloads the library).
#[derive(Clone, Copy)]
pub struct Ctx(sys::CUcontext);

// SAFETY: a CUDA context may be made current on any thread.
unsafe impl Send for Ctx {}
// SAFETY: the handle is never changed; pushing one context on several threads at once is allowed.
unsafe impl Sync for Ctx {}

impl Ctx {
    /// Pushes the context onto the calling thread's stack until the guard drops: the caller's
    /// own context (NCCL's, the application's) is current again afterwards, as TCPX restores it.
    pub fn enter(self) -> Result<Entered> {
        // SAFETY: a live context of ours.
        check(unsafe { sys::cuCtxPushCurrent_v2(self.0) }, "cuCtxPushCurrent")?;
        Ok(Entered(()))
    }
}

/// Pops the emulator's context when dropped.
pub struct Entered(());

impl Drop for Entered {
    fn drop(&mut self) {
        let mut popped: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: pops what `enter` pushed on this thread (guards drop in reverse order).
        unsafe { sys::cuCtxPopCurrent_v2(&mut popped) };
    }
}

/// The emulator's handle to one GPU: its own context there, a stream for the small jobs of
/// NCCL's threads (device handles at accept, poison at irecvConsumed), and the device handles.
pub struct Gpu {
    pub ordinal: i32,
    pub ctx: Ctx,
    stream: Stream,
    handles: Mutex<Handles>,
}

/// Device memory for `unpackNetDeviceHandle`s: VMM slabs cut into 32-byte slots.
#[derive(Default)]
struct Handles {
    slabs: Vec<DeviceMem>,
    free: Vec<u64>,
}

const HANDLE_SLOT: usize = 32;

impl Gpu {
    /// Creates the emulator's context on device `ordinal` (the calling thread's context stack is
    /// left as it was).
    pub fn open(ordinal: i32) -> Result<Gpu> {
        if !available() {
            return Err("no CUDA driver on this host (or cuInit failed)".into());
        }
        let mut version = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { sys::cuDriverGetVersion(&mut version) }, "cuDriverGetVersion")?;
        if version < 12050 {
            return Err(format!(
                "the emulator's GPU modes need a CUDA 12.5 driver or newer (cuCtxCreate_v4); this one is {}.{}",
                version / 1000,
                version % 1000 / 10
            ));
        }
        let mut dev: sys::CUdevice = 0;
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: valid out-pointers; a NULL parameter block asks for a plain context. The new
        // context is pushed onto this thread's stack and popped at once, restoring the caller's.
        unsafe {
            check(sys::cuDeviceGet(&mut dev, ordinal), "cuDeviceGet")?;
            check(
                sys::cuCtxCreate_v4(
                    &mut ctx,
                    std::ptr::null_mut(),
                    sys::CUctx_flags::CU_CTX_MAP_HOST as u32,
                    dev,
                ),
                "cuCtxCreate",
            )?;
            let mut popped: sys::CUcontext = std::ptr::null_mut();
            check(sys::cuCtxPopCurrent_v2(&mut popped), "cuCtxPopCurrent")?;
        }
        let ctx = Ctx(ctx);
        let stream = match Stream::new(ctx) {
            Ok(s) => s,
            Err(e) => {
                // SAFETY: nothing was made in the context yet; it is not current anywhere.
                unsafe { sys::cuCtxDestroy_v2(ctx.0) };
                return Err(e);
            }
        };
        Ok(Gpu {
            ordinal,
            ctx,
            stream,
            handles: Mutex::new(Handles::default()),
        })
    }

    /// The device of the calling thread's current context (the GPU NCCL's thread works for), as
    /// TCPX takes it; None when the thread has no context.
    pub fn current_ordinal() -> Option<i32> {
        if !available() {
            return None;
        }
        let mut dev: sys::CUdevice = 0;
        // SAFETY: valid out-pointer; fails harmlessly without a current context.
        (unsafe { sys::cuCtxGetDevice(&mut dev) } == sys::CUresult::CUDA_SUCCESS).then_some(dev)
    }

    /// Writes a device handle (`bytes`, at most 32) into device memory of the emulator's context
    /// and waits for the write: its device address, readable and writable by every context on the
    /// device (NCCL's kernel increments `head` in it).
    pub fn write_handle(&self, bytes: &[u8]) -> Result<u64> {
        assert!(bytes.len() <= HANDLE_SLOT);
        let addr = {
            let mut h = self.handles.lock().unwrap();
            if h.free.is_empty() {
                let slab = DeviceMem::new(self, 1)?;
                let slots = slab.size / HANDLE_SLOT;
                let base = slab.ptr;
                h.free
                    .extend((0..slots as u64).rev().map(|i| base + i * HANDLE_SLOT as u64));
                h.slabs.push(slab);
            }
            h.free.pop().unwrap()
        };
        let written = self.stream.htod(addr, bytes).and_then(|()| self.stream.sync());
        if let Err(e) = written {
            self.free_handle(addr);
            return Err(e);
        }
        Ok(addr)
    }

    pub fn free_handle(&self, addr: u64) {
        self.handles.lock().unwrap().free.push(addr);
    }

    /// Queues fills of `runs` (device address, length) with `value` on the GPU's stream and
    /// records `done` after them. Called from NCCL's thread (irecvConsumed): nothing waits here.
    pub fn fill_async(&self, runs: &[(u64, usize)], value: u8, done: &Event) -> Result<()> {
        let _in = self.ctx.enter()?;
        for &(at, len) in runs {
            // SAFETY: at..at+len lies in device memory of this context (the pool); a live stream.
            let r = unsafe { sys::cuMemsetD8Async(at, value, len, self.stream.0) };
            check(r, "cuMemsetD8Async")?;
        }
        done.record(&self.stream)
    }
}

/// Device memory of an emulator context, mapped with the VMM API with read-write access for the
/// device, so kernels and copies of every context on the device can use it (as TCPX's imported
/// pool). Sizes are rounded up to the allocation granularity (2 MiB).
pub struct DeviceMem {
    ctx: Ctx,
    pub ptr: u64,
    pub size: usize,
    handle: sys::CUmemGenericAllocationHandle,
}

// SAFETY: plain addresses of memory that lives until drop; CUDA calls are thread-safe.
unsafe impl Send for DeviceMem {}
// SAFETY: as for Send: nothing here changes after new, and the memory is only reached through the
// (thread-safe) driver.
unsafe impl Sync for DeviceMem {}

impl DeviceMem {
    pub fn new(gpu: &Gpu, len: usize) -> Result<DeviceMem> {
        let _in = gpu.ctx.enter()?;
        // SAFETY: all-zero is a valid CUmemAllocationProp (no handle types, no flags).
        let mut prop: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
        prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = gpu.ordinal;
        let mut gran = 0usize;
        // SAFETY: valid out-pointer and property block.
        let r = unsafe {
            sys::cuMemGetAllocationGranularity(
                &mut gran,
                &prop,
                sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
            )
        };
        check(r, "cuMemGetAllocationGranularity")?;
        let size = len.max(1).div_ceil(gran.max(1)) * gran.max(1);
        let mut handle: sys::CUmemGenericAllocationHandle = 0;
        // SAFETY: valid out-pointer and property block.
        check(unsafe { sys::cuMemCreate(&mut handle, size, &prop, 0) }, "cuMemCreate")?;
        let mut ptr: sys::CUdeviceptr = 0;
        // SAFETY: valid out-pointer; on failure the allocation made above is released.
        let mapped = unsafe {
            check(sys::cuMemAddressReserve(&mut ptr, size, 0, 0, 0), "cuMemAddressReserve").and_then(|()| {
                let m = check(sys::cuMemMap(ptr, size, 0, handle, 0), "cuMemMap");
                if m.is_err() {
                    sys::cuMemAddressFree(ptr, size);
                }
                m
            })
        };
        if let Err(e) = mapped {
            // SAFETY: the handle was created above and is not mapped.
            unsafe { sys::cuMemRelease(handle) };
            return Err(e);
        }
        let mem = DeviceMem {
            ctx: gpu.ctx,
            ptr,
            size,
            handle,
        };
        let desc = sys::CUmemAccessDesc {
            location: prop.location,
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: ptr..ptr+size is the range mapped above (dropping `mem` unmaps it on failure).
        check(unsafe { sys::cuMemSetAccess(ptr, size, &desc, 1) }, "cuMemSetAccess")?;
        Ok(mem)
    }
}

impl Drop for DeviceMem {
    fn drop(&mut self) {
        let _in = self.ctx.enter();
        // SAFETY: the range and handle made in new, released once; users are gone.
        unsafe {
            sys::cuMemUnmap(self.ptr, self.size);
            sys::cuMemAddressFree(self.ptr, self.size);
            sys::cuMemRelease(self.handle);
        }
    }
}

/// Pinned host memory allocated in an emulator context, `PORTABLE` (pinned for every context);
/// `mapped` adds `DEVICEMAP`: `dev` is then its device address, the same in every context.
pub struct HostMem {
    ctx: Ctx,
    pub host: *mut u8,
    pub dev: u64,
}

// SAFETY: pinned PORTABLE memory owned by this value (freed once, by Drop), usable from any thread.
unsafe impl Send for HostMem {}
// SAFETY: through `&HostMem` only the raw addresses can be read; who writes which part is up to
// the owners' protocols, each access in an unsafe block of its own.
unsafe impl Sync for HostMem {}

impl HostMem {
    /// `len` bytes, every one set to `fill`.
    pub fn new(gpu: &Gpu, len: usize, mapped: bool, fill: u8) -> Result<HostMem> {
        let _in = gpu.ctx.enter()?;
        let mut host: *mut c_void = std::ptr::null_mut();
        let flags = sys::CU_MEMHOSTALLOC_PORTABLE | if mapped { sys::CU_MEMHOSTALLOC_DEVICEMAP } else { 0 };
        // SAFETY: a valid out-pointer; the context is current.
        let r = unsafe { sys::cuMemHostAlloc(&mut host, len.max(1), flags) };
        check(r, "cuMemHostAlloc")?;
        let mut mem = HostMem {
            ctx: gpu.ctx,
            host: host as *mut u8,
            dev: 0,
        };
        // SAFETY: a fresh allocation of len bytes.
        unsafe { std::ptr::write_bytes(mem.host, fill, len) };
        if mapped {
            // SAFETY: valid out-pointer; host is a DEVICEMAP allocation (freed by drop on failure).
            let r = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut mem.dev, host, 0) };
            check(r, "cuMemHostGetDevicePointer")?;
        }
        Ok(mem)
    }
}

impl Drop for HostMem {
    fn drop(&mut self) {
        let _in = self.ctx.enter();
        // SAFETY: allocated in new, freed once; users are gone.
        unsafe { sys::cuMemFreeHost(self.host as *mut c_void) };
    }
}

/// A non-blocking stream of an emulator context. Work is queued on it only while that context
/// is current on the calling thread.
pub struct Stream(sys::CUstream, Ctx);

// SAFETY: CUDA streams may be used from any thread.
unsafe impl Send for Stream {}
// SAFETY: the handle never changes, and queueing on one stream from several threads is allowed
// by the (thread-safe) driver.
unsafe impl Sync for Stream {}

impl Stream {
    pub fn new(ctx: Ctx) -> Result<Stream> {
        let _in = ctx.enter()?;
        let mut s: sys::CUstream = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the context is current.
        let r = unsafe { sys::cuStreamCreate(&mut s, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32) };
        check(r, "cuStreamCreate")?;
        Ok(Stream(s, ctx))
    }

    /// Queues a copy of `src` to device address `dst`. For a pinned `src` the caller keeps it
    /// unchanged until the copy is waited for; a pageable one is staged before the call returns.
    pub fn htod(&self, dst: u64, src: &[u8]) -> Result<()> {
        let _in = self.1.enter()?;
        // SAFETY: dst..dst+len lies in device memory the caller owns; src is live (see above).
        let r = unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src.as_ptr() as *const c_void, src.len(), self.0) };
        check(r, "cuMemcpyHtoDAsync")
    }

    /// Waits for everything queued on the stream.
    pub fn sync(&self) -> Result<()> {
        let _in = self.1.enter()?;
        // SAFETY: a live stream.
        check(unsafe { sys::cuStreamSynchronize(self.0) }, "cuStreamSynchronize")
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        let _in = self.1.enter();
        // SAFETY: created in new, destroyed once.
        unsafe { sys::cuStreamDestroy_v2(self.0) };
    }
}

/// An event of an emulator context (no timing).
pub struct Event(sys::CUevent, Ctx);

// SAFETY: CUDA events may be used from any thread.
unsafe impl Send for Event {}
// SAFETY: the handle never changes; recording, querying and waiting from several threads is
// allowed by the (thread-safe) driver.
unsafe impl Sync for Event {}

impl Event {
    pub fn new(ctx: Ctx) -> Result<Event> {
        let _in = ctx.enter()?;
        let mut e: sys::CUevent = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the context is current.
        let r = unsafe { sys::cuEventCreate(&mut e, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32) };
        check(r, "cuEventCreate")?;
        Ok(Event(e, ctx))
    }

    pub fn record(&self, s: &Stream) -> Result<()> {
        let _in = self.1.enter()?;
        // SAFETY: a live event and stream of the same context.
        check(unsafe { sys::cuEventRecord(self.0, s.0) }, "cuEventRecord")
    }

    /// Whether the work before the last record has finished.
    pub fn done(&self) -> Result<bool> {
        let _in = self.1.enter()?;
        // SAFETY: a live event.
        match unsafe { sys::cuEventQuery(self.0) } {
            sys::CUresult::CUDA_SUCCESS => Ok(true),
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            r => Err(format!("cuEventQuery failed: {r:?}")),
        }
    }

    pub fn wait(&self) -> Result<()> {
        let _in = self.1.enter()?;
        // SAFETY: a live event.
        check(unsafe { sys::cuEventSynchronize(self.0) }, "cuEventSynchronize")
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        let _in = self.1.enter();
        // SAFETY: created in new, destroyed once.
        unsafe { sys::cuEventDestroy_v2(self.0) };
    }
}

/// How a send thread reads GPU memory (a send buffer NCCL registered as CUDA memory): copies into
/// pinned host memory, in the emulator's context, in chunks of [`Reader::CHUNK`], two in flight
/// so one is copied while the other is sent.
///
/// First choice: `cuMemcpyDtoHAsync` in the emulator's context straight from the buffer's
/// (unified) address, which the driver accepts for `cuMemAlloc` and VMM memory of another
/// context on the device. Should a driver refuse it, the reader falls back, for the rest of its
/// life, to `cuMemcpyPeerAsync` from the buffer's own context into device memory of the
/// emulator's context and a copy to the host from there (still queued on the emulator's stream);
/// if that is refused too the send fails with both results named.
pub struct Reader {
    gpu: std::sync::Arc<Gpu>,
    stream: Stream,
    bufs: [HostMem; 2],
    done: [Event; 2],
    /// Set once a direct copy was refused: the result, and device memory for the peer copies.
    peer: Option<(sys::CUresult, [DeviceMem; 2])>,
}

impl Reader {
    pub const CHUNK: usize = 1 << 20;

    pub fn new(gpu: std::sync::Arc<Gpu>) -> Result<Reader> {
        let ctx = gpu.ctx;
        Ok(Reader {
            stream: Stream::new(ctx)?,
            bufs: [
                HostMem::new(&gpu, Self::CHUNK, false, 0)?,
                HostMem::new(&gpu, Self::CHUNK, false, 0)?,
            ],
            done: [Event::new(ctx)?, Event::new(ctx)?],
            peer: None,
            gpu,
        })
    }

    pub fn ordinal(&self) -> i32 {
        self.gpu.ordinal
    }

    /// Queues the copy of `n` (at most CHUNK) bytes at device address `src` into buffer `i`;
    /// the buffer must not be in use (its last `finish` has returned).
    pub fn start(&mut self, i: usize, src: u64, n: usize) -> Result<()> {
        assert!(n <= Self::CHUNK);
        let _in = self.gpu.ctx.enter()?;
        let dst = self.bufs[i].host as *mut c_void;
        if self.peer.is_none() {
            // SAFETY: dst holds CHUNK bytes and is not reused before finish(i); src..src+n is
            // the caller's registered device memory, kept valid until the send completes.
            let r = unsafe { sys::cuMemcpyDtoHAsync_v2(dst, src, n, self.stream.0) };
            if r == sys::CUresult::CUDA_SUCCESS {
                return self.done[i].record(&self.stream);
            }
            let bounce = [
                DeviceMem::new(&self.gpu, Self::CHUNK)?,
                DeviceMem::new(&self.gpu, Self::CHUNK)?,
            ];
            crate::info(&format!(
                "GPU {}: cuMemcpyDtoHAsync from {src:#x} in the emulator's context was refused ({r:?}); sends from GPU memory go through cuMemcpyPeerAsync from now on",
                self.gpu.ordinal
            ));
            self.peer = Some((r, bounce));
        }
        let (direct, bounce) = self.peer.as_ref().unwrap();
        let mut owner: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: CONTEXT writes one CUcontext.
        let r = unsafe {
            sys::cuPointerGetAttribute(
                &mut owner as *mut sys::CUcontext as *mut c_void,
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT,
                src,
            )
        };
        let refused = |what: String| {
            format!(
                "reading GPU memory at {src:#x} in the emulator's own context: cuMemcpyDtoHAsync was refused ({direct:?}) and {what}"
            )
        };
        if r != sys::CUresult::CUDA_SUCCESS || owner.is_null() {
            return Err(refused(format!(
                "the buffer's context is unknown for cuMemcpyPeerAsync (cuPointerGetAttribute(CONTEXT): {r:?}, context {owner:p})"
            )));
        }
        // SAFETY: bounce[i] holds CHUNK bytes of this context's device memory; src as above; the
        // second copy is ordered after the first on the same stream.
        unsafe {
            let r = sys::cuMemcpyPeerAsync(bounce[i].ptr, self.gpu.ctx.0, src, owner, n, self.stream.0);
            if r != sys::CUresult::CUDA_SUCCESS {
                return Err(refused(format!("cuMemcpyPeerAsync failed too ({r:?})")));
            }
            check(
                sys::cuMemcpyDtoHAsync_v2(dst, bounce[i].ptr, n, self.stream.0),
                "cuMemcpyDtoHAsync (from the emulator's device memory)",
            )?;
        }
        self.done[i].record(&self.stream)
    }

    /// Waits for buffer `i`'s copy: its first `n` bytes.
    pub fn finish(&self, i: usize, n: usize) -> Result<&[u8]> {
        self.done[i].wait()?;
        // SAFETY: the copy into bufs[i] has completed; n <= CHUNK.
        Ok(unsafe { std::slice::from_raw_parts(self.bufs[i].host, n) })
    }
}
