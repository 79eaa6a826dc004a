//! Results and writers on a hand-built run: metrics by hand, table, JSON, CSV, SVG and PNG plots.

// Test helpers outside `#[test]` functions may panic on broken expectations.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::time::Duration;

use mpquic_netsim::Scenario;
use mpquic_netsim::metrics::app::Playback;
use mpquic_netsim::metrics::{PathSample, Recorder, SampleSource};
use mpquic_netsim::output::{csv, json, plot, table};
use mpquic_netsim::results::{FlowTotals, PathTotals, ReceiverTotals, RunResult, VideoTotals};
use mpquic_netsim::scenario::Direction;
use mpquic_netsim::scenario::sweep::Setting;

const SCENARIO: &str = r#"
[scenario]
name = "hand"
duration = "10s"
sample_interval = "1s"

[nodes.c]
kind = "host"
interfaces = [{ name = "a" }, { name = "b" }]

[nodes.r]
kind = "router"

[nodes.s]
kind = "host"
interfaces = [{ name = "eth0" }]

[links.la]
between = ["c.a", "r"]
rate_bps = 100_000_000
delay = "5ms"

[links.lb]
between = ["c.b", "r"]
rate_bps = 100_000_000
delay = "5ms"

[links.bn]
between = ["r", "s"]
rate_bps = 10_000_000
delay = "5ms"

[[flows]]
name = "sp"
from = "c"
to = "s"
cc = "cubic"
paths = [{ route = ["la", "bn"] }]

[[flows]]
name = "mp"
from = "c"
to = "s"
cc = "lia"
paths = [{ route = ["la", "bn"] }, { route = ["lb", "bn"] }]
"#;

/// Steady paths: sp at 4 Mbit/s, each mp path at 3 Mbit/s; srtt 20 ms + 10 ms per path index.
struct Steady {
    now_s: u64,
}

impl SampleSource for Steady {
    fn path_sample(&self, flow: usize, path: usize) -> Option<PathSample> {
        let rate_bytes_per_s = if flow == 0 { 500_000 } else { 375_000 };
        Some(PathSample {
            cwnd: 40_000 + 1_000 * self.now_s,
            srtt: Duration::from_millis(20 + 10 * path as u64 + self.now_s),
            bytes_in_flight: 30_000,
            delivered_bytes: rate_bytes_per_s * self.now_s,
            cc: if flow == 1 {
                vec![("alpha".to_owned(), 0.5), ("ssthresh".to_owned(), 1e5)]
            } else {
                vec![("ssthresh".to_owned(), 2e5)]
            },
        })
    }
}

fn hand_built() -> (Scenario, RunResult, Recorder) {
    let scenario = Scenario::from_toml_str(SCENARIO).unwrap();
    let topology = scenario.topology().unwrap();
    let mut rec = Recorder::new(
        scenario.scenario.sample_interval,
        scenario.scenario.duration,
        &[("sp".to_owned(), 1), ("mp".to_owned(), 2)],
    );
    while let Some(due) = rec.next_due() {
        let src = Steady {
            now_s: due.as_nanos() / 1_000_000_000,
        };
        assert!(rec.record(due, &src));
    }
    let totals = vec![
        FlowTotals {
            active: Duration::from_secs(10),
            paths: vec![PathTotals {
                delivered_bytes: 5_000_000,
                retransmissions: 7,
                abandoned: 0,
            }],
            ..FlowTotals::default()
        },
        FlowTotals {
            active: Duration::from_secs(10),
            paths: vec![
                PathTotals {
                    delivered_bytes: 3_750_000,
                    retransmissions: 2,
                    abandoned: 0,
                },
                PathTotals {
                    delivered_bytes: 3_750_000,
                    retransmissions: 3,
                    abandoned: 0,
                },
            ],
            ..FlowTotals::default()
        },
    ];
    let result = RunResult::build(&scenario, &topology, &totals, rec.series());
    (scenario, result, rec)
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn results_by_hand() {
    let (_, r, _) = hand_built();
    let sp = &r.flows[0];
    let mp = &r.flows[1];
    assert!(close(sp.goodput_bps, 4e6));
    assert!(close(mp.goodput_bps, 6e6));
    assert!(close(sp.paths[0].utilisation, 0.4));
    assert_eq!(mp.retransmissions, 5);
    // Agr_Bf: G = 6 < B_max = 10 → (6 − 10) / 10.
    assert!(close(mp.aggregate_benefit, -0.4));
    assert_eq!(sp.aggregate_benefit, None);
    // MP/SP = 6 / 4.
    assert!(close(mp.mp_sp_ratio, 1.5));
    // Jain across flows: (4 + 6)² / (2 · (16 + 36)) = 100 / 104.
    assert!(close(r.jain_flows, 100.0 / 104.0));
    // One bottleneck (bn forward, three paths): (4 + 3 + 3)² / (3 · 34).
    assert_eq!(r.bottlenecks.len(), 1);
    assert_eq!(r.bottlenecks[0].link, "bn");
    assert_eq!(r.bottlenecks[0].direction, Direction::Forward);
    assert_eq!(r.bottlenecks[0].paths, ["sp/path0", "mp/path0", "mp/path1"]);
    assert!(close(r.bottlenecks[0].jain, 100.0 / 102.0));
    // srtt samples of sp/path0: 21..=30 ms → mean 25.5, p95 = rank ⌈9.5⌉ = 10th = 30.
    assert!(close(sp.paths[0].rtt_mean_ms, 25.5));
    assert!(close(sp.paths[0].rtt_p95_ms, 30.0));
    assert!(close(mp.paths[1].rtt_p95_ms, 40.0));
    assert_eq!(mp.paths[1].route, ["lb>", "bn>"]);
    assert_eq!(mp.paths[1].endpoints, "c.b -> s.eth0");
}

#[test]
fn summary_table_is_aligned() {
    let (_, r, _) = hand_built();
    let text = table::summary(&r);
    println!("{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "hand (seed 1, 10 s simulated)");
    assert!(lines[1].starts_with("flow  path"));
    assert!(text.contains("mp    all"));
    assert!(text.contains("4.00"));
    assert!(text.contains("-0.400"));
    assert!(text.contains("1.500"));
    assert!(text.contains("Jain's index across flows: 0.9615"));
    assert!(text.contains("bn (forward)  sp/path0 mp/path0 mp/path1  0.9804"));
    // Numeric columns are right-aligned: every goodput cell ends at the same column.
    let header = lines[1];
    let end = header.find("goodput Mbit/s").unwrap() + "goodput Mbit/s".len();
    for line in &lines[3..8] {
        let cell = &line[..end];
        assert!(cell.ends_with(|c: char| c.is_ascii_digit()), "{line}");
    }
}

#[test]
fn json_has_every_metric_and_nulls() {
    let (_, r, _) = hand_built();
    let text = json::to_json(&r).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["scenario"], "hand");
    assert_eq!(v["flows"][1]["name"], "mp");
    assert_eq!(v["flows"][1]["mp_sp_ratio"], 1.5);
    assert_eq!(v["flows"][0]["aggregate_benefit"], serde_json::Value::Null);
    assert_eq!(v["flows"][0]["paths"][0]["goodput_bps"], 4e6);
    assert_eq!(v["flows"][0]["paths"][0]["retransmissions"], 7);
    assert_eq!(v["bottlenecks"][0]["direction"], "forward");
}

#[test]
fn csv_one_file_per_path_with_metric_columns() {
    let (_, _, rec) = hand_built();
    let mp1 = rec.path(1, 1).unwrap();
    let text = csv::series_csv(mp1);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "time_s,cwnd_bytes,srtt_ms,throughput_bps,bytes_in_flight,cc.alpha,cc.ssthresh"
    );
    assert_eq!(lines.len(), 11);
    assert_eq!(lines[1], "1.000000,41000,31.000,0,30000,0.5,100000");
    assert_eq!(lines[2], "2.000000,42000,32.000,3000000,30000,0.5,100000");
    let dir = std::env::temp_dir().join(format!("mpquic-netsim-csv-{}", std::process::id()));
    let files = csv::write_series(&dir, rec.series()).unwrap();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["sp_path0.csv", "mp_path0.csv", "mp_path1.csv"]);
    assert_eq!(std::fs::read_to_string(&files[2]).unwrap(), text);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Decodes a PNG file: (width, height, 8-bit RGB pixels).
fn decode_png(path: &std::path::Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb, "{}", path.display());
    assert_eq!(info.bit_depth, png::BitDepth::Eight, "{}", path.display());
    pixels.truncate(info.buffer_size());
    (info.width, info.height, pixels)
}

/// Pixels of `rows` (RGB, `width` wide) darker than mid-grey: text and axes are black, the background white.
fn dark_pixels(pixels: &[u8], width: u32, rows: std::ops::Range<u32>) -> usize {
    let w = width as usize * 3;
    pixels[rows.start as usize * w..rows.end as usize * w]
        .chunks(3)
        .filter(|p| p.iter().all(|&c| c < 100))
        .count()
}

#[test]
fn svg_and_png_plots_are_written_for_each_quantity() {
    let (_, _, rec) = hand_built();
    let dir = std::env::temp_dir().join(format!("mpquic-netsim-plot-{}", std::process::id()));
    let files = plot::write_plots(&dir, "hand", rec.series()).unwrap();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "throughput.svg",
            "throughput.png",
            "cwnd.svg",
            "cwnd.png",
            "rtt.svg",
            "rtt.png"
        ]
    );
    for stem in ["throughput", "cwnd", "rtt"] {
        let svg = std::fs::read_to_string(dir.join(format!("{stem}.svg"))).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        for name in ["sp/path0", "mp/path0", "mp/path1"] {
            assert!(svg.contains(name), "{stem}.svg lacks {name}");
        }
        assert!(svg.contains("time (s)"));
        assert!(svg.contains("<polyline"));

        let png = dir.join(format!("{stem}.png"));
        let (width, height, pixels) = decode_png(&png);
        assert_eq!((width, height), plot::SIZE, "{stem}.png");
        assert_eq!((width, height), (960, 540));
        // A white background with something drawn on it.
        let white = pixels.chunks(3).filter(|p| p == &[255, 255, 255]).count();
        let total = (width * height) as usize;
        assert!(
            white > total / 2 && white < total,
            "{stem}.png: {white} of {total} white"
        );
        // The caption (top 40 rows) is rasterised text: dark pixels where the SVG has a <text>.
        let caption = dark_pixels(&pixels, width, 0..40);
        assert!(caption > 100, "{stem}.png: caption has {caption} dark pixels");
        // The series are drawn in colour (Palette99), not only black and white.
        let coloured = pixels
            .chunks(3)
            .filter(|p| p.iter().max().unwrap() - p.iter().min().unwrap() > 80)
            .count();
        assert!(coloured > 500, "{stem}.png: {coloured} coloured pixels");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Controller metrics by name: `alpha` is reported by the two LIA paths only (0.5 in every sample, at 1 … 10 s),
/// `ssthresh` by every path; a name no path reports is an error that lists the run's metrics.
#[test]
fn controller_metrics_are_plotted_by_name() {
    let (_, _, rec) = hand_built();
    let mp0 = rec.path(1, 0).unwrap();
    let alpha = plot::metric_points(mp0, "alpha");
    assert_eq!(alpha.len(), 10);
    assert_eq!(alpha[0], (1.0, 0.5));
    assert_eq!(alpha[9], (10.0, 0.5));
    assert!(plot::metric_points(rec.path(0, 0).unwrap(), "alpha").is_empty());
    assert_eq!(plot::metric_names(rec.series()), ["alpha", "ssthresh"]);

    let dir = std::env::temp_dir().join(format!("mpquic-netsim-ccplot-{}", std::process::id()));
    let names = ["alpha".to_owned(), "ssthresh".to_owned()];
    let files = plot::write_metric_plots(&dir, "hand", rec.series(), &names).unwrap();
    let got: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        got,
        [
            "cc_alpha.svg",
            "cc_alpha.png",
            "cc_ssthresh.svg",
            "cc_ssthresh.png"
        ]
    );
    let svg = std::fs::read_to_string(dir.join("cc_alpha.svg")).unwrap();
    assert!(svg.contains("mp/path0") && svg.contains("mp/path1"));
    assert!(!svg.contains("sp/path0"), "sp reports no alpha");
    assert!(svg.contains("cc.alpha"));
    let ssthresh = std::fs::read_to_string(dir.join("cc_ssthresh.svg")).unwrap();
    assert!(ssthresh.contains("sp/path0"));
    let (width, height, _) = decode_png(&dir.join("cc_alpha.png"));
    assert_eq!((width, height), plot::SIZE);

    let err = plot::write_metric_plots(&dir, "hand", rec.series(), &["beta".to_owned()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("`beta`") && err.contains("alpha, ssthresh"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sweep_table_rows_mean_and_spread() {
    let (_, r, _) = hand_built();
    let mut rows = Vec::new();
    for (seed, scale) in [(1, 1.0), (2, 0.5)] {
        let mut res = r.clone();
        res.seed = seed;
        for f in &mut res.flows {
            f.goodput_bps = f.goodput_bps.map(|g| g * scale);
        }
        rows.push(table::SweepRow {
            settings: vec![Setting {
                parameter: "flows.mp.cc".to_owned(),
                value: "lia".to_owned(),
            }],
            seed,
            result: res,
        });
    }
    let text = table::sweep(&rows);
    println!("{text}");
    assert!(text.contains("flows.mp.cc  seed  sp Mbit/s  mp Mbit/s"));
    // sp: 4 and 2 → mean 3, sd √2 = 1.41.
    assert!(text.contains("3.00 ± 1.41"), "{text}");
    // mp: 6 and 3 → mean 4.5, sd 2.12.
    assert!(text.contains("4.50 ± 2.12"), "{text}");
    assert_eq!(table::sweep(&[]), "no runs\n");
}

/// `Steady` with a receiver on the multipath flow: out-of-order bytes 1000 · t, unread 2000 · t.
struct WithReceiver(Steady);

impl SampleSource for WithReceiver {
    fn path_sample(&self, flow: usize, path: usize) -> Option<PathSample> {
        self.0.path_sample(flow, path)
    }

    fn receiver_sample(&self, flow: usize) -> Option<mpquic_netsim::metrics::ReceiverSample> {
        (flow == 1).then(|| mpquic_netsim::metrics::ReceiverSample {
            out_of_order_bytes: 1000 * self.0.now_s,
            unread_bytes: 2000 * self.0.now_s,
        })
    }
}

/// The hand-built run with receiver statistics and FCTs on `mp` and a video result on `sp`.
fn with_applications() -> (RunResult, Recorder) {
    let scenario = Scenario::from_toml_str(SCENARIO).unwrap();
    let topology = scenario.topology().unwrap();
    let mut rec = Recorder::new(
        scenario.scenario.sample_interval,
        scenario.scenario.duration,
        &[("sp".to_owned(), 1), ("mp".to_owned(), 2)],
    );
    while let Some(due) = rec.next_due() {
        let src = WithReceiver(Steady {
            now_s: due.as_nanos() / 1_000_000_000,
        });
        assert!(rec.record(due, &src));
    }
    let ms = Duration::from_millis;
    let totals = vec![
        FlowTotals {
            active: Duration::from_secs(10),
            paths: vec![PathTotals::default()],
            video: Some(VideoTotals {
                chunk_bytes: 1_250_000,
                chunk_times: vec![ms(500), ms(1500), ms(900)],
                playback: Playback {
                    startup: Some(ms(500)),
                    stall: ms(250),
                    stalls: 1,
                },
            }),
            ..FlowTotals::default()
        },
        FlowTotals {
            active: Duration::from_secs(10),
            paths: vec![PathTotals::default(), PathTotals::default()],
            receiver: Some(ReceiverTotals {
                max_out_of_order_bytes: 300_000,
                max_unread_bytes: 400_000,
                bytes: 1_000_000,
                out_of_order: 250_000,
                hol_delay_mean: ms(3),
                hol_delay_p95: ms(12),
                hol_delay_max: ms(40),
                ..ReceiverTotals::default()
            }),
            objects: Some((1..=20).map(ms).collect()),
            ..FlowTotals::default()
        },
    ];
    (RunResult::build(&scenario, &topology, &totals, rec.series()), rec)
}

#[test]
fn application_metrics_in_json_and_table_only_where_reported() {
    let (r, _) = with_applications();
    let v: serde_json::Value = serde_json::from_str(&json::to_json(&r).unwrap()).unwrap();
    let mp = &v["flows"][1];
    assert_eq!(mp["receiver"]["hol_delay_p95_ms"], 12.0);
    assert_eq!(mp["receiver"]["reassembly_peak_bytes"], 300_000);
    assert_eq!(mp["receiver"]["out_of_order_fraction"], 0.25);
    // FCTs 1..=20 ms: mean 10.5, p50 rank 10, p95 rank 19, p99 rank 20.
    assert_eq!(mp["objects"]["count"], 20);
    assert_eq!(mp["objects"]["fct_mean_ms"], 10.5);
    assert_eq!(mp["objects"]["fct_p50_ms"], 10.0);
    assert_eq!(mp["objects"]["fct_p95_ms"], 19.0);
    assert_eq!(mp["objects"]["fct_p99_ms"], 20.0);
    assert!(mp.get("video").is_none());
    let sp = &v["flows"][0];
    assert!(sp.get("receiver").is_none() && sp.get("objects").is_none());
    // Chunks 500, 1500, 900 ms: mean 966.7, p95 the largest.
    assert_eq!(sp["video"]["chunks"], 3);
    assert_eq!(sp["video"]["chunk_time_p95_ms"], 1500.0);
    assert_eq!(sp["video"]["stall_s"], 0.25);
    assert_eq!(sp["video"]["startup_ms"], 500.0);
    let text = table::summary(&r);
    println!("{text}");
    assert!(text.contains("receiver  hol mean ms"), "{text}");
    assert!(
        text.contains(
            "mp               3.00       12.00       40.00   25.0               300.0           400.0"
        ),
        "{text}"
    );
    assert!(
        text.contains("mp             20         10.5        10.0        19.0        20.0        20.0"),
        "{text}"
    );
    assert!(
        text.contains(
            "sp          3    1250.0          966.7        1500.0        1500.0       500.0    0.250       1"
        ),
        "{text}"
    );
    // A run without them prints no such tables.
    let (_, plain, _) = hand_built();
    assert!(!table::summary(&plain).contains("receiver"));
    assert!(!json::to_json(&plain).unwrap().contains("\"receiver\""));
}

#[test]
fn receiver_series_in_csv_and_plots() {
    let (_, rec) = with_applications();
    let mp0 = csv::series_csv(rec.path(1, 0).unwrap());
    let lines: Vec<&str> = mp0.lines().collect();
    assert!(
        lines[0].ends_with(",rx_out_of_order_bytes,rx_unread_bytes"),
        "{}",
        lines[0]
    );
    assert!(lines[2].ends_with(",2000,4000"), "{}", lines[2]);
    // The single-path flow has no receiver columns.
    assert!(!csv::series_csv(rec.path(0, 0).unwrap()).contains("rx_"));
    let dir = std::env::temp_dir().join(format!("mpquic-netsim-rxplot-{}", std::process::id()));
    let files = plot::write_plots(&dir, "hand", rec.series()).unwrap();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names[6..], ["receiver_mp.svg", "receiver_mp.png"]);
    let svg = std::fs::read_to_string(dir.join("receiver_mp.svg")).unwrap();
    for text in [
        "mp/path0",
        "mp/path1",
        "out-of-order (reassembly)",
        "unread",
        "cwnd (kB)",
        "RTT (ms)",
    ] {
        assert!(svg.contains(text), "receiver_mp.svg lacks {text}");
    }
    let (w, h, _) = decode_png(&dir.join("receiver_mp.png"));
    assert_eq!((w, h), plot::RECEIVER_SIZE);
    std::fs::remove_dir_all(&dir).unwrap();
}
