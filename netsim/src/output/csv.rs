//! CSV time series: **one file per flow and path**, named `<flow>_path<k>.csv`, one row per sample.
//!
//! Columns: `time_s, cwnd_bytes, srtt_ms, throughput_bps, bytes_in_flight`, then one column per controller
//! metric, named `cc.<name>`, in order of first appearance in that series; a sample without a metric leaves
//! its cell empty. A flow that reports its receiver adds `rx_out_of_order_bytes, rx_unread_bytes` at the end:
//! the receiving end's reassembly buffer and unread bytes at the same instant (one value per flow, repeated
//! in each of its paths' files). One file per path keeps each file rectangular even though controllers report different
//! metrics, and loads directly into a spreadsheet or `pandas.read_csv`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::OutputError;
use crate::metrics::PathSeries;

/// The CSV text of one series.
pub fn series_csv(series: &PathSeries) -> String {
    let mut names: Vec<&str> = Vec::new();
    for sample in &series.samples {
        for (name, _) in &sample.cc {
            if !names.contains(&name.as_str()) {
                names.push(name);
            }
        }
    }
    let receiver = series.samples.iter().any(|s| s.receiver.is_some());
    let mut out = String::from("time_s,cwnd_bytes,srtt_ms,throughput_bps,bytes_in_flight");
    for name in &names {
        let _ = write!(out, ",cc.{}", name.replace([',', '"', '\n'], "_"));
    }
    if receiver {
        out.push_str(",rx_out_of_order_bytes,rx_unread_bytes");
    }
    out.push('\n');
    for s in &series.samples {
        let _ = write!(
            out,
            "{:.6},{},{:.3},{:.0},{}",
            s.time.since_epoch().as_secs_f64(),
            s.cwnd,
            s.srtt.as_secs_f64() * 1e3,
            s.throughput_bps,
            s.bytes_in_flight
        );
        for name in &names {
            out.push(',');
            if let Some((_, v)) = s.cc.iter().find(|(n, _)| n == name) {
                let _ = write!(out, "{v}");
            }
        }
        if receiver {
            match s.receiver {
                Some(r) => {
                    let _ = write!(out, ",{},{}", r.out_of_order_bytes, r.unread_bytes);
                }
                None => out.push_str(",,"),
            }
        }
        out.push('\n');
    }
    out
}

/// The file name of a series: `<flow>_path<k>.csv`.
pub fn file_name(series: &PathSeries) -> String {
    format!("{}_path{}.csv", series.flow, series.path)
}

/// Writes one CSV file per series into `dir` (created if needed); returns the files written.
pub fn write_series(dir: &Path, series: &[PathSeries]) -> Result<Vec<PathBuf>, OutputError> {
    std::fs::create_dir_all(dir).map_err(|e| OutputError::io(dir, e))?;
    let mut files = Vec::with_capacity(series.len());
    for s in series {
        let path = dir.join(file_name(s));
        std::fs::write(&path, series_csv(s)).map_err(|e| OutputError::io(&path, e))?;
        files.push(path);
    }
    Ok(files)
}
