//! Replays every committed input through the target functions on the stable toolchain: the seed and
//! minimised corpus (`fuzz/corpus/TARGET/`) and the inputs that once crashed (`fuzz/artifacts/TARGET/`).
//! A target that panics on any of them fails the test, naming the file.

// The helpers outside `#[test]` functions report failures by panicking, like the tests themselves.
#![allow(clippy::panic)]

use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .is_some_and(|n| !n.to_string_lossy().starts_with('.'))
        })
        .collect();
    v.sort();
    v
}

fn replay(target: &str, run: fn(&[u8]), dir: &Path) -> usize {
    let inputs = files(dir);
    for path in &inputs {
        let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let result = std::panic::catch_unwind(|| run(&data));
        assert!(result.is_ok(), "target {target} fails on {}", path.display());
    }
    inputs.len()
}

#[test]
fn every_target_replays_its_corpus_and_artifacts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (name, run) in mpquic_fuzz::TARGETS {
        let corpus = replay(name, *run, &root.join("corpus").join(name));
        assert!(corpus > 0, "target {name} has no corpus in fuzz/corpus/{name}/");
        replay(name, *run, &root.join("artifacts").join(name));
    }
}

#[test]
fn every_target_has_a_libfuzzer_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    for (name, _) in mpquic_fuzz::TARGETS {
        let bin = root.join("fuzz_targets").join(format!("{name}.rs"));
        assert!(bin.is_file(), "fuzz_targets/{name}.rs is missing");
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "no [[bin]] {name} in fuzz/Cargo.toml"
        );
    }
}

/// A few thousand pseudo-random inputs through every target (xorshift, fixed seed): a quick check that the
/// targets' own properties hold on inputs the corpus does not cover.
#[test]
fn targets_hold_on_pseudo_random_inputs() {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for (name, run) in mpquic_fuzz::TARGETS {
        let cases = if *name == "connection" || *name == "endpoint" {
            40
        } else {
            1000
        };
        for case in 0..cases {
            let len = (next() % 600) as usize;
            let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let result = std::panic::catch_unwind(|| run(&data));
            assert!(
                result.is_ok(),
                "target {name} fails on pseudo-random case {case}: {data:02x?}"
            );
        }
    }
}

/// The whole-connection targets really reach an established connection (and a second path): otherwise they
/// would silently fuzz nothing.
#[test]
fn the_connection_target_reaches_an_established_multipath_connection() {
    use mpquic_fuzz::connection::{OPEN_STREAM, SECOND_PATH, established};
    assert!(mpquic_fuzz::pair::configs().is_some());
    let mut p = established(SECOND_PATH | OPEN_STREAM).expect("established");
    let c = p.client.first_conn().expect("client connection");
    assert!(c.paths().len() >= 2, "paths: {:?}", c.paths());
    let mut buf = Vec::new();
    // A PING sealed by the client is accepted by the server.
    let before = p
        .server
        .first_conn()
        .expect("server connection")
        .stats()
        .packets_received;
    c.seal_one_rtt_for_fuzzing(mpquic::cc::PathId(0), &[0x01], &mut buf)
        .expect("sealed");
    let now = p.now;
    let _ = p.server.receive(
        now,
        mpquic_fuzz::pair::SERVER,
        mpquic_fuzz::pair::CLIENT,
        None,
        &mut buf,
        false,
    );
    let after = p
        .server
        .first_conn()
        .expect("server connection")
        .stats()
        .packets_received;
    assert_eq!(after, before + 1);
}

/// The seed generator still runs the real exchange and makes seeds for every target, and each target
/// accepts its fresh seeds (the protocol may have changed since the committed corpus was made).
#[test]
fn fresh_seeds_cover_every_target_and_pass() {
    let seeds = mpquic_fuzz::seeds::generate().expect("the real exchange runs");
    for (name, run) in mpquic_fuzz::TARGETS {
        let inputs = seeds.get(name).map(Vec::as_slice).unwrap_or_default();
        assert!(!inputs.is_empty(), "no seeds for {name}");
        for data in inputs {
            let result = std::panic::catch_unwind(|| run(data));
            assert!(result.is_ok(), "target {name} fails on a fresh seed: {data:02x?}");
        }
    }
}

/// The hand-encoded seeds of every frame type decode, one frame each, and cover every known type.
#[test]
fn hand_encoded_seeds_cover_every_frame_type() {
    use mpquic::proto::frame::decode_frames;
    let mut seen = std::collections::BTreeSet::new();
    for bytes in mpquic_fuzz::seeds::EVERY_FRAME_TYPE {
        let frames: Vec<_> = decode_frames(bytes).collect();
        assert_eq!(frames.len(), 1, "{bytes:02x?}");
        match &frames[0] {
            Ok(f) => seen.insert(f.ty().0),
            Err(e) => panic!("{bytes:02x?}: {e:?}"),
        };
    }
    // 0x08–0x0f are STREAM (written back with the Length bit), 0x30 DATAGRAM likewise.
    let expected = [
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0a, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16,
        0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x31, 0x3e, 0x3f, 0x3e75, 0x3e76, 0x3e77, 0x3e78,
        0x3e79, 0x3e7a, 0x3e7b, 0x3e7c,
    ];
    for t in expected {
        assert!(seen.contains(&t), "no seed of frame type {t:#x}: {seen:x?}");
    }
}
