//! GPU buffers over the tcpx transport, with the TCPX-ABI emulator in its GPU layout
//! (TCPX_EMU_MODE=gpu unless set: bounce pool in device memory, unpack ring in mapped host
//! memory, device handle in device memory, as TCPX has them). Sends go from GPU memory straight to
//! TCPX; receives land in TCPX's pool and the unpack kernel places them from TCPX's records, before
//! the pages are consumed. Runs on the GPU machine; SKIPPED, visibly, without a CUDA driver.
#[allow(clippy::duplicate_mod)]
mod common;

use common::gpu::{gpu_or_skip, DevBuf};
use common::*;
use std::ffi::c_void;

// Before main: tcpxr reads its configuration once per process.
#[used]
#[link_section = ".init_array"]
static OVER_TCPX: extern "C" fn() = over_tcpx;
extern "C" fn over_tcpx() {
    let mode = std::env::var("TCPX_EMU_MODE").unwrap_or_else(|_| "gpu".into());
    select_tcpx(&[("TCPX_EMU_MODE", &mode)]);
}

/// Registers `len` bytes at `p` of memory `kind` with `comm` through the table's regMr.
fn reg_mr(net: &V12, comm: *mut c_void, p: u64, len: usize, kind: std::ffi::c_int) -> *mut c_void {
    let mut mh = std::ptr::null_mut();
    // SAFETY: the table's regMr with a live pointer of at least `len` bytes.
    assert_eq!(
        unsafe { net.0.regMr.unwrap()(comm, p as *mut c_void, len, kind, &mut mh) },
        OK
    );
    mh
}

#[test]
fn gpu_buffers_cross_tcpx_stripes_and_are_placed_from_tcpx_records_or_skipped() {
    let Some(_gpu) = gpu_or_skip("gpu_buffers_cross_tcpx_stripes_...") else {
        return;
    };
    let net = v12();
    let pair = Pair::new(&net);
    let max = 64 << 20;
    let (sdev, rdev) = (DevBuf::new(max), DevBuf::new(max));
    let mut shost = vec![0u8; max];
    let reg = |comm, p: u64, kind| reg_mr(&net, comm, p, max, kind);
    let (host, cuda) = (nccl_net_tcpxr::abi::NCCL_PTR_HOST, nccl_net_tcpxr::abi::NCCL_PTR_CUDA);
    let rmh = reg(pair.recv, rdev.0, cuda);
    let smh_dev = reg(pair.send, sdev.0, cuda);
    let smh_host = reg(pair.send, shost.as_mut_ptr() as u64, host);
    for from_gpu in [true, false] {
        for (i, n) in [1usize, 4097, 600 << 10, (3 << 20) + 5, max].into_iter().enumerate() {
            let data = pattern(n, 7000 + i as u64 + 100 * from_gpu as u64);
            let sptr = if from_gpu {
                sdev.upload(&data);
                sdev.0 as *mut c_void
            } else {
                shost[..n].copy_from_slice(&data);
                shost.as_mut_ptr() as *mut c_void
            };
            let smh = if from_gpu { smh_dev } else { smh_host };
            let (mut rq, mut sq) = (null(), null());
            assert_eq!(net.irecv(pair.recv, rdev.0 as *mut c_void, max, rmh, &mut rq), OK);
            assert_eq!(net.isend(pair.send, sptr, n, smh, &mut sq), OK);
            let (rs, ss) = wait_both(&net, rq, sq);
            assert_eq!((rs as usize, ss as usize), (n, n));
            assert!(
                rdev.download(n) == data,
                "{n} bytes from GPU {from_gpu}: content differs"
            );
        }
    }
    assert_eq!(net.dereg_mr(pair.recv, rmh), OK);
    assert_eq!(net.dereg_mr(pair.send, smh_dev), OK);
    assert_eq!(net.dereg_mr(pair.send, smh_host), OK);
    drop(pair);
    let comms = assert_tcpx_rules_kept(12);
    // Every receive went to GPU memory directly, and so did the sends from GPU memory (no
    // staging through host memory on either side).
    let posts =
        |kind: &str, field: &str| -> u64 { comms.iter().filter(|c| c.kind == kind).map(|c| c.get(field)).sum() };
    assert!(
        posts("recv", "posts") > 0 && posts("recv", "cuda_posts") == posts("recv", "posts"),
        "{comms:?}"
    );
    assert!(
        posts("send", "cuda_posts") > 0,
        "no send went from GPU memory directly: {comms:?}"
    );
}

/// NCCL calls connect and accept from a thread with its GPU's context current; tcpxr must not
/// depend on it. A pair made on a thread without any CUDA context still receives GPU buffers
/// straight from TCPX's pages (the unpack ring's device address is found in the context that
/// owns it). Before, such a comm fell back to host bounce memory, which TCPX with its pool in GPU
/// memory cannot fill, and every receive failed with ncclInternalError.
#[test]
fn gpu_buffers_go_direct_on_a_pair_made_without_a_current_context_or_skipped() {
    let Some(gpu) = gpu_or_skip("gpu_buffers_go_direct_on_a_pair_made_without_a_current_context") else {
        return;
    };
    let net = v12();
    std::thread::scope(|s| {
        s.spawn(|| {
            // A fresh thread: no CUDA context is current on it.
            let pair = Pair::new(&net);
            gpu.bind().expect("GPU 0's context, for the buffers");
            let n = (3 << 20) + 5;
            let (sdev, rdev) = (DevBuf::new(n), DevBuf::new(n));
            let data = pattern(n, 4242);
            sdev.upload(&data);
            let cuda = nccl_net_tcpxr::abi::NCCL_PTR_CUDA;
            let (rmh, smh) = (
                reg_mr(&net, pair.recv, rdev.0, n, cuda),
                reg_mr(&net, pair.send, sdev.0, n, cuda),
            );
            let (mut rq, mut sq) = (null(), null());
            assert_eq!(net.irecv(pair.recv, rdev.0 as *mut c_void, n, rmh, &mut rq), OK);
            assert_eq!(net.isend(pair.send, sdev.0 as *mut c_void, n, smh, &mut sq), OK);
            assert_eq!(wait_both(&net, rq, sq), (n as _, n as _));
            assert!(rdev.download(n) == data, "content differs");
            assert_eq!(net.dereg_mr(pair.recv, rmh), OK);
            assert_eq!(net.dereg_mr(pair.send, smh), OK);
        });
    });
}
