//! The only place tcpxr writes the process environment: the NCCL settings plugin's init gives a
//! value when the user left them unset (nccl_settings.rs) and the one TCPX needs before its init
//! (transport/tcpx). Nothing else in the library calls `std::env::set_var` or `remove_var`.
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
//! * With glibc 2.41 or later a concurrent `getenv` is safe against `setenv` and `unsetenv`
//!   (glibc no longer frees an environment array a reader may be walking, and never frees the
//!   strings). With an older glibc a `getenv` in another thread at the very moment `setenv`
//!   grows the array can read the old array after it is freed: the same exposure NCCL's own
//!   nccl.conf handling has, for the few variables below, once per process.

/// Sets `key=value` in the process environment (see the module's rules: plugin's first init,
/// `key` unset).
pub(crate) fn set(key: &str, value: &str) {
    std::env::set_var(key, value);
}

/// Removes `key`, which tcpxr itself set a moment ago during the same init.
pub(crate) fn unset(key: &str) {
    std::env::remove_var(key);
}
