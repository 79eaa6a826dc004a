//! Aligned text tables: the summary of one run and the rows of a sweep.
//!
//! Undefined values print as `-`. Text columns are left-aligned, numbers right-aligned.
//!
//! The summary of a run ends with the receiver and workload tables ([`applications`]) when a flow reports
//! them (a `receiver` section or a workload other than bulk); a run of bulk flows alone prints exactly as
//! before they existed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::metrics;
use crate::results::RunResult;
use crate::scenario::sweep::Setting;

/// A table of text cells rendered with aligned columns.
#[derive(Clone, Debug, Default)]
pub struct TextTable {
    headers: Vec<String>,
    /// Whether each column is numeric (right-aligned).
    numeric: Vec<bool>,
    rows: Vec<Vec<String>>,
}

impl TextTable {
    /// A table with these columns; `numeric[i]` right-aligns column `i`.
    pub fn new(columns: &[(&str, bool)]) -> TextTable {
        TextTable {
            headers: columns.iter().map(|(h, _)| (*h).to_owned()).collect(),
            numeric: columns.iter().map(|(_, n)| *n).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row (missing cells are empty, extra cells are dropped).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as lines of text, each ending with a newline.
    pub fn render(&self) -> String {
        let width = |i: usize| {
            let head = self.headers.get(i).map_or(0, |h| h.chars().count());
            self.rows
                .iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .fold(head, usize::max)
        };
        let widths: Vec<usize> = (0..self.headers.len()).map(width).collect();
        let mut out = String::new();
        let line = |cells: &[String], out: &mut String| {
            let mut text = String::new();
            for (i, w) in widths.iter().enumerate() {
                let cell = cells.get(i).map_or("", String::as_str);
                if i > 0 {
                    text.push_str("  ");
                }
                if self.numeric.get(i).copied().unwrap_or(false) {
                    let _ = write!(text, "{cell:>w$}");
                } else {
                    let _ = write!(text, "{cell:<w$}");
                }
            }
            out.push_str(text.trim_end());
            out.push('\n');
        };
        line(&self.headers, &mut out);
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        line(&rule, &mut out);
        for row in &self.rows {
            line(row, &mut out);
        }
        out
    }
}

/// `value` with `decimals` decimals, or `-`.
pub fn num(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.decimals$}"))
}

/// Bits per second as Mbit/s with two decimals, or `-`.
pub fn mbps(bps: Option<f64>) -> String {
    num(bps.map(|b| b / 1e6), 2)
}

/// The summary of one run: one line per flow and one per path, then fairness per bottleneck.
pub fn summary(result: &RunResult) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} (seed {}, {} s simulated)",
        result.scenario, result.seed, result.duration_s
    );
    let mut t = TextTable::new(&[
        ("flow", false),
        ("path", false),
        ("cc", false),
        ("sched", false),
        ("goodput Mbit/s", true),
        ("util %", true),
        ("retx", true),
        ("cong events", true),
        ("rtt mean ms", true),
        ("rtt p95 ms", true),
        ("agr benefit", true),
        ("mp/sp", true),
    ]);
    for flow in &result.flows {
        t.row(vec![
            flow.name.clone(),
            "all".to_owned(),
            flow.cc.clone(),
            flow.sched.clone(),
            mbps(flow.goodput_bps),
            String::new(),
            flow.retransmissions.to_string(),
            flow.congestion_events.to_string(),
            String::new(),
            String::new(),
            num(flow.aggregate_benefit, 3),
            num(flow.mp_sp_ratio, 3),
        ]);
        for path in &flow.paths {
            t.row(vec![
                String::new(),
                format!("{} {}", path.path, path.route.join(" ")),
                String::new(),
                String::new(),
                mbps(path.goodput_bps),
                num(path.utilisation.map(|u| u * 100.0), 1),
                path.retransmissions.to_string(),
                String::new(),
                num(path.rtt_mean_ms, 2),
                num(path.rtt_p95_ms, 2),
                String::new(),
                String::new(),
            ]);
        }
    }
    out.push_str(&t.render());
    let _ = writeln!(out, "Jain's index across flows: {}", num(result.jain_flows, 4));
    if !result.bottlenecks.is_empty() {
        let mut b = TextTable::new(&[
            ("bottleneck", false),
            ("paths", false),
            ("jain", true),
            ("queue drops", true),
            ("loss drops", true),
        ]);
        for bn in &result.bottlenecks {
            b.row(vec![
                format!("{} ({})", bn.link, bn.direction.as_str()),
                bn.paths.join(" "),
                num(bn.jain, 4),
                bn.dropped_queue_full.to_string(),
                bn.dropped_loss.to_string(),
            ]);
        }
        out.push_str(&b.render());
    }
    out.push_str(&applications(result));
    out
}

/// Bytes as kB with one decimal.
fn kb(bytes: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let v = bytes as f64 / 1e3;
    format!("{v:.1}")
}

/// The receiver and workload tables of a run: per flow that reports them, the receiving end's head-of-line
/// delay and buffer peaks, the FCTs of a request workload, the chunks and stalls of a video; empty when no
/// flow reports any.
pub fn applications(result: &RunResult) -> String {
    let mut out = String::new();
    let mut rx = TextTable::new(&[
        ("receiver", false),
        ("hol mean ms", true),
        ("hol p95 ms", true),
        ("hol max ms", true),
        ("ooo %", true),
        ("reassembly peak kB", true),
        ("unread peak kB", true),
    ]);
    let mut req = TextTable::new(&[
        ("requests", false),
        ("objects", true),
        ("fct mean ms", true),
        ("fct p50 ms", true),
        ("fct p95 ms", true),
        ("fct p99 ms", true),
        ("fct max ms", true),
    ]);
    let mut video = TextTable::new(&[
        ("video", false),
        ("chunks", true),
        ("chunk kB", true),
        ("chunk mean ms", true),
        ("chunk p95 ms", true),
        ("chunk max ms", true),
        ("startup ms", true),
        ("stall s", true),
        ("stalls", true),
    ]);
    let (mut any_rx, mut any_req, mut any_video) = (false, false, false);
    for flow in &result.flows {
        if let Some(r) = &flow.receiver {
            any_rx = true;
            rx.row(vec![
                flow.name.clone(),
                num(Some(r.hol_delay_mean_ms), 2),
                num(Some(r.hol_delay_p95_ms), 2),
                num(Some(r.hol_delay_max_ms), 2),
                num(r.out_of_order_fraction.map(|f| f * 100.0), 1),
                kb(r.reassembly_peak_bytes),
                kb(r.unread_peak_bytes),
            ]);
        }
        if let Some(o) = &flow.objects {
            any_req = true;
            req.row(vec![
                flow.name.clone(),
                o.count.to_string(),
                num(o.fct_mean_ms, 1),
                num(o.fct_p50_ms, 1),
                num(o.fct_p95_ms, 1),
                num(o.fct_p99_ms, 1),
                num(o.fct_max_ms, 1),
            ]);
        }
        if let Some(v) = &flow.video {
            any_video = true;
            video.row(vec![
                flow.name.clone(),
                v.chunks.to_string(),
                kb(v.chunk_bytes),
                num(v.chunk_time_mean_ms, 1),
                num(v.chunk_time_p95_ms, 1),
                num(v.chunk_time_max_ms, 1),
                num(v.startup_ms, 1),
                num(Some(v.stall_s), 3),
                v.stalls.to_string(),
            ]);
        }
    }
    for (any, t) in [(any_rx, &rx), (any_req, &req), (any_video, &video)] {
        if any {
            out.push_str(&t.render());
        }
    }
    out
}

/// One run of a sweep, for [`sweep`].
#[derive(Clone, Debug)]
pub struct SweepRow {
    /// The swept parameters' values.
    pub settings: Vec<Setting>,
    /// The seed.
    pub seed: u64,
    /// The run's results.
    pub result: RunResult,
}

/// A sweep: one row per run (settings, seed, goodput of each flow, Jain's index), then per combination of
/// settings the mean and the spread (sample standard deviation across seeds; `-` for one seed).
pub fn sweep(rows: &[SweepRow]) -> String {
    let Some(first) = rows.first() else {
        return "no runs\n".to_owned();
    };
    let params: Vec<String> = first.settings.iter().map(|s| s.parameter.clone()).collect();
    let flows: Vec<String> = first
        .result
        .flows
        .iter()
        .map(|f| format!("{} Mbit/s", f.name))
        .collect();
    let mut columns: Vec<(&str, bool)> = params.iter().map(|p| (p.as_str(), false)).collect();
    columns.push(("seed", true));
    columns.extend(flows.iter().map(|f| (f.as_str(), true)));
    columns.push(("jain", true));
    let mut t = TextTable::new(&columns);
    // Per combination: goodputs per flow and Jain's index, across seeds, in first-seen order.
    let mut groups: Vec<(Vec<String>, Vec<Vec<f64>>)> = Vec::new();
    let mut index: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    for row in rows {
        let key: Vec<String> = row.settings.iter().map(|s| s.value.clone()).collect();
        let mut values: Vec<Option<f64>> = row.result.flows.iter().map(|f| f.goodput_bps).collect();
        values.push(row.result.jain_flows);
        let mut cells = key.clone();
        cells.push(row.seed.to_string());
        let n_flows = row.result.flows.len();
        for (i, v) in values.iter().enumerate() {
            cells.push(if i < n_flows { mbps(*v) } else { num(*v, 4) });
        }
        t.row(cells);
        let g = *index.entry(key.clone()).or_insert_with(|| {
            groups.push((key, vec![Vec::new(); values.len()]));
            groups.len().saturating_sub(1)
        });
        if let Some((_, cols)) = groups.get_mut(g) {
            for (col, v) in cols.iter_mut().zip(&values) {
                if let Some(v) = v {
                    col.push(*v);
                }
            }
        }
    }
    let mut out = t.render();
    out.push('\n');
    let mut columns: Vec<(&str, bool)> = params.iter().map(|p| (p.as_str(), false)).collect();
    columns.push(("runs", true));
    let stat_names: Vec<String> = flows
        .iter()
        .map(|f| format!("{f} mean ± sd"))
        .chain(std::iter::once("jain mean ± sd".to_owned()))
        .collect();
    columns.extend(stat_names.iter().map(|s| (s.as_str(), true)));
    let mut s = TextTable::new(&columns);
    let n_flows = flows.len();
    for (key, cols) in &groups {
        let mut cells = key.clone();
        cells.push(cols.first().map_or(0, Vec::len).to_string());
        for (i, col) in cols.iter().enumerate() {
            let (scale, decimals) = if i < n_flows { (1e-6, 2) } else { (1.0, 4) };
            let m = metrics::mean(col).map(|v| v * scale);
            let sd = metrics::std_dev(col).map(|v| v * scale);
            cells.push(format!("{} ± {}", num(m, decimals), num(sd, decimals)));
        }
        s.row(cells);
    }
    out.push_str(&s.render());
    out
}
