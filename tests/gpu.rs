//! GPU tests of the unpack path. They run where a CUDA driver is present (the GPU machine: build
//! here with `cargo test --release --no-run`, run the `gpu-*` test binary there) and say SKIPPED,
//! visibly, where there is none.
use nccl_net_tcpxr::abi::loadMeta;
use nccl_net_tcpxr::gpu::unpack::Unpacker;
use nccl_net_tcpxr::gpu::{Gpu, Mapped};

/// Places `records` from a mapped bounce buffer into a mapped destination with one launch.
fn place(gpu: &std::sync::Arc<Gpu>, u: &mut Unpacker, bounce: &Mapped, dst: &Mapped, jobs: &[Vec<loadMeta>]) {
    let meta = Mapped::new(gpu, jobs.iter().map(|j| j.len() * 16).sum::<usize>().max(16)).unwrap();
    let mut at = 0usize;
    for j in jobs {
        // SAFETY: meta holds the sum of all jobs' records.
        unsafe { std::ptr::copy_nonoverlapping(j.as_ptr(), (meta.host as *mut loadMeta).add(at), j.len()) };
        assert!(u.add(meta.dev + (at * 16) as u64, j.len() as u32, bounce.dev, dst.dev));
        at += j.len();
    }
    let b = u.launch().unwrap().expect("a free launch slot");
    while !u.done(b).unwrap() {}
}

#[test]
fn gpu_unpack_places_one_byte_misaligned_and_page_fragments_exactly_or_skipped() {
    let Some(gpu) = gpu_or_skip("gpu_unpack_places_...") else {
        return;
    };
    let mut u = Unpacker::new(gpu.clone(), 2).unwrap();
    let bounce = Mapped::new(&gpu, 64 << 10).unwrap();
    let dst = Mapped::new(&gpu, 512 << 10).unwrap();
    // SAFETY: both mappings are live host memory of the stated sizes.
    let (b, d) = unsafe {
        (
            std::slice::from_raw_parts_mut(bounce.host, bounce.len),
            std::slice::from_raw_parts_mut(dst.host, dst.len),
        )
    };
    let mut x = 7u32;
    for v in b.iter_mut() {
        x = x.wrapping_mul(1103515245).wrapping_add(12345);
        *v = (x >> 16) as u8;
    }
    let mut jobs = vec![];
    let mut cursor = 0u64;
    for job in 0..5u32 {
        let mut recs = vec![];
        for k in 0..40u32 {
            let len = [1, 2, 3, 15, 16, 17, 31, 33, 4095, 4096][((job * 40 + k) % 10) as usize];
            let src_off = (job * 977 + k * 131) % (60 << 10);
            cursor += (k % 3) as u64;
            recs.push(loadMeta {
                src_off,
                len,
                dst_off: cursor,
            });
            cursor += len as u64;
        }
        jobs.push(recs);
    }
    for round in 0..3 {
        d.fill(0xAB);
        place(&gpu, &mut u, &bounce, &dst, &jobs);
        let mut want = vec![0xABu8; d.len()];
        for r in jobs.iter().flatten() {
            let (s, l, o) = (r.src_off as usize, r.len as usize, r.dst_off as usize);
            want[o..o + l].copy_from_slice(&b[s..s + l]);
        }
        assert!(d == &want[..], "round {round}: placement differs");
    }
}

#[test]
fn gpu_launch_slots_and_events_are_reused_without_new_allocations_or_skipped() {
    let Some(gpu) = gpu_or_skip("gpu_launch_slots_...") else {
        return;
    };
    let mut u = Unpacker::new(gpu.clone(), 3).unwrap();
    let bounce = Mapped::new(&gpu, 4096).unwrap();
    let dst = Mapped::new(&gpu, 4096).unwrap();
    let meta = Mapped::new(&gpu, 16).unwrap();
    // SAFETY: meta holds one record.
    unsafe {
        std::ptr::write(
            meta.host as *mut loadMeta,
            loadMeta {
                src_off: 0,
                len: 4096,
                dst_off: 0,
            },
        )
    };
    let mut outstanding = std::collections::VecDeque::new();
    for i in 0..1000 {
        assert!(u.add(meta.dev, 1, bounce.dev, dst.dev));
        let batch = loop {
            if let Some(b) = u.launch().unwrap() {
                break b;
            }
            // All 3 slots busy: the oldest must finish before another launch is possible.
            let b = outstanding.pop_front().expect("a busy slot");
            while !u.done(b).unwrap() {}
        };
        outstanding.push_back(batch);
        // Batches the unpacker already saw finish may linger here; count those still running.
        let mut running = 0;
        for b in outstanding.iter() {
            running += !u.done(*b).unwrap() as usize;
        }
        assert!(running <= 3, "iteration {i}: {running} batches running on 3 slots");
    }
    while let Some(b) = outstanding.pop_front() {
        while !u.done(b).unwrap() {}
    }
    assert_eq!(u.launches(), 1000);
}

mod common;
use common::gpu::{gpu_or_skip, DevBuf};
use common::*;
use cudarc::driver::sys;
use std::ffi::c_void;

#[test]
fn gpu_buffers_move_through_the_plugin_in_every_combination_or_skipped() {
    let Some(gpu) = gpu_or_skip("gpu_buffers_move_through_the_plugin_...") else {
        return;
    };
    gpu.bind().unwrap();
    let net = v12();
    let (r, _, ptr) = {
        assert_eq!(net.init(), OK);
        net.speed_and_ptr(0)
    };
    assert_eq!(r, OK);
    assert_eq!(
        ptr,
        (nccl_net_tcpxr::abi::NCCL_PTR_HOST | nccl_net_tcpxr::abi::NCCL_PTR_CUDA),
        "a GPU host offers CUDA buffers"
    );
    let pair = Pair::new(&net);
    let max = 64 << 20;
    let (sdev, rdev) = (DevBuf::new(max), DevBuf::new(max));
    let reg = |comm, p: u64, cuda: bool| {
        let mut mh = std::ptr::null_mut();
        let kind = if cuda {
            nccl_net_tcpxr::abi::NCCL_PTR_CUDA
        } else {
            nccl_net_tcpxr::abi::NCCL_PTR_HOST
        };
        // SAFETY: the table's regMr with a live pointer.
        let r = unsafe { net.0.regMr.unwrap()(comm, p as *mut c_void, max, kind, &mut mh) };
        assert_eq!(r, OK);
        mh
    };
    let mut shost = vec![0u8; max];
    let mut rhost = vec![0u8; max];
    for (send_gpu, recv_gpu) in [(true, true), (false, true), (true, false)] {
        let smh = reg(
            pair.send,
            if send_gpu { sdev.0 } else { shost.as_mut_ptr() as u64 },
            send_gpu,
        );
        let rmh = reg(
            pair.recv,
            if recv_gpu { rdev.0 } else { rhost.as_mut_ptr() as u64 },
            recv_gpu,
        );
        for (i, n) in [0usize, 1, 4097, 16384, 600 << 10, (3 << 20) + 5, max]
            .into_iter()
            .enumerate()
        {
            let data = pattern(n, 1000 + i as u64);
            if send_gpu {
                sdev.upload(&data);
            } else {
                shost[..n].copy_from_slice(&data);
            }
            let sptr = if send_gpu {
                sdev.0 as *mut c_void
            } else {
                shost.as_mut_ptr() as *mut c_void
            };
            let rptr = if recv_gpu {
                rdev.0 as *mut c_void
            } else {
                rhost.as_mut_ptr() as *mut c_void
            };
            let (mut rq, mut sq) = (null(), null());
            assert_eq!(net.irecv(pair.recv, rptr, max, rmh, &mut rq), OK);
            assert_eq!(net.isend(pair.send, sptr, n, smh, &mut sq), OK);
            let (rs, ss) = wait_both(&net, rq, sq);
            assert_eq!((rs as usize, ss as usize), (n, n));
            let got = if recv_gpu {
                rdev.download(n)
            } else {
                rhost[..n].to_vec()
            };
            assert!(
                got == data,
                "{n} bytes, send on GPU {send_gpu}, receive on GPU {recv_gpu}: content differs"
            );
        }
        assert_eq!(net.dereg_mr(pair.send, smh), OK);
        assert_eq!(net.dereg_mr(pair.recv, rmh), OK);
    }
}

/// A kernel on CUDA's legacy default stream that spins until a mapped flag is set: it stands for
/// the application work torch queues there behind NCCL's kernel, which waits for tcpxr's receives.
/// Dropping it sets the flag and waits for the kernel, so a failing test never leaves it spinning.
struct LegacyStreamBlocker {
    flag: Mapped,
}

impl LegacyStreamBlocker {
    fn launch(gpu: &Gpu) -> LegacyStreamBlocker {
        const SRC: &str = r#"extern "C" __global__ void tcpxr_test_spin(volatile unsigned *flag) {
            while (*flag == 0) { __nanosleep(1000); }
        }"#;
        let ptx = cudarc::nvrtc::compile_ptx(SRC).expect("compile the spin kernel");
        let image = std::ffi::CString::new(ptx.to_src()).unwrap();
        let (mut module, mut f) = (std::ptr::null_mut(), std::ptr::null_mut());
        let flag = Mapped::new(gpu, 4).unwrap();
        // SAFETY: flag is 4 bytes of mapped memory.
        unsafe { std::ptr::write_volatile(flag.host as *mut u32, 0) };
        let mut arg = flag.dev;
        let mut params = [&mut arg as *mut u64 as *mut c_void];
        // SAFETY: a NUL-terminated PTX image; one parameter that lives across the launch; stream
        // NULL is the legacy default stream.
        unsafe {
            assert_eq!(
                sys::cuModuleLoadData(&mut module, image.as_ptr() as *const c_void),
                sys::CUresult::CUDA_SUCCESS
            );
            assert_eq!(
                sys::cuModuleGetFunction(&mut f, module, c"tcpxr_test_spin".as_ptr()),
                sys::CUresult::CUDA_SUCCESS
            );
            assert_eq!(
                sys::cuLaunchKernel(
                    f,
                    1,
                    1,
                    1,
                    1,
                    1,
                    1,
                    0,
                    std::ptr::null_mut(),
                    params.as_mut_ptr(),
                    std::ptr::null_mut()
                ),
                sys::CUresult::CUDA_SUCCESS
            );
        }
        LegacyStreamBlocker { flag }
    }

    fn release(&self) {
        // SAFETY: flag is 4 bytes of mapped memory the kernel polls.
        unsafe { std::ptr::write_volatile(self.flag.host as *mut u32, 1) };
    }
}

impl Drop for LegacyStreamBlocker {
    fn drop(&mut self) {
        self.release();
        // SAFETY: waits for the legacy stream, which the released kernel leaves.
        unsafe { sys::cuStreamSynchronize(std::ptr::null_mut()) };
    }
}

/// torch's pattern: the application's legacy default stream holds work that waits (through
/// NCCL's kernel) for tcpxr's receives. Nothing tcpxr does for a message may queue behind that
/// stream, or the job deadlocks: this is the hang first seen with torch.distributed and GPU
/// buffers (a synchronous host-to-device copy of an inline payload). Every message here must
/// complete while the legacy stream is blocked.
#[test]
fn gpu_messages_complete_while_the_legacy_default_stream_waits_for_them_or_skipped() {
    let Some(gpu) = gpu_or_skip("gpu_messages_complete_while_the_legacy_default_stream_...") else {
        return;
    };
    gpu.bind().unwrap();
    let net = v12();
    let pair = Pair::new(&net);
    // (sent from GPU memory, size): inline from host, striped from host, and from GPU memory.
    let cases = [
        (false, 8usize),
        (false, 16 << 10),
        (false, 3 << 20),
        (true, 8),
        (true, 1 << 20),
    ];
    let slot = 4 << 20;
    let (sdev, rdev) = (DevBuf::new(slot * cases.len()), DevBuf::new(slot * cases.len()));
    let mut shost = vec![0u8; slot * cases.len()];
    let reg = |comm, p: u64, kind| {
        let mut mh = std::ptr::null_mut();
        // SAFETY: the table's regMr with a live pointer.
        assert_eq!(
            unsafe { net.0.regMr.unwrap()(comm, p as *mut c_void, slot * cases.len(), kind, &mut mh) },
            OK
        );
        mh
    };
    let (host, cuda) = (nccl_net_tcpxr::abi::NCCL_PTR_HOST, nccl_net_tcpxr::abi::NCCL_PTR_CUDA);
    let smh_host = reg(pair.send, shost.as_mut_ptr() as u64, host);
    let smh_dev = reg(pair.send, sdev.0, cuda);
    let rmh = reg(pair.recv, rdev.0, cuda);
    let data: Vec<Vec<u8>> = cases
        .iter()
        .enumerate()
        .map(|(i, &(_, n))| pattern(n, 77 + i as u64))
        .collect();
    for (i, (&(from_gpu, _), d)) in cases.iter().zip(&data).enumerate() {
        if from_gpu {
            DevBuf(sdev.0 + (i * slot) as u64).upload_forget(d);
        } else {
            shost[i * slot..i * slot + d.len()].copy_from_slice(d);
        }
    }

    let blocker = LegacyStreamBlocker::launch(&gpu);
    let done = std::sync::atomic::AtomicBool::new(false);
    let valve = std::thread::scope(|scope| {
        // Releases the legacy stream after 15 s whatever happens, so a regression fails the test
        // instead of hanging it.
        let flag = blocker.flag.host as usize;
        let done = &done;
        let valve = scope.spawn(move || {
            let start = std::time::Instant::now();
            while !done.load(std::sync::atomic::Ordering::Acquire) {
                if start.elapsed() > std::time::Duration::from_secs(15) {
                    // SAFETY: the flag outlives this scope.
                    unsafe { std::ptr::write_volatile(flag as *mut u32, 1) };
                    return true;
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            false
        });
        for (i, (&(from_gpu, n), _)) in cases.iter().zip(&data).enumerate() {
            let sptr = if from_gpu {
                (sdev.0 + (i * slot) as u64) as *mut c_void
            } else {
                shost[i * slot..].as_mut_ptr() as *mut c_void
            };
            let rptr = (rdev.0 + (i * slot) as u64) as *mut c_void;
            let smh = if from_gpu { smh_dev } else { smh_host };
            let (mut rq, mut sq) = (null(), null());
            assert_eq!(net.irecv(pair.recv, rptr, slot, rmh, &mut rq), OK);
            assert_eq!(net.isend(pair.send, sptr, n, smh, &mut sq), OK);
            let (rs, ss) = wait_both(&net, rq, sq);
            assert_eq!((rs as usize, ss as usize), (n, n));
        }
        done.store(true, std::sync::atomic::Ordering::Release);
        valve.join().unwrap()
    });
    assert!(
        !valve,
        "messages completed only after the legacy default stream was released: tcpxr queued behind it"
    );
    drop(blocker);
    for (i, d) in data.iter().enumerate() {
        let got = DevBuf(rdev.0 + (i * slot) as u64).download_forget(d.len());
        assert!(got == *d, "case {:?}: content differs", cases[i]);
    }
    assert_eq!(net.dereg_mr(pair.send, smh_host), OK);
    assert_eq!(net.dereg_mr(pair.send, smh_dev), OK);
    assert_eq!(net.dereg_mr(pair.recv, rmh), OK);
}

/// NCCL drives several GPUs from one process (nccl-tests -g 2), each from threads that have that
/// GPU's context current; a plugin that leaves another context current on a thread sends NCCL's
/// next CUDA call there to the wrong device. Every tcpxr call here starts on a thread with no
/// context, and none may leave one behind.
#[test]
fn gpu_calls_leave_the_callers_cuda_context_as_it_was_or_skipped() {
    let Some(gpu) = gpu_or_skip("gpu_calls_leave_the_callers_cuda_context_...") else {
        return;
    };
    gpu.bind().unwrap();
    let n = 3 << 20;
    let (sdev, rdev) = (DevBuf::new(n), DevBuf::new(n));
    let data = pattern(n, 4242);
    sdev.upload(&data);
    let (sptr, rptr) = (sdev.0, rdev.0);
    std::thread::spawn(move || {
        let current = || {
            let mut c: sys::CUcontext = std::ptr::null_mut();
            // SAFETY: valid out-pointer.
            assert_eq!(unsafe { sys::cuCtxGetCurrent(&mut c) }, sys::CUresult::CUDA_SUCCESS);
            c
        };
        assert!(current().is_null(), "a fresh thread has no context");
        let net = v12();
        let pair = Pair::new(&net);
        let reg = |comm, p: u64| {
            let mut mh = std::ptr::null_mut();
            // SAFETY: the table's regMr with a live device pointer.
            let r =
                unsafe { net.0.regMr.unwrap()(comm, p as *mut c_void, n, nccl_net_tcpxr::abi::NCCL_PTR_CUDA, &mut mh) };
            assert_eq!(r, OK);
            mh
        };
        let (smh, rmh) = (reg(pair.send, sptr), reg(pair.recv, rptr));
        assert!(current().is_null(), "regMr left a context current");
        for size in [8usize, n] {
            let (mut rq, mut sq) = (null(), null());
            assert_eq!(net.irecv(pair.recv, rptr as *mut c_void, n, rmh, &mut rq), OK);
            assert_eq!(net.isend(pair.send, sptr as *mut c_void, size, smh, &mut sq), OK);
            let (rs, ss) = wait_both(&net, rq, sq);
            assert_eq!((rs as usize, ss as usize), (size, size));
            assert!(current().is_null(), "a {size}-byte transfer left a context current");
        }
        assert_eq!(net.dereg_mr(pair.send, smh), OK);
        assert_eq!(net.dereg_mr(pair.recv, rmh), OK);
        drop(pair);
        assert!(current().is_null(), "close left a context current");
    })
    .join()
    .unwrap();
    assert!(rdev.download(n) == data, "content differs");
}
