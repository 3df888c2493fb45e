//! The two CUDA questions the tcpx transport asks, through the driver loaded at run time (cudarc,
//! dynamic loading): is this pointer device memory, and copy a few bytes of it to the host (TCPX
//! keeps its `unpackNetDeviceHandle` in device memory). Without a driver every pointer is host
//! memory, which is right: nothing else could have made it.
//!
//! The GPU module (`gpu::Gpu::of_pointer`) answers the same question with a context attached; when
//! the GPU unpack arrives this file can lean on it instead.
use crate::abi::ncclResult_t;
use crate::error::{Error, Result};
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::OnceLock;

fn driver() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    *PRESENT.get_or_init(|| {
        // SAFETY: is_culib_present only tries to dlopen the driver library.
        if !unsafe { sys::is_culib_present() } {
            return false;
        }
        // SAFETY: cuInit has no preconditions and may be called many times.
        unsafe { sys::cuInit(0) == sys::CUresult::CUDA_SUCCESS }
    })
}

fn cuda_error(what: &str, r: sys::CUresult) -> Error {
    Error::new(ncclResult_t::ncclUnhandledCudaError, format!("{what} failed: {r:?}"))
}

/// Whether `ptr` is device memory (not host memory, pinned or not).
pub fn is_device_memory(ptr: *const u8) -> bool {
    if ptr.is_null() || !driver() {
        return false;
    }
    let mut mem_type: u32 = 0;
    // SAFETY: MEMORY_TYPE writes one unsigned int; an unknown (host) pointer is an error return.
    let r = unsafe {
        sys::cuPointerGetAttribute(
            &mut mem_type as *mut u32 as *mut c_void,
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            ptr as sys::CUdeviceptr,
        )
    };
    r == sys::CUresult::CUDA_SUCCESS && mem_type == sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32
}

/// Copies `out.len()` bytes at `src` (device or host memory) into `out`.
///
/// # Safety
/// `src` must point to `out.len()` readable bytes of host or device memory.
pub unsafe fn copy_to_host(src: *const u8, out: &mut [u8]) -> Result<()> {
    if !is_device_memory(src) {
        // SAFETY: the caller vouches for src..src+len; `out` is ours.
        unsafe { std::ptr::copy_nonoverlapping(src, out.as_mut_ptr(), out.len()) };
        return Ok(());
    }
    let mut ctx: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: CONTEXT writes one CUcontext; then that context is pushed around one synchronous
    // copy into `out` and popped again, leaving the thread as it was.
    unsafe {
        let r = sys::cuPointerGetAttribute(
            &mut ctx as *mut sys::CUcontext as *mut c_void,
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT,
            src as sys::CUdeviceptr,
        );
        if r != sys::CUresult::CUDA_SUCCESS {
            return Err(cuda_error("cuPointerGetAttribute(CONTEXT)", r));
        }
        let r = sys::cuCtxPushCurrent_v2(ctx);
        if r != sys::CUresult::CUDA_SUCCESS {
            return Err(cuda_error("cuCtxPushCurrent", r));
        }
        let copied = sys::cuMemcpyDtoH_v2(out.as_mut_ptr() as *mut c_void, src as sys::CUdeviceptr, out.len());
        let mut popped: sys::CUcontext = std::ptr::null_mut();
        sys::cuCtxPopCurrent_v2(&mut popped);
        if copied != sys::CUresult::CUDA_SUCCESS {
            return Err(cuda_error("cuMemcpyDtoH of TCPX's device handle", copied));
        }
    }
    Ok(())
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
