//! CUDA for the emulator's GPU modes, through the driver loaded at run time (nothing links CUDA):
//! the device's primary context, device memory, pinned host memory mapped into the device, and
//! the copies the I/O threads make. Host mode never calls any of this.
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::OnceLock;

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

/// One GPU's primary context (the one the CUDA runtime and NCCL use).
pub struct Gpu {
    pub ordinal: i32,
    ctx: sys::CUcontext,
    /// The emulator's own non-blocking stream: its copies never queue behind the application's
    /// work on the legacy default stream (TCPX's DMA does not either).
    stream: sys::CUstream,
}

// SAFETY: a CUDA context may be made current on any thread.
unsafe impl Send for Gpu {}
unsafe impl Sync for Gpu {}

impl Gpu {
    pub fn open(ordinal: i32) -> Result<Gpu> {
        if !available() {
            return Err("no CUDA driver on this host".into());
        }
        let mut dev: sys::CUdevice = 0;
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: valid out-pointers.
        unsafe {
            check(sys::cuDeviceGet(&mut dev, ordinal), "cuDeviceGet")?;
            check(sys::cuDevicePrimaryCtxRetain(&mut ctx, dev), "cuDevicePrimaryCtxRetain")?;
        }
        let mut g = Gpu {
            ordinal,
            ctx,
            stream: std::ptr::null_mut(),
        };
        let _current = g.bind()?;
        // SAFETY: valid out-pointer, the context is current.
        check(
            unsafe { sys::cuStreamCreate(&mut g.stream, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32) },
            "cuStreamCreate",
        )?;
        drop(_current);
        Ok(g)
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

    /// Makes the context current until the guard drops, which restores the thread's previous
    /// one: the emulator, like TCPX, must never leave NCCL's thread on another device.
    pub fn bind(&self) -> Result<Current> {
        let mut cur: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: valid out-pointer; setting a retained primary context is always allowed.
        unsafe {
            check(sys::cuCtxGetCurrent(&mut cur), "cuCtxGetCurrent")?;
            if cur == self.ctx {
                return Ok(Current(None));
            }
            check(sys::cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")?;
        }
        Ok(Current(Some(cur)))
    }
}

/// Restores the thread's previous context when dropped.
pub struct Current(Option<sys::CUcontext>);

impl Drop for Current {
    fn drop(&mut self) {
        if let Some(p) = self.0 {
            // SAFETY: p was current on this thread a moment ago (or NULL).
            unsafe { sys::cuCtxSetCurrent(p) };
        }
    }
}

impl Gpu {
    pub fn alloc(&self, len: usize) -> Result<u64> {
        let _current = self.bind()?;
        let mut d: sys::CUdeviceptr = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { sys::cuMemAlloc_v2(&mut d, len.max(1)) }, "cuMemAlloc")?;
        Ok(d)
    }

    pub fn free(&self, d: u64) {
        let _current = self.bind();
        // SAFETY: d came from alloc and is freed once.
        unsafe { sys::cuMemFree_v2(d) };
    }

    /// Pinned host memory mapped into the device: (host pointer, device pointer).
    pub fn alloc_mapped(&self, len: usize) -> Result<(*mut u8, u64)> {
        let _current = self.bind()?;
        let mut host: *mut c_void = std::ptr::null_mut();
        let mut dev: sys::CUdeviceptr = 0;
        // SAFETY: valid out-pointers; PORTABLE makes it usable from every context.
        unsafe {
            check(
                sys::cuMemHostAlloc(
                    &mut host,
                    len.max(1),
                    sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE,
                ),
                "cuMemHostAlloc",
            )?;
            std::ptr::write_bytes(host as *mut u8, 0, len);
            check(
                sys::cuMemHostGetDevicePointer_v2(&mut dev, host, 0),
                "cuMemHostGetDevicePointer",
            )?;
        }
        Ok((host as *mut u8, dev))
    }

    pub fn free_mapped(&self, host: *mut u8) {
        // SAFETY: host came from alloc_mapped and is freed once.
        unsafe { sys::cuMemFreeHost(host as *mut c_void) };
    }

    /// Queues a copy of `src` to `dst` on the emulator's stream; `sync` waits for it. `src` may
    /// be reused at once (pageable sources are staged before the call returns).
    pub fn htod_async(&self, dst: u64, src: &[u8]) -> Result<()> {
        let _current = self.bind()?;
        // SAFETY: dst..dst+len lies in an allocation of ours; src is a live slice.
        check(
            unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src.as_ptr() as *const c_void, src.len(), self.stream) },
            "cuMemcpyHtoDAsync",
        )
    }

    /// Waits for everything queued on the emulator's stream.
    pub fn sync(&self) -> Result<()> {
        let _current = self.bind()?;
        // SAFETY: a live stream.
        check(unsafe { sys::cuStreamSynchronize(self.stream) }, "cuStreamSynchronize")
    }

    pub fn htod(&self, dst: u64, src: &[u8]) -> Result<()> {
        self.htod_async(dst, src)?;
        self.sync()
    }

    pub fn dtoh(&self, dst: &mut [u8], src: u64) -> Result<()> {
        let _current = self.bind()?;
        // SAFETY: src..src+len is device memory the caller registered; dst is a live slice, kept
        // until the copy is waited for below.
        check(
            unsafe { sys::cuMemcpyDtoHAsync_v2(dst.as_mut_ptr() as *mut c_void, src, dst.len(), self.stream) },
            "cuMemcpyDtoHAsync",
        )?;
        self.sync()
    }

    /// Queues a fill of `len` bytes at `dst`; `sync` waits for it.
    pub fn memset_async(&self, dst: u64, value: u8, len: usize) -> Result<()> {
        let _current = self.bind()?;
        // SAFETY: dst..dst+len lies in an allocation of ours.
        check(
            unsafe { sys::cuMemsetD8Async(dst, value, len, self.stream) },
            "cuMemsetD8Async",
        )
    }
}
