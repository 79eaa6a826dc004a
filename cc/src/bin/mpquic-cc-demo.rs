//! `mpquic-cc-demo`: prints the per-path window evolution of a controller on a synthetic two-path trace.
//! (Filled in once the registry exists.)

fn main() {}
