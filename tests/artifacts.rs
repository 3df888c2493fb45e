//! What users and NCCL see of the build: the exported symbols and the C header.
mod common;
use std::process::Command;

#[test]
fn the_library_exports_every_net_table_from_v5_to_v12_tuner_from_v1_to_v6_the_rma_table_and_nothing_unexpected() {
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(common::library_path())
        .output()
        .expect("run nm");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let names: Vec<&str> = text.lines().filter_map(|l| l.split_whitespace().nth(2)).collect();
    for v in 5..=12 {
        assert!(
            names.contains(&format!("ncclNetPlugin_v{v}").as_str()),
            "ncclNetPlugin_v{v} missing: {names:?}"
        );
    }
    for v in 1..=6 {
        assert!(
            names.contains(&format!("ncclTunerPlugin_v{v}").as_str()),
            "ncclTunerPlugin_v{v} missing: {names:?}"
        );
    }
    for v in 14..=17 {
        assert!(
            names.contains(&format!("ncclRmaPlugin_v{v}").as_str()),
            "ncclRmaPlugin_v{v} missing: {names:?}"
        );
    }
    for n in &names {
        assert!(
            n.starts_with("ncclNetPlugin_v")
                || n.starts_with("ncclTunerPlugin_v")
                || n.starts_with("ncclRmaPlugin_v")
                || n.starts_with("tcpxr_"),
            "unexpected export {n}"
        );
    }
}

#[test]
fn the_library_is_named_as_nccl_looks_for_it_and_is_never_unloaded() {
    let lib = common::library_path();
    assert_eq!(lib.file_name().unwrap(), "libnccl-net-tcpxr.so");
    let out = Command::new("readelf")
        .arg("-d")
        .arg(&lib)
        .output()
        .expect("run readelf");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("NODELETE"),
        "NCCL >= 2.28 dlcloses plugins; tcpxr must stay mapped:\n{text}"
    );
    assert!(!text.contains("libcuda"), "CUDA is loaded at run time, never linked");
}

/// NCCL calls every slot of the table it takes and treats a NULL one as "not supported": each
/// exported net table, read as the words NCCL reads, has its name and a function in every slot
/// except regMrDmaBuf (v6+), which tcpxr leaves NULL (it registers no dma-buf).
#[test]
fn every_slot_of_every_exported_net_table_is_a_function_except_reg_mr_dma_buf() {
    use nccl_net_tcpxr::abi::*;
    use std::mem::{offset_of, size_of};
    /// The indices of the table's NULL words (word 0 is the name).
    fn null_slots<T: 'static>(symbol: &str) -> Vec<usize> {
        let t: &T = common::table(symbol);
        // SAFETY: the table is a repr(C) struct of pointer-sized fields (a name and function
        // slots), readable for its whole size.
        let words = unsafe { std::slice::from_raw_parts(t as *const T as *const usize, size_of::<T>() / 8) };
        words
            .iter()
            .enumerate()
            .filter(|(_, w)| **w == 0)
            .map(|(i, _)| i)
            .collect()
    }
    assert_eq!(null_slots::<ncclNet_v5_t>("ncclNetPlugin_v5"), Vec::<usize>::new());
    macro_rules! only_dma_buf_is_null {
        ($($t:ty, $symbol:literal);*) => {$(
            assert_eq!(
                null_slots::<$t>($symbol),
                [offset_of!($t, regMrDmaBuf) / 8],
                "{}", $symbol
            );
        )*};
    }
    only_dma_buf_is_null!(
        ncclNet_v6_t, "ncclNetPlugin_v6";
        ncclNet_v7_t, "ncclNetPlugin_v7";
        ncclNet_v8_t, "ncclNetPlugin_v8";
        ncclNet_v9_t, "ncclNetPlugin_v9";
        ncclNet_v10_t, "ncclNetPlugin_v10";
        ncclNet_v11_t, "ncclNetPlugin_v11";
        ncclNet_v12_t, "ncclNetPlugin_v12"
    );
}

fn compile_header(compiler: &str, args: &[&str]) {
    let dir = std::env::temp_dir().join(format!("tcpxr-header-{}-{compiler}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("use.c");
    std::fs::write(
        &src,
        "#include \"tcpxr.h\"\n\
         int main(void) {\n\
           const ncclNet_v12_t *t = tcpxr_net_v12();\n\
           return (t == &ncclNetPlugin_v12 && tcpxr_version_code() > 0 && sizeof(ncclNet_v5_t) == 128) ? 0 : 1;\n\
         }\n",
    )
    .unwrap();
    let include = concat!(env!("CARGO_MANIFEST_DIR"), "/include");
    let status = Command::new(compiler)
        .args(args)
        .arg(format!("-I{include}"))
        .arg("-fsyntax-only")
        .arg(&src)
        .status()
        .unwrap_or_else(|e| panic!("{compiler} not runnable: {e}"));
    assert!(
        status.success(),
        "include/tcpxr.h does not compile with {compiler} {args:?}"
    );
}

#[test]
fn the_c_header_compiles_as_c99() {
    compile_header("cc", &["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror"]);
}

#[test]
fn the_c_header_compiles_as_cpp() {
    compile_header("c++", &["-x", "c++", "-std=c++11", "-Wall", "-Werror"]);
}

#[test]
fn the_readme_documents_every_configuration_variable() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    for p in nccl_net_tcpxr::config::PARAMS {
        assert!(
            readme.contains(&format!("`{}`", p.name)),
            "README.md does not document {}",
            p.name
        );
    }
}

/// The library writes the process environment in one place, src/env.rs, whose rules say when that
/// is safe (first init, unset variables only) and how (a new array published with one store, not
/// setenv); no other module of the library may call `set_var`, `remove_var`, libc's
/// `setenv`/`unsetenv`/`putenv` or store `environ`. tcpxr-bench (src/bin) is a program of its own
/// and sets its variables before it starts tcpxr.
#[test]
fn the_library_writes_the_environment_only_through_src_env_rs() {
    let writers = [
        "set_var(",
        "remove_var(",
        "setenv(",
        "unsetenv(",
        "putenv(",
        "addr_of_mut!(environ",
    ];
    let found = library_lines_calling(&writers, &["env.rs"]);
    assert!(
        found.is_empty(),
        "environment written outside src/env.rs:\n{}",
        found.join("\n")
    );
    let src = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"));
    let env = std::fs::read_to_string(src.join("env.rs")).unwrap();
    // It publishes whole arrays with one store rather than calling setenv (env.rs says why).
    assert!(env.contains("addr_of_mut!(environ)") && !env.contains("std::env::set_var("));
}

/// The lines of the library's sources (src/, less tcpxr-bench's src/bin and the files `except`,
/// relative to src/) whose code, comments aside, contains one of `calls`: "src/file:line: text".
fn library_lines_calling(calls: &[&str], except: &[&str]) -> Vec<String> {
    fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                rust_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let src = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"));
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut found = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(src).unwrap();
        if rel.starts_with("bin") || except.iter().any(|e| rel == std::path::Path::new(e)) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap();
            if calls.iter().any(|c| code.contains(c)) {
                found.push(format!("src/{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    found
}

/// A write on a socket whose peer is gone raises SIGPIPE unless it passes MSG_NOSIGNAL, and
/// SIGPIPE's default action ends a C host process (tests/faults.rs shows it). std's `write` on a
/// TcpStream passes the flag; `write_vectored` (a writev) and libc's write calls cannot. So the
/// library's own socket writes go through net/sys.rs's sendmsg, which passes it; the one raw
/// write left is epoll.rs's, to an eventfd, which raises no signal.
#[test]
fn the_library_writes_sockets_only_in_ways_that_raise_no_sigpipe() {
    let raw = [
        "write_vectored(",
        "write_all_vectored(",
        "writev(",
        "libc::write(",
        "libc::send",
    ];
    let found = library_lines_calling(&raw, &["net/sys.rs", "transport/socket/epoll.rs"]);
    assert!(
        found.is_empty(),
        "socket writes that can raise SIGPIPE (use net::sys::send_iov, or std's write):\n{}",
        found.join("\n")
    );
    let src = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"));
    let sys = std::fs::read_to_string(src.join("net/sys.rs")).unwrap();
    let sends: Vec<&str> = sys.lines().filter(|l| l.contains("libc::send")).collect();
    assert!(
        !sends.is_empty() && sends.iter().all(|l| l.contains("MSG_NOSIGNAL")),
        "net/sys.rs's sends: {sends:?}"
    );
    let epoll = std::fs::read_to_string(src.join("transport/socket/epoll.rs")).unwrap();
    let writes: Vec<&str> = epoll.lines().filter(|l| l.contains("libc::write(")).collect();
    assert!(
        writes.len() == 1 && epoll.contains("libc::eventfd("),
        "epoll.rs's raw writes are its eventfd's: {writes:?}"
    );
}

fn bench(args: &[&str]) -> std::process::Output {
    common::bench_command()
        .args(args)
        .env("TCPXR_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run tcpxr-bench")
}

#[test]
fn the_bench_refuses_unknown_flags_and_bad_values_with_a_message_and_exit_code_2() {
    for (args, named) in [
        (&["--bogus"][..], "--bogus"),
        (&["--sizes", "abc"], "abc"),
        (&["--stripes", "abc"], "abc"),
        (&["--stripes", "0"], "--stripes"),
        (&["--seconds", "-1"], "-1"),
        (&["--seconds", "nan"], "nan"),
        (&["--sizes", "8K:4K"], "8K:4K"),
        (&["--sizes", "2G"], "2G"),
        (&["--sizes"], "--sizes"),
        (&["stray"], "stray"),
        (&["--no-baseline=yes"], "--no-baseline"),
        (
            &["--csv", "/nonexistent/dir/out.csv", "--sizes", "4K"],
            "/nonexistent/dir/out.csv",
        ),
        (&["latency", "--bogus"], "--bogus"),
        (&["nccl", "--comms", "0"], "--comms"),
        (&["latency", "--iters", "0"], "--iters"),
        (&["latency", "--ahead", "9"], "--ahead"),
        (&["gpu", "--mib", "lots"], "lots"),
        (&["interference", "--cycles", "-3"], "-3"),
        (&["interference", "--buffers", "disk"], "disk"),
        (&["peer", "--role", "both"], "both"),
        (&["peer", "--role", "send"], "--handle"),
        (&["peer", "--role", "send", "--handle", "12"], "--handle"),
    ] {
        let out = bench(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: exit code; stderr:\n{err}");
        assert!(
            err.contains(named),
            "{args:?}: the message does not name {named}:\n{err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: a panic on user input:\n{err}");
        assert!(out.stdout.is_empty(), "{args:?}: it ran anyway");
    }
}

/// `--seconds` is each point's measured time, small messages included: before, the message count
/// was estimated once from a probe of a few messages (dominated by thread wake-ups and the inline
/// path of an idle comm) and capped at 200000, so small sizes ran several times shorter or longer.
/// The bench's own figure is checked against time that passed (it cannot report time it did not
/// spend), and the seconds reported are those asked, give or take what a loaded host adds.
#[test]
fn the_bench_measures_each_size_for_the_seconds_asked() {
    use std::io::BufRead;
    let seconds = 0.2;
    let started = std::time::Instant::now();
    let mut child = common::bench_command()
        .args([
            "--sizes",
            "1K:64K",
            "--stripes",
            "1",
            "--seconds",
            &seconds.to_string(),
            "--no-baseline",
        ])
        .env("TCPXR_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run tcpxr-bench");
    // Each line with the moment it arrived.
    let lines: Vec<(std::time::Instant, String)> = std::io::BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map(|l| (std::time::Instant::now(), l.unwrap()))
        .collect();
    let status = child.wait().unwrap();
    let err: String = lines.iter().map(|(_, l)| format!("{l}\n")).collect();
    assert!(status.success(), "{err}");
    let points: Vec<(std::time::Instant, f64)> = lines
        .iter()
        .filter_map(|(at, l)| {
            let secs = l
                .split_once(" messages in ")?
                .1
                .split_once(" s ")?
                .0
                .trim()
                .parse()
                .ok()?;
            Some((*at, secs))
        })
        .collect();
    assert_eq!(points.len(), 7, "one point per size 1K..64K:\n{err}");
    // The points run one after the other, each measuring inside its own stretch of time: by the
    // arrival of point i, at least the sum of the seconds reported so far has passed (each
    // printed to the millisecond).
    let mut reported = 0.0;
    for (i, (at, t)) in points.into_iter().enumerate() {
        reported += t;
        let wall = at.duration_since(started).as_secs_f64();
        assert!(
            wall >= reported - 0.001 * (i + 1) as f64,
            "points 0-{i} report {reported:.3} s measured but only {wall:.3} s passed:\n{err}"
        );
        // The upper bound leaves room for a loaded host.
        assert!(
            (seconds * 0.99..=seconds * 3.0).contains(&t),
            "a point ran {t} s for {seconds} s asked:\n{err}"
        );
    }
}

/// The NCCL-shaped mode moves real data through tcpxr and then, unless told not to, the same
/// message size over plain TCP, each row with its rate per busy core.
#[test]
fn the_nccl_mode_reports_tcpxr_beside_plain_tcp_unless_told_not_to() {
    let rows = |extra: &[&str]| {
        let mut args = vec!["nccl", "--comms", "1", "--sizes", "64K", "--seconds", "0.1"];
        args.extend_from_slice(extra);
        let out = bench(&args);
        let (stdout, err) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "{stdout}{err}");
        stdout
            .lines()
            .filter(|l| l.trim_start().starts_with("64 KiB"))
            .map(|l| l.split_whitespace().skip(2).map(str::to_owned).collect::<Vec<_>>())
            .collect::<Vec<_>>()
    };
    let both = rows(&[]);
    assert_eq!(both.len(), 2, "a tcpxr row and a plain TCP row: {both:?}");
    assert_eq!(both[0][0], "tcpxr");
    assert!(both[1][0].starts_with("tcp-x"), "{both:?}");
    for row in &both {
        let gbps: f64 = row[1].parse().unwrap();
        let per_core: f64 = row[3].parse().unwrap();
        assert!(gbps > 0.0 && per_core > 0.0, "nothing moved: {row:?}");
    }
    assert_eq!(rows(&["--no-baseline"]).len(), 1, "--no-baseline leaves plain TCP out");
}
