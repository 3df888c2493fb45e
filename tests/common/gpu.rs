//! GPU helpers of the GPU tests (tests/gpu.rs, tests/gpu_tcpx.rs): every GPU test starts with
//! [`gpu_or_skip`], which skips visibly, naming the CUDA reason, where CUDA cannot be used, and
//! fails instead with `TCPXR_REQUIRE_GPU=1` (every run on a GPU machine sets it, so a broken driver
//! can never make the GPU tests pass in 0.00 s); and device buffers through the driver API.
use super::spin::cu;
use super::{null, OK, V12};
use cudarc::driver::sys;
use nccl_net_tcpxr::abi::{loadMeta, netUnpackMeta, unpackNetDeviceHandle, NCCL_PTR_CUDA, NET_UNPACK_MAX_SLICE_PAGES};
use nccl_net_tcpxr::gpu::{self, Gpu};
use std::ffi::{c_void, CStr};

/// The switch that turns every GPU skip into a failure.
pub const REQUIRE_GPU: &str = "TCPXR_REQUIRE_GPU";

/// Why CUDA cannot be used on this host, or None when it can: no driver library, or cuInit's
/// error code, name and description (803 CUDA_ERROR_SYSTEM_DRIVER_MISMATCH on a host whose kernel
/// module and libcuda disagree).
pub fn cuda_unavailable_reason() -> Option<String> {
    // SAFETY: only tries to dlopen the driver library (libcuda.so and its usual names).
    if !unsafe { sys::is_culib_present() } {
        return Some("no CUDA driver library (libcuda.so) could be loaded".into());
    }
    // SAFETY: cuInit has no preconditions; the library is present, so the call resolves.
    let r = unsafe { sys::cuInit(0) };
    if r != sys::CUresult::CUDA_SUCCESS {
        let mut text: *const std::ffi::c_char = std::ptr::null();
        // SAFETY: valid out-pointer; the driver points it at a static string or leaves it NULL.
        let described = unsafe { sys::cuGetErrorString(r, &mut text) } == sys::CUresult::CUDA_SUCCESS;
        let description = (described && !text.is_null())
            // SAFETY: a NUL-terminated static string of the driver.
            .then(|| unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned());
        return Some(cuinit_failure(r, description.as_deref()));
    }
    if !gpu::available() {
        // Both checks ask the same driver; a disagreement is tcpxr's bug, and still no GPU.
        return Some("cuInit succeeds but tcpxr's gpu::available() says no CUDA".into());
    }
    None
}

/// The reason given for a failed cuInit: its code, its name and the driver's description,
/// e.g. "cuInit failed with 803 CUDA_ERROR_SYSTEM_DRIVER_MISMATCH: system has unsupported display
/// driver / cuda driver combination".
pub fn cuinit_failure(r: sys::CUresult, description: Option<&str>) -> String {
    let what = description.map(|d| format!(": {d}")).unwrap_or_default();
    format!("cuInit failed with {} {r:?}{what}", r as u32)
}

/// What [`gpu_or_skip`] does where CUDA cannot be used: Err(message) to fail with when
/// `TCPXR_REQUIRE_GPU=1` (`require`), else Ok(the SKIPPED line).
pub fn skip_or_fail(test: &str, reason: &str, require: bool) -> Result<String, String> {
    if require {
        Err(format!(
            "{test}: {REQUIRE_GPU}=1 and CUDA cannot be used here: {reason}"
        ))
    } else {
        Ok(format!(
            "SKIPPED {test}: {reason} (set {REQUIRE_GPU}=1 to fail instead)"
        ))
    }
}

/// GPU 0, opened, its context current on the calling thread, and with NCCL_TCPXR_GPU_BUFFERS=1 set
/// (before the plugin initialises); or None after a SKIPPED line naming the CUDA reason, and a
/// panic instead of the skip under `TCPXR_REQUIRE_GPU=1`.
pub fn gpu_or_skip(test: &str) -> Option<std::sync::Arc<Gpu>> {
    // GPU buffers are opt-in; every test here is about them. Set once, before any test of this
    // binary initialises the plugin (each starts here).
    static OPT_IN: std::sync::Once = std::sync::Once::new();
    OPT_IN.call_once(|| std::env::set_var("NCCL_TCPXR_GPU_BUFFERS", "1"));
    if let Some(reason) = cuda_unavailable_reason() {
        let require = std::env::var(REQUIRE_GPU).is_ok_and(|v| v.trim() == "1");
        match skip_or_fail(test, &reason, require) {
            Ok(line) => {
                // Written to the stderr handle directly, which the test harness does not capture,
                // so the skip shows in every run's output.
                use std::io::Write;
                let _ = writeln!(std::io::stderr(), "{line}");
                return None;
            }
            Err(failure) => panic!("{failure}"),
        }
    }
    let g = Gpu::get(0).expect("open GPU 0");
    // The test thread works on GPU 0, as NCCL's threads have their GPU's context current.
    g.bind().expect("make GPU 0's context current");
    Some(g)
}

pub struct DevBuf(pub u64);
impl DevBuf {
    pub fn new(len: usize) -> DevBuf {
        let mut p = 0;
        assert_eq!(
            // SAFETY: valid out-pointer; the context is current (gpu_or_skip bound it on this thread).
            unsafe { sys::cuMemAlloc_v2(&mut p, len.max(1)) },
            sys::CUresult::CUDA_SUCCESS
        );
        DevBuf(p)
    }
    pub fn upload(&self, data: &[u8]) {
        assert_eq!(
            // SAFETY: the test allocates every buffer at least as large as what it copies.
            unsafe { sys::cuMemcpyHtoD_v2(self.0, data.as_ptr() as *const c_void, data.len()) },
            sys::CUresult::CUDA_SUCCESS
        );
    }
    /// [`DevBuf::upload`], then waits until the bytes are in device memory. A synchronous copy
    /// from pageable memory may return once CUDA has staged the bytes, before its DMA has
    /// written them (CUDA's "API synchronization behavior"); work on another stream (tcpxr's,
    /// non-blocking, which the legacy stream does not order) can then read the old bytes. Waits
    /// for the legacy stream only, never for tcpxr's stream or an application kernel's.
    pub fn upload_done(&self, data: &[u8]) {
        self.upload(data);
        assert_eq!(
            // SAFETY: the legacy default stream (NULL) of the current context.
            unsafe { sys::cuStreamSynchronize(std::ptr::null_mut()) },
            sys::CUresult::CUDA_SUCCESS
        );
    }
    pub fn download(&self, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        assert_eq!(
            // SAFETY: the test allocates every buffer at least as large as what it copies; `v` holds
            // `len` bytes.
            unsafe { sys::cuMemcpyDtoH_v2(v.as_mut_ptr() as *mut c_void, self.0, len) },
            sys::CUresult::CUDA_SUCCESS
        );
        v
    }
}
impl DevBuf {
    /// `upload` into a view of another buffer, which must not be freed through this one.
    pub fn upload_forget(self, data: &[u8]) {
        self.upload(data);
        std::mem::forget(self);
    }
    /// `download` from a view of another buffer, likewise.
    pub fn download_forget(self, len: usize) -> Vec<u8> {
        let v = self.download(len);
        std::mem::forget(self);
        v
    }
}
impl Drop for DevBuf {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc, freed once.
        unsafe { sys::cuMemFree_v2(self.0) };
    }
}

/// The device-unpack ring handle accept returned at `dev` (device-readable memory), read back.
pub fn read_ring(dev: *mut c_void) -> unpackNetDeviceHandle {
    let mut raw = [0u8; std::mem::size_of::<unpackNetDeviceHandle>()];
    cu(
        // SAFETY: the handle is device-readable memory of its size; a synchronous copy reads it.
        unsafe { sys::cuMemcpyDtoH_v2(raw.as_mut_ptr() as *mut c_void, dev as u64, raw.len()) },
        "read the device handle",
    );
    // SAFETY: the bytes of an unpackNetDeviceHandle.
    unsafe { std::ptr::read_unaligned(raw.as_ptr() as *const unpackNetDeviceHandle) }
}

/// What NCCL's kernel does for receive `n`: copy every record of slot n % 16 from the bounce
/// buffer to `dst` (here with the copy engine, after the test's kernel has finished); returns how
/// many records there were.
pub fn place_from_ring(h: &unpackNetDeviceHandle, n: u64, dst: u64) -> u64 {
    let slot = (n % 16) as usize;
    let meta = h.meta as u64;
    let mut cnt = 0u64;
    let cnt_at = meta + (std::mem::offset_of!(netUnpackMeta, cnt) + slot * 8) as u64;
    // SAFETY: the ring is device-readable memory; synchronous copies of its count and records.
    cu(
        unsafe { sys::cuMemcpyDtoH_v2(&mut cnt as *mut u64 as *mut c_void, cnt_at, 8) },
        "read cnt",
    );
    let mut recs = vec![loadMeta::default(); cnt as usize];
    if cnt > 0 {
        let at = meta + (slot * NET_UNPACK_MAX_SLICE_PAGES * 16) as u64;
        // SAFETY: as above, cnt records.
        cu(
            unsafe { sys::cuMemcpyDtoH_v2(recs.as_mut_ptr() as *mut c_void, at, recs.len() * 16) },
            "read records",
        );
    }
    for r in recs {
        // SAFETY: src inside the bounce memory the comm holds until irecvConsumed, dst inside the
        // receive buffer (tcpxr checked the records).
        cu(
            unsafe { sys::cuMemcpyDtoD_v2(dst + r.dst_off, h.bounce_buf as u64 + r.src_off as u64, r.len as usize) },
            "place a fragment",
        );
    }
    cnt
}

/// Registers `len` bytes of device memory at `p` with `comm` through the v12 table, as NCCL does.
pub fn reg_cuda(net: &V12, comm: *mut c_void, p: u64, len: usize) -> *mut c_void {
    let mut mh = null();
    // SAFETY: tcpxr's table; p is device memory of len bytes; a live out-pointer.
    let r = unsafe { net.0.regMr.unwrap()(comm, p as *mut c_void, len, NCCL_PTR_CUDA, &mut mh) };
    assert_eq!(r, OK);
    mh
}
