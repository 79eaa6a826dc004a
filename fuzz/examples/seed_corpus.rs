//! Writes the seed corpus of every fuzz target, made from real traffic (see `mpquic_fuzz::seeds`), to
//! `DIR/TARGET/seed-HASH` (default `DIR`: `fuzz/corpus`). Existing files are kept; run `cargo fuzz cmin` on
//! a target afterwards to minimise its corpus.
//!
//! `cargo run -p mpquic-fuzz --example seed_corpus [-- DIR]`

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args_os().nth(1).map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus"),
        PathBuf::from,
    );
    let seeds = mpquic_fuzz::seeds::generate().ok_or("the real exchange could not be run")?;
    for (target, inputs) in &seeds {
        let d = dir.join(target);
        std::fs::create_dir_all(&d)?;
        for data in inputs {
            std::fs::write(d.join(format!("seed-{:016x}", fnv1a(data))), data)?;
        }
        println!("{target}: {} seeds", inputs.len());
    }
    Ok(())
}

/// FNV-1a, for stable file names.
fn fnv1a(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}
