//! The results as a table (one row per test case, one column per client → server pair, ✓ / ✗ / unsupported)
//! and as JSON.

use std::fmt::Write as _;

use super::{CaseResult, Outcome};

/// Whether any supported run failed.
pub fn any_failed(results: &[CaseResult]) -> bool {
    results.iter().any(|r| matches!(r.outcome, Outcome::Failed(_)))
}

/// The table, followed by the reason of every failure.
pub fn table(results: &[CaseResult]) -> String {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut cases: Vec<String> = Vec::new();
    for r in results {
        let pair = (r.client.clone(), r.server.clone());
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
        if !cases.contains(&r.case) {
            cases.push(r.case.clone());
        }
    }
    let heads: Vec<String> = pairs.iter().map(|(c, s)| format!("{c} → {s}")).collect();
    let widths: Vec<usize> = heads.iter().map(|h| h.chars().count().max(11)).collect();
    let case_w = cases
        .iter()
        .map(String::len)
        .max()
        .unwrap_or(4)
        .max("client → server".len());
    let mut out = String::new();
    let _ = write!(out, "{:<case_w$}", "client → server");
    for (h, w) in heads.iter().zip(&widths) {
        let _ = write!(out, " | {h:^w$}");
    }
    out.push('\n');
    let _ = write!(out, "{}", "-".repeat(case_w));
    for w in &widths {
        let _ = write!(out, "-+-{}", "-".repeat(*w));
    }
    out.push('\n');
    for case in &cases {
        let _ = write!(out, "{case:<case_w$}");
        for (pair, w) in pairs.iter().zip(&widths) {
            let cell = results
                .iter()
                .find(|r| &r.case == case && r.client == pair.0 && r.server == pair.1)
                .map_or("", |r| match r.outcome {
                    Outcome::Passed => "✓",
                    Outcome::Failed(_) => "✗",
                    Outcome::Unsupported => "unsupported",
                });
            let _ = write!(out, " | {cell:^w$}");
        }
        out.push('\n');
    }
    let passed = results.iter().filter(|r| r.outcome == Outcome::Passed).count();
    let failed = results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Failed(_)))
        .count();
    let unsupported = results.len() - passed - failed;
    let _ = writeln!(
        out,
        "\n{passed} passed, {failed} failed, {unsupported} unsupported"
    );
    for r in results {
        if let Outcome::Failed(why) = &r.outcome {
            let _ = writeln!(
                out,
                "✗ {} → {} {}: {why} (logs: {})",
                r.client,
                r.server,
                r.case,
                r.log_dir.display()
            );
        }
    }
    out
}

/// The results as JSON.
pub fn json(results: &[CaseResult]) -> String {
    serde_json::to_string_pretty(results).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(client: &str, case: &str, outcome: Outcome) -> CaseResult {
        CaseResult {
            client: client.to_owned(),
            server: "s".to_owned(),
            case: case.to_owned(),
            outcome,
            duration_ms: 1,
            log_dir: "logs".into(),
        }
    }

    #[test]
    fn table_marks_every_outcome() {
        let rs = vec![
            r("a", "handshake", Outcome::Passed),
            r("b", "handshake", Outcome::Failed("boom".to_owned())),
            r("a", "mp-transfer", Outcome::Unsupported),
        ];
        let t = table(&rs);
        assert!(t.contains("a → s") && t.contains("b → s"));
        assert!(t.contains('✓') && t.contains('✗') && t.contains("unsupported"));
        assert!(t.contains("1 passed, 1 failed, 1 unsupported"));
        assert!(t.contains("boom"));
        assert!(any_failed(&rs));
        assert!(!any_failed(&rs[..1]));
        assert!(json(&rs).contains("\"outcome\": \"failed\""));
    }
}
