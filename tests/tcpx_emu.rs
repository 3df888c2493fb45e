//! The TCPX-ABI emulator itself (tests/tcpx-emu), driven directly through its `ncclNetPlugin_v7`
//! table: it must behave as reference/tcpx.md 1.5-2.5 says TCPX does, or the tcpx transport's
//! tests would prove nothing. Host mode: pool, ring and device handle in host memory.
mod common;
use common::{build_emulator, expect_log, pattern, DEADLINE};
use nccl_net_tcpxr::abi::*;
use std::ffi::{c_int, c_void, CStr};
use std::time::Instant;

type R = ncclResult_t;
const OK: R = ncclResult_t::ncclSuccess;
/// TCPX's "unable to allocate requests" (and most of its errors).
const BUSY: R = ncclResult_t::ncclInternalError;
/// The emulator's code for a broken contract TCPX would not report.
const USAGE: R = ncclResult_t::ncclInvalidUsage;

common::before_main! {
    std::env::set_var("TCPX_EMU_MODE", "host");
    std::env::remove_var("TCPX_EMU_SLOTS");
}

fn net() -> &'static ncclNet_v7_t {
    static LIB: std::sync::OnceLock<libloading::Library> = std::sync::OnceLock::new();
    let lib = LIB.get_or_init(|| {
        // SAFETY: the emulator's initialisers have no side effects.
        let lib = unsafe { libloading::Library::new(build_emulator()).expect("dlopen the emulator") };
        // SAFETY: ncclNetPlugin_v7 is the emulator's v7 table; init takes a NULL logger.
        unsafe {
            let t: libloading::Symbol<*const ncclNet_v7_t> = lib.get(b"ncclNetPlugin_v7").unwrap();
            assert_eq!((**t).init.unwrap()(None), OK);
        }
        lib
    });
    // SAFETY: as above; the library stays loaded for the process.
    unsafe { &**lib.get::<*const ncclNet_v7_t>(b"ncclNetPlugin_v7").unwrap() }
}

fn null() -> *mut c_void {
    std::ptr::null_mut()
}

/// Device-handle storage as tcpxr keeps it: 512 bytes, 16-byte aligned.
#[repr(C, align(16))]
struct Storage([u8; 512]);

struct Pair {
    send: *mut c_void,
    recv: *mut c_void,
    unpack: unpackNetDeviceHandle,
    recvs: u64,
}

// Every unsafe block below calls the table's functions with live buffers, out-pointers to
// locals, and comms/requests/handles the same table returned, as NCCL would.
impl Pair {
    fn new() -> Pair {
        let t = net();
        let mut handle = [0u8; 128];
        let mut l = null();
        assert_eq!(
            // SAFETY: the emulator's table given a live 128-byte handle buffer and a live out-pointer.
            unsafe { t.listen.unwrap()(0, handle.as_mut_ptr() as *mut c_void, &mut l) },
            OK
        );
        let mut storage = Box::new(Storage([0; 512]));
        let (mut s, mut r) = (null(), null());
        let mut dh = storage.0.as_mut_ptr() as *mut ncclNetDeviceHandle_v7_t;
        let mut send_dh: *mut ncclNetDeviceHandle_v7_t = std::ptr::null_mut();
        let start = Instant::now();
        while s.is_null() || r.is_null() {
            if s.is_null() {
                assert_eq!(
                    // SAFETY: the listener's 128-byte handle buffer, the same on every call, and live out-pointers.
                    unsafe { t.connect.unwrap()(0, handle.as_mut_ptr() as *mut c_void, &mut s, &mut send_dh) },
                    OK
                );
            }
            if r.is_null() {
                // SAFETY: the listen comm and live out-pointers; `dh` points to 16-byte aligned storage.
                assert_eq!(unsafe { t.accept.unwrap()(l, &mut r, &mut dh) }, OK);
            }
            assert!(start.elapsed() < DEADLINE);
        }
        // SAFETY: comms of this table, each closed once, nothing outstanding.
        assert_eq!(unsafe { t.closeListen.unwrap()(l) }, OK);
        // SAFETY: accept wrote a device handle into this 16-byte aligned storage.
        let dev = unsafe { std::ptr::read(storage.0.as_ptr() as *const ncclNetDeviceHandle_v7_t) };
        // SAFETY: in host mode (this suite) the handle points to the emulator's unpackNetDeviceHandle in
        // host memory, which lives as long as the receive comm.
        let unpack = unsafe { std::ptr::read(dev.handle as *const unpackNetDeviceHandle) };
        assert_eq!(dev.netDeviceType, NCCL_NET_DEVICE_UNPACK);
        Pair {
            send: s,
            recv: r,
            unpack,
            recvs: 0,
        }
    }

    fn reg(&self, comm: *mut c_void, buf: &mut [u8]) -> *mut c_void {
        let mut mh = null();
        // SAFETY: a comm of this table and a live buffer of at least the registered length; a live out-pointer.
        let r = unsafe {
            net().regMr.unwrap()(
                comm,
                buf.as_mut_ptr() as *mut c_void,
                buf.len() as c_int,
                NCCL_PTR_HOST,
                &mut mh,
            )
        };
        assert_eq!(r, OK);
        mh
    }

    fn isend(&self, buf: &mut [u8], mh: *mut c_void, tag: c_int) -> (R, *mut c_void) {
        let mut req = null();
        // SAFETY: the send comm and a memory handle (or NULL, which the emulator refuses); the caller
        // keeps `buf` alive and unchanged until the request completes; a live out-pointer.
        let r = unsafe {
            net().isend.unwrap()(
                self.send,
                buf.as_mut_ptr() as *mut c_void,
                buf.len() as c_int,
                tag,
                mh,
                &mut req,
            )
        };
        (r, req)
    }

    fn irecv(&mut self, buf: &mut [u8], mh: *mut c_void, tag: c_int) -> (R, *mut c_void) {
        let mut req = null();
        let mut d = [buf.as_mut_ptr() as *mut c_void];
        let mut sz = [buf.len() as c_int];
        let mut tags = [tag];
        let mut mhs = [mh];
        // SAFETY: one-entry arrays on the stack; the receive comm and a memory handle (or one the
        // emulator refuses); the caller keeps `buf` alive until the request completes.
        let r = unsafe {
            net().irecv.unwrap()(
                self.recv,
                1,
                d.as_mut_ptr(),
                sz.as_mut_ptr(),
                tags.as_mut_ptr(),
                mhs.as_mut_ptr(),
                &mut req,
            )
        };
        if r == OK {
            self.recvs += 1;
        }
        (r, req)
    }

    /// (result, done, what test left in *size)
    fn test(&self, req: *mut c_void) -> (R, c_int, c_int) {
        let (mut done, mut size) = (0, -7);
        // SAFETY: requests of this table and live out-pointers.
        let r = unsafe { net().test.unwrap()(req, &mut done, &mut size) };
        (r, done, size)
    }

    fn wait(&self, req: *mut c_void) {
        let start = Instant::now();
        loop {
            let (r, done, _) = self.test(req);
            assert_eq!(r, OK);
            if done == 1 {
                return;
            }
            assert!(start.elapsed() < DEADLINE, "request did not complete");
        }
    }

    fn consumed(&self, req: *mut c_void) -> R {
        // SAFETY: the receive comm and its oldest completed receive.
        unsafe { net().irecvConsumed.unwrap()(self.recv, 1, req) }
    }

    /// The records of the n-th receive (counting from 0): slot n % 16 of the ring.
    fn records(&self, n: u64) -> Vec<loadMeta> {
        let meta = self.unpack.meta;
        let slot = (n % 16) as usize;
        // SAFETY: meta is the emulator's live ring (host memory in this suite); cnt[slot] is an
        // aligned u64 published with release ordering before test said done, after the records it
        // covers (read atomically here).
        unsafe {
            let cnt = std::sync::atomic::AtomicU64::from_ptr(std::ptr::addr_of_mut!((*meta).cnt[slot]))
                .load(std::sync::atomic::Ordering::Acquire);
            (0..cnt as usize).map(|i| (*meta).mem[slot][i]).collect()
        }
    }

    /// Copies the records' fragments out of the bounce pool into `dst`, as an unpack does.
    fn scatter(&self, records: &[loadMeta], dst: &mut [u8]) {
        let pool = self.unpack.bounce_buf as *const u8;
        for r in records {
            let (s, l, d) = (r.src_off as usize, r.len as usize, r.dst_off as usize);
            assert!(
                d.checked_add(l).is_some_and(|e| e <= dst.len()),
                "record {r:?} leaves the destination"
            );
            // SAFETY: inside `dst` (checked above); the records of a completed receive lie inside the
            // emulator's host-memory pool (its contract, whose layout these tests check), a different
            // allocation from `dst`.
            unsafe { std::ptr::copy_nonoverlapping(pool.add(s), dst.as_mut_ptr().add(d), l) };
        }
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        // SAFETY: the pair's two comms, each closed once, here.
        unsafe {
            net().closeSend.unwrap()(self.send);
            net().closeRecv.unwrap()(self.recv);
        }
    }
}

#[test]
fn it_exports_a_v7_table_with_tcpx_properties() {
    let t = net();
    // SAFETY: the table's name is a static NUL-terminated string.
    let name = unsafe { CStr::from_ptr(t.name) }.to_string_lossy().into_owned();
    assert!(name.starts_with("GPUDirectTCPX"), "{name}");
    let mut n = 0;
    // SAFETY: a live out-pointer.
    assert_eq!(unsafe { t.devices.unwrap()(&mut n) }, OK);
    assert!(n >= 1);
    // SAFETY: all-zero is a valid properties struct (numbers and NULL pointers).
    let mut p: ncclNetProperties_v7_t = unsafe { std::mem::zeroed() };
    // SAFETY: a live out-pointer to one v7 properties struct.
    assert_eq!(unsafe { t.getProperties.unwrap()(0, &mut p) }, OK);
    // TCPX takes host and GPU memory; the emulator's host mode stands for a TCPX without GPU
    // memory (tcpxr then stages GPU chunks itself).
    let gpu_mode = std::env::var("TCPX_EMU_MODE").is_ok_and(|m| m.starts_with("gpu"));
    let want = if gpu_mode {
        NCCL_PTR_HOST | NCCL_PTR_CUDA
    } else {
        NCCL_PTR_HOST
    };
    assert_eq!(p.ptrSupport, want);
    assert_eq!(
        (p.netDeviceType, p.netDeviceVersion),
        (NCCL_NET_DEVICE_UNPACK, NCCL_NET_DEVICE_UNPACK_VERSION)
    );
    assert_eq!(p.maxRecvs, 1);
    assert!(p.speed > 0);
}

#[test]
fn connect_and_accept_return_null_at_first_and_accept_writes_the_device_handle_into_the_callers_storage() {
    let t = net();
    let mut handle = [0u8; 128];
    let mut l = null();
    assert_eq!(
        // SAFETY: the emulator's table given a live 128-byte handle buffer and a live out-pointer.
        unsafe { t.listen.unwrap()(0, handle.as_mut_ptr() as *mut c_void, &mut l) },
        OK
    );
    let before = handle;
    let (mut s, mut r) = (null(), null());
    let mut send_dh: *mut ncclNetDeviceHandle_v7_t = std::ptr::null_mut();
    assert_eq!(
        // SAFETY: the listener's 128-byte handle buffer, the same on every call, and live out-pointers.
        unsafe { t.connect.unwrap()(0, handle.as_mut_ptr() as *mut c_void, &mut s, &mut send_dh) },
        OK
    );
    assert!(s.is_null(), "the first connect returns no comm");
    assert_ne!(
        handle, before,
        "connect keeps its in-progress state inside the handle buffer"
    );
    let mut storage = Box::new(Storage([0xEE; 512]));
    let mut dh = storage.0.as_mut_ptr() as *mut ncclNetDeviceHandle_v7_t;
    // SAFETY: the listen comm and live out-pointers; `dh` points to 16-byte aligned storage.
    assert_eq!(unsafe { t.accept.unwrap()(l, &mut r, &mut dh) }, OK);
    assert!(r.is_null(), "the first accept returns no comm");
    let start = Instant::now();
    while s.is_null() || r.is_null() {
        if s.is_null() {
            assert_eq!(
                // SAFETY: the listener's 128-byte handle buffer, the same on every call, and live out-pointers.
                unsafe { t.connect.unwrap()(0, handle.as_mut_ptr() as *mut c_void, &mut s, &mut send_dh) },
                OK
            );
        }
        if r.is_null() {
            // SAFETY: the listen comm and live out-pointers; `dh` points to 16-byte aligned storage.
            assert_eq!(unsafe { t.accept.unwrap()(l, &mut r, &mut dh) }, OK);
        }
        assert!(start.elapsed() < DEADLINE);
    }
    assert!(send_dh.is_null(), "the send side gets no device handle");
    // SAFETY: accept wrote a device handle into this 16-byte aligned storage.
    let d = unsafe { std::ptr::read(storage.0.as_ptr() as *const ncclNetDeviceHandle_v7_t) };
    assert_eq!((d.netDeviceType, d.netDeviceVersion), (NCCL_NET_DEVICE_UNPACK, 7));
    assert_eq!(d.size, std::mem::size_of::<unpackNetDeviceHandle>());
    assert_eq!(d.needsProxyProgress, 1);
    // SAFETY: in host mode (this suite) the handle points to the emulator's unpackNetDeviceHandle in
    // host memory, which lives as long as the receive comm.
    let u = unsafe { std::ptr::read(d.handle as *const unpackNetDeviceHandle) };
    assert!(!u.meta.is_null() && !u.bounce_buf.is_null());
    assert_eq!(u.head, u64::MAX, "head starts at -1, as NCCL's unpack expects");
    // SAFETY: comms of this table, each closed once, nothing outstanding.
    unsafe {
        assert_eq!(t.closeSend.unwrap()(s), OK);
        assert_eq!(t.closeRecv.unwrap()(r), OK);
        assert_eq!(t.closeListen.unwrap()(l), OK);
    }
}

#[test]
fn accept_without_storage_for_the_device_handle_fails_instead_of_writing_through_null() {
    let t = net();
    let mut handle = [0u8; 128];
    let mut l = null();
    assert_eq!(
        // SAFETY: the emulator's table given a live 128-byte handle buffer and a live out-pointer.
        unsafe { t.listen.unwrap()(0, handle.as_mut_ptr() as *mut c_void, &mut l) },
        OK
    );
    let (mut s, mut r) = (null(), null());
    let mut no_storage: *mut ncclNetDeviceHandle_v7_t = std::ptr::null_mut();
    let mut send_dh: *mut ncclNetDeviceHandle_v7_t = std::ptr::null_mut();
    let start = Instant::now();
    let code = loop {
        if s.is_null() {
            assert_eq!(
                // SAFETY: the listener's 128-byte handle buffer, the same on every call, and live out-pointers.
                unsafe { t.connect.unwrap()(0, handle.as_mut_ptr() as *mut c_void, &mut s, &mut send_dh) },
                OK
            );
        }
        // SAFETY: the listen comm and live out-pointers; `no_storage` is a readable NULL, which the
        // emulator refuses.
        let code = unsafe { t.accept.unwrap()(l, &mut r, &mut no_storage) };
        if code != OK {
            break code;
        }
        assert!(r.is_null());
        assert!(start.elapsed() < DEADLINE);
    };
    assert_eq!(code, USAGE);
    expect_log("NET/tcpx-emu : accept: *recvDevComm is NULL");
    // The accept answered the connect before it refused the storage: the connect completes.
    while s.is_null() {
        assert_eq!(
            // SAFETY: as above.
            unsafe { t.connect.unwrap()(0, handle.as_mut_ptr() as *mut c_void, &mut s, &mut send_dh) },
            OK
        );
        assert!(start.elapsed() < DEADLINE);
    }
    // SAFETY: comms of this table, each closed once, nothing outstanding.
    unsafe {
        t.closeSend.unwrap()(s);
        t.closeListen.unwrap()(l);
    }
}

#[test]
fn connect_again_with_a_copy_of_the_handle_buffer_is_refused() {
    let t = net();
    let mut handle = [0u8; 128];
    let mut l = null();
    assert_eq!(
        // SAFETY: the emulator's table given a live 128-byte handle buffer and a live out-pointer.
        unsafe { t.listen.unwrap()(0, handle.as_mut_ptr() as *mut c_void, &mut l) },
        OK
    );
    let (mut s, mut dh) = (null(), std::ptr::null_mut());
    assert_eq!(
        // SAFETY: the listener's 128-byte handle buffer, the same on every call, and live out-pointers.
        unsafe { t.connect.unwrap()(0, handle.as_mut_ptr() as *mut c_void, &mut s, &mut dh) },
        OK
    );
    let mut copy = Box::new(handle);
    assert_eq!(
        // SAFETY: a live 128-byte copy of the handle (the emulator refuses it) and live out-pointers.
        unsafe { t.connect.unwrap()(0, copy.as_mut_ptr() as *mut c_void, &mut s, &mut dh) },
        USAGE,
        "TCPX keeps its connect state in the buffer: a copy must not be used"
    );
    expect_log("NET/tcpx-emu : connect: connect called again with a different handle buffer");
    assert!(s.is_null());
    // SAFETY: comms of this table, each closed once, nothing outstanding.
    assert_eq!(unsafe { t.closeListen.unwrap()(l) }, OK);
}

#[test]
fn the_17th_request_is_refused_a_send_frees_its_slot_at_test_and_a_receive_only_when_consumed() {
    let mut p = Pair::new();
    let mut sbuf = pattern(16 * 64, 1);
    let mut rbuf = vec![0u8; 16 * 64];
    let smh = p.reg(p.send, &mut sbuf);
    let rmh = p.reg(p.recv, &mut rbuf);
    let (mut sreqs, mut rreqs) = (vec![], vec![]);
    for i in 0..16 {
        let (r, req) = p.isend(&mut sbuf[i * 64..(i + 1) * 64], smh, 0);
        assert_eq!(r, OK);
        sreqs.push(req);
        let (r, req) = p.irecv(&mut rbuf[i * 64..(i + 1) * 64], rmh, 0);
        assert_eq!(r, OK);
        rreqs.push(req);
    }
    let mut spare = [0u8; 64];
    let (r, req) = p.isend(&mut sbuf[..64], smh, 0);
    assert_eq!((r, req), (BUSY, null()), "17th send: unable to allocate requests");
    expect_log("NET/tcpx-emu : isend: unable to allocate requests (16 held");
    let (r, req) = p.irecv(&mut rbuf[..64], rmh, 0);
    assert_eq!((r, req), (BUSY, null()), "17th receive: unable to allocate requests");
    expect_log("NET/tcpx-emu : irecv: unable to allocate requests (16 held");
    for (s, r) in sreqs.iter().zip(&rreqs) {
        p.wait(*s);
        p.wait(*r);
    }
    // Sends were freed by test; receives hold their slots until consumed.
    let (r, req) = p.isend(&mut sbuf[..64], smh, 0);
    assert_eq!(r, OK);
    let (r2, _) = p.irecv(&mut spare, rmh, 0);
    assert_eq!(r2, USAGE, "spare lies outside the registered receive buffer");
    expect_log("lies outside its memory handle");
    let (r2, _) = p.irecv(&mut rbuf[..64], rmh, 0);
    assert_eq!(r2, BUSY, "16 completed but unconsumed receives still hold every slot");
    assert_eq!(p.consumed(rreqs[0]), OK);
    let (r2, last) = p.irecv(&mut rbuf[..64], rmh, 0);
    assert_eq!(r2, OK);
    p.wait(req);
    p.wait(last);
    let recs = p.records(16);
    let mut got = [0u8; 64];
    p.scatter(&recs, &mut got);
    assert_eq!(got[..], sbuf[..64]);
}

#[test]
fn test_on_anything_but_the_oldest_is_an_error_and_test_never_writes_the_size() {
    let mut p = Pair::new();
    let mut sbuf = pattern(200, 2);
    let mut rbuf = vec![0u8; 200];
    let smh = p.reg(p.send, &mut sbuf);
    let rmh = p.reg(p.recv, &mut rbuf);
    let (_, s1) = p.isend(&mut sbuf[..100], smh, 0);
    let (_, s2) = p.isend(&mut sbuf[100..], smh, 0);
    let (_, r1) = p.irecv(&mut rbuf[..100], rmh, 0);
    let (_, r2) = p.irecv(&mut rbuf[100..], rmh, 0);
    assert_eq!(
        p.test(s2).0,
        BUSY,
        "test on the second send while the first is in flight"
    );
    expect_log("NET/tcpx-emu : test: test called with invalid request: request 1 of comm");
    assert_eq!(
        p.test(r2).0,
        BUSY,
        "test on the second receive while the first is in flight"
    );
    expect_log("NET/tcpx-emu : test: test called with invalid request: request 1 of comm");
    let start = Instant::now();
    loop {
        let (r, done, size) = p.test(r1);
        assert_eq!(r, OK);
        assert_eq!(size, -7, "test never writes the size");
        if done == 1 {
            break;
        }
        assert!(start.elapsed() < DEADLINE);
    }
    p.wait(s1);
    p.wait(s2);
    p.wait(r2);
    assert_eq!(p.consumed(r1), OK);
    assert_eq!(p.consumed(r2), OK);
}

#[test]
fn tags_are_ignored_matching_is_fifo_and_records_place_every_byte_from_fragments_at_arbitrary_offsets() {
    let mut p = Pair::new();
    let n = 1 << 20;
    let mut a = pattern(n, 3);
    let mut b = pattern(n, 4);
    let mut ra = vec![0u8; n];
    let mut rb = vec![0u8; n];
    let (amh, bmh) = (p.reg(p.send, &mut a), p.reg(p.send, &mut b));
    let (ramh, rbmh) = (p.reg(p.recv, &mut ra), p.reg(p.recv, &mut rb));
    // Tags in opposite orders: matching is by order alone.
    let (_, sa) = p.isend(&mut a, amh, 5);
    let (_, sb) = p.isend(&mut b, bmh, 9);
    let (_, qa) = p.irecv(&mut ra, ramh, 9);
    let (_, qb) = p.irecv(&mut rb, rbmh, 5);
    p.wait(sa);
    p.wait(sb);
    p.wait(qa);
    p.wait(qb);
    assert!(
        ra.iter().all(|x| *x == 0),
        "the emulator never writes the receive buffer itself"
    );
    for (k, (want, got)) in [(&a, &mut ra), (&b, &mut rb)].into_iter().enumerate() {
        let recs = p.records(k as u64);
        assert!(recs.len() > n / 4096 && recs.len() <= 2048, "{} records", recs.len());
        let mut cover = vec![false; n];
        for r in &recs {
            assert!(r.len >= 1 && r.len as usize <= 4096);
            assert!(
                (r.src_off as usize % 4096) + r.len as usize <= 4096,
                "a fragment stays in its page"
            );
            for c in &mut cover[r.dst_off as usize..(r.dst_off + r.len as u64) as usize] {
                assert!(!*c, "two records write the same byte");
                *c = true;
            }
        }
        assert!(cover.iter().all(|c| *c), "the records cover the whole message");
        assert!(
            recs.iter().any(|r| r.src_off % 4096 != 0),
            "some fragment starts mid-page"
        );
        p.scatter(&recs, got);
        assert!(*got == *want, "FIFO: message {k} arrived in receive {k}");
    }
    assert_eq!(p.consumed(qa), OK);
    assert_eq!(p.consumed(qb), OK);
}

#[test]
fn the_nth_receive_uses_ring_slot_n_mod_16() {
    let mut p = Pair::new();
    let mut s = vec![0u8; 20 * 100];
    let mut r = vec![0u8; 100];
    let smh = p.reg(p.send, &mut s);
    let rmh = p.reg(p.recv, &mut r);
    for i in 0..20u64 {
        let len = 10 + i as usize;
        let chunk = &mut s[i as usize * 100..i as usize * 100 + len];
        chunk.fill(i as u8 + 1);
        let (_, sq) = p.isend(chunk, smh, 0);
        let (_, rq) = p.irecv(&mut r[..len], rmh, 0);
        p.wait(sq);
        p.wait(rq);
        let recs = p.records(p.recvs - 1);
        let total: u32 = recs.iter().map(|x| x.len).sum();
        assert_eq!(total as usize, len, "receive {i} found in slot {}", i % 16);
        let mut out = vec![0u8; len];
        p.scatter(&recs, &mut out);
        assert!(out.iter().all(|x| *x == i as u8 + 1));
        assert_eq!(p.consumed(rq), OK);
    }
}

#[test]
fn a_consume_before_the_unpack_has_read_the_pages_shows_up_as_wrong_data() {
    let mut p = Pair::new();
    let n = 256 << 10;
    let mut data = pattern(n, 5);
    let mut right = vec![0u8; n];
    let mut early = vec![0u8; n];
    let smh = p.reg(p.send, &mut data);
    let rmh = p.reg(p.recv, &mut right);
    let emh = p.reg(p.recv, &mut early);
    // Unpack, then consume: right.
    let (_, sq) = p.isend(&mut data, smh, 0);
    let (_, rq) = p.irecv(&mut right, rmh, 0);
    p.wait(sq);
    p.wait(rq);
    let recs = p.records(0);
    p.scatter(&recs, &mut right);
    assert_eq!(p.consumed(rq), OK);
    assert!(right == data);
    // Consume, then unpack: the pages were recycled (poisoned) in between.
    let (_, sq) = p.isend(&mut data, smh, 0);
    let (_, rq) = p.irecv(&mut early, emh, 0);
    p.wait(sq);
    p.wait(rq);
    let recs = p.records(1);
    assert_eq!(p.consumed(rq), OK);
    p.scatter(&recs, &mut early);
    assert!(early != data, "an early consume must corrupt what the unpack reads");
    assert!(early.iter().filter(|b| **b == 0xA5).count() > n / 2, "poisoned pages");
}

#[test]
fn consumes_out_of_fifo_order_or_before_test_said_done_are_errors() {
    let mut p = Pair::new();
    let mut s = pattern(300, 6);
    let mut r = vec![0u8; 300];
    let smh = p.reg(p.send, &mut s);
    let rmh = p.reg(p.recv, &mut r);
    let (_, s1) = p.isend(&mut s[..100], smh, 0);
    let (_, s2) = p.isend(&mut s[100..200], smh, 0);
    let (_, r1) = p.irecv(&mut r[..100], rmh, 0);
    let (_, r2) = p.irecv(&mut r[100..200], rmh, 0);
    assert_eq!(p.consumed(r1), BUSY, "consume before test said done");
    expect_log("irecvConsumed called with invalid request 0 of comm");
    p.wait(s1);
    p.wait(s2);
    p.wait(r1);
    p.wait(r2);
    assert_eq!(p.consumed(r2), BUSY, "consume of the second before the first");
    expect_log("irecvConsumed called with invalid request 1 of comm");
    assert_eq!(p.consumed(r1), OK);
    assert_eq!(p.consumed(r2), OK);
    assert_eq!(p.consumed(r2), BUSY, "consume twice");
    expect_log("irecvConsumed called with invalid request 1 of comm");
}

#[test]
fn more_than_2048_fragments_in_one_receive_is_an_error() {
    let mut p = Pair::new();
    let n = 16 << 20;
    let mut s = pattern(n, 7);
    let mut r = vec![0u8; n];
    let smh = p.reg(p.send, &mut s);
    let rmh = p.reg(p.recv, &mut r);
    let (_, sq) = p.isend(&mut s, smh, 0);
    let (_, rq) = p.irecv(&mut r, rmh, 0);
    let start = Instant::now();
    let code = loop {
        let (code, done, _) = p.test(rq);
        assert_eq!(done, 0, "a 16 MiB receive cannot complete");
        if code != OK {
            break code;
        }
        assert!(start.elapsed() < DEADLINE);
    };
    assert_eq!(code, BUSY);
    expect_log("NET/tcpx-emu : test: request too many pages: more than 2048 fragments");
    let _ = sq;
}

#[test]
fn memory_must_be_registered_on_the_comm_it_is_used_on() {
    let mut p = Pair::new();
    let mut buf = pattern(64, 8);
    let on_recv = p.reg(p.recv, &mut buf);
    assert_eq!(p.isend(&mut buf, null(), 0).0, USAGE, "NULL memory handle");
    expect_log("NET/tcpx-emu : isend: mhandle is null");
    assert_eq!(p.isend(&mut buf, on_recv, 0).0, USAGE, "registered on the other comm");
    expect_log("NET/tcpx-emu : isend: a memory handle registered on comm");
    let q = Pair::new();
    let mut other = vec![0u8; 64];
    let on_other_pair = q.reg(q.recv, &mut other);
    assert_eq!(
        p.irecv(&mut other, on_other_pair, 0).0,
        USAGE,
        "registered on another pair's comm"
    );
    expect_log("NET/tcpx-emu : irecv: a memory handle registered on comm");
    let mut mh = null();
    // SAFETY: one byte into the live 64-byte buffer.
    let misaligned = unsafe { buf.as_mut_ptr().add(1) } as *mut c_void;
    assert_eq!(
        // SAFETY: the send comm, 16 bytes of a live buffer and a live out-pointer.
        unsafe { net().regMr.unwrap()(p.send, misaligned, 16, NCCL_PTR_CUDA, &mut mh) },
        BUSY,
        "CUDA memory must start on a 4 KiB boundary"
    );
    expect_log("NET/tcpx-emu : regMr: data not aligned");
    // SAFETY: a handle regMr gave the receive comm, deregistered once.
    assert_eq!(unsafe { net().deregMr.unwrap()(p.recv, on_recv) }, OK);
}

/// As TCPX's test (net_tcpx.cc): a connection its peer closed under a request whose bytes were
/// moving ends that request's helper thread with a WARN, and test reports nothing (the request
/// never completes) until a later request's control message meets the closed connection, which
/// test reports as a system error (2), never as a remote one.
#[test]
fn a_peer_gone_under_bytes_in_flight_is_reported_only_at_a_later_requests_control_message_as_2() {
    let p = Pair::new();
    let mut big = vec![1u8; 64 << 20];
    let mh = p.reg(p.send, &mut big);
    let (r, req) = p.isend(&mut big, mh, 0);
    assert_eq!(r, OK);
    // Nothing is received: the receiver closes with the bytes unread, which resets the connection.
    // SAFETY: the pair's receive comm, closed once (Drop is not run for this pair).
    assert_eq!(unsafe { net().closeRecv.unwrap()(p.recv) }, OK);
    let start = Instant::now();
    while start.elapsed() < std::time::Duration::from_millis(300) {
        assert_eq!(p.test(req), (OK, 0, -7), "test reports the helper thread's failure");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    expect_log("its requests in flight never complete");
    let (r, later) = p.isend(&mut big[..16], mh, 1);
    assert_eq!(r, OK, "isend only takes a slot");
    assert!(!later.is_null());
    assert_eq!(p.test(req), (ncclResult_t::ncclSystemError, 0, -7));
    expect_log("could not be sent");
    // TCPX's deregMr never reads the comm: after its close, the handle is freed all the same.
    // SAFETY: the pair's send comm, closed once; the handle regMr gave it, deregistered once.
    unsafe {
        assert_eq!(net().closeSend.unwrap()(p.send), OK);
        assert_eq!(net().deregMr.unwrap()(p.send, mh), OK);
    }
    std::mem::forget(p);
}
