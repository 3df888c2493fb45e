//! GPU helpers of the GPU tests (tests/gpu.rs, tests/gpu_tcpx.rs): skip visibly without a CUDA
//! driver, and device buffers through the driver API.
use cudarc::driver::sys;
use nccl_net_tcpxr::gpu::{self, Gpu};
use std::ffi::c_void;

/// GPU 0, opened, its context current on the calling thread, and with NCCL_TCPXR_GPU_BUFFERS=1 set (before the plugin initialises), or None
/// after a SKIPPED line on a host without a CUDA driver.
pub fn gpu_or_skip(test: &str) -> Option<std::sync::Arc<Gpu>> {
    // GPU buffers are opt-in; every test here is about them. Set once, before any test of this
    // binary initialises the plugin (each starts here).
    static OPT_IN: std::sync::Once = std::sync::Once::new();
    OPT_IN.call_once(|| std::env::set_var("NCCL_TCPXR_GPU_BUFFERS", "1"));
    if !gpu::available() {
        // Written to the stderr handle directly, which the test harness does not capture, so the
        // skip shows in every run's output.
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "SKIPPED {test}: no CUDA driver on this host");
        return None;
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
        // SAFETY: valid out-pointer; the context is current (gpu_or_skip bound it on this thread).
        assert_eq!(
            unsafe { sys::cuMemAlloc_v2(&mut p, len.max(1)) },
            sys::CUresult::CUDA_SUCCESS
        );
        DevBuf(p)
    }
    pub fn upload(&self, data: &[u8]) {
        // SAFETY: the test allocates every buffer at least as large as what it copies.
        assert_eq!(
            unsafe { sys::cuMemcpyHtoD_v2(self.0, data.as_ptr() as *const c_void, data.len()) },
            sys::CUresult::CUDA_SUCCESS
        );
    }
    pub fn download(&self, len: usize) -> Vec<u8> {
        let mut v = vec![0u8; len];
        // SAFETY: as above.
        assert_eq!(
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
