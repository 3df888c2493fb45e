//! NCCL >= 2.28 dlcloses its net plugin when the last communicator goes and loads it again for the
//! next one. tcpxr must survive that: init again, connect again, move data again, in the same
//! process, with no thread of the first round left behind, and count its devices as a new process
//! would (NCCL takes the count at each init for its physical devices and fuses from there).
mod common;
use common::*;
use nccl_net_tcpxr::abi::{ncclNetVDeviceProps_v12_t, ncclNet_v12_t, NCCL_NET_MAX_DEVS_PER_NIC_V12};
use std::ffi::{c_int, c_void};

// Before main: tcpxr reads its configuration once per process. The loopback stands for two
// devices, which NCCL may fuse (lo is on no PCI device: tcpxr fuses such devices only where a
// topology file places them).
before_main! {
    set_env(&[
        ("NCCL_TCPXR_TRANSPORT", "socket"),
        ("NCCL_TCPXR_IFNAME", "=lo"),
        ("NCCL_TCPXR_LOOPBACK_DEVICES", "2"),
        ("NCCL_TOPO_FILE", "/nonexistent/topology.xml"),
    ]);
}

fn devices(table: &ncclNet_v12_t) -> c_int {
    let mut n = 0;
    // SAFETY: a live out-pointer.
    assert_eq!(unsafe { table.devices.unwrap()(&mut n) }, OK);
    n
}

/// One communicator's life as NCCL drives it: init, (the first round) fuse the two devices as
/// NCCL's topology does, connect a pair, move 1 MiB, close, finalize.
fn one_round(table: &ncclNet_v12_t, seed: u64) {
    let mut ctx: *mut c_void = null();
    // SAFETY: the table of a loaded tcpxr; out-pointers are live.
    unsafe {
        assert_eq!(
            table.init.unwrap()(&mut ctx, seed, std::ptr::null_mut(), None, None),
            OK
        );
        assert_eq!(devices(table), 2, "round {seed}: the physical devices only");
        if seed == 1 {
            let mut props = ncclNetVDeviceProps_v12_t {
                ndevs: 2,
                devs: [0; NCCL_NET_MAX_DEVS_PER_NIC_V12],
            };
            props.devs[1] = 1;
            let mut d = -1;
            assert_eq!(table.makeVDevice.unwrap()(&mut d, &mut props), OK);
            assert_eq!(
                (d, devices(table)),
                (2, 3),
                "the fused device follows the physical ones"
            );
        }
        let net = V12(&*(table as *const ncclNet_v12_t));
        {
            // In the communicator's context, as NCCL connects: no init of the tests' own (whose
            // context would never be finalized, and the communicator never the last).
            let pair = Pair::in_context(&net, ctx);
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
