//! NCCL's profiler callback (v10+ init): tcpxr reports each message and each striped chunk as an
//! event in the shape of NCCL's socket transport, under the profiler handle NCCL passed to
//! isend/irecv. A small profiler here records what NCCL's would receive.
mod common;
use common::*;
use nccl_net_tcpxr::abi::*;
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

/// ncclProfilerNetSockDescr_v1_t as read: (type, fd, op, length).
type Descr = (u8, i32, i32, u64);

#[derive(Debug, Clone, PartialEq)]
enum Rec {
    /// handle, parent, plugin id, descriptor
    Start(usize, usize, i64, Descr),
    Stop(usize),
}

static EVENTS: Mutex<Vec<Rec>> = Mutex::new(Vec::new());

/// As NCCL's ncclProfilerCallback: start gives a fresh handle, stop names it.
unsafe extern "C" fn profiler(e: *mut *mut c_void, kind: c_int, parent: *mut c_void, id: i64, data: *mut c_void) -> R {
    let mut events = EVENTS.lock().unwrap();
    match kind {
        0 => {
            let handle = events.len() + 1;
            // SAFETY: tcpxr passes its ncclProfilerNetSockDescr_v1_t (24 bytes) for the call.
            let d = unsafe { std::slice::from_raw_parts(data as *const u8, 24) };
            let int = |at: usize| i32::from_ne_bytes(d[at..at + 4].try_into().unwrap());
            let descr = (d[0], int(8), int(12), u64::from_ne_bytes(d[16..24].try_into().unwrap()));
            events.push(Rec::Start(handle, parent as usize, id, descr));
            // SAFETY: tcpxr's live out-slot.
            unsafe { *e = handle as *mut c_void };
        }
        // SAFETY: tcpxr passes the slot holding the handle start gave.
        1 => events.push(Rec::Stop(unsafe { *e } as usize)),
        other => panic!("event kind {other}: tcpxr only starts and stops"),
    }
    OK
}

/// Sends `size` bytes with profiler handles `(send_parent, recv_parent)` and waits for both.
fn transfer(pair: &Pair, size: usize, send_parent: *mut c_void, recv_parent: *mut c_void) {
    let t: &ncclNet_v12_t = table("ncclNetPlugin_v12");
    let mut data = pattern(size, 3);
    let mut out = vec![0u8; size];
    let (mut sq, mut rq) = (std::ptr::null_mut(), std::ptr::null_mut());
    let (mut d, mut sz, mut tags, mut mhs, mut ph) = (
        [out.as_mut_ptr().cast()],
        [size],
        [0],
        [std::ptr::null_mut()],
        [recv_parent],
    );
    // SAFETY: comms of this table, one-entry arrays and buffers that outlive the transfer.
    unsafe {
        let r = t.irecv.unwrap()(
            pair.recv,
            1,
            d.as_mut_ptr(),
            sz.as_mut_ptr(),
            tags.as_mut_ptr(),
            mhs.as_mut_ptr(),
            ph.as_mut_ptr(),
            &mut rq,
        );
        assert_eq!(r, OK);
        let r = t.isend.unwrap()(
            pair.send,
            data.as_mut_ptr().cast(),
            size,
            0,
            std::ptr::null_mut(),
            send_parent,
            &mut sq,
        );
        assert_eq!(r, OK);
    }
    wait_both(pair.net, rq, sq);
    assert!(out == data);
}

/// The events under `parent`: (starts, how many of them were stopped exactly once).
fn under(parent: usize) -> (Vec<(i64, Descr)>, usize) {
    let events = EVENTS.lock().unwrap();
    let starts: Vec<(usize, i64, Descr)> = events
        .iter()
        .filter_map(|e| match e {
            Rec::Start(h, p, id, d) if *p == parent => Some((*h, *id, *d)),
            _ => None,
        })
        .collect();
    let stopped = starts
        .iter()
        .filter(|(h, _, _)| events.iter().filter(|e| **e == Rec::Stop(*h)).count() == 1)
        .count();
    (starts.into_iter().map(|(_, id, d)| (id, d)).collect(), stopped)
}

#[test]
fn messages_and_striped_chunks_are_events_under_nccls_handle() {
    let t: &ncclNet_v12_t = table("ncclNetPlugin_v12");
    let mut ctx: *mut c_void = std::ptr::null_mut();
    let mut cfg = ncclNetCommConfig_v12_t { trafficClass: -1 };
    // SAFETY: as NCCL calls init, with its profiler callback.
    let r = unsafe { t.init.unwrap()(&mut ctx, 9, &mut cfg, None, Some(profiler)) };
    assert_eq!(r, OK);
    // A second init without a callback (Pair's) keeps NCCL's.
    let net = v12();
    let pair = Pair::new(&net);
    let config = nccl_net_tcpxr::config::Config::from_env().unwrap();
    let (socket_stripes, chunk) = (
        config.transport != nccl_net_tcpxr::config::Transport::Tcpx,
        config.chunk_bytes,
    );
    let (sp, rp) = (0x5e17usize, 0x7ecfusize);

    // Striped: one event per message on the control connection, one per chunk on its stripe.
    let size = 4 * chunk;
    transfer(&pair, size, sp as *mut c_void, rp as *mut c_void);
    for (parent, op) in [(sp, 0), (rp, 1)] {
        let (starts, stopped) = under(parent);
        assert_eq!(
            starts.len(),
            5,
            "op {op}: one message event and 4 chunk events: {starts:?}"
        );
        assert_eq!(stopped, 5, "op {op}: every event stopped once");
        for (id, (kind, _, o, _)) in &starts {
            assert_eq!(
                (*id, *kind, *o),
                ((2 << 16) | 1, 1, op),
                "NCCL's socket shape: {starts:?}"
            );
        }
        let message: Vec<_> = starts.iter().filter(|(_, d)| d.3 == size as u64).collect();
        let chunks: Vec<_> = starts.iter().filter(|(_, d)| d.3 == chunk as u64).collect();
        assert_eq!((message.len(), chunks.len()), (1, 4), "{starts:?}");
        let ctrl_fd = message[0].1 .1;
        assert!(ctrl_fd >= 0);
        let mut fds: Vec<i32> = chunks.iter().map(|(_, d)| d.1).collect();
        fds.sort();
        fds.dedup();
        if socket_stripes {
            assert_eq!(
                fds.len(),
                config.stripes.min(4),
                "each chunk on its own stripe's socket"
            );
            assert!(fds.iter().all(|&fd| fd >= 0 && fd != ctrl_fd));
        }
    }

    // NCCL profiles nothing for a NULL handle; a small message is one event, on the control
    // connection.
    let before = EVENTS.lock().unwrap().len();
    transfer(&pair, 64 << 20, std::ptr::null_mut(), std::ptr::null_mut());
    assert_eq!(EVENTS.lock().unwrap().len(), before);
    transfer(&pair, 1024, 0xa11 as *mut c_void, 0xb22 as *mut c_void);
    for parent in [0xa11, 0xb22] {
        let (starts, stopped) = under(parent);
        assert_eq!((starts.len(), stopped), (1, 1), "{starts:?}");
        assert_eq!(starts[0].1 .3, 1024);
    }
    drop(pair);
    // SAFETY: the context init returned.
    assert_eq!(unsafe { t.finalize.unwrap()(ctx) }, OK);
}
