//! tcpxr's init line names the table NCCL called it through, so a user's log shows which ABI an
//! NCCL took even where that NCCL does not say (2.12 prints no "Loaded net plugin" line). Each
//! table's first init runs in a child process (the first init of a process is the one that logs),
//! with INFO records let through (`TCPXR_LOG=info`, as NCCL_DEBUG=INFO would).
mod common;
use common::*;

const CASE_VAR: &str = "TCPXR_TABLE_VERSION_CASE";

before_main! {
    run_child_case(CASE_VAR, |table| {
        let r = match table {
            "v5" => v5().init(),
            "v12" => v12().init(),
            other => panic!("unknown table {other}"),
        };
        assert_eq!(r, OK);
    });
}

#[test]
fn init_names_the_table_nccl_called() {
    for table in ["v5", "v12"] {
        let status = child_case(CASE_VAR, table).env("TCPXR_LOG", "info").status().unwrap();
        assert!(status.success(), "{table}: {status}");
        let line = expect_log(&format!("NCCL called ncclNetPlugin_{table}"));
        assert!(line.contains("transport socket"), "{line}");
    }
}
