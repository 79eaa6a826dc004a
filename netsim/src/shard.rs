//! Sweeps and studies split over several processes or machines: shard `K/N` runs the runs whose position
//! `i` (expansion order, from 0) has `i mod N = K − 1`, and writes their results to `shard-K-of-N.json`;
//! [`collect`] reads the N shard files back, checks that they belong to the same input and cover every run
//! exactly once, and returns the runs in expansion order, from which the unsharded outputs (table, JSON,
//! report) are rebuilt unchanged.
//!
//! Every run is deterministic from its seed, so which process ran it does not matter. Taking every N-th run
//! (rather than N consecutive blocks) spreads the expensive settings of a sweep axis over all shards.
//!
//! A shard file names its input (the scenario file or study manifest), a fingerprint of the input's text (so
//! that shards of an edited file are not merged with older ones), the shard numbers and the run count.
//! Shard files are untrusted input: each is at most [`MAX_FILE_BYTES`], `N` is at most [`MAX_SHARDS`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::results::RunResult;
use crate::scenario::sweep::Setting;

/// The most shards a sweep or study is split into.
pub const MAX_SHARDS: usize = 10_000;
/// The largest shard file read (bytes).
pub const MAX_FILE_BYTES: u64 = 1 << 30;
/// The version of the shard file format.
pub const FORMAT: u32 = 1;

/// Why shards cannot be used.
#[derive(Debug, Error)]
pub enum ShardError {
    /// `--shard` is not `K/N` with 1 ≤ K ≤ N ≤ [`MAX_SHARDS`].
    #[error("--shard {0:?}: expected K/N with 1 <= K <= N <= {MAX_SHARDS}, e.g. 2/8")]
    Spec(String),
    /// A file or directory cannot be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A shard file is not one.
    #[error("{}: not a shard file: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The shards do not fit together.
    #[error("{message}")]
    Mismatch {
        /// What does not fit, naming the files.
        message: String,
    },
}

/// One slice of N: `k` from 1 to `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// This slice, 1 to `n`.
    pub k: usize,
    /// Number of slices, 1 to [`MAX_SHARDS`].
    pub n: usize,
}

impl Shard {
    /// Parses `K/N`.
    pub fn parse(s: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError::Spec(s.to_owned());
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k: usize = k.trim().parse().map_err(|_| bad())?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        if k == 0 || n == 0 || k > n || n > MAX_SHARDS {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }

    /// Whether the run at `position` (expansion order, from 0) belongs to this shard.
    pub fn takes(&self, position: usize) -> bool {
        self.n > 0 && position % self.n == self.k.saturating_sub(1)
    }

    /// `shard-K-of-N.json`.
    pub fn file_name(&self) -> String {
        format!("shard-{}-of-{}.json", self.k, self.n)
    }
}

/// What was sharded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `mpquic-sim sweep FILE`.
    Sweep,
    /// `mpquic-sim study NAME`.
    Study,
}

/// One run's results in a shard file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardRun {
    /// The part of a study (`None` for a sweep).
    pub part: Option<String>,
    /// Index within the sweep or the part (expansion order).
    pub index: usize,
    /// Position among all runs (expansion order over the parts), which decides the shard.
    pub position: usize,
    /// The values of the sweep axes.
    pub settings: Vec<Setting>,
    /// The seed.
    pub seed: u64,
    /// The results.
    pub result: RunResult,
    /// A study's run whose time series the shard plotted (the first seed of its setting).
    pub plotted: bool,
    /// A study's window statistics and phase goodputs, which the report needs from every run (the time
    /// series themselves stay in the shard); empty for a sweep.
    #[serde(default)]
    pub summary: crate::study::series::SeriesSummary,
}

/// A shard file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardFile {
    /// [`FORMAT`].
    pub format: u32,
    /// Sweep or study.
    pub kind: Kind,
    /// The scenario file or study manifest, as given on the command line.
    pub source: PathBuf,
    /// [`fingerprint`] of the input.
    pub fingerprint: String,
    /// The quick variant of a study.
    pub quick: bool,
    /// Which slice.
    pub shard: Shard,
    /// Runs in the whole sweep or study.
    pub total: usize,
    /// This slice's runs, in expansion order.
    pub runs: Vec<ShardRun>,
}

/// FNV-1a (64 bits) over the texts, each followed by a 0 byte, as 16 hex digits: tells edited inputs apart
/// (not a cryptographic hash).
pub fn fingerprint<'a>(texts: impl IntoIterator<Item = &'a [u8]>) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h = OFFSET;
    for text in texts {
        for &b in text.iter().chain(std::iter::once(&0u8)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(PRIME);
        }
    }
    format!("{h:016x}")
}

/// The fingerprint of a study: its manifest (and the one it extends), every part's scenario file and the
/// variant.
pub fn study_fingerprint(study: &crate::study::Study) -> Result<String, ShardError> {
    let mut texts = Vec::with_capacity(study.parts.len().saturating_add(3));
    let manifests = std::iter::once(&study.manifest).chain(&study.extends);
    for path in manifests.chain(study.parts.iter().map(|p| &p.file)) {
        texts.push(std::fs::read(path).map_err(|source| ShardError::Io {
            path: path.clone(),
            source,
        })?);
    }
    texts.push(if study.quick {
        b"quick".to_vec()
    } else {
        b"full".to_vec()
    });
    Ok(fingerprint(texts.iter().map(Vec::as_slice)))
}

impl ShardFile {
    /// Writes the file into `dir` (created if needed) as `shard-K-of-N.json`; returns its path.
    pub fn write(&self, dir: &Path) -> Result<PathBuf, ShardError> {
        std::fs::create_dir_all(dir).map_err(|source| ShardError::Io {
            path: dir.to_owned(),
            source,
        })?;
        let path = dir.join(self.shard.file_name());
        let text = serde_json::to_string_pretty(self).map_err(|e| ShardError::Parse {
            path: path.clone(),
            message: e.to_string(),
        })?;
        std::fs::write(&path, text).map_err(|source| ShardError::Io {
            path: path.clone(),
            source,
        })?;
        Ok(path)
    }

    /// Reads a shard file.
    pub fn read(path: &Path) -> Result<ShardFile, ShardError> {
        let io = |source| ShardError::Io {
            path: path.to_owned(),
            source,
        };
        let len = std::fs::metadata(path).map_err(io)?.len();
        if len > MAX_FILE_BYTES {
            return Err(ShardError::Parse {
                path: path.to_owned(),
                message: format!("{len} bytes, more than the {MAX_FILE_BYTES} a shard file may have"),
            });
        }
        let text = std::fs::read_to_string(path).map_err(io)?;
        let file: ShardFile = serde_json::from_str(&text).map_err(|e| ShardError::Parse {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        if file.format != FORMAT {
            return Err(ShardError::Parse {
                path: path.to_owned(),
                message: format!("format {} (this build reads {FORMAT})", file.format),
            });
        }
        if file.shard.k == 0 || file.shard.k > file.shard.n || file.shard.n > MAX_SHARDS {
            return Err(ShardError::Parse {
                path: path.to_owned(),
                message: format!("shard {}/{} out of range", file.shard.k, file.shard.n),
            });
        }
        Ok(file)
    }
}

/// The shard files (`shard-*-of-*.json`) directly in `dirs` (a file named directly is taken as one), sorted
/// by path.
pub fn find(dirs: &[PathBuf]) -> Result<Vec<PathBuf>, ShardError> {
    let mut files = Vec::new();
    for d in dirs {
        if d.is_file() {
            files.push(d.clone());
            continue;
        }
        let entries = std::fs::read_dir(d).map_err(|source| ShardError::Io {
            path: d.clone(),
            source,
        })?;
        for e in entries {
            let e = e.map_err(|source| ShardError::Io {
                path: d.clone(),
                source,
            })?;
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("shard-") && name.ends_with(".json") && name.contains("-of-") {
                files.push(e.path());
            }
            if files.len() > MAX_SHARDS {
                return Err(ShardError::Mismatch {
                    message: format!("more than {MAX_SHARDS} shard files in {}", d.display()),
                });
            }
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// Every run of the sharded sweep or study, in expansion order, with the description of the whole.
#[derive(Clone, Debug, PartialEq)]
pub struct Merged {
    /// Sweep or study.
    pub kind: Kind,
    /// The input file.
    pub source: PathBuf,
    /// Its fingerprint.
    pub fingerprint: String,
    /// The quick variant of a study.
    pub quick: bool,
    /// Number of shards.
    pub shards: usize,
    /// Every run, by position.
    pub runs: Vec<ShardRun>,
}

/// Reads the shard files in `dirs` and checks that they are the N shards of one input, each once, covering
/// every run once.
pub fn collect(dirs: &[PathBuf]) -> Result<Merged, ShardError> {
    let files = find(dirs)?;
    let Some(first_path) = files.first() else {
        return Err(ShardError::Mismatch {
            message: format!(
                "no shard files (shard-K-of-N.json) in {}",
                dirs.iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        });
    };
    let first = ShardFile::read(first_path)?;
    let mut seen: BTreeMap<usize, PathBuf> = BTreeMap::new();
    let mut runs: BTreeMap<usize, ShardRun> = BTreeMap::new();
    for path in &files {
        let f = if path == first_path {
            first.clone()
        } else {
            ShardFile::read(path)?
        };
        let differs = |what: &str, a: String, b: String| ShardError::Mismatch {
            message: format!(
                "{} and {} are not shards of the same run: {what} {a} vs {b}",
                first_path.display(),
                path.display()
            ),
        };
        if f.kind != first.kind {
            return Err(differs(
                "kind",
                format!("{:?}", first.kind),
                format!("{:?}", f.kind),
            ));
        }
        if f.fingerprint != first.fingerprint || f.source != first.source {
            return Err(differs(
                "input",
                format!("{} ({})", first.source.display(), first.fingerprint),
                format!("{} ({})", f.source.display(), f.fingerprint),
            ));
        }
        if f.quick != first.quick {
            return Err(differs("quick", first.quick.to_string(), f.quick.to_string()));
        }
        if f.shard.n != first.shard.n || f.total != first.total {
            return Err(differs(
                "shards/runs",
                format!("{}/{}", first.shard.n, first.total),
                format!("{}/{}", f.shard.n, f.total),
            ));
        }
        if let Some(other) = seen.insert(f.shard.k, path.clone()) {
            return Err(ShardError::Mismatch {
                message: format!(
                    "shard {}/{} twice: {} and {}",
                    f.shard.k,
                    f.shard.n,
                    other.display(),
                    path.display()
                ),
            });
        }
        for run in f.runs {
            if run.position >= f.total || !f.shard.takes(run.position) {
                return Err(ShardError::Mismatch {
                    message: format!(
                        "{}: run at position {} does not belong to shard {}/{} of {} runs",
                        path.display(),
                        run.position,
                        f.shard.k,
                        f.shard.n,
                        f.total
                    ),
                });
            }
            let position = run.position;
            if runs.insert(position, run).is_some() {
                return Err(ShardError::Mismatch {
                    message: format!("{}: run at position {position} twice", path.display()),
                });
            }
        }
    }
    let missing: Vec<String> = (1..=first.shard.n)
        .filter(|k| !seen.contains_key(k))
        .map(|k| format!("{k}/{}", first.shard.n))
        .collect();
    if !missing.is_empty() {
        return Err(ShardError::Mismatch {
            message: format!("missing shard(s) {}", missing.join(", ")),
        });
    }
    if runs.len() != first.total {
        return Err(ShardError::Mismatch {
            message: format!(
                "the shards hold {} of the {} runs (a shard stopped early?)",
                runs.len(),
                first.total
            ),
        });
    }
    Ok(Merged {
        kind: first.kind,
        source: first.source,
        fingerprint: first.fingerprint,
        quick: first.quick,
        shards: first.shard.n,
        runs: runs.into_values().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_specs_parse_and_are_checked() {
        assert_eq!(Shard::parse("2/8").unwrap(), Shard { k: 2, n: 8 });
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", "1/10001", "-1/3"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        assert!(
            Shard::parse("4/3")
                .unwrap_err()
                .to_string()
                .contains("1 <= K <= N <= 10000")
        );
    }

    #[test]
    fn shards_take_every_nth_run_and_cover_each_once() {
        // 10 runs over 3 shards: {0,3,6,9}, {1,4,7}, {2,5,8}.
        let take = |k| {
            (0..10)
                .filter(|&i| Shard { k, n: 3 }.takes(i))
                .collect::<Vec<_>>()
        };
        assert_eq!(take(1), [0, 3, 6, 9]);
        assert_eq!(take(2), [1, 4, 7]);
        assert_eq!(take(3), [2, 5, 8]);
    }

    #[test]
    fn fingerprints_tell_texts_apart() {
        // FNV-1a 64 of the empty input followed by the 0 separator: offset ^ 0, times the prime.
        let one_zero = 0xcbf2_9ce4_8422_2325u64.wrapping_mul(0x0000_0100_0000_01b3);
        assert_eq!(fingerprint([&b""[..]]), format!("{one_zero:016x}"));
        assert_ne!(fingerprint([&b"ab"[..], b"c"]), fingerprint([&b"a"[..], b"bc"]));
    }
}
