//! The only place tcpxr writes the process environment: the NCCL settings plugin's init gives a
//! value when the user left them unset (nccl_settings.rs) and the one TCPX needs before its init
//! (transport/tcpx). Nothing else in the library writes it (no `std::env::set_var`, `remove_var`,
//! `setenv`).
//!
//! Writing the environment races with any thread reading it at the same time: C's `getenv` holds
//! no lock, which is why Rust 2024 makes `set_var` unsafe. A net plugin has no point in its life
//! where no other thread exists, so these writes are confined to the one point where they are no
//! less safe than NCCL's own:
//!
//! * Only while plugin's init runs for the first time in the process (later inits return before
//!   anything else; the library is linked `-z nodelete`, so even NCCL's dlclose does not run it
//!   again), under plugin's lock, and only for variables that are unset: a value another thread
//!   may hold a pointer to is never replaced. The one removal undoes tcpxr's own write of a
//!   moment before (TCPX's setting, when tcpxr does not use TCPX after all).
//! * NCCL calls a net plugin's init from `commAlloc` (src/init.cc) while it sets up a
//!   communicator, inside `ncclNetInit` (src/plugin/net.cc) under its `netPluginMutex`: before
//!   `bootstrapInit`, and before `initTransportsRank` starts that communicator's proxy threads
//!   (`ncclProxyCreate`). At tcpxr's first init no NCCL proxy or progress thread of a
//!   communicator using tcpxr exists yet, and no thread of tcpxr's own (its I/O pool starts with
//!   the first stripe). NCCL reads the settings tcpxr gives later, as it builds the communicator.
//! * Threads that may exist and read the environment meanwhile: the application's; NCCL's
//!   bootstrap root thread (on the rank that called ncclGetUniqueId); other communicators being
//!   set up in the same group (ncclCommInitAll runs one init job per GPU in its own thread; their
//!   plugin init waits for `netPluginMutex`, but they read NCCL parameters before it); CUDA's.
//!   NCCL itself writes the environment with those threads running: at its first call it sets
//!   every variable of nccl.conf and ~/.nccl.conf with `setenv` (src/misc/param.cc,
//!   `setEnvFile`, from `ncclInitEnv`).
//! * Before glibc 2.41 a `getenv` in another thread at the moment `setenv` grows the array can
//!   walk the old array after `setenv` freed it. That happened: a test process crashed in
//!   `strlen` on a freed array's bytes (its tcpxr init set NCCL's variables while another test
//!   thread started a child, whose environment Rust's `Command` walked; the two copies of Rust's
//!   standard library, the test's and the dlopened plugin's, have two environment locks). So
//!   tcpxr does not call `setenv`: it publishes a new array, the old entries and its own, with
//!   one atomic store of `environ`, and frees nothing. A reader walks the old array or the new
//!   one, both whole for the life of the process (the arrays and strings are leaked: a few per
//!   process). What this cannot order against is another thread's `setenv` at the same moment
//!   (glibc's lock is its own): one of the two writes could be lost, never memory freed under a
//!   reader. A later `setenv` elsewhere copies the entries from the array tcpxr published.

use std::ffi::{c_char, CStr, CString};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;

extern "C" {
    /// The process environment: a NULL-terminated array of `KEY=value` C strings (POSIX).
    static mut environ: *mut *mut c_char;
}

/// Orders tcpxr's own writes (plugin's init holds its lock already; this keeps the rule here).
static WRITES: Mutex<()> = Mutex::new(());

/// Sets `key=value` in the process environment (see the module's rules: plugin's first init,
/// `key` unset).
pub(crate) fn set(key: &str, value: &str) {
    let entry = CString::new(format!("{key}={value}")).expect("an environment entry without NUL bytes");
    publish(key, Some(entry));
}

/// Removes `key`, which tcpxr itself set a moment ago during the same init.
pub(crate) fn unset(key: &str) {
    publish(key, None);
}

/// Publishes the current environment without `key`, and with `entry` (`key=value`) if given, as
/// a new array (module doc).
fn publish(key: &str, entry: Option<CString>) {
    let _w = WRITES.lock().unwrap_or_else(|p| p.into_inner());
    // SAFETY: `environ` is pointer-aligned and lives as long as the process. C code reads and
    // writes it as a plain pointer; an aligned pointer-sized load or store is single-copy atomic
    // on the targets tcpxr builds for (x86-64, aarch64), which is what its readers rely on.
    let slot = unsafe { AtomicPtr::from_ptr(std::ptr::addr_of_mut!(environ)) };
    let mut entries: Vec<*mut c_char> = Vec::new();
    let mut at = slot.load(Ordering::Acquire);
    // SAFETY: `environ` names a NULL-terminated array of C strings, or is NULL. tcpxr never frees
    // an array it published; glibc frees its own only in a setenv or unsetenv of another thread
    // at this same moment, the race the module doc names (tcpxr writes during plugin's first
    // init only).
    unsafe {
        while !at.is_null() && !(*at).is_null() {
            let bytes = CStr::from_ptr(*at).to_bytes();
            let named = bytes.len() > key.len() && bytes.starts_with(key.as_bytes()) && bytes[key.len()] == b'=';
            if !named {
                entries.push(*at);
            }
            at = at.add(1);
        }
    }
    entries.extend(entry.map(CString::into_raw));
    entries.push(std::ptr::null_mut());
    let array = Box::leak(entries.into_boxed_slice());
    // Release: a reader that loads the new pointer sees the array and the strings it names.
    slot.store(array.as_mut_ptr(), Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Readers walking the environment (Rust's lock does not order them against tcpxr's writes,
    /// which take none) while variables come and go never see a torn array, and every write
    /// reads back through both `getenv` and Rust's `std::env`.
    #[test]
    fn writes_publish_a_whole_array_readers_may_walk_at_any_moment() {
        use std::sync::atomic::{AtomicBool, AtomicU64};
        let (stop, walks) = (
            std::sync::Arc::new(AtomicBool::new(false)),
            std::sync::Arc::new(AtomicU64::new(0)),
        );
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (stop, walks) = (stop.clone(), walks.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        assert!(std::env::vars_os().all(|(k, _)| !k.is_empty()));
                        walks.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        // The writes start once both readers walk.
        while walks.load(Ordering::Relaxed) < 2 {
            std::thread::yield_now();
        }
        for i in 0..200 {
            let key = format!("TCPXR_ENV_TEST_{}", i % 7);
            set(&key, &i.to_string());
            assert_eq!(std::env::var(&key).as_deref(), Ok(i.to_string().as_str()));
            let c = CString::new(key.as_str()).unwrap();
            // SAFETY: getenv with a NUL-terminated name.
            let v = unsafe { libc::getenv(c.as_ptr()) };
            assert!(!v.is_null(), "{key} not found by getenv");
            // SAFETY: getenv found it: a NUL-terminated string, which publish never frees.
            assert_eq!(unsafe { CStr::from_ptr(v) }.to_str().unwrap(), i.to_string());
            if i % 3 == 0 {
                unset(&key);
                assert!(std::env::var_os(&key).is_none(), "{key} after unset");
            }
        }
        // Replacing a key leaves one entry for it; a key that prefixes another is its own.
        set("TCPXR_ENV_TEST_X", "1");
        set("TCPXR_ENV_TEST_XY", "2");
        set("TCPXR_ENV_TEST_X", "3");
        let named = |k: &str| std::env::vars().filter(|(n, _)| n == k).count();
        assert_eq!((named("TCPXR_ENV_TEST_X"), named("TCPXR_ENV_TEST_XY")), (1, 1));
        assert_eq!(std::env::var("TCPXR_ENV_TEST_XY").as_deref(), Ok("2"));
        stop.store(true, Ordering::Relaxed);
        for r in readers {
            r.join().unwrap();
        }
    }
}
