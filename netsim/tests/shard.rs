//! Sharded sweeps and studies (`--shard K/N`, `merge`): a sweep run as 3 shards and merged prints the same
//! bytes as the unsharded run (JSON and table); a study run as 3 shards and merged writes the same
//! `results.json`, plots and tables; incomplete or mixed shards and bad `--shard` values are refused.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn sim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mpquic-sim"))
}

fn run(args: &[&str]) -> Output {
    let out = sim().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "mpquic-sim {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mpquic-sim-shard-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The quick loss sweep, shortened to 1 s at 10 Mbit/s: 4 loss rates × 3 controllers × 1 seed = 12 runs.
fn small_sweep(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(format!(
        "{}/scenarios/loss_sweep_quick.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
    .replace(r#"duration = "5s""#, r#"duration = "1s""#)
    .replace("rate_bps = 100_000_000", "rate_bps = 10_000_000");
    assert!(text.contains(r#"duration = "1s""#) && text.contains("rate_bps = 10_000_000"));
    let file = dir.join("small_sweep.toml");
    std::fs::write(&file, text).unwrap();
    file
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_sweep_in_three_shards_merges_to_the_unsharded_bytes() {
    let dir = temp("sweep");
    let file = small_sweep(&dir);
    let whole = run(&["sweep", s(&file), "--json"]);
    let whole_json = String::from_utf8(whole.stdout).unwrap();
    // stderr is not a terminal here: one plain progress line per finished run, with the count and the time.
    let progress = String::from_utf8(whole.stderr).unwrap();
    for k in 1..=12 {
        assert!(
            progress.contains(&format!("small_sweep.toml: {k}/12 runs done, ")),
            "run {k}: {progress}"
        );
    }
    assert!(progress.contains("s elapsed, about "), "{progress}");
    let whole_table = run(&["sweep", s(&file)]).stdout;
    let shards = dir.join("shards");
    for k in 1..=3 {
        let out = run(&[
            "sweep",
            s(&file),
            "--shard",
            &format!("{k}/3"),
            "--out",
            s(&shards),
        ]);
        let printed = String::from_utf8(out.stdout).unwrap();
        assert!(
            printed.trim_end().ends_with(&format!("shard-{k}-of-3.json")),
            "{printed}"
        );
    }
    // Shard k holds runs k-1, k-1+3, ...: 4 runs each.
    let one: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(shards.join("shard-2-of-3.json")).unwrap()).unwrap();
    let indices: Vec<u64> = one["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indices, [1, 4, 7, 10]);
    assert_eq!(one["total"], 12);
    let merged_json = run(&["merge", s(&shards), "--json"]).stdout;
    assert!(!whole_json.is_empty());
    assert_eq!(String::from_utf8(merged_json).unwrap(), whole_json);
    let merged_table = run(&["merge", s(&shards)]).stdout;
    assert_eq!(
        String::from_utf8(merged_table).unwrap(),
        String::from_utf8(whole_table).unwrap()
    );
    // Shards from different machines: one directory each, merged by naming them all.
    let nodes: Vec<PathBuf> = (1..=3).map(|k| dir.join(format!("node{k}"))).collect();
    for (k, node) in (1..=3).zip(&nodes) {
        std::fs::create_dir_all(node).unwrap();
        let name = format!("shard-{k}-of-3.json");
        std::fs::copy(shards.join(&name), node.join(&name)).unwrap();
    }
    let merged_nodes = run(&["merge", s(&nodes[0]), s(&nodes[1]), s(&nodes[2]), "--json"]).stdout;
    assert_eq!(String::from_utf8(merged_nodes).unwrap(), whole_json);

    // A missing shard is named.
    let partial = dir.join("partial");
    std::fs::create_dir_all(&partial).unwrap();
    for k in [1, 3] {
        let name = format!("shard-{k}-of-3.json");
        std::fs::copy(shards.join(&name), partial.join(&name)).unwrap();
    }
    let out = sim().args(["merge", s(&partial)]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("missing shard(s) 2/3"), "{err}");

    // Shards of an edited file are not merged with the others.
    let edited = dir.join("edited");
    std::fs::write(
        &file,
        std::fs::read_to_string(&file)
            .unwrap()
            .replace("seeds = [1]", "seeds = [2]"),
    )
    .unwrap();
    run(&["sweep", s(&file), "--shard", "2/3", "--out", s(&edited)]);
    for k in [1, 3] {
        let name = format!("shard-{k}-of-3.json");
        std::fs::copy(shards.join(&name), edited.join(&name)).unwrap();
    }
    let out = sim().args(["merge", s(&edited)]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("not shards of the same run"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_shard_options_are_one_line_usage_errors() {
    for (args, words) in [
        (
            vec!["sweep", "x.toml", "--shard", "4/3", "--out", "d"],
            "1 <= K <= N <= 10000",
        ),
        (vec!["sweep", "x.toml", "--shard", "0/3", "--out", "d"], "K/N"),
        (vec!["sweep", "x.toml", "--shard", "two", "--out", "d"], "K/N"),
        (vec!["sweep", "x.toml", "--shard", "1/3"], "--out"),
        (vec!["study", "a", "--shard", "1/0"], "K/N"),
    ] {
        let out = sim().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("mpquic-sim: ") && err.contains(words),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_study_in_three_shards_merges_to_the_unsharded_report() {
    let dir = temp("study");
    let studies = dir.join("studies");
    std::fs::create_dir_all(&studies).unwrap();
    small_sweep(&studies);
    // Two parts over the same sweep: one with two loss rates and two seeds, plotted (the first seed of each of
    // its 2 × 3 settings), and one with two other loss rates, one seed and no plots: 12 + 6 = 18 runs.
    std::fs::write(
        studies.join("tiny.study.toml"),
        r#"[study]
name = "tiny"
title = "Tiny: loss on one path"
claim = "A test study."

[[parts]]
name = "plotted"
scenario = "small_sweep.toml"
set = { "sweep.values" = [0.0, 0.2], "sweep.seeds" = [1, 2] }

[[parts]]
name = "table"
scenario = "small_sweep.toml"
plots = false
set = { "sweep.values" = [0.0, 0.05] }
"#,
    )
    .unwrap();
    let whole = dir.join("whole");
    let sharded = dir.join("sharded");
    run(&[
        "study",
        "tiny",
        "--dir",
        s(&studies),
        "--out",
        s(&whole),
        "--jobs",
        "1",
    ]);
    for k in 1..=3 {
        run(&[
            "study",
            "tiny",
            "--dir",
            s(&studies),
            "--out",
            s(&sharded),
            "--jobs",
            "1",
            "--shard",
            &format!("{k}/3"),
        ]);
    }
    let out = run(&["merge", s(&sharded.join("tiny")), "--out", s(&sharded)]);
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("18 runs merged from 3 shards"),
    );
    let read = |root: &Path, rel: &str| std::fs::read(root.join("tiny").join(rel)).unwrap();
    assert_eq!(read(&whole, "results.json"), read(&sharded, "results.json"));
    // The report is the same but for the line with the command and the wall time.
    let report = |root: &Path| {
        String::from_utf8(read(root, "report.md"))
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("Variant:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(report(&whole), report(&sharded));
    // The reproduce command names the study as the command line did: by name with its `--dir`, or by the
    // manifest's path.
    let variant = |root: &Path| {
        String::from_utf8(read(root, "report.md"))
            .unwrap()
            .lines()
            .find(|l| l.starts_with("Variant:"))
            .unwrap()
            .to_string()
    };
    let by_name = format!("command: `mpquic-sim study tiny --dir {}`", studies.display());
    assert!(variant(&whole).contains(&by_name), "{}", variant(&whole));
    // The merge knows the manifest the shards ran, not how they were started: it names it by its path.
    let manifest = studies.join("tiny.study.toml");
    let merged_command = format!(
        "command: `mpquic-sim study {} --shard K/3 (K = 1 … 3), then mpquic-sim merge`",
        manifest.display()
    );
    assert!(
        variant(&sharded).contains(&merged_command),
        "{}",
        variant(&sharded)
    );
    let by_path = dir.join("by_path");
    run(&["study", s(&manifest), "--out", s(&by_path), "--jobs", "1"]);
    let by_path_command = format!("command: `mpquic-sim study {}`", manifest.display());
    assert!(
        variant(&by_path).contains(&by_path_command),
        "{}",
        variant(&by_path)
    );
    assert_eq!(read(&whole, "results.json"), read(&by_path, "results.json"));
    // Every other file: the plots of the first seeds (written by the shards that ran them) and the summary
    // charts (by the merge); the shard files are the only extra ones.
    let whole_files = files(&whole.join("tiny"));
    let sharded_files: Vec<PathBuf> = files(&sharded.join("tiny"))
        .into_iter()
        .filter(|f| !f.to_str().unwrap().starts_with("shard-"))
        .collect();
    assert_eq!(whole_files, sharded_files);
    let plots = whole_files
        .iter()
        .filter(|f| f.ends_with("throughput.svg"))
        .count();
    assert_eq!(plots, 6, "{whole_files:?}");
    for rel in &whole_files {
        if rel.to_str() != Some("report.md") {
            assert!(
                read(&whole, rel.to_str().unwrap()) == read(&sharded, rel.to_str().unwrap()),
                "{rel:?}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The files under `root`, relative to it, sorted.
fn files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(root).unwrap().to_owned());
            }
        }
    }
    out.sort();
    out
}
