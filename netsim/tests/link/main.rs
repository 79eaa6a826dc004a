//! Tests of the link model, split by topic; `common` holds the shared helpers.
//!
//! Statistical tests use a fixed seed (override with `NETSIM_SEED`, printed on failure) and tolerances derived
//! from the sampling error, written next to each assertion. Set `PROPTEST_CASES` to run more property cases.

// Test helpers outside `#[test]` functions may panic on broken expectations.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;
mod config;
mod delay;
mod impair_state;
mod loss;
mod mtu;
mod properties;
mod queue;
