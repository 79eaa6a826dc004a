//! The report of a study: `DIR/NAME/report.md` with the claim, the setup and, per part, two tables (goodput
//! per flow and path with utilisation; fairness, aggregate benefit, MP/SP ratio, retransmissions and RTT),
//! a third when a flow reports its receiver or runs a workload (head-of-line delay, reassembly and unread
//! peaks, flow completion times of requests, chunk times and stalls of video),
//! a bar chart of the mean goodputs (`DIR/NAME/<part>/summary.svg` and `.png`), the time-series plots of the
//! first seed of each setting (`DIR/NAME/<part>/run<k>/`), and every run's results as JSON
//! (`DIR/NAME/results.json`).
//!
//! Values with several repetitions (seeds, or the values of a `replicate` axis) print as `mean ± h`, where `h`
//! is the half-width of the mean's two-sided 95 % confidence interval, Student's t with `n − 1` degrees of
//! freedom ([`metrics::confidence`]); a single repetition prints its value alone, undefined values `-`.
//! The report says how many repetitions each setting has, and in the quick variant whether that is fewer
//! than the full variant's.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{PartOutcome, RunRecord, Study};
use crate::metrics;
use crate::output::{OutputError, plot};
use crate::results::RunResult;

/// Width and height of the summary chart.
const CHART: (u32, u32) = (960, 540);

/// One quantity read from a run's results, for a table column or a bar.
type Getter = Box<dyn Fn(&RunResult) -> Option<f64>>;

/// One quantity read from a run's record (results and series summary).
type RecordGetter = Box<dyn Fn(&RunRecord) -> Option<f64>>;

/// A numeric column: header, how to read it, scale and decimals.
struct Column {
    header: String,
    get: RecordGetter,
    scale: f64,
    decimals: usize,
}

impl Column {
    fn new(header: String, scale: f64, decimals: usize, get: Getter) -> Column {
        Column::of_record(header, scale, decimals, Box::new(move |r| get(&r.result)))
    }

    fn of_record(header: String, scale: f64, decimals: usize, get: RecordGetter) -> Column {
        Column {
            header,
            get,
            scale,
            decimals,
        }
    }

    /// `mean ± 95 % CI half-width` (or the value alone for one run) over `runs`, `-` when no run defines it.
    fn cell(&self, runs: &[&RunRecord]) -> String {
        let values: Vec<f64> = runs.iter().filter_map(|r| (self.get)(r)).collect();
        let d = self.decimals;
        match metrics::confidence::Interval::of(&values) {
            Some(i) if i.n > 1 => {
                format!("{:.d$} ± {:.d$}", i.mean * self.scale, i.half_width * self.scale)
            }
            Some(i) => format!("{:.d$}", i.mean * self.scale),
            None => "-".to_owned(),
        }
    }

    fn mean(&self, runs: &[&RunRecord]) -> Option<f64> {
        let values: Vec<f64> = runs.iter().filter_map(|r| (self.get)(r)).collect();
        metrics::mean(&values).map(|m| m * self.scale)
    }

    fn defined(&self, runs: &[RunRecord]) -> bool {
        runs.iter().any(|r| (self.get)(r).is_some())
    }
}

/// Goodput columns: each flow, and each path of the multipath flows with its utilisation.
fn goodput_columns(first: &RunResult) -> (Vec<Column>, Vec<Column>) {
    let mut goodput = Vec::new();
    let mut bars = Vec::new();
    for (f, flow) in first.flows.iter().enumerate() {
        goodput.push(Column::new(
            format!("{} Mbit/s", flow.name),
            1e-6,
            2,
            Box::new(move |r: &RunResult| r.flows.get(f).and_then(|x| x.goodput_bps)),
        ));
        if flow.paths.len() > 1 {
            for p in 0..flow.paths.len() {
                let path_goodput = move |r: &RunResult| {
                    r.flows
                        .get(f)
                        .and_then(|x| x.paths.get(p))
                        .and_then(|x| x.goodput_bps)
                };
                goodput.push(Column::new(
                    format!("{}/p{p} Mbit/s", flow.name),
                    1e-6,
                    2,
                    Box::new(path_goodput),
                ));
                goodput.push(Column::new(
                    format!("{}/p{p} util %", flow.name),
                    100.0,
                    1,
                    Box::new(move |r: &RunResult| {
                        r.flows
                            .get(f)
                            .and_then(|x| x.paths.get(p))
                            .and_then(|x| x.utilisation)
                    }),
                ));
                bars.push(Column::new(
                    format!("{}/p{p}", flow.name),
                    1e-6,
                    2,
                    Box::new(path_goodput),
                ));
            }
        } else {
            bars.push(Column::new(
                flow.name.clone(),
                1e-6,
                2,
                Box::new(move |r: &RunResult| r.flows.get(f).and_then(|x| x.goodput_bps)),
            ));
        }
    }
    (goodput, bars)
}

/// Fairness and cost columns: Jain's index across flows and per bottleneck, aggregate benefit and MP/SP of
/// the multipath flows, retransmissions and congestion events per flow, mean RTT per path.
#[allow(clippy::cast_precision_loss)]
fn fairness_columns(first: &RunResult) -> Vec<Column> {
    let mut cols = vec![Column::new(
        "Jain flows".to_owned(),
        1.0,
        3,
        Box::new(|r: &RunResult| r.jain_flows),
    )];
    for (b, bn) in first.bottlenecks.iter().enumerate() {
        cols.push(Column::new(
            format!("Jain {}", bn.link),
            1.0,
            3,
            Box::new(move |r: &RunResult| r.bottlenecks.get(b).and_then(|x| x.jain)),
        ));
        cols.extend(bottleneck_columns(first, b));
    }
    for (f, flow) in first.flows.iter().enumerate() {
        if flow.paths.len() > 1 {
            cols.push(Column::new(
                format!("{} AgrBf", flow.name),
                1.0,
                3,
                Box::new(move |r: &RunResult| r.flows.get(f).and_then(|x| x.aggregate_benefit)),
            ));
            cols.push(Column::new(
                format!("{} MP/SP", flow.name),
                1.0,
                3,
                Box::new(move |r: &RunResult| r.flows.get(f).and_then(|x| x.mp_sp_ratio)),
            ));
        }
    }
    for (f, flow) in first.flows.iter().enumerate() {
        cols.push(Column::new(
            format!("{} retx", flow.name),
            1.0,
            0,
            Box::new(move |r: &RunResult| r.flows.get(f).map(|x| x.retransmissions as f64)),
        ));
        cols.push(Column::new(
            format!("{} events", flow.name),
            1.0,
            0,
            Box::new(move |r: &RunResult| r.flows.get(f).map(|x| x.congestion_events as f64)),
        ));
    }
    for (f, flow) in first.flows.iter().enumerate() {
        for p in 0..flow.paths.len() {
            let header = if flow.paths.len() > 1 {
                format!("{}/p{p} RTT ms", flow.name)
            } else {
                format!("{} RTT ms", flow.name)
            };
            cols.push(Column::new(
                header,
                1.0,
                1,
                Box::new(move |r: &RunResult| {
                    r.flows
                        .get(f)
                        .and_then(|x| x.paths.get(p))
                        .and_then(|x| x.rtt_mean_ms)
                }),
            ));
        }
    }
    cols
}

/// `flow/pathK` (a bottleneck's path label) as flow and path indices in `result`.
fn parse_label(result: &RunResult, label: &str) -> Option<(usize, usize)> {
    let (flow, path) = label.rsplit_once("/path")?;
    let f = result.flows.iter().position(|x| x.name == flow)?;
    Some((f, path.parse().ok()?))
}

/// The goodput of `flow/pathK` in `result`.
fn label_goodput(result: &RunResult, label: &str) -> Option<f64> {
    let (f, p) = parse_label(result, label)?;
    result.flows.get(f)?.paths.get(p)?.goodput_bps
}

/// Per bottleneck `b`: Jain's index across the subflows of each multipath flow that has two or more of
/// them there ("Jain SF flow@link"), and, where other flows cross it too, each multipath subflow's share of
/// the goodput through it ("flow/pK share@link" = its goodput / the sum over every path crossing).
fn bottleneck_columns(first: &RunResult, b: usize) -> Vec<Column> {
    let mut cols = Vec::new();
    let Some(bn) = first.bottlenecks.get(b) else {
        return cols;
    };
    let users: Vec<(usize, usize)> = bn.paths.iter().filter_map(|l| parse_label(first, l)).collect();
    let multipath = |f: usize| first.flows.get(f).is_some_and(|x| x.paths.len() > 1);
    let mut seen = Vec::new();
    for &(f, _) in &users {
        let mine: Vec<String> = bn
            .paths
            .iter()
            .filter(|l| parse_label(first, l).is_some_and(|(g, _)| g == f))
            .cloned()
            .collect();
        if multipath(f) && mine.len() > 1 && !seen.contains(&f) {
            seen.push(f);
            let name = first.flows.get(f).map(|x| x.name.clone()).unwrap_or_default();
            cols.push(Column::new(
                format!("Jain SF {name}@{}", bn.link),
                1.0,
                3,
                Box::new(move |r: &RunResult| {
                    let shares: Option<Vec<f64>> = mine.iter().map(|l| label_goodput(r, l)).collect();
                    metrics::jain_index(&shares?)
                }),
            ));
        }
    }
    let others = users.iter().any(|&(f, _)| !multipath(f));
    if others {
        for (label, &(f, p)) in bn.paths.iter().zip(&users) {
            if !multipath(f) {
                continue;
            }
            let all = bn.paths.clone();
            let me = label.clone();
            let name = first.flows.get(f).map(|x| x.name.clone()).unwrap_or_default();
            cols.push(Column::new(
                format!("{name}/p{p} share@{}", bn.link),
                1.0,
                3,
                Box::new(move |r: &RunResult| {
                    let total: f64 = all.iter().filter_map(|l| label_goodput(r, l)).sum();
                    let mine = label_goodput(r, &me)?;
                    (total > 0.0).then(|| mine / total)
                }),
            ));
        }
    }
    cols
}

/// Window columns from the series summary: run-mean and largest sampled congestion window of every path,
/// in kB.
fn window_columns(first: &RunResult) -> Vec<Column> {
    let mut cols = Vec::new();
    for (f, flow) in first.flows.iter().enumerate() {
        for p in 0..flow.paths.len() {
            let label = if flow.paths.len() > 1 {
                format!("{}/p{p}", flow.name)
            } else {
                flow.name.clone()
            };
            cols.push(Column::of_record(
                format!("{label} cwnd mean kB"),
                1e-3,
                1,
                Box::new(move |r: &RunRecord| r.summary.path(f, p).and_then(|x| x.cwnd_mean_bytes)),
            ));
            cols.push(Column::of_record(
                format!("{label} cwnd max kB"),
                1e-3,
                1,
                #[allow(clippy::cast_precision_loss)]
                Box::new(move |r: &RunRecord| {
                    r.summary
                        .path(f, p)
                        .and_then(|x| x.cwnd_max_bytes)
                        .map(|b| b as f64)
                }),
            ));
        }
    }
    cols
}

/// Phase columns: every path's goodput in phase `k`, Mbit/s.
fn phase_columns(first: &RunResult, k: usize) -> Vec<Column> {
    let mut cols = Vec::new();
    for (f, flow) in first.flows.iter().enumerate() {
        for p in 0..flow.paths.len() {
            let label = if flow.paths.len() > 1 {
                format!("{}/p{p}", flow.name)
            } else {
                flow.name.clone()
            };
            cols.push(Column::of_record(
                format!("{label} Mbit/s"),
                1e-6,
                2,
                Box::new(move |r: &RunRecord| {
                    r.summary
                        .path(f, p)
                        .and_then(|x| x.phase_goodput_bps.get(k).copied().flatten())
                }),
            ));
        }
    }
    cols
}

/// Receiver and application columns of the flows that report them: head-of-line delay (mean, p95),
/// reassembly buffer and unread peaks; objects and FCT percentiles (requests); chunks, chunk times, startup
/// and stall time (video).
#[allow(clippy::cast_precision_loss)]
fn application_columns(first: &RunResult) -> Vec<Column> {
    let mut cols = Vec::new();
    for (f, flow) in first.flows.iter().enumerate() {
        let get = move |r: &RunResult| r.flows.get(f).cloned();
        let name = &flow.name;
        if flow.receiver.is_some() {
            let rx = move |pick: fn(&crate::results::ReceiverResult) -> f64| -> Getter {
                Box::new(move |r: &RunResult| get(r).and_then(|x| x.receiver.as_ref().map(pick)))
            };
            cols.push(Column::new(
                format!("{name} HoL mean ms"),
                1.0,
                2,
                rx(|x| x.hol_delay_mean_ms),
            ));
            cols.push(Column::new(
                format!("{name} HoL p95 ms"),
                1.0,
                2,
                rx(|x| x.hol_delay_p95_ms),
            ));
            cols.push(Column::new(
                format!("{name} reassembly peak kB"),
                1e-3,
                1,
                rx(|x| x.reassembly_peak_bytes as f64),
            ));
            cols.push(Column::new(
                format!("{name} unread peak kB"),
                1e-3,
                1,
                rx(|x| x.unread_peak_bytes as f64),
            ));
        }
        if flow.objects.is_some() {
            let obj = move |pick: fn(&crate::results::ObjectsResult) -> Option<f64>| -> Getter {
                Box::new(move |r: &RunResult| get(r).and_then(|x| x.objects.as_ref().and_then(pick)))
            };
            cols.push(Column::new(
                format!("{name} objects"),
                1.0,
                0,
                obj(|x| Some(x.count as f64)),
            ));
            cols.push(Column::new(
                format!("{name} FCT mean ms"),
                1.0,
                1,
                obj(|x| x.fct_mean_ms),
            ));
            cols.push(Column::new(
                format!("{name} FCT p50 ms"),
                1.0,
                1,
                obj(|x| x.fct_p50_ms),
            ));
            cols.push(Column::new(
                format!("{name} FCT p95 ms"),
                1.0,
                1,
                obj(|x| x.fct_p95_ms),
            ));
            cols.push(Column::new(
                format!("{name} FCT p99 ms"),
                1.0,
                1,
                obj(|x| x.fct_p99_ms),
            ));
        }
        if flow.video.is_some() {
            let vid = move |pick: fn(&crate::results::VideoResult) -> Option<f64>| -> Getter {
                Box::new(move |r: &RunResult| get(r).and_then(|x| x.video.as_ref().and_then(pick)))
            };
            cols.push(Column::new(
                format!("{name} chunks"),
                1.0,
                0,
                vid(|x| Some(x.chunks as f64)),
            ));
            cols.push(Column::new(
                format!("{name} chunk mean ms"),
                1.0,
                1,
                vid(|x| x.chunk_time_mean_ms),
            ));
            cols.push(Column::new(
                format!("{name} chunk p95 ms"),
                1.0,
                1,
                vid(|x| x.chunk_time_p95_ms),
            ));
            cols.push(Column::new(
                format!("{name} startup ms"),
                1.0,
                1,
                vid(|x| x.startup_ms),
            ));
            cols.push(Column::new(
                format!("{name} stall s"),
                1.0,
                3,
                vid(|x| Some(x.stall_s)),
            ));
            cols.push(Column::new(
                format!("{name} stalls"),
                1.0,
                1,
                vid(|x| Some(f64::from(x.stalls))),
            ));
        }
    }
    cols
}

/// How many repetitions each setting has and what the `±` means; in the quick variant, whether that is fewer
/// than the full variant's.
fn repetitions_note(
    study: &Study,
    part: &super::Part,
    groups: &[(Vec<crate::scenario::sweep::Setting>, Vec<&RunRecord>)],
) -> String {
    let counts: Vec<usize> = groups.iter().map(|(_, runs)| runs.len()).collect();
    let (lo, hi) = (
        counts.iter().copied().min().unwrap_or(0),
        counts.iter().copied().max().unwrap_or(0),
    );
    let n = if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}–{hi}")
    };
    let what = match &part.spec.replicate {
        Some(axis) => format!("repetitions (seeds × values of `{axis}`, pooled)"),
        None => "repetitions (seeds)".to_owned(),
    };
    let mut note = format!(
        "Each setting: {n} {what}; values are the mean ± the half-width of its 95 % confidence interval \
         (Student's t, n − 1 degrees of freedom)."
    );
    if lo < 2 {
        note.push_str(" A setting with one repetition shows its single value (no interval).");
    }
    if study.quick {
        let full = Study::load(&study.manifest, false).ok().and_then(|f| {
            let p = f.parts.into_iter().find(|p| p.spec.name == part.spec.name)?;
            Some(p.runs.len())
        });
        let quick = part.runs.len();
        match full {
            Some(full) if full > quick => {
                let _ = write!(
                    note,
                    " **Quick variant**: {quick} runs here against {full} in the full variant (fewer \
                     repetitions and/or settings); intervals are correspondingly wider."
                );
            }
            _ => note.push_str(" Quick variant: as many runs as the full variant."),
        }
    }
    note
}

/// A markdown table.
fn md_table(headers: &[String], rows: &[Vec<String>]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "| {} |", headers.join(" | "));
    let _ = writeln!(out, "|{}", headers.iter().map(|_| "---|").collect::<String>());
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out
}

/// Writes the report of `study` with `outcomes` into `dir/<name>/`; returns the report's path. `command`
/// is the command line that reproduces it; `wall_s` the wall time it took, when known.
pub fn write(
    dir: &Path,
    study: &Study,
    outcomes: &[PartOutcome],
    command: &str,
    wall_s: Option<f64>,
) -> Result<PathBuf, OutputError> {
    let root = dir.join(&study.header.name);
    std::fs::create_dir_all(&root).map_err(|e| OutputError::io(&root, e))?;
    let mut md = String::new();
    let h = &study.header;
    let _ = writeln!(md, "# {}\n", h.title);
    let _ = writeln!(md, "**Published claim.** {}\n", h.claim.trim());
    if !h.scaling.trim().is_empty() {
        let _ = writeln!(md, "**Setup and scaling.** {}\n", h.scaling.trim());
    }
    let variant = if study.quick { "quick" } else { "full" };
    let _ = writeln!(
        md,
        "Variant: {variant}; {} runs; manifest `{}`; command: `{command}`{}.\n",
        study.run_count(),
        study
            .manifest
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        wall_s.map_or_else(String::new, |w| format!("; wall time {w:.1} s")),
    );
    let mut json = Vec::new();
    for (part, outcome) in study.parts.iter().zip(outcomes) {
        let _ = writeln!(md, "## {}\n", part.spec.name);
        if !part.spec.description.trim().is_empty() {
            let _ = writeln!(md, "{}\n", part.spec.description.trim());
        }
        let _ = write!(md, "Scenario `{}`", part.spec.scenario);
        let overrides: Vec<String> = part
            .spec
            .set
            .iter()
            .chain(part.spec.quick.iter().filter(|_| study.quick))
            .map(|(k, v)| format!("`{k} = {v}`"))
            .collect();
        if overrides.is_empty() {
            let _ = writeln!(md, ".\n");
        } else {
            let _ = writeln!(md, " with {}.\n", overrides.join(", "));
        }
        let Some(first) = outcome.runs.first() else {
            let _ = writeln!(md, "No runs.\n");
            continue;
        };
        let groups = outcome.groups();
        let params: Vec<String> = outcome
            .settings_of(first)
            .iter()
            .map(|s| format!("`{}`", s.parameter))
            .collect();
        let (goodput, bars) = goodput_columns(&first.result);
        let fairness: Vec<Column> = fairness_columns(&first.result)
            .into_iter()
            .filter(|c| c.defined(&outcome.runs))
            .collect();
        let apps: Vec<Column> = application_columns(&first.result)
            .into_iter()
            .filter(|c| c.defined(&outcome.runs))
            .collect();
        let windows: Vec<Column> = window_columns(&first.result)
            .into_iter()
            .filter(|c| c.defined(&outcome.runs))
            .collect();
        let mut rows_g = Vec::new();
        let mut rows_f = Vec::new();
        let mut rows_a = Vec::new();
        let mut rows_w = Vec::new();
        let mut rows_p = Vec::new();
        let phases = outcome
            .runs
            .iter()
            .map(|r| {
                r.summary
                    .paths
                    .iter()
                    .map(|p| p.phase_goodput_bps.len())
                    .max()
                    .unwrap_or(0)
            })
            .max()
            .unwrap_or(0);
        let phase_len = part.spec.phases.unwrap_or_default();
        let part_dir = root.join(&part.spec.name);
        for (g, (settings, runs)) in groups.iter().enumerate() {
            let mut lead = vec![g.to_string()];
            lead.extend(settings.iter().map(|s| s.value.clone()));
            lead.push(runs.len().to_string());
            let mut row = lead.clone();
            row.extend(goodput.iter().map(|c| c.cell(runs)));
            let mut links = Vec::new();
            for run in runs {
                if let Some(series) = &run.series {
                    let sub = format!("run{}", run.index);
                    let title = format!("{} {} (seed {})", h.name, run.setting_label(), run.seed);
                    // A merge of shards passes no samples: the shard that ran the run wrote its plots.
                    if !series.is_empty() {
                        plot::write_plots(&part_dir.join(&sub), &title, series)?;
                    }
                    for q in ["throughput", "cwnd", "rtt"] {
                        links.push(format!("[{q}]({}/{sub}/{q}.svg)", part.spec.name));
                    }
                }
            }
            if part.spec.plots {
                row.push(links.join(" "));
            }
            rows_g.push(row);
            let mut row = lead.clone();
            row.extend(fairness.iter().map(|c| c.cell(runs)));
            rows_f.push(row);
            let mut row = lead.clone();
            row.extend(windows.iter().map(|c| c.cell(runs)));
            rows_w.push(row);
            for k in 0..phases {
                let mut row = lead.clone();
                let from = phase_len.saturating_mul(u32::try_from(k).unwrap_or(u32::MAX));
                row.push(format!(
                    "{}–{}",
                    crate::units::format_duration(from),
                    crate::units::format_duration(from.saturating_add(phase_len))
                ));
                row.extend(phase_columns(&first.result, k).iter().map(|c| c.cell(runs)));
                rows_p.push(row);
            }
            let mut row = lead;
            row.extend(apps.iter().map(|c| c.cell(runs)));
            rows_a.push(row);
        }
        let mut head: Vec<String> = vec!["#".to_owned()];
        head.extend(params.iter().cloned());
        head.push("n".to_owned());
        let mut head_g = head.clone();
        head_g.extend(goodput.iter().map(|c| c.header.clone()));
        if part.spec.plots {
            head_g.push("plots (first seed)".to_owned());
        }
        let mut head_f = head.clone();
        head_f.extend(fairness.iter().map(|c| c.header.clone()));
        let mut head_w = head.clone();
        head_w.extend(windows.iter().map(|c| c.header.clone()));
        let mut head_p = head.clone();
        head_p.push("window".to_owned());
        head_p.extend(phase_columns(&first.result, 0).iter().map(|c| c.header.clone()));
        let mut head_a = head;
        head_a.extend(apps.iter().map(|c| c.header.clone()));
        let _ = writeln!(md, "{}\n", repetitions_note(study, part, &groups));
        let _ = writeln!(md, "Goodput:\n");
        md.push_str(&md_table(&head_g, &rows_g));
        let _ = writeln!(md, "\nFairness, benefit and cost:\n");
        md.push_str(&md_table(&head_f, &rows_f));
        if !windows.is_empty() {
            let _ = writeln!(
                md,
                "\nCongestion windows (mean over every sample of the run, and the largest sample):\n"
            );
            md.push_str(&md_table(&head_w, &rows_w));
        }
        if !rows_p.is_empty() {
            let _ = writeln!(
                md,
                "\nGoodput per {} window (mean of the samples in the window; a flow counts only while it runs):\n",
                crate::units::format_duration(phase_len)
            );
            md.push_str(&md_table(&head_p, &rows_p));
        }
        if !apps.is_empty() {
            let _ = writeln!(
                md,
                "\nReceiver and application (HoL: head-of-line delay; FCT: flow completion time per object):\n"
            );
            md.push_str(&md_table(&head_a, &rows_a));
        }
        let chart_groups: Vec<(String, Vec<Option<f64>>)> = groups
            .iter()
            .enumerate()
            .map(|(g, (_, runs))| (g.to_string(), bars.iter().map(|c| c.mean(runs)).collect()))
            .collect();
        let names: Vec<String> = bars.iter().map(|c| c.header.clone()).collect();
        std::fs::create_dir_all(&part_dir).map_err(|e| OutputError::io(&part_dir, e))?;
        let title = format!("{}: {} — mean goodput (Mbit/s)", h.name, part.spec.name);
        write_chart(&part_dir, &title, &names, &chart_groups)?;
        let _ = writeln!(
            md,
            "\n![mean goodput per setting]({0}/summary.svg) ([PNG]({0}/summary.png))\n",
            part.spec.name
        );
        for run in &outcome.runs {
            json.push(serde_json::json!({
                "part": part.spec.name,
                "index": run.index,
                "settings": run.settings,
                "seed": run.seed,
                "result": run.result,
            }));
        }
    }
    let report = root.join("report.md");
    std::fs::write(&report, md).map_err(|e| OutputError::io(&report, e))?;
    let results = root.join("results.json");
    let text = serde_json::to_string_pretty(&json)?;
    std::fs::write(&results, text).map_err(|e| OutputError::io(&results, e))?;
    Ok(report)
}

/// Writes `summary.svg` and `summary.png`: per setting (x), one bar per series.
fn write_chart(
    dir: &Path,
    title: &str,
    names: &[String],
    groups: &[(String, Vec<Option<f64>>)],
) -> Result<(), OutputError> {
    let err = |path: &Path, message: String| OutputError::Plot {
        path: path.display().to_string(),
        message,
    };
    let svg = dir.join("summary.svg");
    plot::register_font().map_err(|e| err(&svg, e))?;
    {
        let root = SVGBackend::new(&svg, CHART).into_drawing_area();
        draw_bars(&root, title, names, groups).map_err(|e| err(&svg, e))?;
    }
    let png = dir.join("summary.png");
    let (w, h) = CHART;
    let len = usize::try_from(u64::from(w) * u64::from(h) * 3).unwrap_or(usize::MAX);
    let mut pixels = vec![0u8; len];
    {
        let backend =
            BitMapBackend::<plotters::backend::RGBPixel>::with_buffer_and_format(&mut pixels, CHART)
                .map_err(|e| err(&png, e.to_string()))?;
        draw_bars(&backend.into_drawing_area(), title, names, groups).map_err(|e| err(&png, e))?;
    }
    plot::encode_png(&png, &pixels, CHART)
}

/// Grouped bars on any backend.
#[allow(clippy::cast_precision_loss)]
fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    names: &[String],
    groups: &[(String, Vec<Option<f64>>)],
) -> Result<(), String> {
    let msg = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let n = groups.len().max(1) as f64;
    let y_max = groups
        .iter()
        .flat_map(|(_, v)| v.iter().flatten().copied())
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
    let y_max = if y_max > 0.0 { y_max * 1.15 } else { 1.0 };
    root.fill(&WHITE).map_err(msg)?;
    let labels: Vec<String> = groups.iter().map(|(l, _)| l.clone()).collect();
    let formatter = |x: &f64| {
        let r = x.round();
        if (x - r).abs() < 1e-6 && r >= 0.0 {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let i = r as usize;
            labels.get(i).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let mut chart = ChartBuilder::on(root)
        .caption(title, (plot::FONT, 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5..(n - 0.5), 0.0..y_max)
        .map_err(msg)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(groups.len().clamp(2, 40))
        .x_label_formatter(&formatter)
        .x_desc("setting (# in the report's tables)")
        .y_desc("goodput (Mbit/s)")
        .label_style((plot::FONT, 14))
        .axis_desc_style((plot::FONT, 16))
        .draw()
        .map_err(msg)?;
    let k = names.len().max(1) as f64;
    let width = 0.8 / k;
    for (s, name) in names.iter().enumerate() {
        let color = Palette99::pick(s).to_rgba();
        let rects = groups.iter().enumerate().filter_map(|(g, (_, values))| {
            let v = values.get(s).copied().flatten()?;
            let x0 = g as f64 - 0.4 + width * s as f64;
            Some(Rectangle::new([(x0, 0.0), (x0 + width, v)], color.filled()))
        });
        chart
            .draw_series(rects)
            .map_err(msg)?
            .label(name.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .label_font((plot::FONT, 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(msg)?;
    root.present().map_err(msg)
}
