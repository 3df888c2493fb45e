//! GPU tests of the unpack path. Each is `#[ignore]`d, so that a plain `cargo test` counts them
//! as ignored rather than passed; they run with `--include-ignored` (the GPU machine: build here
//! with `cargo test --release --no-run`, run the `gpu-*` test binary there with
//! `--include-ignored` and `TCPXR_REQUIRE_GPU=1`, which turns every skip into a failure) and,
//! where CUDA cannot be used, say SKIPPED, visibly and naming the CUDA reason.
use nccl_net_tcpxr::abi::loadMeta;
use nccl_net_tcpxr::engine::stage::RecvStage;
use nccl_net_tcpxr::gpu::unpack::{Unpacker, MAX_JOBS};
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
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
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

/// What the launch depth guarantees, checked where it can break: with the GPU held (the unpack
/// streams wait behind a spinning kernel), exactly `DEPTH` launches are taken and the next is
/// refused with its job kept pending; no held batch reports done, and nothing is placed, until the
/// GPU is released; then every held batch completes, and the refused job launches into a freed
/// slot. Each assertion fails if the code is wrong: a slot reused while its batch runs (a depth
/// not enforced) makes launch `DEPTH + 1` succeed; `done` answered from a reused slot's bookkeeping
/// instead of the batch's own event, or an event recorded again by a reuse, reports a held batch
/// done although the GPU has not run it (and its destination is still empty); a refused launch
/// that dropped its jobs never places the last region. (`running <= 3` over a free-running loop,
/// which this replaced, held by construction: no interleaving could break it.)
#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_launch_depth_bounds_batches_in_flight_and_done_waits_for_the_gpu_or_skipped() {
    let Some(gpu) = gpu_or_skip("gpu_launch_depth_bounds_batches_in_flight_...") else {
        return;
    };
    const DEPTH: usize = 3;
    const PAGE: usize = 4096;
    let mut u = Unpacker::new(gpu.clone(), DEPTH).unwrap();
    let bounce = Mapped::new(&gpu, PAGE).unwrap();
    let dst = Mapped::new(&gpu, PAGE * (DEPTH + 1)).unwrap();
    let meta = Mapped::new(&gpu, 16 * (DEPTH + 1)).unwrap();
    // SAFETY: live mappings of the stated sizes; meta holds DEPTH + 1 records.
    let (b, d) = unsafe {
        for k in 0..=DEPTH {
            std::ptr::write(
                (meta.host as *mut loadMeta).add(k),
                loadMeta {
                    src_off: 0,
                    len: PAGE as u32,
                    dst_off: (k * PAGE) as u64,
                },
            );
        }
        (
            std::slice::from_raw_parts_mut(bounce.host, bounce.len),
            std::slice::from_raw_parts_mut(dst.host, dst.len),
        )
    };
    for (i, v) in b.iter_mut().enumerate() {
        *v = (i % 251) as u8 + 1;
    }
    d.fill(0);
    let region = |d: &[u8], k: usize| d[k * PAGE..(k + 1) * PAGE].to_vec();
    let job = |u: &mut Unpacker, k: usize| assert!(u.add(meta.dev + (16 * k) as u64, 1, bounce.dev, dst.dev));

    let gate = Gate::close(&gpu);
    // SAFETY: the gate's event is live in GPU 0's context until the gate is dropped.
    unsafe { u.start_after(gate.event) }.unwrap();
    let mut held = Vec::new();
    for k in 0..DEPTH {
        job(&mut u, k);
        held.push(
            u.launch()
                .unwrap()
                .unwrap_or_else(|| panic!("launch {k} of {DEPTH}: a slot is free")),
        );
    }
    job(&mut u, DEPTH);
    for attempt in 0..3 {
        assert_eq!(
            u.launch().unwrap(),
            None,
            "attempt {attempt}: launch {} succeeded while {DEPTH} batches are held on the GPU",
            DEPTH + 1
        );
        for (k, batch) in held.iter().enumerate() {
            assert!(
                !u.done(*batch).unwrap(),
                "batch {k} reported done while the GPU is held"
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(u.has_pending(), "the refused launch keeps its job");
    assert!(d.iter().all(|v| *v == 0), "something was placed while the GPU is held");

    gate.open();
    let start = std::time::Instant::now();
    for (k, batch) in held.iter().enumerate() {
        while !u.done(*batch).unwrap() {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(10),
                "batch {k} never completed"
            );
        }
        assert!(region(d, k) == b, "batch {k} done but its page is not placed");
    }
    assert!(
        region(d, DEPTH).iter().all(|v| *v == 0),
        "the refused job ran without a launch"
    );
    let last = u
        .launch()
        .unwrap()
        .expect("a slot is free once the held batches are done");
    while !u.done(last).unwrap() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "the last batch never completed"
        );
    }
    assert!(region(d, DEPTH) == b, "the refused job was lost");
    assert_eq!(u.launches(), DEPTH as u64 + 1);
    drop(gate);

    // Slots and their events are reused for as long as the unpacker lives: 1000 launches on 3
    // slots. A refusal means every slot holds a batch this loop has not seen complete.
    let mut outstanding = std::collections::VecDeque::new();
    for i in 0..1000 {
        job(&mut u, 0);
        let batch = loop {
            if let Some(b) = u.launch().unwrap() {
                break b;
            }
            assert!(
                outstanding.len() >= DEPTH,
                "iteration {i}: launch refused with only {} batches outstanding",
                outstanding.len()
            );
            let b = outstanding.pop_front().unwrap();
            while !u.done(b).unwrap() {}
        };
        outstanding.push_back(batch);
    }
    while let Some(b) = outstanding.pop_front() {
        while !u.done(b).unwrap() {}
    }
    assert_eq!(u.launches(), DEPTH as u64 + 1 + 1000);
}

/// A receive comm's unpack stage never refuses a chunk: with every launch slot held on the GPU
/// and the next batch full, later chunks wait in the stage and are launched, in order, once slots
/// free (it once failed the comm with "unpack batch full right after a launch": many stripes of
/// small chunks outrunning the GPU). A close while launches are held waits a bounded time and
/// says so, rather than spinning forever.
#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_recv_stage_keeps_chunks_while_every_launch_is_held_and_places_them_in_order_or_skipped() {
    let Some(gpu) = gpu_or_skip("gpu_recv_stage_keeps_chunks_while_every_launch_is_held_...") else {
        return;
    };
    const PAGE: usize = 4096;
    // Eight launches of 64 jobs held, a full batch of 64, and more behind it.
    const JOBS: usize = 8 * MAX_JOBS + MAX_JOBS + 40;
    let mut stage = RecvStage::new(gpu.clone(), 4, PAGE).unwrap();
    let bounce = Mapped::new(&gpu, PAGE).unwrap();
    let dst = Mapped::new(&gpu, PAGE * JOBS).unwrap();
    let meta = Mapped::new(&gpu, 16).unwrap();
    // SAFETY: live mappings of the stated sizes; the GPU reads none of them yet.
    let (b, d) = unsafe {
        std::ptr::write(
            meta.host as *mut loadMeta,
            loadMeta {
                src_off: 0,
                len: PAGE as u32,
                dst_off: 0,
            },
        );
        (
            std::slice::from_raw_parts_mut(bounce.host, bounce.len),
            std::slice::from_raw_parts_mut(dst.host, dst.len),
        )
    };
    for (i, v) in b.iter_mut().enumerate() {
        *v = (i % 251) as u8 + 1;
    }
    d.fill(0);

    let gate = Gate::close(&gpu);
    // The stage launches on the GPU's two unpack streams; another unpacker of the same GPU holds
    // both behind the gate.
    // SAFETY: the gate's event is live in GPU 0's context until the gate is dropped.
    unsafe { Unpacker::new(gpu.clone(), 1).unwrap().start_after(gate.event) }.unwrap();
    for k in 0..JOBS {
        let ticket = stage
            .add(meta.dev, 1, bounce.dev, dst.dev + (k * PAGE) as u64)
            .unwrap_or_else(|e| panic!("chunk {k} of {JOBS} refused while launches are held: {e}"));
        assert_eq!(ticket, k as u64 + 1, "tickets count the chunks added");
    }
    stage.launch().unwrap();
    assert!(!stage.placed(1).unwrap(), "a chunk placed while the GPU is held");
    let start = std::time::Instant::now();
    assert!(
        !stage.quiesce(std::time::Duration::from_millis(300)),
        "quiesce reported every launch done while they are held"
    );
    let waited = start.elapsed();
    assert!(
        waited < std::time::Duration::from_secs(5),
        "quiesce held past its limit: {waited:?}"
    );
    assert!(d.iter().all(|v| *v == 0), "something was placed while the GPU is held");

    gate.open();
    assert!(
        stage.quiesce(std::time::Duration::from_secs(20)),
        "the chunks were never all placed once the GPU was free"
    );
    assert_eq!(stage.counts(), (JOBS as u64, JOBS as u64));
    for k in 0..JOBS {
        assert!(d[k * PAGE..(k + 1) * PAGE] == *b, "chunk {k} of {JOBS} not placed");
    }
    drop(gate);
}

/// Whether the GPU test helper says why it skips and fails under TCPXR_REQUIRE_GPU=1: the reason
/// names cuInit's code and name, and the switch turns the skip into a failure carrying it.
#[test]
fn a_gpu_skip_names_the_cuda_error_and_require_gpu_turns_it_into_a_failure() {
    let reason = common::gpu::cuinit_failure(sys::CUresult::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, None);
    assert_eq!(reason, "cuInit failed with 803 CUDA_ERROR_SYSTEM_DRIVER_MISMATCH");
    let skipped = common::gpu::skip_or_fail("t", &reason, false).unwrap();
    assert!(
        skipped.starts_with("SKIPPED t: ") && skipped.contains(&reason),
        "{skipped}"
    );
    let failed = common::gpu::skip_or_fail("t", &reason, true).unwrap_err();
    assert!(
        failed.contains("TCPXR_REQUIRE_GPU=1") && failed.contains(&reason),
        "{failed}"
    );
}

/// End to end, in a child run of one GPU test of this binary: where CUDA cannot be used, it passes
/// with a SKIPPED line naming the reason, and fails with TCPXR_REQUIRE_GPU=1; where it can, it
/// passes either way.
#[test]
fn a_gpu_test_run_with_require_gpu_fails_exactly_where_cuda_cannot_be_used() {
    let reason = common::gpu::cuda_unavailable_reason();
    let test = "gpu_unpack_places_one_byte_misaligned_and_page_fragments_exactly_or_skipped";
    for require in [false, true] {
        let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
        cmd.args(["--exact", test, "--include-ignored", "--test-threads", "1"]);
        cmd.env_remove(common::gpu::REQUIRE_GPU);
        if require {
            cmd.env(common::gpu::REQUIRE_GPU, "1");
        }
        let out = cmd.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        assert!(
            text.contains("1 passed") || text.contains("1 failed"),
            "the child ran no test:\n{text}"
        );
        match &reason {
            None => assert!(out.status.success(), "require={require}, CUDA usable:\n{text}"),
            Some(why) => {
                assert_eq!(out.status.success(), !require, "require={require}, {why}:\n{text}");
                assert!(text.contains(why.as_str()), "the reason is not named:\n{text}");
                if !require {
                    assert!(text.contains("SKIPPED gpu_unpack_places_"), "{text}");
                }
            }
        }
    }
}

mod common;
use common::gpu::{gpu_or_skip, DevBuf};
use common::*;
use cudarc::driver::sys;
use std::ffi::c_void;

#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
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

/// A kernel that spins until a mapped flag is set, on `stream`. On CUDA's legacy default stream it
/// stands for the application work torch queues there behind NCCL's kernel, which waits for tcpxr's
/// receives; on a stream of its own it holds whatever waits for it (see [`Gate`]). Dropping it sets
/// the flag and waits for the kernel, so a failing test never leaves it spinning.
struct SpinBlocker {
    flag: Mapped,
    stream: sys::CUstream,
}

impl SpinBlocker {
    fn launch(gpu: &Gpu) -> SpinBlocker {
        Self::launch_on(gpu, std::ptr::null_mut())
    }

    fn launch_on(gpu: &Gpu, stream: sys::CUstream) -> SpinBlocker {
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
        // NULL is the legacy default stream, any other a live stream of the current context.
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
                    stream,
                    params.as_mut_ptr(),
                    std::ptr::null_mut()
                ),
                sys::CUresult::CUDA_SUCCESS
            );
        }
        SpinBlocker { flag, stream }
    }

    fn release(&self) {
        // SAFETY: flag is 4 bytes of mapped memory the kernel polls.
        unsafe { std::ptr::write_volatile(self.flag.host as *mut u32, 1) };
    }
}

impl Drop for SpinBlocker {
    fn drop(&mut self) {
        self.release();
        // SAFETY: waits for the blocker's stream, which the released kernel leaves.
        unsafe { sys::cuStreamSynchronize(self.stream) };
    }
}

/// An event that completes only when the gate is opened: recorded on a stream of its own behind a
/// spinning kernel. Work made to wait for it (`Unpacker::start_after`) is held on the GPU.
struct Gate {
    // Dropped first: opens the gate and waits for its stream.
    blocker: Option<SpinBlocker>,
    event: sys::CUevent,
    stream: sys::CUstream,
}

impl Gate {
    fn close(gpu: &Gpu) -> Gate {
        let (mut stream, mut event) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: valid out-pointers; GPU 0's context is current on this thread (gpu_or_skip).
        unsafe {
            assert_eq!(
                sys::cuStreamCreate(&mut stream, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32),
                sys::CUresult::CUDA_SUCCESS
            );
            assert_eq!(
                sys::cuEventCreate(&mut event, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32),
                sys::CUresult::CUDA_SUCCESS
            );
        }
        let blocker = SpinBlocker::launch_on(gpu, stream);
        // SAFETY: live event and stream of the current context.
        let recorded = unsafe { sys::cuEventRecord(event, stream) };
        assert_eq!(recorded, sys::CUresult::CUDA_SUCCESS);
        Gate {
            blocker: Some(blocker),
            event,
            stream,
        }
    }

    fn open(&self) {
        if let Some(b) = &self.blocker {
            b.release();
        }
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        drop(self.blocker.take());
        // SAFETY: the stream is idle (the blocker waited for it); both were created by `close`.
        unsafe {
            sys::cuEventDestroy_v2(self.event);
            sys::cuStreamDestroy_v2(self.stream);
        }
    }
}

/// torch's pattern: the application's legacy default stream holds work that waits (through
/// NCCL's kernel) for tcpxr's receives. Nothing tcpxr does for a message may queue behind that
/// stream, or the job deadlocks: this is the hang first seen with torch.distributed and GPU
/// buffers (a synchronous host-to-device copy of an inline payload). Every message here must
/// complete while the legacy stream is blocked.
#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
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
        assert_eq!(
            // SAFETY: the table's regMr with a comm of the pair, device memory of at least the
            // registered length, and a live out-pointer.
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

    let blocker = SpinBlocker::launch(&gpu);
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
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
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

/// The CUDA context current on the calling thread (NULL: none).
fn current_context() -> sys::CUcontext {
    let mut c: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    assert_eq!(unsafe { sys::cuCtxGetCurrent(&mut c) }, sys::CUresult::CUDA_SUCCESS);
    c
}

/// NCCL closes comms from its service thread, whose CUDA context may be another GPU's or none:
/// tcpxr's events and pinned memory are freed in their own GPU's context, leaving the thread's as
/// it was, and freeing an event never waits for the work recorded on it (an event recorded behind
/// a kernel that spins until released goes at once; it waited for the kernel before).
#[test]
#[ignore = "needs a GPU: cargo test -- --include-ignored, with TCPXR_REQUIRE_GPU=1 on a GPU host"]
fn gpu_events_and_pinned_memory_are_freed_in_their_gpus_context_without_waiting_or_skipped() {
    use nccl_net_tcpxr::gpu::Event;
    use std::time::{Duration, Instant};
    let Some(gpu) = gpu_or_skip("gpu_events_and_pinned_memory_are_freed_in_their_gpus_context_...") else {
        return;
    };
    gpu.bind().unwrap();
    // An event behind a spinning kernel on the GPU's persistent stream, dropped while the kernel
    // spins.
    let event = Event::new(&gpu).unwrap();
    let blocker = SpinBlocker::launch_on(&gpu, gpu.stream);
    event.record_on(&gpu, gpu.as_ref()).unwrap();
    let (done, watch) = std::sync::mpsc::channel::<()>();
    let flag = blocker.flag.host as usize;
    let took = std::thread::scope(|s| {
        // Releases the kernel after 5 s if the drop waits for it, so a failure does not hang.
        s.spawn(move || {
            if watch.recv_timeout(Duration::from_secs(5)).is_err() {
                // SAFETY: the blocker's 4-byte mapped flag, alive until the scope ends.
                unsafe { std::ptr::write_volatile(flag as *mut u32, 1) };
            }
        });
        let start = Instant::now();
        drop(event);
        let took = start.elapsed();
        let _ = done.send(());
        took
    });
    assert!(
        took < Duration::from_secs(1),
        "dropping an event waited {took:?} for its work"
    );
    drop(blocker);
    // Pinned memory dropped on a thread without a context: freed, and the thread keeps none.
    let mapped = Mapped::new(&gpu, 1 << 20).unwrap();
    let host = mapped.host as usize;
    std::thread::spawn(move || {
        assert!(current_context().is_null(), "a fresh thread has no context");
        drop(mapped);
        assert!(current_context().is_null(), "freeing left a context current");
    })
    .join()
    .unwrap();
    let mut dev: sys::CUdeviceptr = 0;
    // SAFETY: a valid out-pointer; an address the driver does not know is an error return.
    let r = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut dev, host as *mut c_void, 0) };
    assert_ne!(r, sys::CUresult::CUDA_SUCCESS, "the pinned memory is still allocated");
}
