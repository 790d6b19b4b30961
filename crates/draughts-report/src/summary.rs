//! The Markdown summary (`summary.md`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::metrics::{EvalRecord, Metrics};
use crate::{PlotOutcome, PlotStatus};

/// What the summary says about the run besides the metrics themselves.
pub(crate) struct Context<'a> {
    pub run_dir: &'a Path,
    pub config_present: bool,
    pub plots: &'a [PlotOutcome],
}

/// Longest table cell taken from free-form input (start-line values, model ids).
const MAX_CELL_CHARS: usize = 160;

/// Renders the whole summary. Pure: the caller writes it.
pub(crate) fn render(m: &Metrics, ctx: &Context<'_>) -> String {
    let mut s = String::new();
    // Writing into a String cannot fail; the `let _` below discard infallible results.
    let _ = writeln!(s, "# Training report\n");
    overview(&mut s, m, ctx);
    start_info(&mut s, m);
    totals(&mut s, m);
    evaluations(&mut s, m);
    final_losses(&mut s, m);
    throughput(&mut s, m);
    plots(&mut s, ctx.plots);
    notes_and_warnings(&mut s, m);
    s
}

fn overview(s: &mut String, m: &Metrics, ctx: &Context<'_>) {
    let _ = writeln!(s, "| | |\n|---|---|");
    let _ = writeln!(
        s,
        "| Run directory | `{}` |",
        cell(&ctx.run_dir.display().to_string())
    );
    let _ = writeln!(
        s,
        "| Metrics | `metrics.jsonl`: {} lines, {} used, {} skipped |",
        m.lines, m.records, m.skipped_lines
    );
    let config = if ctx.config_present {
        "`config.toml` present (copy of the effective configuration)"
    } else {
        "no `config.toml` in the run directory"
    };
    let _ = writeln!(s, "| Configuration | {config} |");
    let span = match (m.first_time, m.last_time) {
        (Some(a), Some(b)) => {
            format!(
                "{} to {} ({})",
                format_time(a),
                format_time(b),
                format_duration(b - a)
            )
        }
        _ => "unknown (no line has a time)".to_string(),
    };
    let _ = writeln!(s, "| Time span | {span} |");
    let cycles = match (m.cycles.first(), m.cycles.last()) {
        (Some(a), Some(b)) => format!("{} distinct, {a} to {b}", m.cycles.len()),
        _ => "none recorded".to_string(),
    };
    let _ = writeln!(s, "| Cycles | {cycles} |");
    if m.start_count > 1 || !m.resumes.is_empty() {
        let _ = writeln!(
            s,
            "| Starts / resumes | {} / {} |",
            m.start_count,
            m.resumes.len()
        );
    }
    s.push('\n');
}

fn start_info(s: &mut String, m: &Metrics) {
    let _ = writeln!(s, "## Start\n");
    let Some(start) = &m.start else {
        let _ = writeln!(s, "No `start` line.\n");
        return;
    };
    let when = start
        .time
        .map(format_time)
        .unwrap_or_else(|| "unknown time".to_string());
    let _ = writeln!(s, "First `start` line (line {}, {when}):\n", start.line);
    if start.fields.is_empty() {
        let _ = writeln!(s, "(no fields)\n");
        return;
    }
    let _ = writeln!(s, "| Field | Value |\n|---|---|");
    for (k, v) in &start.fields {
        let _ = writeln!(s, "| {} | {} |", cell(k), cell(v));
    }
    s.push('\n');
}

fn totals(s: &mut String, m: &Metrics) {
    let _ = writeln!(s, "## Totals\n");
    let _ = writeln!(s, "| | |\n|---|---|");
    let sum = |get: fn(&crate::metrics::SelfplayRecord) -> Option<u64>| -> Option<u64> {
        m.selfplay
            .iter()
            .filter_map(get)
            .reduce(u64::saturating_add)
    };
    let games = sum(|r| r.games);
    let _ = writeln!(s, "| Self-play lines | {} |", m.selfplay.len());
    let _ = writeln!(s, "| Self-play games | {} |", opt_u64(games));
    let _ = writeln!(
        s,
        "| Self-play positions | {} |",
        opt_u64(sum(|r| r.positions))
    );
    if let (Some(w), Some(d), Some(b)) = (
        sum(|r| r.white_wins),
        sum(|r| r.draws),
        sum(|r| r.black_wins),
    ) {
        let n = (w + d + b).max(1) as f64;
        let _ = writeln!(
            s,
            "| Self-play results | White {w} ({:.1}%), draws {d} ({:.1}%), Black {b} ({:.1}%) |",
            100.0 * w as f64 / n,
            100.0 * d as f64 / n,
            100.0 * b as f64 / n
        );
    }
    let last_step = m.train.iter().filter_map(|r| r.step).max();
    let _ = writeln!(s, "| Training lines | {} |", m.train.len());
    let _ = writeln!(s, "| Training steps | {} |", opt_u64(last_step));
    let samples = m
        .train
        .iter()
        .filter_map(|r| r.samples)
        .reduce(u64::saturating_add);
    let _ = writeln!(s, "| Training samples | {} |", opt_u64(samples));
    if let Some(w) = m.train.iter().rev().find_map(|r| r.window_positions) {
        let _ = writeln!(s, "| Replay window (last) | {w} positions |");
    }
    let eval_games = m
        .eval
        .iter()
        .filter_map(|r| r.games)
        .reduce(u64::saturating_add);
    let _ = writeln!(s, "| Evaluation matches | {} |", m.eval.len());
    let _ = writeln!(s, "| Evaluation games | {} |", opt_u64(eval_games));
    s.push('\n');
}

fn evaluations(s: &mut String, m: &Metrics) {
    let _ = writeln!(s, "## Latest evaluation against each opponent\n");
    // The last line in the file for each opponent, listed in order of first appearance.
    let mut order: Vec<String> = Vec::new();
    let mut last: BTreeMap<String, &EvalRecord> = BTreeMap::new();
    for r in &m.eval {
        let name = r
            .opponent
            .clone()
            .unwrap_or_else(|| "(unnamed)".to_string());
        if last.insert(name.clone(), r).is_none() {
            order.push(name);
        }
    }
    if order.is_empty() {
        let _ = writeln!(s, "No evaluation lines.\n");
        return;
    }
    let _ = writeln!(
        s,
        "| Opponent | Cycle | Model | Games | W / D / L | Score | Elo [95% interval] |"
    );
    let _ = writeln!(s, "|---|---:|---|---:|---:|---:|---|");
    for name in &order {
        let r = last[name];
        let wdl = match (r.wins, r.draws, r.losses) {
            (Some(w), Some(d), Some(l)) => format!("{w} / {d} / {l}"),
            _ => "–".to_string(),
        };
        let score = r.score.or_else(|| {
            let (w, d, l) = (r.wins?, r.draws?, r.losses?);
            let n = w + d + l;
            (n > 0).then(|| (w as f64 + d as f64 / 2.0) / n as f64)
        });
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {wdl} | {} | {} |",
            cell(name),
            r.cycle.map_or("–".to_string(), |c| c.to_string()),
            r.model.as_deref().map_or("–".to_string(), cell),
            opt_u64(r.games),
            score.map_or("–".to_string(), |x| format!("{x:.3}")),
            format_elo(r),
        );
    }
    s.push('\n');
}

/// "+123 [+80, +170]", with "–" for what is missing.
pub(crate) fn format_elo(r: &EvalRecord) -> String {
    let one = |x: Option<f64>| x.map_or("–".to_string(), |e| format!("{e:+.0}"));
    match (r.elo_low, r.elo_high) {
        (None, None) => one(r.elo),
        (lo, hi) => format!("{} [{}, {}]", one(r.elo), one(lo), one(hi)),
    }
}

fn final_losses(s: &mut String, m: &Metrics) {
    let _ = writeln!(s, "## Final losses\n");
    let Some(r) = m
        .train
        .iter()
        .rev()
        .find(|r| r.loss.is_some() || r.policy_loss.is_some())
    else {
        let _ = writeln!(s, "No training line with a loss.\n");
        return;
    };
    let step = r
        .step
        .map_or("unknown step".to_string(), |st| format!("step {st}"));
    let _ = writeln!(
        s,
        "From the last training line with a loss (line {}, {step}):\n",
        r.line
    );
    let mut cols = vec![
        ("Total", r.loss),
        ("Policy", r.policy_loss),
        ("Value", r.value_loss),
    ];
    if r.moves_left_loss.is_some() {
        cols.push(("Moves left", r.moves_left_loss));
    }
    let _ = write!(s, "|");
    for (name, _) in &cols {
        let _ = write!(s, " {name} |");
    }
    let _ = writeln!(s, " Learning rate |");
    let _ = writeln!(s, "{}|---:|", "|---:".repeat(cols.len()));
    let _ = write!(s, "|");
    for (_, v) in &cols {
        let _ = write!(s, " {} |", v.map_or("–".to_string(), |x| format!("{x:.4}")));
    }
    let _ = writeln!(
        s,
        " {} |\n",
        r.lr.map_or("–".to_string(), |x| format!("{x:.3e}"))
    );
}

fn throughput(s: &mut String, m: &Metrics) {
    let _ = writeln!(s, "## Throughput\n");
    type Row<'a> = (&'a str, Vec<f64>, usize);
    let sp = |get: fn(&crate::metrics::SelfplayRecord) -> Option<f64>| -> Vec<f64> {
        m.selfplay.iter().filter_map(get).collect()
    };
    let rows: Vec<Row> = vec![
        ("Self-play games per hour", sp(|r| r.games_per_hour), 0),
        (
            "Self-play positions per second",
            sp(|r| r.positions_per_second),
            1,
        ),
        (
            "Network evaluations per second",
            sp(|r| r.evals_per_second),
            0,
        ),
        ("Mean inference batch", sp(|r| r.mean_batch), 1),
        ("Mean game length (plies)", sp(|r| r.plies_mean), 1),
        (
            "Resignation false positives",
            sp(|r| r.resign_false_positive),
            3,
        ),
        (
            "Training samples per second",
            m.train
                .iter()
                .filter_map(|r| r.samples_per_second)
                .collect(),
            0,
        ),
    ];
    let rows: Vec<Row> = rows.into_iter().filter(|r| !r.1.is_empty()).collect();
    if rows.is_empty() {
        let _ = writeln!(s, "No throughput figures.\n");
        return;
    }
    let _ = writeln!(
        s,
        "Mean over the lines that report the figure (or give its count and seconds).\n"
    );
    let _ = writeln!(s, "| Figure | Mean | Last | Lines |\n|---|---:|---:|---:|");
    for (name, values, decimals) in rows {
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let last = values.last().copied().unwrap_or(mean);
        let _ = writeln!(
            s,
            "| {name} | {mean:.decimals$} | {last:.decimals$} | {} |",
            values.len()
        );
    }
    s.push('\n');
}

fn plots(s: &mut String, plots: &[PlotOutcome]) {
    let _ = writeln!(s, "## Plots\n");
    for p in plots {
        match &p.status {
            PlotStatus::Written(_) => {
                let _ = writeln!(s, "- [{0}]({0}): {1}", p.name, p.description);
            }
            PlotStatus::Skipped { reason } => {
                let _ = writeln!(s, "- {}: not drawn, {reason}", p.name);
            }
        }
    }
    s.push('\n');
    for p in plots {
        if matches!(p.status, PlotStatus::Written(_)) {
            let _ = writeln!(s, "![{}]({})\n", p.description, p.name);
        }
    }
}

fn notes_and_warnings(s: &mut String, m: &Metrics) {
    if !m.unknown_stages.is_empty() {
        let list: Vec<String> = m
            .unknown_stages
            .iter()
            .map(|(k, n)| format!("`{}` ({n})", cell(k)))
            .collect();
        let _ = writeln!(
            s,
            "## Notes\n\nLines of stages this report does not know, ignored: {}.\n",
            list.join(", ")
        );
    }
    let _ = writeln!(s, "## Warnings\n");
    if m.warning_count == 0 {
        let _ = writeln!(s, "None: every line was read.");
        return;
    }
    let _ = writeln!(
        s,
        "{} problem{} ({} line{} skipped):\n",
        m.warning_count,
        if m.warning_count == 1 { "" } else { "s" },
        m.skipped_lines,
        if m.skipped_lines == 1 { "" } else { "s" },
    );
    for w in &m.warnings {
        let _ = writeln!(s, "- line {}: {}", w.line, inline(&w.message));
    }
    let unlisted = m.warning_count - m.warnings.len() as u64;
    if unlisted > 0 {
        let _ = writeln!(s, "- … and {unlisted} more, not listed");
    }
}

fn opt_u64(x: Option<u64>) -> String {
    x.map_or("–".to_string(), |v| v.to_string())
}

/// Makes free text safe inside a table cell: no pipes, no line breaks, bounded length.
fn cell(text: &str) -> String {
    let mut out: String = text.chars().take(MAX_CELL_CHARS).collect();
    if text.chars().count() > MAX_CELL_CHARS {
        out.push('…');
    }
    out.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// Makes free text safe on a list line: no line breaks, no stray backticks.
fn inline(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

/// Unix seconds as "YYYY-MM-DD HH:MM:SS UTC" (no time-zone database needed).
pub(crate) fn format_time(t: f64) -> String {
    // Beyond the year 5000 or before 1970 it is not a real timestamp: show the number.
    if !(0.0..1e11).contains(&t) {
        return format!("t={t}");
    }
    let secs = t.floor() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, mo, d) = civil_from_days(days);
    format!(
        "{y:04}-{mo:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// "3 h 12 min", "4 min 05 s", "12.3 s".
pub(crate) fn format_duration(seconds: f64) -> String {
    if !seconds.is_finite() || seconds < 0.0 {
        return "unknown".to_string();
    }
    if seconds < 60.0 {
        return format!("{seconds:.1} s");
    }
    let total = seconds.round() as u64;
    let (h, m, s) = (total / 3600, total % 3600 / 60, total % 60);
    if h >= 24 {
        format!("{} d {} h {m:02} min", h / 24, h % 24)
    } else if h > 0 {
        format!("{h} h {m:02} min")
    } else {
        format!("{m} min {s:02} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_formatted_in_utc() {
        assert_eq!(format_time(0.0), "1970-01-01 00:00:00 UTC");
        // 2000-02-29 is a leap day; 951782400 is its midnight.
        assert_eq!(
            format_time(951_782_400.0 + 3661.9),
            "2000-02-29 01:01:01 UTC"
        );
        assert_eq!(format_time(1_700_000_000.0), "2023-11-14 22:13:20 UTC");
        assert_eq!(format_time(-5.0), "t=-5");
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(format_duration(12.34), "12.3 s");
        assert_eq!(format_duration(245.0), "4 min 05 s");
        assert_eq!(format_duration(3.0 * 3600.0 + 12.0 * 60.0), "3 h 12 min");
        assert_eq!(format_duration(50.0 * 3600.0), "2 d 2 h 00 min");
        assert_eq!(format_duration(f64::NAN), "unknown");
    }

    #[test]
    fn cells_cannot_break_tables() {
        assert_eq!(cell("a|b\nc"), "a\\|b c");
        assert_eq!(
            cell(&"x".repeat(MAX_CELL_CHARS + 5)).chars().count(),
            MAX_CELL_CHARS + 1
        );
    }

    #[test]
    fn elo_with_and_without_interval() {
        let mut r = EvalRecord {
            elo: Some(123.4),
            ..Default::default()
        };
        assert_eq!(format_elo(&r), "+123");
        r.elo_low = Some(-20.0);
        r.elo_high = Some(250.6);
        assert_eq!(format_elo(&r), "+123 [-20, +251]");
        r.elo = None;
        assert_eq!(format_elo(&r), "– [-20, +251]");
    }
}
