//! The C boundary: every exported function runs inside `run`, which turns an error into its NCCL
//! code plus a WARN naming the function and the table version NCCL called it through, and a panic
//! into ncclInternalError plus a WARN (a panic must never unwind into NCCL). `non_null!` checks
//! pointer arguments once, with a clear message.
//!
//! `ffi_fn!` makes each entry point a safe `extern "C"` function, generic over the table version
//! `V` (each table takes its own instantiation, `devices::<12>`): the body's unsafe operations
//! (dereferencing NCCL's pointers) stand in explicit `unsafe` blocks, each saying why it is sound.
use crate::abi::ncclResult_t;
use crate::error::Result;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Depth of exported calls on this thread, so the panic hook knows a panic is ours to report.
    static IN_PLUGIN: Cell<u32> = const { Cell::new(0) };
}

static HOOK: Once = Once::new();

/// Routes panics raised inside tcpxr to NCCL's log (instead of a backtrace on stderr); panics of
/// the host program go to the hook that was there before. Safe to keep installed because the
/// library is linked with -z nodelete, so the hook's code is never unmapped.
fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if IN_PLUGIN.with(|d| d.get()) > 0 {
                let loc = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                log::warn!("internal error at {loc}: {}", panic_message(info.payload()));
            } else {
                previous(info);
            }
        }));
    });
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".into()
    }
}

/// Runs the body of exported function `name`, called through NCCL's `table` of version `version`
/// ("ncclNet" or "ncclTuner").
pub fn run(table: &'static str, name: &'static str, version: u32, body: impl FnOnce() -> Result<()>) -> ncclResult_t {
    install_panic_hook();
    IN_PLUGIN.with(|d| d.set(d.get() + 1));
    let outcome = panic::catch_unwind(AssertUnwindSafe(body));
    IN_PLUGIN.with(|d| d.set(d.get() - 1));
    match outcome {
        Ok(Ok(())) => ncclResult_t::ncclSuccess,
        Ok(Err(e)) => {
            // A call that fails before init installed a logger (or without init) is still logged.
            crate::log::install_fallback();
            log::warn!("{name} ({table} v{version}): {}", e.msg);
            e.code
        }
        Err(payload) => {
            crate::log::install_fallback();
            log::warn!(
                "{name} ({table} v{version}): internal error ({}); returning ncclInternalError",
                panic_message(payload.as_ref())
            );
            ncclResult_t::ncclInternalError
        }
    }
}

/// Fails the call with ncclInvalidArgument when a pointer argument is NULL.
macro_rules! non_null {
    ($ptr:expr, $what:literal) => {
        if $ptr.is_null() {
            return Err($crate::error::Error::invalid_argument(concat!($what, " is NULL")));
        }
    };
}
pub(crate) use non_null;

/// Defines the entry point `$name::<V>` for field `$label` of NCCL's net table (or of the table
/// named first, `"ncclTuner" / "init" fn ...`): a safe `extern "C"` function whose body returns
/// `Result<()>`, wrapped in `run`.
macro_rules! ffi_fn {
    ($(#[$meta:meta])* $label:literal fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $crate::export::guard::ffi_fn! { $(#[$meta])* "ncclNet" / $label fn $name($($arg: $ty),*) $body }
    };
    ($(#[$meta:meta])* $table:literal / $label:literal fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block) => {
        $(#[$meta])*
        // Safe to name, as hyper's C API does: only NCCL calls these, with pointers that its
        // contract makes valid, and every dereference sits in a commented `unsafe` block.
        #[allow(clippy::not_unsafe_ptr_arg_deref)]
        pub extern "C" fn $name<const V: u32>($($arg: $ty),*) -> $crate::abi::ncclResult_t {
            $crate::export::guard::run($table, $label, V, move || -> $crate::error::Result<()> { $body })
        }
    };
}
pub(crate) use ffi_fn;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn errors_become_their_code_and_panics_internal_error() {
        assert_eq!(run("ncclNet", "ok", 12, || Ok(())), ncclResult_t::ncclSuccess);
        assert_eq!(
            run("ncclNet", "remote", 12, || Err(Error::remote("gone"))),
            ncclResult_t::ncclRemoteError
        );
        assert_eq!(
            run("ncclTuner", "boom", 5, || panic!("deliberate")),
            ncclResult_t::ncclInternalError
        );
        // The guard depth is restored after a panic.
        assert_eq!(IN_PLUGIN.with(|d| d.get()), 0);
        // Each failure is logged, with the function and the table version, even though no init
        // installed a logger.
        crate::testlog::expect("remote (ncclNet v12): gone");
        crate::testlog::expect("internal error at src/export/guard.rs");
        crate::testlog::expect("boom (ncclTuner v5): internal error (deliberate); returning ncclInternalError");
    }
}
