//! End-to-end tests: a run directory with a metrics file in, plots and a summary out.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use draughts_report::{write_report, PlotStatus, ReportError};

const T0: f64 = 1_700_000_000.0;
const OPPONENTS: [&str; 3] = ["random", "alphabeta:depth=1", "previous"];
const CYCLES: i64 = 3;

fn games(c: i64) -> u64 {
    100 + 10 * c as u64
}

/// Elo of the model of cycle `c` against opponent `o`, with its interval.
fn elo(c: i64, o: usize) -> (f64, f64, f64) {
    let e = 400.0 - 150.0 * o as f64 + 55.5 * c as f64;
    (e, e - 60.0 - 10.0 * o as f64, e + 70.0 + 5.0 * c as f64)
}

/// A metrics file of `CYCLES` cycles of every stage, plus one unknown stage and (if
/// `truncated`) an unfinished last line. Returns the text and its number of lines.
fn fixture(truncated: bool) -> (String, usize) {
    let mut s = String::new();
    let mut push = |line: String| {
        s.push_str(&line);
        s.push('\n');
    };
    push(format!(
        r#"{{"time": {T0}, "stage": "start", "seed": 42, "version": "0.1.0", "command": "draughts train"}}"#
    ));
    push(format!(
        r#"{{"time": {T0}, "stage": "config", "path": "config.toml"}}"#
    ));
    for c in 0..CYCLES {
        let t = T0 + 900.0 * c as f64;
        let g = games(c);
        push(format!(
            r#"{{"time": {}, "stage": "selfplay", "cycle": {c}, "games": {g}, "positions": {}, "seconds": 300.0, "games_per_hour": {}, "positions_per_second": {}, "evals_per_second": {}, "mean_batch": 61.5, "model": "m{c}", "plies_mean": 82.0, "white_wins": {}, "draws": {}, "black_wins": {}, "resign_false_positive": 0.02}}"#,
            t + 300.0,
            g * 80,
            g as f64 * 12.0,
            g as f64 * 80.0 / 300.0,
            5000 + 250 * c,
            g / 4,
            g / 2,
            g - g / 4 - g / 2,
        ));
        for k in 0..4 {
            let step = (c * 4 + k + 1) * 250;
            let x = step as f64 / 1000.0;
            push(format!(
                r#"{{"time": {}, "stage": "train", "cycle": {c}, "step": {step}, "samples": 64000, "seconds": 40.0, "samples_per_second": {}, "loss": {}, "policy_loss": {}, "value_loss": {}, "moves_left_loss": {}, "lr": 0.002, "window_positions": {}}}"#,
                t + 320.0 + 45.0 * k as f64,
                1600.0 + 10.0 * k as f64,
                4.0 / (1.0 + x) + 0.8,
                3.0 / (1.0 + x) + 0.5,
                1.0 / (1.0 + x) + 0.3,
                0.5 / (1.0 + x),
                8000 * (c + 1),
            ));
        }
        push(format!(
            r#"{{"time": {}, "stage": "gc", "cycle": {c}, "freed_bytes": 12345}}"#,
            t + 510.0
        ));
        for (o, name) in OPPONENTS.iter().enumerate() {
            let (e, lo, hi) = elo(c, o);
            push(format!(
                r#"{{"time": {}, "stage": "eval", "cycle": {c}, "opponent": "{name}", "games": 40, "wins": {}, "draws": 4, "losses": {}, "score": {}, "elo": {e}, "elo_low": {lo}, "elo_high": {hi}, "model": "m{c}"}}"#,
                t + 600.0 + 60.0 * o as f64,
                30 - o,
                6 + o,
                (30.0 - o as f64 + 2.0) / 40.0,
            ));
        }
    }
    if truncated {
        // What a crash in the middle of a write leaves: no closing brace, no newline.
        s.push_str(r#"{"time": 1700002800.0, "stage": "selfplay", "cycle": 3, "games": 1"#);
    }
    let lines = s.lines().count();
    (s, lines)
}

fn run_dir_with(metrics: &str, config: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    fs::write(dir.path().join("metrics.jsonl"), metrics).expect("write metrics");
    if config {
        fs::write(dir.path().join("config.toml"), "[selfplay]\ngames = 100\n")
            .expect("write config");
    }
    dir
}

/// Decodes a PNG fully (checking its CRCs and structure) and returns width, height and RGB(A)
/// pixels.
fn decode_png(path: &Path) -> (u32, u32, Vec<u8>, usize) {
    let bytes = fs::read(path).expect("read png");
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} has no PNG signature",
        path.display()
    );
    let decoder = png::Decoder::new(std::io::Cursor::new(&bytes[..]));
    let mut reader = decoder.read_info().expect("png header");
    let mut pixels = vec![
        0;
        reader
            .output_buffer_size()
            .expect("image size fits in memory")
    ];
    let info = reader.next_frame(&mut pixels).expect("png data");
    (info.width, info.height, pixels, info.color_type.samples())
}

fn count_pixels(pixels: &[u8], samples: usize, pred: impl Fn(&[u8]) -> bool) -> usize {
    pixels.chunks_exact(samples).filter(|p| pred(p)).count()
}

#[test]
fn full_run_gives_three_plots_and_a_summary() {
    let (text, lines) = fixture(true);
    let run = run_dir_with(&text, true);
    let out = run.path().join("report");
    let report = write_report(run.path(), &out).expect("report");

    // Every plot is written and is a real, non-blank PNG with the first series' colour.
    for p in &report.plots {
        let PlotStatus::Written(path) = &p.status else {
            panic!("{} was skipped: {:?}", p.name, p.status)
        };
        assert_eq!(path, &out.join(p.name));
        let (w, h, pixels, samples) = decode_png(path);
        assert!(w >= 800 && h >= 400, "{}: {w}x{h}", p.name);
        let blue = count_pixels(&pixels, samples, |px| px[..3] == [31, 119, 180]);
        assert!(
            blue > 100,
            "{}: only {blue} pixels of the first series colour",
            p.name
        );
        // The title is text in the top band: dark anti-aliased pixels must be there.
        let band = &pixels[..(w as usize * 40 * samples)];
        let dark = count_pixels(band, samples, |px| px[..3].iter().all(|&v| v < 100));
        assert!(
            dark > 50,
            "{}: title band has only {dark} dark pixels (text not drawn?)",
            p.name
        );
    }
    assert_eq!(report.plots.len(), 4);

    // Nothing but the report files is left in the output directory (no temporary files).
    let mut names: Vec<String> = fs::read_dir(&out)
        .expect("out dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["learning.png", "losses.png", "rating.png", "summary.md", "throughput.png"]
    );

    // The truncated last line is the one warning, and it names its line.
    assert_eq!(report.lines, lines as u64);
    assert_eq!(report.skipped_lines, 1);
    assert_eq!(report.warning_count, 1);
    assert_eq!(report.warnings[0].line, lines as u64);

    let summary = fs::read_to_string(&report.summary_path).expect("summary");
    let total_games: u64 = (0..CYCLES).map(games).sum();
    assert!(
        summary.contains(&format!("| Self-play games | {total_games} |")),
        "{summary}"
    );
    assert!(
        summary.contains(&format!("| Training steps | {} |", CYCLES * 4 * 250)),
        "{summary}"
    );
    let last = CYCLES - 1;
    for (o, name) in OPPONENTS.iter().enumerate() {
        let (e, lo, hi) = elo(last, o);
        let row = format!(
            "| {name} | {last} | m{last} | 40 | {} / 4 / {} |",
            30 - o,
            6 + o
        );
        let elo_cell = format!("{e:+.0} [{lo:+.0}, {hi:+.0}] |");
        let line = summary
            .lines()
            .find(|l| l.starts_with(&row))
            .unwrap_or_else(|| panic!("no row {row:?} in\n{summary}"));
        assert!(
            line.ends_with(&elo_cell),
            "{line:?} should end with {elo_cell:?}"
        );
    }
    assert!(
        summary.contains(&format!("- line {lines}: not valid JSON")),
        "{summary}"
    );
    assert!(summary.contains("truncated"), "{summary}");
    assert!(summary.contains("`config.toml` present"), "{summary}");
    assert!(summary.contains("| seed | 42 |"), "{summary}");
    assert!(
        summary.contains("`gc` (3)"),
        "unknown stage should be noted: {summary}"
    );
    for png in ["losses.png", "rating.png", "throughput.png"] {
        assert!(
            summary.contains(&format!("[{png}]({png})")),
            "no link to {png}: {summary}"
        );
    }
    // Final losses come from the last training line (step 3000, x = 3).
    assert!(
        summary.contains(&format!(
            "| {:.4} | {:.4} |",
            4.0 / 4.0 + 0.8,
            3.0 / 4.0 + 0.5
        )),
        "{summary}"
    );
}

#[test]
fn selfplay_only_run_skips_the_empty_plots() {
    let (text, _) = fixture(false);
    let only: String = text
        .lines()
        .filter(|l| l.contains(r#""stage": "selfplay""#))
        .map(|l| format!("{l}\n"))
        .collect();
    let run = run_dir_with(&only, false);
    let out = run.path().join("report");

    // A previous report left all plots; the ones without data now must disappear.
    let (full, _) = fixture(false);
    fs::write(run.path().join("metrics.jsonl"), &full).expect("write");
    write_report(run.path(), &out).expect("full report");
    assert!(out.join("losses.png").exists());
    fs::write(run.path().join("metrics.jsonl"), &only).expect("write");

    let report = write_report(run.path(), &out).expect("report");
    let status = |name: &str| {
        report
            .plots
            .iter()
            .find(|p| p.name == name)
            .expect("plot")
            .status
            .clone()
    };
    assert!(matches!(status("losses.png"), PlotStatus::Skipped { .. }));
    assert!(matches!(status("rating.png"), PlotStatus::Skipped { .. }));
    assert!(matches!(status("learning.png"), PlotStatus::Skipped { .. }));
    assert!(matches!(status("throughput.png"), PlotStatus::Written(_)));
    assert!(
        !out.join("losses.png").exists(),
        "stale losses.png was not removed"
    );
    assert!(
        !out.join("rating.png").exists(),
        "stale rating.png was not removed"
    );
    let (w, h, _, _) = decode_png(&out.join("throughput.png"));
    assert!(w > 0 && h > 0);

    let summary = fs::read_to_string(&report.summary_path).expect("summary");
    assert!(
        summary.contains("- losses.png: not drawn, no training line"),
        "{summary}"
    );
    assert!(
        summary.contains("- rating.png: not drawn, no evaluation line"),
        "{summary}"
    );
    assert!(summary.contains("No evaluation lines."), "{summary}");
    assert!(summary.contains("no `config.toml`"), "{summary}");
    assert!(summary.contains("None: every line was read."), "{summary}");
    let total_games: u64 = (0..CYCLES).map(games).sum();
    assert!(
        summary.contains(&format!("| Self-play games | {total_games} |")),
        "{summary}"
    );
}

#[test]
fn missing_empty_and_garbage_metrics_are_typed_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("report");

    let err = write_report(dir.path(), &out).expect_err("no metrics file");
    assert!(matches!(err, ReportError::MissingMetrics { .. }), "{err:?}");
    assert!(err.to_string().contains("metrics.jsonl"), "{err}");

    fs::write(dir.path().join("metrics.jsonl"), "").expect("write");
    let err = write_report(dir.path(), &out).expect_err("empty metrics file");
    assert!(
        matches!(err, ReportError::EmptyMetrics { lines: 0, .. }),
        "{err:?}"
    );

    fs::write(
        dir.path().join("metrics.jsonl"),
        "\n{\"stage\": \"train\", \"loss\"\n",
    )
    .expect("write");
    let err = write_report(dir.path(), &out).expect_err("garbage metrics file");
    match &err {
        ReportError::EmptyMetrics {
            lines: 2,
            skipped: 1,
            first_problem: Some(w),
            ..
        } => assert_eq!(w.line, 2),
        other => panic!("unexpected {other:?}"),
    }
    assert!(err.to_string().contains("line 2"), "{err}");
    assert!(
        !out.exists(),
        "no output directory is created for a failed report"
    );

    let err = write_report(&dir.path().join("nope"), &out).expect_err("no run dir");
    assert!(matches!(err, ReportError::RunDirNotFound { .. }), "{err:?}");
}

#[test]
fn evaluation_without_cycles_is_plotted_against_time_and_bad_fields_warned() {
    let mut text = String::new();
    for i in 0..4 {
        let _ = writeln!(
            text,
            r#"{{"time": {}, "stage": "eval", "opponent": "random", "games": 10, "elo": {}, "elo_low": null, "elo_high": "high"}}"#,
            T0 + 3600.0 * i as f64,
            100.0 * i as f64
        );
    }
    let run = run_dir_with(&text, false);
    let report = write_report(run.path(), &run.path().join("r")).expect("report");
    let rating = report
        .plots
        .iter()
        .find(|p| p.name == "rating.png")
        .expect("rating");
    assert!(
        matches!(rating.status, PlotStatus::Written(_)),
        "{rating:?}"
    );
    // `elo_high` is a string on every line: one warning per line, none skipped.
    assert_eq!(report.warning_count, 4);
    assert_eq!(report.skipped_lines, 0);
    assert!(report
        .warnings
        .iter()
        .all(|w| w.message.contains("`elo_high`")));
    let summary = fs::read_to_string(&report.summary_path).expect("summary");
    assert!(
        summary.contains("| random | – | – | 10 | – | – | +300 |"),
        "{summary}"
    );
}

#[test]
fn hostile_values_never_panic() {
    // Each line is legal JSON with values at or past the edge of sense; the report must still
    // be written, with plots or with reasons.
    let lines = [
        r#"{"time": -1e300, "stage": "selfplay", "cycle": -5, "games": -3, "seconds": 0, "games_per_hour": 1e300}"#,
        r#"{"time": 1e300, "stage": "train", "cycle": 9007199254740993, "step": 18446744073709551615, "loss": -1e308, "samples": 1, "seconds": 1e-300}"#,
        r#"{"time": 5, "stage": "train", "step": 1, "loss": 1e-320, "policy_loss": 0, "value_loss": 0}"#,
        r#"{"time": 6, "stage": "eval", "cycle": 1, "opponent": "", "elo": 1e200, "elo_low": 1e201, "elo_high": -1e201}"#,
        r#"{"time": 7, "stage": "eval", "cycle": 1, "opponent": "x|y\nz", "elo": 5, "elo_low": 10, "elo_high": 0, "wins": 0, "draws": 0, "losses": 0}"#,
        r#"{"time": 8, "stage": "eval", "cycle": 2, "opponent": "random", "elo": -800, "elo_low": null, "elo_high": 1e12}"#,
        r#"{"time": 9, "stage": "start", "note": {"nested": [1, 2, {"deep": true}]}, "text": "a|b"}"#,
        r#"{"time": NaN, "stage": "train", "step": 3, "loss": 1.0}"#,
        r#"{"time": 10, "stage": "selfplay", "games": 1.5, "evals_per_second": "fast", "white_wins": 1e30}"#,
        r#"{"stage": "train", "step": 2, "loss": 0.5, "samples_per_second": 1e13}"#,
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let run = run_dir_with(&text, false);
    let report = write_report(run.path(), &run.path().join("report")).expect("report");
    assert_eq!(report.lines, lines.len() as u64);
    // Only the NaN line is unreadable; the wrong-typed fields are warnings on kept lines.
    assert_eq!(report.skipped_lines, 1);
    assert!(
        report.warnings.iter().any(|w| w.line == 8),
        "{:?}",
        report.warnings
    );
    assert!(report
        .warnings
        .iter()
        .any(|w| w.line == 1 && w.message.contains("`games`")));
    let summary = fs::read_to_string(&report.summary_path).expect("summary");
    assert!(
        summary.contains("x\\|y z"),
        "table cells are escaped: {summary}"
    );
    for p in &report.plots {
        if let PlotStatus::Written(path) = &p.status {
            let (w, h, _, _) = decode_png(path);
            assert!(w > 0 && h > 0);
        }
    }
}

#[test]
fn long_ladders_are_drawn_with_bands() {
    // More ratings per opponent than error bars can show apart: the plot uses shaded bands.
    let mut text = String::new();
    for c in 0..80 {
        let e = 10.0 * c as f64;
        let _ = writeln!(
            text,
            r#"{{"time": {}, "stage": "eval", "cycle": {c}, "opponent": "random", "games": 50, "elo": {e}, "elo_low": {}, "elo_high": {}}}"#,
            T0 + 60.0 * c as f64,
            e - 40.0,
            e + 40.0
        );
    }
    let run = run_dir_with(&text, false);
    let report = write_report(run.path(), &run.path().join("r")).expect("report");
    let rating = report
        .plots
        .iter()
        .find(|p| p.name == "rating.png")
        .expect("rating");
    let PlotStatus::Written(path) = &rating.status else {
        panic!("{rating:?}")
    };
    let (_, _, pixels, samples) = decode_png(path);
    // The band is the series colour (31, 119, 180) at 18% over white: light blue.
    let band = count_pixels(&pixels, samples, |p| {
        (205..=225).contains(&p[0]) && (220..=240).contains(&p[1]) && p[2] >= 235
    });
    assert!(band > 2000, "only {band} band pixels");
    let summary = fs::read_to_string(&report.summary_path).expect("summary");
    assert!(
        summary.contains("| random | 79 | – | 50 | – | – | +790 [+750, +830] |"),
        "{summary}"
    );
}
