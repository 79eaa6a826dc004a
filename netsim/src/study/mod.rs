//! Studies: a whole published experiment (every setup, variant and seed) described by a small manifest,
//! run in one go, and written up as a markdown report ([`report`]).
//!
//! A study is a file `NAME.study.toml` (shipped ones in `netsim/scenarios/studies/`):
//!
//! ```toml
//! [study]
//! name = "d2"
//! title = "D2: loss sweep on one path"
//! claim = "BBR holds its throughput under random loss far better than loss-based controllers."
//! scaling = "3 Gbit/s scaled to 100 Mbit/s (÷ 30), delay and queue in BDP kept; 20 s → 10 s."
//!
//! [[parts]]
//! name = "loss"                      # a section of the report, with its own table and plots
//! scenario = "d2_loss_sweep.toml"    # relative to the manifest; its [sweep] (if any) is run in full
//! description = "..."                # optional
//! plots = false                      # time-series plots of the first seed of each setting (default true)
//! set = { "links.bn.rate_bps" = 100_000_000 }   # overrides, every variant
//! quick = { "scenario.duration" = "3s", "sweep.seeds" = [1] }  # more overrides, `--quick` only
//! replicate = "flows.sp.start"       # optional: a sweep axis whose values are repetitions, not settings
//! phases = "20s"                     # optional: a table of each path's goodput per 20 s ([`series`])
//! ```
//!
//! Repetitions: the runs of a setting that differ only in their seed are pooled, and the report gives
//! their mean with a 95 % confidence interval ([`crate::metrics::confidence`]). A run without random loss
//! or jitter is deterministic whatever its seed; there the repetitions come from an axis named by
//! `replicate` (typically a flow's start time, a few milliseconds apart: the same experiment at another
//! phase of the drop-tail queue), whose values are pooled like seeds.
//!
//! A manifest may take its parts from another one and change them all alike, instead of repeating them (a
//! study run at another scale, say):
//!
//! ```toml
//! [extends]
//! manifest = "../d3.study.toml"         # relative to this manifest; it may not extend another itself
//! set = { "scenario.duration" = "60s" }  # applied to each of its parts after the part's own `set`
//! ```
//!
//! The parts of that manifest come first, with their scenario files where that manifest names them, then
//! this manifest's own `[[parts]]` (optional when it extends another); the `[study]` header is this one's.
//!
//! Overrides are dotted paths into the scenario document as in sweeps ([`crate::scenario::sweep::set_path`]),
//! the `[sweep]` section included, so a quick variant can shorten the run, drop seeds or values. `set` is
//! applied first, then `quick`. A part without a `[sweep]` section is a single run. Several parts may use the
//! same file with different overrides (variants that a sweep axis cannot express, such as removing a path).
//!
//! [`Study::run`] runs every run of every part, on `jobs` threads; the results do not depend on `jobs` (each
//! run is deterministic from its seed).

pub mod report;
pub mod series;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Deserialize;
use thiserror::Error;

use crate::Scenario;
use crate::engine::RunOutput;
use crate::metrics::PathSeries;
use crate::results::RunResult;
use crate::scenario::ScenarioError;
use crate::scenario::sweep::{self, Setting, SweepRun};

/// The file name suffix of study manifests.
pub const MANIFEST_SUFFIX: &str = ".study.toml";

/// Why a study could not be loaded or run.
#[derive(Debug, Error)]
pub enum StudyError {
    /// A file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The manifest is not valid.
    #[error("{}: {message}", path.display())]
    Manifest {
        /// The manifest.
        path: PathBuf,
        /// What is wrong, naming the field.
        message: String,
    },
    /// A part's scenario (with its overrides) is not valid.
    #[error("{}: part \"{part}\": {source}", path.display())]
    Scenario {
        /// The scenario file.
        path: PathBuf,
        /// The part.
        part: String,
        /// The scenario error.
        source: ScenarioError,
    },
    /// No study of that name.
    #[error("no study \"{name}\" in {} (known: {known})", dir.display())]
    Unknown {
        /// The name asked for.
        name: String,
        /// The directory searched.
        dir: PathBuf,
        /// The studies found there.
        known: String,
    },
    /// A run failed.
    #[error("part \"{part}\", {run}: {message}")]
    Run {
        /// The part.
        part: String,
        /// The run (settings and seed).
        run: String,
        /// The engine's message.
        message: String,
    },
}

/// The `[study]` table.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyHeader {
    /// Short name (the report's folder).
    pub name: String,
    /// Title of the report.
    pub title: String,
    /// The published claim, quoted in the report.
    pub claim: String,
    /// How the study's parameters were scaled or chosen for the simulator.
    #[serde(default)]
    pub scaling: String,
}

/// One `[[parts]]` entry.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartSpec {
    /// Name (a report section and a folder).
    pub name: String,
    /// Scenario file, relative to the manifest.
    pub scenario: String,
    /// What the part shows.
    #[serde(default)]
    pub description: String,
    /// Whether to plot the time series of the first seed of each setting.
    #[serde(default = "yes")]
    pub plots: bool,
    /// Overrides applied in every variant.
    #[serde(default)]
    pub set: toml::Table,
    /// Overrides applied in the quick variant only (after `set`).
    #[serde(default)]
    pub quick: toml::Table,
    /// A sweep axis (its parameter as written in the `[sweep]` section, several paths joined by `,`) whose
    /// values are repetitions of the same setting, pooled like seeds in the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicate: Option<String>,
    /// Length of the windows in which the report gives each path's goodput (a duration, at least 1 ms and
    /// at most 100 windows per run; default none: no such table).
    #[serde(
        default,
        with = "crate::units::option_duration",
        skip_serializing_if = "Option::is_none"
    )]
    pub phases: Option<std::time::Duration>,
}

fn yes() -> bool {
    true
}

/// The `[extends]` table: the parts of another manifest, changed alike.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Extends {
    /// The other manifest, relative to this one.
    pub manifest: String,
    /// Overrides applied to each of its parts after the part's own `set` (before `quick`).
    #[serde(default)]
    pub set: toml::Table,
}

/// A manifest as written.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The header.
    pub study: StudyHeader,
    /// Another manifest whose parts come first.
    #[serde(default)]
    pub extends: Option<Extends>,
    /// The parts: at least one, counting those of the manifest extended.
    #[serde(default)]
    pub parts: Vec<PartSpec>,
}

/// One part, loaded: its runs expanded.
#[derive(Clone, Debug)]
pub struct Part {
    /// The part as written.
    pub spec: PartSpec,
    /// The scenario file.
    pub file: PathBuf,
    /// The runs (sweep expansion of the file with its overrides).
    pub runs: Vec<SweepRun>,
}

/// A study, loaded and expanded for one variant.
#[derive(Clone, Debug)]
pub struct Study {
    /// The header.
    pub header: StudyHeader,
    /// The manifest file.
    pub manifest: PathBuf,
    /// The manifest it extends, if any (its parts are part of this study).
    pub extends: Option<PathBuf>,
    /// Whether this is the quick variant.
    pub quick: bool,
    /// The parts.
    pub parts: Vec<Part>,
}

/// The result of one run of a study.
#[derive(Clone, Debug)]
pub struct RunRecord {
    /// The run's settings (the sweep's values).
    pub settings: Vec<Setting>,
    /// The seed.
    pub seed: u64,
    /// Index within the part (sweep order).
    pub index: usize,
    /// The results.
    pub result: RunResult,
    /// The time series, kept for the runs that are plotted.
    pub series: Option<Vec<PathSeries>>,
    /// Window statistics and phase goodputs from the series, kept for every run.
    pub summary: series::SeriesSummary,
}

/// The results of one part, in sweep order.
#[derive(Clone, Debug)]
pub struct PartOutcome {
    /// The part's name.
    pub name: String,
    /// The sweep axis whose values are repetitions (see [`PartSpec::replicate`]).
    pub replicate: Option<String>,
    /// Every run.
    pub runs: Vec<RunRecord>,
}

impl RunRecord {
    /// `parameter=value, ...` without the seed (`-` for a part without a sweep).
    pub fn setting_label(&self) -> String {
        if self.settings.is_empty() {
            "-".to_owned()
        } else {
            self.settings
                .iter()
                .map(|s| s.value.clone())
                .collect::<Vec<_>>()
                .join(" / ")
        }
    }
}

impl PartOutcome {
    /// A run's settings without the replicate axis.
    pub fn settings_of(&self, run: &RunRecord) -> Vec<Setting> {
        run.settings
            .iter()
            .filter(|s| self.replicate.as_deref() != Some(s.parameter.as_str()))
            .cloned()
            .collect()
    }

    /// The runs grouped by settings (the replicate axis, if any, pooled with the seeds), in first-seen
    /// (sweep) order.
    pub fn groups(&self) -> Vec<(Vec<Setting>, Vec<&RunRecord>)> {
        let mut out: Vec<(Vec<Setting>, Vec<&RunRecord>)> = Vec::new();
        let mut index: BTreeMap<Vec<String>, usize> = BTreeMap::new();
        for run in &self.runs {
            let settings = self.settings_of(run);
            let key: Vec<String> = settings.iter().map(|s| s.value.clone()).collect();
            let slot = *index.entry(key).or_insert_with(|| {
                out.push((settings.clone(), Vec::new()));
                out.len().saturating_sub(1)
            });
            if let Some((_, runs)) = out.get_mut(slot) {
                runs.push(run);
            }
        }
        out
    }
}

/// The manifests in `dir` (`*.study.toml`), sorted by file name.
pub fn list(dir: &Path) -> Result<Vec<PathBuf>, StudyError> {
    let io = |source| StudyError::Io {
        path: dir.to_owned(),
        source,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let is_manifest = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(MANIFEST_SUFFIX));
        if is_manifest {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// The study name of a manifest path (`a.study.toml` → `a`).
pub fn name_of(path: &Path) -> String {
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    file.strip_suffix(MANIFEST_SUFFIX).unwrap_or(&file).to_owned()
}

/// Finds the manifest of study `name` in `dir`; `name` may also be a path to a manifest file.
pub fn find(dir: &Path, name: &str) -> Result<PathBuf, StudyError> {
    let direct = PathBuf::from(name);
    if name.ends_with(MANIFEST_SUFFIX) && direct.is_file() {
        return Ok(direct);
    }
    let manifests = list(dir)?;
    manifests
        .iter()
        .find(|p| name_of(p) == name)
        .cloned()
        .ok_or_else(|| StudyError::Unknown {
            name: name.to_owned(),
            dir: dir.to_owned(),
            known: manifests
                .iter()
                .map(|p| name_of(p))
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Reads and parses one manifest file (no checks beyond its syntax and fields).
fn read_manifest(path: &Path) -> Result<Manifest, StudyError> {
    let text = std::fs::read_to_string(path).map_err(|source| StudyError::Io {
        path: path.to_owned(),
        source,
    })?;
    let bad = |message: String| StudyError::Manifest {
        path: path.to_owned(),
        message,
    };
    let de = toml::de::Deserializer::parse(&text).map_err(|e| bad(e.to_string().trim_end().to_owned()))?;
    serde_path_to_error::deserialize(de)
        .map_err(|e| bad(format!("{}: {}", e.path(), e.inner().to_string().trim_end())))
}

impl Study {
    /// Reads a manifest and expands every part for the full (`quick = false`) or the quick variant.
    pub fn load(manifest: &Path, quick: bool) -> Result<Study, StudyError> {
        let bad = |message: String| StudyError::Manifest {
            path: manifest.to_owned(),
            message,
        };
        let mut parsed = read_manifest(manifest)?;
        let base = manifest.parent().unwrap_or_else(|| Path::new("."));
        let extends = match parsed.extends.take() {
            Some(ext) => {
                let parent_path = base.join(&ext.manifest);
                let parent = read_manifest(&parent_path)?;
                if parent.extends.is_some() {
                    return Err(bad(format!(
                        "extends.manifest: {} extends another manifest itself (one level only)",
                        ext.manifest
                    )));
                }
                // The parent's scenario paths are relative to the parent; make them relative to this one.
                let parent_dir = Path::new(&ext.manifest).parent().unwrap_or_else(|| Path::new(""));
                let mut parts: Vec<PartSpec> = parent
                    .parts
                    .into_iter()
                    .map(|mut part| {
                        part.scenario = parent_dir.join(&part.scenario).display().to_string();
                        part.set.extend(ext.set.clone());
                        part
                    })
                    .collect();
                parts.append(&mut parsed.parts);
                parsed.parts = parts;
                Some(parent_path)
            }
            None => None,
        };
        if parsed.parts.is_empty() {
            return Err(bad("parts: at least one part is needed".to_owned()));
        }
        for (i, part) in parsed.parts.iter().enumerate() {
            let clash = parsed.parts.iter().take(i).any(|p| p.name == part.name);
            let ok_name = !part.name.is_empty()
                && part
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if clash || !ok_name {
                return Err(bad(format!(
                    "parts[{i}].name: \"{}\" must be unique and use letters, digits, '_' and '-'",
                    part.name
                )));
            }
        }
        let mut parts = Vec::with_capacity(parsed.parts.len());
        for spec in parsed.parts {
            let file = base.join(&spec.scenario);
            let scenario_err = |source| StudyError::Scenario {
                path: file.clone(),
                part: spec.name.clone(),
                source,
            };
            let text = std::fs::read_to_string(&file).map_err(|source| StudyError::Io {
                path: file.clone(),
                source,
            })?;
            let mut doc: toml::Table = toml::from_str(&text).map_err(|e| {
                scenario_err(ScenarioError::Parse {
                    field: ".".to_owned(),
                    message: e.to_string().trim_end().to_owned(),
                })
            })?;
            let overrides = spec
                .set
                .iter()
                .map(|kv| ("set", kv))
                .chain(spec.quick.iter().filter(|_| quick).map(|kv| ("quick", kv)));
            for (table, (path, value)) in overrides {
                sweep::set_path(&mut doc, path, value.clone())
                    .map_err(|m| scenario_err(ScenarioError::invalid(format!("{table}.\"{path}\""), m)))?;
            }
            let runs = sweep::expand_table(doc).map_err(scenario_err)?;
            if let Some(axis) = &spec.replicate {
                let known = runs
                    .first()
                    .is_some_and(|r| r.settings.iter().any(|s| &s.parameter == axis));
                if !known {
                    return Err(bad(format!(
                        "parts.{}.replicate: \"{axis}\" is not a sweep axis of {}",
                        spec.name, spec.scenario
                    )));
                }
            }
            if let Some(phase) = spec.phases {
                let too_many = runs.iter().any(|r| {
                    r.scenario
                        .scenario
                        .duration
                        .as_nanos()
                        .div_ceil(phase.as_nanos().max(1))
                        > u128::from(series::MAX_PHASES)
                });
                if phase < std::time::Duration::from_millis(1) || too_many {
                    return Err(bad(format!(
                        "parts.{}.phases: {} must be at least 1ms and cut a run into at most {} windows",
                        spec.name,
                        crate::units::format_duration(phase),
                        series::MAX_PHASES
                    )));
                }
            }
            parts.push(Part { spec, file, runs });
        }
        Ok(Study {
            header: parsed.study,
            manifest: manifest.to_owned(),
            extends,
            quick,
            parts,
        })
    }

    /// How many runs the study has.
    pub fn run_count(&self) -> usize {
        self.parts.iter().map(|p| p.runs.len()).sum()
    }

    /// Runs every run of every part on `jobs` threads (at least one) with `simulate`, which gets the scenario
    /// and a label for progress messages. Stops at the first failure.
    pub fn run<F>(&self, jobs: usize, simulate: F) -> Result<Vec<PartOutcome>, StudyError>
    where
        F: Fn(Scenario, &str) -> Result<RunOutput, String> + Sync,
    {
        let total = self.run_count();
        let work: Vec<(usize, &Part, &SweepRun)> = self
            .parts
            .iter()
            .enumerate()
            .flat_map(|(p, part)| part.runs.iter().map(move |r| (p, part, r)))
            .collect();
        let next = AtomicUsize::new(0);
        let failed = Mutex::new(None::<StudyError>);
        let done: Mutex<Vec<Option<RunRecord>>> = Mutex::new(vec![None; work.len()]);
        let worker = || {
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(_, part, run)) = work.get(k) else {
                    break;
                };
                if failed.lock().map(|f| f.is_some()).unwrap_or(true) {
                    break;
                }
                let what = sweep::describe(&run.settings, run.seed);
                let label = format!(
                    "{} {}/{total} [{}] {what}",
                    self.header.name,
                    k.saturating_add(1),
                    part.spec.name
                );
                tracing::info!("{label}");
                match simulate(run.scenario.clone(), &label) {
                    Ok(out) => {
                        // The first repetition of its setting (the replicate axis, if any, ignored).
                        let replicate = part.spec.replicate.as_deref();
                        let key = |settings: &[Setting]| -> Vec<String> {
                            settings
                                .iter()
                                .filter(|s| Some(s.parameter.as_str()) != replicate)
                                .map(|s| s.value.clone())
                                .collect()
                        };
                        let first_seed = part
                            .runs
                            .iter()
                            .find(|r| key(&r.settings) == key(&run.settings))
                            .is_some_and(|r| r.index == run.index);
                        let summary = series::SeriesSummary::of(
                            &out.series,
                            part.spec.phases,
                            run.scenario.scenario.duration,
                        );
                        let record = RunRecord {
                            settings: run.settings.clone(),
                            seed: run.seed,
                            index: run.index,
                            summary,
                            result: out.result,
                            series: (part.spec.plots && first_seed).then_some(out.series),
                        };
                        if let Ok(mut d) = done.lock() {
                            if let Some(slot) = d.get_mut(k) {
                                *slot = Some(record);
                            }
                        }
                    }
                    Err(message) => {
                        if let Ok(mut f) = failed.lock() {
                            f.get_or_insert(StudyError::Run {
                                part: part.spec.name.clone(),
                                run: what,
                                message,
                            });
                        }
                        break;
                    }
                }
            }
        };
        let jobs = jobs.clamp(1, work.len().max(1));
        std::thread::scope(|s| {
            for _ in 1..jobs {
                s.spawn(worker);
            }
            worker();
        });
        if let Some(e) = failed.into_inner().ok().flatten() {
            return Err(e);
        }
        let done = done.into_inner().unwrap_or_default();
        let mut outcomes: Vec<PartOutcome> = self
            .parts
            .iter()
            .map(|p| PartOutcome {
                name: p.spec.name.clone(),
                replicate: p.spec.replicate.clone(),
                runs: Vec::with_capacity(p.runs.len()),
            })
            .collect();
        for ((p, _, run), record) in work.iter().zip(done) {
            let Some(record) = record else {
                return Err(StudyError::Run {
                    part: self
                        .parts
                        .get(*p)
                        .map(|x| x.spec.name.clone())
                        .unwrap_or_default(),
                    run: sweep::describe(&run.settings, run.seed),
                    message: "the run did not complete".to_owned(),
                });
            };
            if let Some(o) = outcomes.get_mut(*p) {
                o.runs.push(record);
            }
        }
        Ok(outcomes)
    }
}
