//! `mpquic-interop`: a multipath QUIC interop runner.
//!
//! Two halves, one binary:
//! - **endpoints** ([`endpoint`]): mpquic, noq 1.4 and quinn 0.11 as HTTP/0.9 (`hq-interop`) clients and
//!   servers that follow the quic-interop-runner conventions (`ROLE`, `TESTCASE`, `REQUESTS`, www and downloads
//!   directories, certificates, exit code 127 for an unsupported test case) plus a few documented extras for
//!   a loopback setting ([`env`]). They print `interop:` summary lines ([`report`]) that the runner checks.
//! - the **runner** ([`runner`]): for each client × server × test case ([`cases`]) it prepares files and
//!   certificates, puts the network in between where the case needs one ([`runner::network`]: the in-process
//!   `mpquic-netem` emulator, or a port-rebinding relay), starts both endpoints as child processes (built-in ones
//!   through this binary, external ones from TOML command templates, [`runner::implementations`]), checks the
//!   downloaded files by SHA-256 and the behaviour from the endpoints' summary lines and the emulator's
//!   counters, and prints a matrix ([`runner::matrix`]) with ✓ / ✗ / unsupported, plus JSON and a log folder.
//!
//! `interop/README.md` documents every test case and how to add an external implementation.

pub mod cases;
pub mod clock;
pub mod endpoint;
pub mod env;
pub mod error;
pub mod hq;
pub mod report;
pub mod runner;

pub use cases::TestCase;
pub use error::InteropError;
