//! Drives tcpxr's exported tables exactly as NCCL's proxy does: dlopen the built library, take a
//! `ncclNetPlugin_vN` table, and call it with non-blocking connect/accept loops, isend/irecv and
//! test polling. Shared by the integration tests.
#![allow(dead_code)]

pub mod gpu;
pub mod spin;
pub mod tuner;

use nccl_net_tcpxr::abi::*;
use std::ffi::{c_int, c_void, CStr};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Runs its body before main, from the test binary's `.init_array`: what every test of the binary
/// shares (tcpxr's settings, which its first init reads once per process; the case a child process
/// plays) is in place before the test harness starts a thread, so setting the environment there is
/// sound. (Binaries with no such setup leave it unused.)
#[allow(unused_macros)]
macro_rules! before_main {
    ($($body:tt)*) => {
        #[used]
        #[link_section = ".init_array"]
        static BEFORE_MAIN: extern "C" fn() = {
            extern "C" fn before_main() {
                $($body)*
            }
            before_main
        };
    };
}
#[allow(unused_imports)]
pub(crate) use before_main;

pub type R = ncclResult_t;
pub const OK: R = ncclResult_t::ncclSuccess;

/// The interfaces the tests pin tcpxr to (NCCL_TCPXR_IFNAME): loopback.
pub const TEST_IFNAME: &str = "lo";

// Before main, in every test binary (a binary that includes this module twice runs it twice, to
// the same effect): tcpxr talks over loopback, never through the host's first NIC's address (its
// default for clusters), whatever the environment says; and its log, the TCPX emulator's and the
// peer processes' go to this binary's file, where each test claims the WARNs it provokes
// (nccl_net_tcpxr::testlog), so a passing run's stderr is quiet.
// A child case (run_child_case) runs it first too, whichever constructor comes first.
#[used]
#[link_section = ".init_array"]
static SETUP: extern "C" fn() = setup;
extern "C" fn setup() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Sound: before main, so before this process has a second thread.
        std::env::set_var("NCCL_TCPXR_IFNAME", TEST_IFNAME);
        use nccl_net_tcpxr::testlog;
        if let Some((file, fresh)) = testlog::capture_file_for_tests() {
            if fresh {
                // Sound, as above. The dlopened library and the processes started read it.
                std::env::set_var(testlog::FILE_VAR, &file);
            }
            testlog::capture_to(file);
        }
    });
}

/// Claims the first unclaimed line of tcpxr's log that contains `text`, waiting for it (see
/// nccl_net_tcpxr::testlog).
pub fn expect_log(text: &str) -> String {
    nccl_net_tcpxr::testlog::expect(text)
}

/// The WARN a peer that vanished earns, in whichever words the call that saw it first uses (a
/// failed send or receive on a stripe or the control connection, or TCPX's error, after the
/// emulator's own line). Claims it and returns it. The emulator's lines (one from each stripe's
/// thread that meets the closed connection, whenever it does, which may be after tcpxr's error)
/// are allowed from then on.
pub fn expect_peer_gone_log() -> String {
    let line = nccl_net_tcpxr::testlog::expect_any(&["peer gone", "closed by peer", "(remote error)"]);
    nccl_net_tcpxr::testlog::allow("connection closed by remote peer");
    line
}

/// The built cdylib: target/<profile>/libnccl-net-tcpxr.so, next to the deps/ folder of this test.
pub fn library_path() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().unwrap().parent().unwrap();
    let lib = profile_dir.join("libnccl-net-tcpxr.so");
    assert!(
        lib.exists(),
        "{} missing: build the library first (cargo build)",
        lib.display()
    );
    lib
}

/// The cdylib exactly as this `cargo test` built it, beside the test binary in deps/. Cargo
/// copies it up to target/<profile>/ only on `cargo build`, so after a source change that copy is
/// stale under `cargo test`; falls back to it when deps/ has none.
pub fn built_library_path() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let lib = exe.parent().unwrap().join("libnccl_net_tcpxr.so");
    if lib.exists() {
        lib
    } else {
        library_path()
    }
}

pub fn load() -> &'static libloading::Library {
    static LIB: std::sync::OnceLock<libloading::Library> = std::sync::OnceLock::new();
    LIB.get_or_init(|| {
        if std::env::var("NCCL_TCPXR_TRANSPORT").is_ok_and(|t| t == "tcpx") {
            build_emulator();
        }
        // SAFETY: loading tcpxr runs no initialisers with side effects.
        unsafe { libloading::Library::new(built_library_path()).expect("dlopen tcpxr") }
    })
}

/// The bench binary, which tests start as a peer process: the one Cargo built, or TCPXR_BENCH (a
/// copy, on a machine without Cargo).
pub fn bench_command() -> std::process::Command {
    std::process::Command::new(
        std::env::var_os("TCPXR_BENCH").unwrap_or_else(|| env!("CARGO_BIN_EXE_tcpxr-bench").into()),
    )
}

// --- cases run in a child process of the test binary ----------------------------------------

/// For a test binary whose cases run in child processes of itself (a crash, a signal or a
/// process-wide setting must not reach the harness's process). Its [`before_main`] block calls
/// this first: in a child, whose environment sets `var`, `case` runs with that value before the
/// test harness starts, and the process exits, 0 when `case` returns (a panic aborts it: a failure
/// status). In the test process `var` is unset and this returns at once, so no test of the binary
/// is a stand-in that passes by doing nothing. [`child_case`] starts such a child.
pub fn run_child_case(var: &str, case: impl FnOnce(&str)) {
    let Ok(value) = std::env::var(var) else { return };
    setup();
    case(&value);
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // Nothing else runs: the harness, and destructors racing the threads a case leaves.
    // SAFETY: _exit only ends the process.
    unsafe { libc::_exit(0) };
}

/// A command that runs this test binary as a child playing case `value` of `var` (see
/// [`run_child_case`]).
pub fn child_case(var: &str, value: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.env(var, value);
    cmd
}

/// Sends `data` on `send` again and again until a call fails (a request slot not free: retried
/// after 1 ms); returns that failure. Fails the test if none does within [`DEADLINE`].
pub fn send_until_error(net: &dyn Net, send: *mut c_void, data: &mut [u8]) -> R {
    let start = Instant::now();
    loop {
        assert!(start.elapsed() < DEADLINE, "sends to a closed peer never failed");
        let mut req = null();
        let r = net.isend(send, data.as_mut_ptr() as *mut c_void, data.len(), null(), &mut req);
        if r != OK {
            return r;
        }
        if req.is_null() {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        let (r, _) = wait_result(net, req, Duration::from_secs(10));
        if r != OK {
            return r;
        }
    }
}

/// The verdict on a child case that sent to a closed peer with SIGPIPE's default action in force
/// (it prints `RESULT <code>`): it lived, and its sends failed with an error. Returns its stdout.
pub fn assert_lived_with_a_failed_send(out: &std::process::Output) -> String {
    use std::os::unix::process::ExitStatusExt;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the child ended with {:?} (signal {:?}; SIGPIPE is {}):\n{stdout}\n{}",
        out.status,
        out.status.signal(),
        libc::SIGPIPE,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("RESULT ncclRemoteError") || stdout.contains("RESULT ncclSystemError"),
        "{stdout}"
    );
    stdout
}

// --- the TCPX-ABI emulator --------------------------------------------------------------------

/// target/<profile>, where Cargo puts the workspace's libraries.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// Where Cargo builds the emulator (tests/tcpx-emu): target/<profile>/libtcpx_emu.so, or
/// TCPX_EMU_LIB, a prebuilt one, on a machine without Cargo (the GPU machine).
pub fn emulator_path() -> PathBuf {
    match std::env::var_os("TCPX_EMU_LIB") {
        Some(p) => PathBuf::from(p),
        None => profile_dir().join("libtcpx_emu.so"),
    }
}

/// Builds the emulator with the profile of this test (a no-op when it is up to date), so
/// `cargo test` alone suffices from a clean clone; returns its path.
pub fn build_emulator() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            if std::env::var_os("TCPX_EMU_LIB").is_some() {
                let lib = emulator_path();
                assert!(lib.exists(), "TCPX_EMU_LIB={} does not exist", lib.display());
                return lib;
            }
            let dir = profile_dir();
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").to_string());
            let mut cmd = std::process::Command::new(cargo);
            cmd.args(["build", "--quiet", "-p", "tcpx-emu", "--manifest-path"])
                .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
                .arg("--target-dir")
                .arg(dir.parent().unwrap());
            match dir.file_name().and_then(|n| n.to_str()) {
                Some("debug") => {}
                Some("release") => {
                    cmd.arg("--release");
                }
                Some(other) => {
                    cmd.args(["--profile", other]);
                }
                None => {}
            }
            let out = cmd.output().unwrap_or_else(|e| {
                panic!(
                    "cannot run cargo to build the TCPX emulator ({e}); on a host without cargo set TCPX_EMU_LIB \
                     to a libtcpx_emu.so built elsewhere (cargo build --release -p tcpx-emu)"
                )
            });
            let lib = emulator_path();
            assert!(
                out.status.success() && lib.exists(),
                "building the TCPX emulator failed (try: cargo build --workspace):\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            lib
        })
        .clone()
}

/// Makes this test process run tcpxr over the emulator: NCCL_TCPXR_TRANSPORT=tcpx,
/// NCCL_TCPXR_TCPX_LIB=<emulator>, the emulator's counters in a fresh file (see
/// [`emulator_stats`]), plus `extra` settings. Called from a [`before_main`] block (see
/// tests/transfer_tcpx.rs), or first thing in a binary's only test, since tcpxr reads its
/// configuration once per process. The
/// emulator's mode is left to the environment: TCPX_EMU_MODE=gpu-mapped runs the same tests with
/// the GPU layout on a GPU machine.
pub fn select_tcpx(extra: &[(&str, &str)]) {
    let exe = std::env::current_exe().unwrap();
    let name = exe.file_name().unwrap().to_string_lossy().into_owned();
    let dir = profile_dir().join("tcpx-emu-stats");
    let _ = std::fs::create_dir_all(&dir);
    let stats = dir.join(format!("{name}.txt"));
    let _ = std::fs::remove_file(&stats);
    std::env::set_var("NCCL_TCPXR_TRANSPORT", "tcpx");
    std::env::set_var("NCCL_TCPXR_TCPX_LIB", emulator_path());
    std::env::set_var("TCPX_EMU_STATS", &stats);
    set_env(extra);
}

/// Sets each variable (tcpxr reads its settings once, at the first init in a process: call this
/// before it).
pub fn set_env(vars: &[(&str, &str)]) {
    for (k, v) in vars {
        std::env::set_var(k, v);
    }
}

/// Every message striped (nothing travels inline) through 64 KiB socket buffers, so chunks move in
/// many partial writes and reads and stripes change hands between NCCL's thread and the I/O
/// threads over and over.
pub const STRIPED_THROUGH_SMALL_BUFFERS: &[(&str, &str)] = &[
    ("NCCL_TCPXR_SOCKET_SNDBUF", "64K"),
    ("NCCL_TCPXR_SOCKET_RCVBUF", "64K"),
    ("NCCL_TCPXR_INLINE_IDLE_BYTES", "0"),
    ("NCCL_TCPXR_INLINE_BYTES", "0"),
];

/// One closed emulator comm's counters (a line of TCPX_EMU_STATS).
#[derive(Debug)]
pub struct EmuComm {
    pub kind: String,
    pub fields: std::collections::HashMap<String, u64>,
}

impl EmuComm {
    pub fn get(&self, name: &str) -> u64 {
        self.fields[name]
    }
}

/// The counters of every emulator comm this process has closed so far.
pub fn emulator_stats() -> Vec<EmuComm> {
    let path = std::env::var("TCPX_EMU_STATS").expect("TCPX_EMU_STATS (select_tcpx sets it)");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .map(|line| {
            let mut kind = String::new();
            let mut fields = std::collections::HashMap::new();
            for kv in line.split_whitespace().skip(1) {
                let (k, v) = kv.split_once('=').unwrap();
                if k == "kind" {
                    kind = v.to_string();
                } else {
                    fields.insert(k.to_string(), v.parse().unwrap());
                }
            }
            EmuComm { kind, fields }
        })
        .collect()
}

/// The rules of reference/tcpx.md the emulator counts, checked over every comm closed so far:
/// no 17th request was ever asked for, tests only on the oldest request, consumes in FIFO order,
/// no receive above 4 MiB, no memory deregistered under a request in flight; at most
/// `send_window` sends and 16 receives were ever held.
pub fn assert_tcpx_rules_kept(send_window: u64) -> Vec<EmuComm> {
    let comms = emulator_stats();
    for c in &comms {
        assert_eq!(c.get("refused"), 0, "a request beyond the slots was asked for: {c:?}");
        assert_eq!(
            c.get("bad_tests"),
            0,
            "test on a request that was not the oldest: {c:?}"
        );
        assert_eq!(c.get("bad_consumes"), 0, "irecvConsumed out of order: {c:?}");
        assert_eq!(
            c.get("bad_deregs"),
            0,
            "deregMr of a handle in use by a request in flight on a running comm: {c:?}"
        );
        let limit = if c.kind == "send" { send_window } else { 16 };
        assert!(c.get("max_held") <= limit, "more than {limit} requests held: {c:?}");
        if c.kind == "recv" {
            assert!(c.get("max_bytes") <= 4 << 20, "a receive above 4 MiB: {c:?}");
        }
    }
    comms
}

pub fn table<T>(symbol: &str) -> &'static T {
    // SAFETY: the symbol is a static of type T in tcpxr (checked by name and the ABI tests).
    unsafe {
        let sym: libloading::Symbol<*const T> = load().get(symbol.as_bytes()).expect(symbol);
        &**sym
    }
}

/// The operations a test needs, over whichever table version it exercises.
pub trait Net: Sync {
    fn version(&self) -> u32;
    fn name(&self) -> String;
    fn init(&self) -> R;
    fn devices(&self, n: &mut c_int) -> R;
    fn speed_and_ptr(&self, dev: c_int) -> (R, c_int, c_int);
    fn listen(&self, dev: c_int, handle: &mut [u8; 128], l: &mut *mut c_void) -> R;
    fn connect(&self, dev: c_int, handle: &mut [u8; 128], s: &mut *mut c_void) -> R;
    fn accept(&self, l: *mut c_void, r: &mut *mut c_void) -> R;
    fn reg_mr(&self, comm: *mut c_void, data: *mut c_void, size: usize, mh: &mut *mut c_void) -> R;
    fn dereg_mr(&self, comm: *mut c_void, mh: *mut c_void) -> R;
    fn isend(&self, s: *mut c_void, data: *mut c_void, size: usize, mh: *mut c_void, req: &mut *mut c_void) -> R;
    fn irecv(&self, r: *mut c_void, data: *mut c_void, size: usize, mh: *mut c_void, req: &mut *mut c_void) -> R;
    fn test(&self, req: *mut c_void, done: &mut c_int, size: &mut c_int) -> R;
    fn close_send(&self, s: *mut c_void) -> R;
    fn close_recv(&self, r: *mut c_void) -> R;
    fn close_listen(&self, l: *mut c_void) -> R;
    /// Requests a comm must accept before returning NULL.
    fn max_requests(&self) -> usize;
}

/// The calls of a `Net` impl whose shape no table version changed (name, devices, deregMr, test,
/// the closes), over the table in field 0, and getProperties into this version's properties
/// struct `$props`. Every call passes pointers to live locals, or comms/requests the same table
/// returned, as NCCL does (or, in negative tests, pointers tcpxr must refuse).
macro_rules! calls_every_version_shares {
    ($props:ty) => {
        fn name(&self) -> String {
            // SAFETY: the table's `name` is a static NUL-terminated string.
            unsafe { CStr::from_ptr(self.0.name) }
                .to_string_lossy()
                .into_owned()
        }
        fn devices(&self, n: &mut c_int) -> R {
            // SAFETY: a live out-pointer.
            unsafe { self.0.devices.unwrap()(n) }
        }
        fn speed_and_ptr(&self, dev: c_int) -> (R, c_int, c_int) {
            // SAFETY: all-zero is a valid properties struct (numbers and NULL pointers).
            let mut p: $props = unsafe { std::mem::zeroed() };
            // SAFETY: a live out-pointer to one properties struct of this version.
            let r = unsafe { self.0.getProperties.unwrap()(dev, &mut p) };
            (r, p.speed, p.ptrSupport)
        }
        fn dereg_mr(&self, comm: *mut c_void, mh: *mut c_void) -> R {
            // SAFETY: a comm and memory handle of this table (tcpxr checks tag and magic),
            // deregistered once.
            unsafe { self.0.deregMr.unwrap()(comm, mh) }
        }
        fn test(&self, req: *mut c_void, done: &mut c_int, size: &mut c_int) -> R {
            // SAFETY: a request of this table's isend/irecv, or a pointer tcpxr refuses after its
            // checks; live out-pointers.
            unsafe { self.0.test.unwrap()(req, done, size) }
        }
        fn close_send(&self, s: *mut c_void) -> R {
            // SAFETY: a comm of this table (tcpxr checks its tag), closed once.
            unsafe { self.0.closeSend.unwrap()(s) }
        }
        fn close_recv(&self, r: *mut c_void) -> R {
            // SAFETY: a comm of this table (tcpxr checks its tag), closed once.
            unsafe { self.0.closeRecv.unwrap()(r) }
        }
        fn close_listen(&self, l: *mut c_void) -> R {
            // SAFETY: a comm of this table (tcpxr checks its tag), closed once.
            unsafe { self.0.closeListen.unwrap()(l) }
        }
    };
}

pub struct V12(pub &'static ncclNet_v12_t);
pub struct V5(&'static ncclNet_v5_t);
pub struct V6(&'static ncclNet_v6_t);
pub struct V7(&'static ncclNet_v7_t);
pub struct V8(&'static ncclNet_v8_t);
pub struct V9(&'static ncclNet_v9_t);
pub struct V10(&'static ncclNet_v10_t);
/// The v11 table and the per-communicator context its latest `init` returned, which `listen` and
/// `connect` are given, as NCCL 2.28-2.29 give theirs.
pub struct V11(&'static ncclNet_v11_t, std::sync::atomic::AtomicPtr<c_void>);

/// NCCL's hints (setNetAttr) as it gives them for a two-rank communicator: 1-2 peers and 1-`flows`
/// flows per peer each way, and the operation, algorithm and protocol masks (u32::MAX: undefined).
pub fn net_attr(flows: i32, op: u32, algo: u32, proto: u32) -> ncclNetAttr_v12_t {
    let side = ncclNetCommAttr_v12_t {
        minConcurrentPeers: 1,
        maxConcurrentPeers: 2,
        minFlowsPerPeer: 1,
        maxFlowsPerPeer: flows,
    };
    ncclNetAttr_v12_t {
        sendCommAttr: side,
        recvCommAttr: side,
        op,
        algo,
        proto,
    }
}

pub fn v12() -> V12 {
    V12(table("ncclNetPlugin_v12"))
}
pub fn v5() -> V5 {
    V5(table("ncclNetPlugin_v5"))
}
pub fn v6() -> V6 {
    V6(table("ncclNetPlugin_v6"))
}
pub fn v7() -> V7 {
    V7(table("ncclNetPlugin_v7"))
}
pub fn v8() -> V8 {
    V8(table("ncclNetPlugin_v8"))
}
pub fn v9() -> V9 {
    V9(table("ncclNetPlugin_v9"))
}
pub fn v10() -> V10 {
    V10(table("ncclNetPlugin_v10"))
}
pub fn v11() -> V11 {
    V11(table("ncclNetPlugin_v11"), Default::default())
}

impl V11 {
    /// The context of the latest `init`.
    pub fn ctx(&self) -> *mut c_void {
        self.1.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// NCCL's `finalize` of that context (at a communicator's destruction).
    pub fn finalize(&self) -> R {
        // SAFETY: a context this table's init returned, finalized once.
        unsafe { self.0.finalize.unwrap()(self.ctx()) }
    }
}

// The unsafe blocks of every impl: each call passes pointers to live locals or to comms/requests
// the same table returned, as NCCL does (or, in negative tests, pointers tcpxr must refuse).
impl Net for V12 {
    calls_every_version_shares!(ncclNetProperties_v12_t);

    fn version(&self) -> u32 {
        12
    }
    fn init(&self) -> R {
        let mut ctx = std::ptr::null_mut();
        let mut cfg = ncclNetCommConfig_v12_t { trafficClass: -1 };
        // SAFETY: tcpxr's table given live out-pointers and no logger.
        unsafe { self.0.init.unwrap()(&mut ctx, 0x1234, &mut cfg, None, None) }
    }
    fn listen(&self, dev: c_int, handle: &mut [u8; 128], l: &mut *mut c_void) -> R {
        // SAFETY: a 128-byte handle buffer and a live out-pointer.
        unsafe { self.0.listen.unwrap()(std::ptr::null_mut(), dev, handle.as_mut_ptr() as *mut c_void, l) }
    }
    fn connect(&self, dev: c_int, handle: &mut [u8; 128], s: &mut *mut c_void) -> R {
        let mut dh: *mut ncclNetDeviceHandle_v12_t = std::ptr::null_mut();
        // SAFETY: the peer's 128-byte handle (the same buffer on every call of one connect) and
        // live out-pointers.
        unsafe {
            self.0.connect.unwrap()(
                std::ptr::null_mut(),
                dev,
                handle.as_mut_ptr() as *mut c_void,
                s,
                &mut dh,
            )
        }
    }
    fn accept(&self, l: *mut c_void, r: &mut *mut c_void) -> R {
        let mut dh: *mut ncclNetDeviceHandle_v12_t = std::ptr::null_mut();
        // SAFETY: a listen comm of this table, or a pointer tcpxr refuses after its tag check; live
        // out-pointers.
        unsafe { self.0.accept.unwrap()(l, r, &mut dh) }
    }
    fn reg_mr(&self, comm: *mut c_void, data: *mut c_void, size: usize, mh: &mut *mut c_void) -> R {
        // SAFETY: a comm of this table (tcpxr checks its tag); `data..data+size` is the test's live
        // buffer; a live out-pointer.
        unsafe { self.0.regMr.unwrap()(comm, data, size, NCCL_PTR_HOST, mh) }
    }
    fn isend(&self, s: *mut c_void, data: *mut c_void, size: usize, mh: *mut c_void, req: &mut *mut c_void) -> R {
        // SAFETY: a comm and memory handle of this table (tcpxr checks them); the test keeps
        // `data..data+size` alive and unchanged until test says done; a live out-pointer.
        unsafe { self.0.isend.unwrap()(s, data, size, 0, mh, std::ptr::null_mut(), req) }
    }
    fn irecv(&self, r: *mut c_void, data: *mut c_void, size: usize, mh: *mut c_void, req: &mut *mut c_void) -> R {
        let mut d = [data];
        let mut sz = [size];
        let mut tags = [0 as c_int];
        let mut mhs = [mh];
        let mut ph = [std::ptr::null_mut()];
        // NCCL >= 2.28 presets *request for LL receives; tcpxr must overwrite it.
        *req = std::ptr::without_provenance_mut(NCCL_NET_OPTIONAL_RECV_COMPLETION);
        // SAFETY: one-entry arrays on the stack; a comm and memory handle of this table (tcpxr
        // checks them); the test keeps `data..data+size` alive until test says done.
        unsafe {
            self.0.irecv.unwrap()(
                r,
                1,
                d.as_mut_ptr(),
                sz.as_mut_ptr(),
                tags.as_mut_ptr(),
                mhs.as_mut_ptr(),
                ph.as_mut_ptr(),
                req,
            )
        }
    }
    fn max_requests(&self) -> usize {
        NCCL_NET_MAX_REQUESTS
    }
}

impl Net for V5 {
    calls_every_version_shares!(ncclNetProperties_v5_t);

    fn version(&self) -> u32 {
        5
    }
    fn init(&self) -> R {
        // SAFETY: tcpxr's table given live out-pointers and no logger.
        unsafe { self.0.init.unwrap()(None) }
    }
    fn listen(&self, dev: c_int, handle: &mut [u8; 128], l: &mut *mut c_void) -> R {
        // SAFETY: a 128-byte handle buffer and a live out-pointer.
        unsafe { self.0.listen.unwrap()(dev, handle.as_mut_ptr() as *mut c_void, l) }
    }
    fn connect(&self, dev: c_int, handle: &mut [u8; 128], s: &mut *mut c_void) -> R {
        // SAFETY: the peer's 128-byte handle (the same buffer on every call of one connect) and
        // live out-pointers.
        unsafe { self.0.connect.unwrap()(dev, handle.as_mut_ptr() as *mut c_void, s) }
    }
    fn accept(&self, l: *mut c_void, r: &mut *mut c_void) -> R {
        // SAFETY: a listen comm of this table, or a pointer tcpxr refuses after its tag check; live
        // out-pointers.
        unsafe { self.0.accept.unwrap()(l, r) }
    }
    fn reg_mr(&self, comm: *mut c_void, data: *mut c_void, size: usize, mh: &mut *mut c_void) -> R {
        // SAFETY: a comm of this table (tcpxr checks its tag); `data..data+size` is the test's live
        // buffer; a live out-pointer.
        unsafe { self.0.regMr.unwrap()(comm, data, size as c_int, NCCL_PTR_HOST, mh) }
    }
    fn isend(&self, s: *mut c_void, data: *mut c_void, size: usize, mh: *mut c_void, req: &mut *mut c_void) -> R {
        // SAFETY: a comm and memory handle of this table (tcpxr checks them); the test keeps
        // `data..data+size` alive and unchanged until test says done; a live out-pointer.
        unsafe { self.0.isend.unwrap()(s, data, size as c_int, 0, mh, req) }
    }
    fn irecv(&self, r: *mut c_void, data: *mut c_void, size: usize, mh: *mut c_void, req: &mut *mut c_void) -> R {
        let mut d = [data];
        let mut sz = [size as c_int];
        let mut tags = [0 as c_int];
        let mut mhs = [mh];
        // SAFETY: one-entry arrays on the stack; a comm and memory handle of this table (tcpxr
        // checks them); the test keeps `data..data+size` alive until test says done.
        unsafe {
            self.0.irecv.unwrap()(
                r,
                1,
                d.as_mut_ptr(),
                sz.as_mut_ptr(),
                tags.as_mut_ptr(),
                mhs.as_mut_ptr(),
                req,
            )
        }
    }
    fn max_requests(&self) -> usize {
        NCCL_NET_MAX_REQUESTS_V6
    }
}

/// `regMr` with the size type of this version (`c_int` to v7, `usize` from v8).
macro_rules! reg_mr_sized {
    ($size:ty) => {
        fn reg_mr(&self, comm: *mut c_void, data: *mut c_void, size: usize, mh: &mut *mut c_void) -> R {
            // SAFETY: a comm of this table (tcpxr checks its tag); `data..data+size` is the
            // test's live buffer; a live out-pointer.
            unsafe { self.0.regMr.unwrap()(comm, data, size as $size, NCCL_PTR_HOST, mh) }
        }
    };
}

/// `isend` and `irecv` with the size type of this version (`c_int` to v8, `usize` from v9), and
/// from v10 the profiler handles (`phandles`), NULL as NCCL passes them without a profiler.
macro_rules! send_recv_sized {
    ($size:ty) => {
        fn isend(&self, s: *mut c_void, data: *mut c_void, size: usize, mh: *mut c_void, req: &mut *mut c_void) -> R {
            // SAFETY: a comm and memory handle of this table (tcpxr checks them); the test keeps
            // `data..data+size` alive and unchanged until test says done; a live out-pointer.
            unsafe { self.0.isend.unwrap()(s, data, size as $size, 0, mh, req) }
        }
        fn irecv(&self, r: *mut c_void, data: *mut c_void, size: usize, mh: *mut c_void, req: &mut *mut c_void) -> R {
            let (mut d, mut sz, mut tags, mut mhs) = ([data], [size as $size], [0 as c_int], [mh]);
            // SAFETY: one-entry arrays on the stack; a comm and memory handle of this table
            // (tcpxr checks them); the test keeps `data..data+size` alive until test says done.
            unsafe {
                self.0.irecv.unwrap()(
                    r,
                    1,
                    d.as_mut_ptr(),
                    sz.as_mut_ptr(),
                    tags.as_mut_ptr(),
                    mhs.as_mut_ptr(),
                    req,
                )
            }
        }
    };
    ($size:ty, phandles) => {
        fn isend(&self, s: *mut c_void, data: *mut c_void, size: usize, mh: *mut c_void, req: &mut *mut c_void) -> R {
            // SAFETY: as above, with NULL for the profiler handle.
            unsafe { self.0.isend.unwrap()(s, data, size as $size, 0, mh, std::ptr::null_mut(), req) }
        }
        fn irecv(&self, r: *mut c_void, data: *mut c_void, size: usize, mh: *mut c_void, req: &mut *mut c_void) -> R {
            let (mut d, mut sz, mut tags, mut mhs) = ([data], [size as $size], [0 as c_int], [mh]);
            let mut ph = [std::ptr::null_mut()];
            // SAFETY: as above, with a one-entry array of NULL profiler handles.
            unsafe {
                self.0.irecv.unwrap()(
                    r,
                    1,
                    d.as_mut_ptr(),
                    sz.as_mut_ptr(),
                    tags.as_mut_ptr(),
                    mhs.as_mut_ptr(),
                    ph.as_mut_ptr(),
                    req,
                )
            }
        }
    };
}

/// `accept` from v7 on: with the out-pointer for a device handle, which NCCL leaves NULL when it
/// asks for none.
macro_rules! accept_with_device_handle {
    () => {
        fn accept(&self, l: *mut c_void, r: &mut *mut c_void) -> R {
            let mut dh = std::ptr::null_mut();
            // SAFETY: a listen comm of this table, or a pointer tcpxr refuses after its tag
            // check; live out-pointers.
            unsafe { self.0.accept.unwrap()(l, r, &mut dh) }
        }
    };
}

/// `init` (no context, v5-v9) and `listen` (no context, v5-v10).
macro_rules! init_and_listen_without_context {
    () => {
        fn init(&self) -> R {
            // SAFETY: tcpxr's table given no logger.
            unsafe { self.0.init.unwrap()(None) }
        }
        fn listen(&self, dev: c_int, handle: &mut [u8; 128], l: &mut *mut c_void) -> R {
            // SAFETY: a 128-byte handle buffer and a live out-pointer.
            unsafe { self.0.listen.unwrap()(dev, handle.as_mut_ptr() as *mut c_void, l) }
        }
    };
}

/// `connect` of v7-v9: the out-pointer for a device handle.
macro_rules! connect_with_device_handle {
    () => {
        fn connect(&self, dev: c_int, handle: &mut [u8; 128], s: &mut *mut c_void) -> R {
            let mut dh = std::ptr::null_mut();
            // SAFETY: the peer's 128-byte handle (the same buffer on every call of one connect)
            // and live out-pointers.
            unsafe { self.0.connect.unwrap()(dev, handle.as_mut_ptr() as *mut c_void, s, &mut dh) }
        }
    };
}

impl Net for V6 {
    calls_every_version_shares!(ncclNetProperties_v6_t);
    init_and_listen_without_context!();
    reg_mr_sized!(c_int);
    send_recv_sized!(c_int);

    fn version(&self) -> u32 {
        6
    }
    fn connect(&self, dev: c_int, handle: &mut [u8; 128], s: &mut *mut c_void) -> R {
        // SAFETY: the peer's 128-byte handle (the same buffer on every call of one connect) and
        // a live out-pointer.
        unsafe { self.0.connect.unwrap()(dev, handle.as_mut_ptr() as *mut c_void, s) }
    }
    fn accept(&self, l: *mut c_void, r: &mut *mut c_void) -> R {
        // SAFETY: a listen comm of this table, or a pointer tcpxr refuses after its tag check; a
        // live out-pointer.
        unsafe { self.0.accept.unwrap()(l, r) }
    }
    fn max_requests(&self) -> usize {
        NCCL_NET_MAX_REQUESTS_V6
    }
}

impl Net for V7 {
    calls_every_version_shares!(ncclNetProperties_v7_t);
    init_and_listen_without_context!();
    connect_with_device_handle!();
    accept_with_device_handle!();
    reg_mr_sized!(c_int);
    send_recv_sized!(c_int);

    fn version(&self) -> u32 {
        7
    }
    fn max_requests(&self) -> usize {
        NCCL_NET_MAX_REQUESTS
    }
}

impl Net for V8 {
    calls_every_version_shares!(ncclNetProperties_v8_t);
    init_and_listen_without_context!();
    connect_with_device_handle!();
    accept_with_device_handle!();
    reg_mr_sized!(usize);
    send_recv_sized!(c_int);

    fn version(&self) -> u32 {
        8
    }
    fn max_requests(&self) -> usize {
        NCCL_NET_MAX_REQUESTS
    }
}

impl Net for V9 {
    calls_every_version_shares!(ncclNetProperties_v9_t);
    init_and_listen_without_context!();
    connect_with_device_handle!();
    accept_with_device_handle!();
    reg_mr_sized!(usize);
    send_recv_sized!(usize);

    fn version(&self) -> u32 {
        9
    }
    fn max_requests(&self) -> usize {
        NCCL_NET_MAX_REQUESTS
    }
}

impl Net for V10 {
    calls_every_version_shares!(ncclNetProperties_v10_t);
    accept_with_device_handle!();
    reg_mr_sized!(usize);
    send_recv_sized!(usize, phandles);

    fn version(&self) -> u32 {
        10
    }
    fn init(&self) -> R {
        // SAFETY: tcpxr's table given no logger and no profiler callback.
        unsafe { self.0.init.unwrap()(None, None) }
    }
    fn listen(&self, dev: c_int, handle: &mut [u8; 128], l: &mut *mut c_void) -> R {
        // SAFETY: a 128-byte handle buffer and a live out-pointer.
        unsafe { self.0.listen.unwrap()(dev, handle.as_mut_ptr() as *mut c_void, l) }
    }
    fn connect(&self, dev: c_int, handle: &mut [u8; 128], s: &mut *mut c_void) -> R {
        // NCCL 2.26-2.27 pass the communicator's config (its traffic class) to every connect.
        let mut cfg = ncclNetCommConfig_v10_t { trafficClass: -1 };
        let mut dh = std::ptr::null_mut();
        // SAFETY: a live config, the peer's 128-byte handle (the same buffer on every call of
        // one connect) and live out-pointers.
        unsafe { self.0.connect.unwrap()(dev, &mut cfg, handle.as_mut_ptr() as *mut c_void, s, &mut dh) }
    }
    fn max_requests(&self) -> usize {
        NCCL_NET_MAX_REQUESTS
    }
}

impl Net for V11 {
    calls_every_version_shares!(ncclNetProperties_v11_t);
    accept_with_device_handle!();
    reg_mr_sized!(usize);
    send_recv_sized!(usize, phandles);

    fn version(&self) -> u32 {
        11
    }
    fn init(&self) -> R {
        let mut ctx = std::ptr::null_mut();
        let mut cfg = ncclNetCommConfig_v11_t { trafficClass: -1 };
        // SAFETY: tcpxr's table given live out-pointers, no logger and no profiler callback.
        let r = unsafe { self.0.init.unwrap()(&mut ctx, 0x1111, &mut cfg, None, None) };
        self.1.store(ctx, std::sync::atomic::Ordering::SeqCst);
        r
    }
    fn listen(&self, dev: c_int, handle: &mut [u8; 128], l: &mut *mut c_void) -> R {
        // SAFETY: the context init returned, a 128-byte handle buffer and a live out-pointer.
        unsafe { self.0.listen.unwrap()(self.ctx(), dev, handle.as_mut_ptr() as *mut c_void, l) }
    }
    fn connect(&self, dev: c_int, handle: &mut [u8; 128], s: &mut *mut c_void) -> R {
        let mut dh = std::ptr::null_mut();
        // SAFETY: the context init returned, the peer's 128-byte handle (the same buffer on
        // every call of one connect) and live out-pointers.
        unsafe { self.0.connect.unwrap()(self.ctx(), dev, handle.as_mut_ptr() as *mut c_void, s, &mut dh) }
    }
    fn max_requests(&self) -> usize {
        NCCL_NET_MAX_REQUESTS
    }
}

pub const DEADLINE: Duration = Duration::from_secs(20);

/// One round on every pair: `in_flight` messages of `size` bytes each way posted at once (fresh
/// patterns, seeds from `seed`), every request tested in turn as NCCL's proxy does until all are
/// done (each within [`DEADLINE`], reporting `size`), then every byte compared.
pub fn round_trip_in_flight(net: &dyn Net, pairs: &[Pair], size: usize, in_flight: usize, seed: &mut u64) {
    let mut sends: Vec<Vec<Vec<u8>>> = pairs
        .iter()
        .map(|_| {
            (0..in_flight)
                .map(|_| {
                    *seed += 1;
                    pattern(size, *seed)
                })
                .collect()
        })
        .collect();
    let mut recvs: Vec<Vec<Vec<u8>>> = pairs.iter().map(|_| vec![vec![0u8; size]; in_flight]).collect();
    let mut requests = vec![];
    for (p, pair) in pairs.iter().enumerate() {
        for i in 0..in_flight {
            let (mut rq, mut sq) = (null(), null());
            let buf = recvs[p][i].as_mut_ptr() as *mut c_void;
            assert_eq!(net.irecv(pair.recv, buf, size, null(), &mut rq), OK);
            let buf = sends[p][i].as_mut_ptr() as *mut c_void;
            assert_eq!(net.isend(pair.send, buf, size, null(), &mut sq), OK);
            assert!(!rq.is_null() && !sq.is_null());
            requests.push(rq);
            requests.push(sq);
        }
    }
    let start = Instant::now();
    while !requests.is_empty() {
        requests.retain(|&r| {
            let (mut done, mut got) = (0, 0);
            assert_eq!(net.test(r, &mut done, &mut got), OK);
            if done != 0 {
                assert_eq!(got as usize, size);
            }
            done == 0
        });
        assert!(start.elapsed() < DEADLINE, "{size} B: transfer did not complete");
    }
    for p in 0..pairs.len() {
        for i in 0..in_flight {
            assert!(recvs[p][i] == sends[p][i], "{size} B, connection {p}, message {i}");
        }
    }
}

/// A connected pair, made as NCCL makes it: listen, then connect and accept called alternately
/// (both non-blocking) until each returns a comm.
pub struct Pair<'a> {
    pub net: &'a dyn Net,
    pub send: *mut c_void,
    pub recv: *mut c_void,
}

impl<'a> Pair<'a> {
    pub fn new(net: &'a dyn Net) -> Self {
        Pair::on(net, 0)
    }

    /// A pair whose both ends are on device `dev`.
    pub fn on(net: &'a dyn Net, dev: c_int) -> Self {
        assert_eq!(net.init(), OK);
        let mut handle = [0u8; 128];
        let mut l = null();
        assert_eq!(net.listen(dev, &mut handle, &mut l), OK);
        assert!(!l.is_null());
        let (mut s, mut r) = (null(), null());
        let start = Instant::now();
        while s.is_null() || r.is_null() {
            if s.is_null() {
                assert_eq!(net.connect(dev, &mut handle, &mut s), OK);
            }
            if r.is_null() {
                assert_eq!(net.accept(l, &mut r), OK);
            }
            assert!(start.elapsed() < DEADLINE, "connect/accept did not complete");
        }
        assert_eq!(net.close_listen(l), OK);
        Pair { net, send: s, recv: r }
    }

    /// A pair on device 0 made through the v12 table within NCCL's communicator context `ctx` (from
    /// the table's init), as NCCL makes its connections: listen, connect and accept all given it.
    pub fn in_context(net: &'a V12, ctx: *mut c_void) -> Self {
        let t = net.0;
        let mut handle = [0u8; 128];
        let (mut l, mut s, mut r) = (null(), null(), null());
        let mut dh: *mut ncclNetDeviceHandle_v12_t = std::ptr::null_mut();
        // SAFETY: the caller's context, a 128-byte handle buffer (the same on every connect call)
        // and live out-pointers, as NCCL passes them.
        unsafe {
            assert_eq!(t.listen.unwrap()(ctx, 0, handle.as_mut_ptr().cast(), &mut l), OK);
            let start = Instant::now();
            while s.is_null() || r.is_null() {
                assert!(start.elapsed() < DEADLINE, "connect/accept did not complete");
                if s.is_null() {
                    assert_eq!(
                        t.connect.unwrap()(ctx, 0, handle.as_mut_ptr().cast(), &mut s, &mut dh),
                        OK
                    );
                }
                if r.is_null() {
                    assert_eq!(t.accept.unwrap()(l, &mut r, &mut dh), OK);
                }
            }
            assert_eq!(t.closeListen.unwrap()(l), OK);
        }
        Pair { net, send: s, recv: r }
    }

    /// Posts a receive into `dst`, then a send of `src` (NCCL's order); returns their requests
    /// (receive, send), both taken.
    pub fn post(&self, dst: &mut [u8], src: &mut [u8]) -> (*mut c_void, *mut c_void) {
        let (mut rq, mut sq) = (null(), null());
        let r = self
            .net
            .irecv(self.recv, dst.as_mut_ptr() as *mut c_void, dst.len(), null(), &mut rq);
        assert_eq!(r, OK);
        let r = self
            .net
            .isend(self.send, src.as_mut_ptr() as *mut c_void, src.len(), null(), &mut sq);
        assert_eq!(r, OK);
        assert!(!rq.is_null() && !sq.is_null());
        (rq, sq)
    }

    /// Sends `data` and receives it into a buffer of `capacity` bytes; returns what arrived.
    pub fn transfer(&self, data: &mut [u8], capacity: usize) -> Vec<u8> {
        let mut out = vec![0u8; capacity];
        let (rq, sq) = self.post(&mut out, data);
        let (rsize, ssize) = wait_both(self.net, rq, sq);
        assert_eq!(ssize as usize, data.len(), "send size");
        assert_eq!(rsize as usize, data.len(), "receive size reports what was sent");
        out.truncate(rsize as usize);
        out
    }
}

impl Drop for Pair<'_> {
    fn drop(&mut self) {
        assert_eq!(self.net.close_send(self.send), OK);
        assert_eq!(self.net.close_recv(self.recv), OK);
    }
}

/// The file descriptors of this process that are sockets, as listed now.
pub fn socket_fds() -> Vec<c_int> {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .filter(|e| std::fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy().starts_with("socket:")))
        .filter_map(|e| e.file_name().to_string_lossy().parse().ok())
        .collect()
}

/// Polls test on two requests until both are done; returns their sizes.
pub fn wait_both(net: &dyn Net, a: *mut c_void, b: *mut c_void) -> (c_int, c_int) {
    let (mut da, mut db, mut sa, mut sb) = (0, 0, -1, -1);
    let start = Instant::now();
    while da == 0 || db == 0 {
        if da == 0 {
            assert_eq!(net.test(a, &mut da, &mut sa), OK);
        }
        if db == 0 {
            assert_eq!(net.test(b, &mut db, &mut sb), OK);
        }
        assert!(start.elapsed() < DEADLINE, "transfer did not complete");
    }
    (sa, sb)
}

/// Polls one request until done or an error; returns the result code and the elapsed time.
pub fn wait_result(net: &dyn Net, req: *mut c_void, limit: Duration) -> (R, Duration) {
    let start = Instant::now();
    let (mut done, mut size) = (0, 0);
    loop {
        let r = net.test(req, &mut done, &mut size);
        if r != OK || done != 0 || start.elapsed() > limit {
            return (r, start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Deterministic bytes that differ per position and per seed, so misplaced chunks show.
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A NULL `void*`, for out-parameters NCCL initialises the same way.
pub fn null() -> *mut c_void {
    std::ptr::null_mut()
}

// --- peers and pairs shared by several test files --------------------------------------------

/// Reads `child`'s output until a line starting with `prefix`; returns the rest of that line.
pub fn read_line(child: &mut std::process::Child, reader: &mut impl std::io::BufRead, prefix: &str) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap() == 0 {
            let _ = child.kill();
            panic!("peer exited before printing {prefix}");
        }
        if let Some(rest) = line.trim().strip_prefix(prefix) {
            return rest.trim().to_string();
        }
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn unhex(s: &str) -> [u8; 128] {
    let mut h = [0u8; 128];
    for (i, b) in h.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap();
    }
    h
}

/// A receiving peer process (`tcpxr-bench peer --role recv --size <size>`, which receives until
/// killed), its output (keep it: the peer fails when it can no longer print), and this process's
/// send comm connected to it.
pub fn recv_peer(
    net: &dyn Net,
    size: &str,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
    *mut c_void,
) {
    let mut cmd = bench_command();
    cmd.args(["peer", "--role", "recv", "--size", size]);
    recv_peer_from(net, cmd)
}

/// [`recv_peer`] from a `tcpxr-bench peer --role recv` command the caller prepared (its
/// environment, its stderr).
pub fn recv_peer_from(
    net: &dyn Net,
    mut cmd: std::process::Command,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
    *mut c_void,
) {
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut handle = unhex(&read_line(&mut child, &mut out, "HANDLE "));
    let mut s = null();
    let start = Instant::now();
    while s.is_null() {
        assert_eq!(net.connect(0, &mut handle, &mut s), OK);
        assert!(start.elapsed() < DEADLINE);
    }
    (child, out, s)
}

/// The mirror of [`recv_peer_from`]: a listen comm on device 0, the sending peer `cmd` (a
/// `tcpxr-bench peer --role send --size N` command the caller prepared: its environment, its
/// stderr) started with its handle, the receive comm accepted from it, the peer past CONNECTED.
/// Returns the peer, its stdout, the listen comm and the receive comm.
pub fn send_peer_from(
    net: &dyn Net,
    mut cmd: std::process::Command,
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
    *mut c_void,
    *mut c_void,
) {
    let mut handle = [0u8; 128];
    let mut l = null();
    assert_eq!(net.listen(0, &mut handle, &mut l), OK);
    let mut child = cmd
        .args(["--handle", &hex(&handle)])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut r = null();
    let start = Instant::now();
    while r.is_null() {
        assert_eq!(net.accept(l, &mut r), OK);
        assert!(start.elapsed() < DEADLINE);
    }
    read_line(&mut child, &mut out, "CONNECTED");
    (child, out, l, r)
}

/// A listen comm of the v12 table whose peer is a raw socket speaking tcpxr's wire format up to
/// the welcome: the listen comm, its handle, the peer's control connection, and the welcome's
/// inner handles (one per stripe, [`INNER_HANDLE_BYTES`] each). The peer connects no stripe.
///
/// [`INNER_HANDLE_BYTES`]: nccl_net_tcpxr::transport::INNER_HANDLE_BYTES
pub fn welcomed_raw_peer(
    net: &V12,
) -> (
    *mut c_void,
    nccl_net_tcpxr::engine::wire::ListenHandle,
    std::net::TcpStream,
    Vec<u8>,
) {
    use nccl_net_tcpxr::engine::wire::{self, ListenHandle, WELCOME_HEAD_BYTES};
    use nccl_net_tcpxr::transport::INNER_HANDLE_BYTES;
    use std::io::{Read, Write};
    assert_eq!(net.init(), OK);
    let mut handle = [0u8; 128];
    let mut l = null();
    assert_eq!(net.listen(0, &mut handle, &mut l), OK);
    let h = ListenHandle::read(&handle).unwrap();
    let mut ctrl = std::net::TcpStream::connect(h.ctrl).unwrap();
    ctrl.write_all(&wire::hello(h.nonce)).unwrap();
    let mut welcome = vec![0u8; WELCOME_HEAD_BYTES + h.stripes as usize * INNER_HANDLE_BYTES];
    ctrl.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    ctrl.read_exact(&mut welcome).unwrap();
    welcome.drain(..WELCOME_HEAD_BYTES);
    (l, h, ctrl, welcome)
}

/// A connected pair of the v12 table whose receive side asked, at accept, for NCCL's device unpack
/// (as NCCL does when the plugin reports it), or for nothing (`unpack` false). Returns the send
/// comm, the receive comm and the device handle tcpxr filled in (NULL without `unpack`).
pub fn unpack_pair(net: &V12, unpack: bool) -> (*mut c_void, *mut c_void, *mut c_void) {
    assert_eq!(net.init(), OK);
    let mut h = [0u8; 128];
    let mut l = null();
    assert_eq!(net.listen(0, &mut h, &mut l), OK);
    let mut dev = ncclNetDeviceHandle_v12_t {
        netDeviceType: NCCL_NET_DEVICE_UNPACK,
        netDeviceVersion: NCCL_NET_DEVICE_UNPACK_VERSION,
        handle: null(),
        size: 0,
        needsProxyProgress: 0,
    };
    let mut devp: *mut ncclNetDeviceHandle_v12_t = if unpack { &mut dev } else { std::ptr::null_mut() };
    let (mut s, mut r) = (null(), null());
    let start = Instant::now();
    while s.is_null() || r.is_null() {
        if s.is_null() {
            assert_eq!(net.connect(0, &mut h, &mut s), OK);
        }
        if r.is_null() {
            // SAFETY: tcpxr's table; live out-pointers and NCCL's handle struct as NCCL passes it.
            assert_eq!(unsafe { net.0.accept.unwrap()(l, &mut r, &mut devp) }, OK);
        }
        assert!(start.elapsed() < DEADLINE, "connect/accept did not complete");
    }
    assert_eq!(net.close_listen(l), OK);
    if unpack {
        assert!(!dev.handle.is_null());
        assert_eq!(
            (dev.size, dev.needsProxyProgress),
            (std::mem::size_of::<unpackNetDeviceHandle>(), 1)
        );
    }
    (s, r, dev.handle)
}

/// A pair of the v12 table whose receive side has NCCL's device unpack, with the device handle
/// accept filled in; this test plays NCCL's kernel ([`UnpackPair::unpack`]). Closed on drop.
pub struct UnpackPair {
    pub net: V12,
    pub send: *mut c_void,
    pub recv: *mut c_void,
    handle: unpackNetDeviceHandle,
}

impl UnpackPair {
    pub fn connect() -> UnpackPair {
        let net = v12();
        let (send, recv, dev) = unpack_pair(&net, true);
        // Without a GPU tcpxr's ring lives in plain host memory: the device address is the host one.
        // SAFETY: the handle tcpxr gave NCCL, 24 readable bytes.
        let handle = unsafe { std::ptr::read(dev as *const unpackNetDeviceHandle) };
        assert_eq!(
            handle.head,
            u64::MAX,
            "NCCL's kernel increments head before its first slice"
        );
        UnpackPair {
            net,
            send,
            recv,
            handle,
        }
    }

    /// What NCCL's kernel does for receive `n` into `dst`: every record of slot n % 16.
    pub fn unpack(&self, n: u64, dst: &mut [u8]) -> usize {
        let slot = (n % 16) as usize;
        // SAFETY: the ring the handle points to (host memory here); the count is published before
        // test reports the receive done, the records before the count.
        let meta = unsafe { &*self.handle.meta };
        let cnt = meta.cnt[slot] as usize;
        for r in &meta.mem[slot][..cnt] {
            let (src, dst_off, len) = (r.src_off as usize, r.dst_off as usize, r.len as usize);
            assert!(dst_off + len <= dst.len(), "a record beyond the receive: {r:?}");
            // SAFETY: src_off counts from bounce_buf, which the comm keeps until irecvConsumed.
            let from = unsafe { std::slice::from_raw_parts((self.handle.bounce_buf as *const u8).add(src), len) };
            dst[dst_off..dst_off + len].copy_from_slice(from);
        }
        cnt
    }

    /// How many records receive `n` published.
    pub fn published(&self, n: u64) -> usize {
        // SAFETY: as in unpack.
        unsafe { (*self.handle.meta).cnt[(n % 16) as usize] as usize }
    }

    /// A receive into `dst` and a send of `src`; their requests, both non-null.
    pub fn post(&self, dst: &mut [u8], src: &mut [u8]) -> (*mut c_void, *mut c_void) {
        let (mut rq, mut sq) = (null(), null());
        let recv = self
            .net
            .irecv(self.recv, dst.as_mut_ptr() as *mut c_void, dst.len(), null(), &mut rq);
        let send = self
            .net
            .isend(self.send, src.as_mut_ptr() as *mut c_void, src.len(), null(), &mut sq);
        assert_eq!((recv, send), (OK, OK));
        assert!(!rq.is_null() && !sq.is_null(), "room for both");
        (rq, sq)
    }

    /// Tests `req` until it completes (DEADLINE at most); its size.
    pub fn wait(&self, req: *mut c_void) -> c_int {
        let (mut done, mut size) = (0, -1);
        let start = Instant::now();
        while done == 0 {
            assert_eq!(self.net.test(req, &mut done, &mut size), OK);
            assert!(start.elapsed() < DEADLINE, "request never completed");
        }
        size
    }

    pub fn consumed(&self, req: *mut c_void) -> R {
        // SAFETY: tcpxr's table, its own comm and request.
        unsafe { self.net.0.irecvConsumed.unwrap()(self.recv, 1, req) }
    }
}

impl Drop for UnpackPair {
    fn drop(&mut self) {
        assert_eq!(self.net.close_send(self.send), OK);
        assert_eq!(self.net.close_recv(self.recv), OK);
    }
}

/// How many of this process's threads have a name that starts with `prefix` (tcpxr names its I/O
/// threads `tcpxr-io0`, `tcpxr-io1`, ...).
pub fn threads_named(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .unwrap_or_default()
                .starts_with(prefix)
        })
        .count()
}
