//! # mpquic-sched: which path carries the next packet
//!
//! (Under construction: see issue 3.)
