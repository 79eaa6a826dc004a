//! `mpquic-demo` with out-of-range numbers: one line naming the option, the value and the range, exit code 2,
//! before anything starts.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::process::Command;

#[test]
fn out_of_range_numbers_name_the_option() {
    for (args, expected) in [
        (
            &["-P", "-1"][..],
            "invalid value '-1' for '--parallel <N>': expected an integer from 1 to 100",
        ),
        (&["-t", "-5"][..], "invalid value '-5' for '--time <SECS>'"),
        (&["--link", "40mbit/9999s"][..], "`delay` = 4999500ms"),
        (&["--link", "1mbit/0"][..], "the RTT must be more than 0"),
        (&["--link", "2000gbit/10ms"][..], "from 1 to 10^12"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_mpquic-demo"))
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
}
