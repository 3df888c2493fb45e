//! EXPERIMENT (run 400): which CUDA calls, made while a kernel holds the GPU, keep a copy issued
//! after them on another stream from running until that kernel ends. CUDA's programming guide
//! lists page-locked host allocations among the operations between which work of different
//! streams does not overlap; a first form of an rma test saw it (runs 383-386).
mod common;

use common::gpu::gpu_or_skip;
use common::spin::{cu, Spin};
use cudarc::driver::sys;
use std::ffi::c_void;
use std::time::{Duration, Instant};

const LEN: usize = 1 << 20;

struct Vmm {
    ptr: sys::CUdeviceptr,
    size: usize,
    handle: sys::CUmemGenericAllocationHandle,
}

fn vmm_host(size: usize, dev: i32) -> Vmm {
    // SAFETY: plain driver calls with valid out-pointers; the context is current.
    unsafe {
        let mut prop: sys::CUmemAllocationProp = std::mem::zeroed();
        prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST_NUMA;
        prop.location.id = 0;
        let mut gran = 0usize;
        cu(
            sys::cuMemGetAllocationGranularity(
                &mut gran,
                &prop,
                sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
            ),
            "granularity",
        );
        let size = size.div_ceil(gran) * gran;
        let mut handle = 0;
        cu(sys::cuMemCreate(&mut handle, size, &prop, 0), "cuMemCreate(host numa)");
        let mut ptr = 0;
        cu(sys::cuMemAddressReserve(&mut ptr, size, gran, 0, 0), "cuMemAddressReserve");
        cu(sys::cuMemMap(ptr, size, 0, handle, 0), "cuMemMap");
        let mut acc: [sys::CUmemAccessDesc; 2] = std::mem::zeroed();
        acc[0].location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        acc[0].location.id = dev;
        acc[0].flags = sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        acc[1].location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST_NUMA;
        acc[1].location.id = 0;
        acc[1].flags = sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        cu(sys::cuMemSetAccess(ptr, size, acc.as_ptr(), 2), "cuMemSetAccess");
        // The CPU writes it through the same address.
        std::ptr::write_bytes(ptr as *mut u8, 7, size);
        Vmm { ptr, size, handle }
    }
}

fn vmm_free(v: Vmm) {
    // SAFETY: made by vmm_host, freed once.
    unsafe {
        cu(sys::cuMemUnmap(v.ptr, v.size), "cuMemUnmap");
        cu(sys::cuMemAddressFree(v.ptr, v.size), "cuMemAddressFree");
        cu(sys::cuMemRelease(v.handle), "cuMemRelease");
    }
}

fn host_alloc(len: usize) -> *mut c_void {
    let mut p = std::ptr::null_mut();
    // SAFETY: valid out-pointer; the context is current.
    cu(
        unsafe { sys::cuMemHostAlloc(&mut p, len, sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE) },
        "cuMemHostAlloc",
    );
    p
}

fn mmap(len: usize) -> *mut c_void {
    // SAFETY: anonymous private mapping.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    p
}

#[test]
#[ignore = "needs a GPU"]
fn gpu_which_calls_hold_later_copies_behind_a_running_kernel() {
    let Some(g) = gpu_or_skip("gpu_which_calls_hold_later_copies_behind_a_running_kernel") else {
        return;
    };
    let dev = g.ordinal as i32;
    let src = host_alloc(LEN);
    let mut dst = 0;
    let mut stream = std::ptr::null_mut();
    let mut ev = std::ptr::null_mut();
    // SAFETY: valid out-pointers; the context is current.
    unsafe {
        cu(sys::cuMemAlloc_v2(&mut dst, LEN), "cuMemAlloc");
        cu(
            sys::cuStreamCreate(&mut stream, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32),
            "stream",
        );
        cu(
            sys::cuEventCreate(&mut ev, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32),
            "event",
        );
    }
    type Op = Box<dyn FnOnce() + Send>;
    // Each case: something made before the hold (freed by the op) and the op itself.
    let cases: Vec<(&str, Box<dyn Fn() -> Op>)> = vec![
        ("nothing", Box::new(|| Box::new(|| {}) as Op)),
        (
            "cuMemHostAlloc",
            Box::new(|| {
                Box::new(|| {
                    // Left allocated: a free during a later case's hold would blur it.
                    let _ = host_alloc(LEN);
                }) as Op
            }),
        ),
        (
            "cuMemHostRegister",
            Box::new(|| {
                Box::new(|| {
                    let p = mmap(LEN);
                    // SAFETY: LEN mapped bytes.
                    cu(unsafe { sys::cuMemHostRegister_v2(p, LEN, 0) }, "cuMemHostRegister");
                }) as Op
            }),
        ),
        (
            "cuMemFreeHost",
            Box::new(|| {
                let p = host_alloc(LEN) as usize;
                // SAFETY: made just above, freed once.
                Box::new(move || cu(unsafe { sys::cuMemFreeHost(p as *mut c_void) }, "cuMemFreeHost")) as Op
            }),
        ),
        (
            "cuMemHostUnregister",
            Box::new(|| {
                let p = mmap(LEN);
                // SAFETY: LEN mapped bytes.
                cu(unsafe { sys::cuMemHostRegister_v2(p, LEN, 0) }, "cuMemHostRegister");
                let p = p as usize;
                // SAFETY: registered just above.
                Box::new(move || cu(unsafe { sys::cuMemHostUnregister(p as *mut c_void) }, "unregister")) as Op
            }),
        ),
        (
            "VMM host (cuMemCreate HOST_NUMA, map, access)",
            Box::new(move || Box::new(move || std::mem::forget(vmm_host(LEN, dev))) as Op),
        ),
        (
            "VMM host freed (unmap, release)",
            Box::new(move || {
                let v = vmm_host(LEN, dev);
                let (p, s, h) = (v.ptr, v.size, v.handle);
                Box::new(move || vmm_free(Vmm { ptr: p, size: s, handle: h })) as Op
            }),
        ),
        (
            "cuMemAlloc (device)",
            Box::new(|| {
                Box::new(|| {
                    let mut p = 0;
                    // SAFETY: valid out-pointer.
                    cu(unsafe { sys::cuMemAlloc_v2(&mut p, LEN) }, "cuMemAlloc");
                }) as Op
            }),
        ),
        (
            "cuStreamCreate",
            Box::new(|| {
                Box::new(|| {
                    let mut s = std::ptr::null_mut();
                    // SAFETY: valid out-pointer.
                    cu(
                        unsafe { sys::cuStreamCreate(&mut s, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32) },
                        "stream",
                    );
                }) as Op
            }),
        ),
    ];
    for (name, make) in &cases {
        for thread in ["this thread", "another thread"] {
            let op = make();
            let spin = Spin::start(Duration::from_secs(4));
            let t0 = Instant::now();
            match thread {
                "this thread" => op(),
                _ => {
                    let g2 = g.clone();
                    std::thread::spawn(move || {
                        g2.bind().unwrap();
                        op()
                    })
                    .join()
                    .unwrap();
                }
            }
            let op_took = t0.elapsed();
            let t1 = Instant::now();
            // SAFETY: src and dst hold LEN bytes; stream and event are live.
            unsafe {
                cu(sys::cuMemcpyHtoDAsync_v2(dst, src, LEN, stream), "copy");
                cu(sys::cuEventRecord(ev, stream), "record");
            }
            let mut done = false;
            while t1.elapsed() < Duration::from_secs(2) {
                // SAFETY: a live event.
                if unsafe { sys::cuEventQuery(ev) } == sys::CUresult::CUDA_SUCCESS {
                    done = true;
                    break;
                }
                std::thread::sleep(Duration::from_micros(50));
            }
            let copy_took = t1.elapsed();
            let mut spin = spin;
            let held = spin.release();
            // SAFETY: a live stream.
            unsafe { cu(sys::cuStreamSynchronize(stream), "sync") };
            println!(
                "RESULT {name} on {thread}: op {op_took:?}; later copy {} ({copy_took:?}); kernel still held at release: {held}",
                if done { "ran beside the kernel" } else { "waited for the kernel" }
            );
        }
    }
}
