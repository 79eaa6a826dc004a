//! `mpquic-netem` started as a process with bad input: one line on stderr naming the option or the file
//! entry, the value and what is valid, and exit code 2. No datagram is sent.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::process::Command;

const NETEM: &str = env!("CARGO_BIN_EXE_mpquic-netem");

/// Runs the binary with `args`; expects exit code 2 and one line on stderr, and returns it.
fn usage_error(args: &[&str]) -> String {
    let out = Command::new(NETEM).args(args).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: one line expected: {err}"
    );
    err
}

fn with_path(spec: &str, extra: &[&'static str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "--server",
        "127.0.0.1:9",
        "--listen",
        "127.0.0.1:0",
        "--path",
        spec,
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    v.extend(extra.iter().map(|s| (*s).to_owned()));
    v
}

fn run(args: &[String]) -> String {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    usage_error(&args)
}

#[test]
fn duplicate_and_empty_items_of_a_path_spec_are_errors() {
    let e = run(&with_path("rate=40mbit,rate=20mbit", &[]));
    assert!(
        e.contains("rate is given twice (rate=40mbit and rate=20mbit)"),
        "{e}"
    );
    let e = run(&with_path("rate=40mbit,up.delay=1ms,uplink.delay=2ms", &[]));
    assert!(e.contains("uplink.delay is given twice"), "{e}");
    let e = run(&with_path("rate=40mbit,,delay=1ms", &[]));
    assert!(e.contains("setting 2 is empty"), "{e}");
    let e = run(&with_path("rate=40mbit,delay=1ms,", &[]));
    assert!(e.contains("setting 3 is empty"), "{e}");
}

#[test]
fn absurd_values_are_errors_naming_the_range() {
    let e = run(&with_path("rate=40mbit,delay=99999999s", &[]));
    assert!(
        e.contains("`delay` = 99999999s: a one-way delay from 0 to 1 hour"),
        "{e}"
    );
    let e = run(&with_path(
        "rate=40mbit,delay=1ms",
        &["--overhead", "99999999999"],
    ));
    assert!(
        e.contains("invalid value '99999999999' for '--overhead <BYTES>'") && e.contains("0 to 65535"),
        "{e}"
    );
    let e = run(&with_path("rate=40mbit,delay=1ms", &["--duration", "99999999s"]));
    assert!(e.contains("--duration") && e.contains("at most a year"), "{e}");
}

#[test]
fn negative_numbers_name_their_option() {
    for (option, value, expected) in [
        ("--seed", "-1", "0 to 18446744073709551615"),
        ("--overhead", "-1", "0 to 65535"),
        ("--interval", "-1", "0.001 and 86400"),
        ("--duration", "-5s", "ns, us, ms, s"),
        ("--down", "-1@1s", "PATH@TIME"),
    ] {
        let e = run(&with_path("rate=40mbit,delay=1ms", &[option, value]));
        assert!(
            e.contains(&format!("invalid value '{value}' for '{option}")) && e.contains(expected),
            "{option} {value}: {e}"
        );
    }
}

#[test]
fn a_config_event_on_a_missing_path_blames_the_file_entry() {
    let dir = std::env::temp_dir().join(format!("mpquic-netem-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("one-path.toml");
    std::fs::write(
        &file,
        "server = \"127.0.0.1:9\"\n[[paths]]\nlink = { rate_bps = 1_000_000, delay = \"1ms\" }\n\
         [[events]]\nat = \"1s\"\npath = 0\naction = \"down\"\n\
         [[events]]\nat = \"2s\"\npath = 3\naction = \"down\"\n",
    )
    .unwrap();
    let name = file.to_str().unwrap();
    let e = usage_error(&["--config", name, "--listen", "127.0.0.1:0"]);
    assert!(
        e.contains(&format!(
            "{name}: events[1].path: no path 3: paths are numbered 0 to 0"
        )),
        "{e}"
    );
    assert!(!e.contains("--down"), "{e}");
    // The same mistake on the command line names the option.
    let e = usage_error(&["--config", name, "--listen", "127.0.0.1:0", "--up", "5@1s"]);
    assert!(e.contains("events[1].path"), "the file is checked first: {e}");
    std::fs::remove_dir_all(&dir).unwrap();
    let e = run(&with_path("rate=1mbit,delay=1ms", &["--down", "2@1s"]));
    assert!(
        e.contains("--down 2@1s: no path 2: paths are numbered 0 to 0"),
        "{e}"
    );
}
