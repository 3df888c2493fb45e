//! NCCL >= 2.28 dlcloses its net plugin when the last communicator goes and loads it again for the
//! next one. tcpxr must survive that: init again, connect again, move data again, in the same
//! process, with no thread of the first round left behind.
mod common;
use common::*;
use nccl_net_tcpxr::abi::ncclNet_v12_t;
use std::ffi::c_void;

/// One communicator's life as NCCL drives it: init, connect a pair, move 1 MiB, close, finalize.
fn one_round(table: &ncclNet_v12_t, seed: u64) {
    let mut ctx: *mut c_void = null();
    // SAFETY: the table of a loaded tcpxr; out-pointers are live.
    unsafe {
        assert_eq!(
            table.init.unwrap()(&mut ctx, seed, std::ptr::null_mut(), None, None),
            OK
        );
        let net = V12(&*(table as *const ncclNet_v12_t));
        {
            let pair = Pair::new(&net);
            let mut data = pattern(1 << 20, seed);
            assert!(pair.transfer(&mut data, 1 << 20) == data);
        }
        assert_eq!(table.finalize.unwrap()(ctx), OK);
    }
}

#[test]
fn the_library_can_be_closed_and_loaded_again_between_communicators() {
    let path = built_library_path();
    for round in 0..3u64 {
        // SAFETY: loading tcpxr runs no initialisers with side effects.
        let lib = unsafe { libloading::Library::new(&path) }.expect("dlopen tcpxr");
        // SAFETY: ncclNetPlugin_v12 is a static of this type (checked by the ABI tests).
        let table: &ncclNet_v12_t = unsafe { &**lib.get::<*const ncclNet_v12_t>(b"ncclNetPlugin_v12").unwrap() };
        one_round(table, round + 1);
        // A joined thread can stay listed in /proc for a moment until the kernel reaps it; one
        // that really outlived its comm never goes.
        let start = std::time::Instant::now();
        while threads_named("tcpxr-") > 0 && start.elapsed() < std::time::Duration::from_secs(1) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(
            threads_named("tcpxr-"),
            0,
            "round {round}: I/O threads outlived their comms"
        );
        drop(lib); // dlclose, as NCCL does when its last communicator is destroyed
    }
}
