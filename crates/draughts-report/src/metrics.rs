//! Streaming reader for a run's `metrics.jsonl`.
//!
//! Every line is one JSON object with `"time"` (unix seconds), `"stage"` and usually `"cycle"`.
//! The reader keeps what the report needs from the stages it knows (`selfplay`, `train`, `eval`,
//! `start`, `resume`, `config`) and counts the others. It never fails on the content of a line:
//! a line that is not valid JSON, not an object, or has no `stage` is skipped, and a field of the
//! wrong type is treated as absent; both leave a [`LineWarning`] that names the line number.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::ReportError;

/// Longest line the reader accepts, in bytes. A metrics line is a few hundred bytes; anything
/// this long is corruption, and is skipped without being held in memory.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// How many warnings [`Metrics`] keeps verbatim; the rest are only counted, so that a file of
/// garbage cannot make the report (or memory) grow without bound.
pub const MAX_KEPT_WARNINGS: usize = 200;

/// A problem with one line of the metrics file. The line was skipped, or (for a field of the
/// wrong type) kept without that field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineWarning {
    /// 1-based line number in `metrics.jsonl`.
    pub line: u64,
    /// What is wrong, as a sentence fragment ("not valid JSON: ...").
    pub message: String,
}

impl fmt::Display for LineWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "metrics.jsonl line {}: {}", self.line, self.message)
    }
}

/// One `"stage": "selfplay"` line: a batch of self-play games.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SelfplayRecord {
    /// Line number in the metrics file.
    pub line: u64,
    /// Unix seconds when the line was written.
    pub time: Option<f64>,
    /// Training cycle.
    pub cycle: Option<i64>,
    /// Games finished in this batch.
    pub games: Option<u64>,
    /// Training positions written in this batch.
    pub positions: Option<u64>,
    /// Wall-clock seconds the batch took.
    pub seconds: Option<f64>,
    /// Games per hour, as reported, or derived from `games` and `seconds`.
    pub games_per_hour: Option<f64>,
    /// Positions per second.
    pub positions_per_second: Option<f64>,
    /// Network evaluations per second.
    pub evals_per_second: Option<f64>,
    /// Mean inference batch size.
    pub mean_batch: Option<f64>,
    /// Identifier of the model that played.
    pub model: Option<String>,
    /// Mean game length in plies.
    pub plies_mean: Option<f64>,
    /// Games won by White.
    pub white_wins: Option<u64>,
    /// Drawn games.
    pub draws: Option<u64>,
    /// Games won by Black.
    pub black_wins: Option<u64>,
    /// Fraction of resignations that the no-resign check games show to be wrong.
    pub resign_false_positive: Option<f64>,
}

/// One `"stage": "train"` line: a chunk of optimiser steps.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TrainRecord {
    /// Line number in the metrics file.
    pub line: u64,
    /// Unix seconds when the line was written.
    pub time: Option<f64>,
    /// Training cycle.
    pub cycle: Option<i64>,
    /// Optimiser step reached.
    pub step: Option<u64>,
    /// Samples consumed in this chunk.
    pub samples: Option<u64>,
    /// Wall-clock seconds the chunk took.
    pub seconds: Option<f64>,
    /// Samples per second, as reported, or derived from `samples` and `seconds`.
    pub samples_per_second: Option<f64>,
    /// Total loss.
    pub loss: Option<f64>,
    /// Policy head loss.
    pub policy_loss: Option<f64>,
    /// Value head loss.
    pub value_loss: Option<f64>,
    /// Moves-left head loss, for networks that have one.
    pub moves_left_loss: Option<f64>,
    /// Learning rate.
    pub lr: Option<f64>,
    /// Positions in the replay window.
    pub window_positions: Option<u64>,
}

/// One `"stage": "eval"` line: a match against one ladder opponent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EvalRecord {
    /// Line number in the metrics file.
    pub line: u64,
    /// Unix seconds when the line was written.
    pub time: Option<f64>,
    /// Training cycle.
    pub cycle: Option<i64>,
    /// Opponent name ("random", "alphabeta:depth=1", "previous", ...).
    pub opponent: Option<String>,
    /// Games played.
    pub games: Option<u64>,
    /// Games won by the evaluated model.
    pub wins: Option<u64>,
    /// Drawn games.
    pub draws: Option<u64>,
    /// Games lost by the evaluated model.
    pub losses: Option<u64>,
    /// Score fraction in [0, 1].
    pub score: Option<f64>,
    /// Elo difference to the opponent.
    pub elo: Option<f64>,
    /// Lower end of the 95% interval of `elo`.
    pub elo_low: Option<f64>,
    /// Upper end of the 95% interval of `elo`.
    pub elo_high: Option<f64>,
    /// Identifier of the evaluated model.
    pub model: Option<String>,
}

/// A free-form information line (`start`, `resume`, `config`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InfoRecord {
    /// Line number in the metrics file.
    pub line: u64,
    /// Unix seconds when the line was written.
    pub time: Option<f64>,
    /// All fields other than `time` and `stage`, sorted by name, values rendered as JSON
    /// (strings without their quotes).
    pub fields: Vec<(String, String)>,
}

/// Everything the report uses from one metrics file.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    /// The file that was read.
    pub path: PathBuf,
    /// Lines read, blank ones included.
    pub lines: u64,
    /// Lines that were used (known stage, or unknown stage ignored on purpose).
    pub records: u64,
    /// Lines skipped as unusable.
    pub skipped_lines: u64,
    /// Self-play lines, in file order.
    pub selfplay: Vec<SelfplayRecord>,
    /// Training lines, in file order.
    pub train: Vec<TrainRecord>,
    /// Evaluation lines, in file order.
    pub eval: Vec<EvalRecord>,
    /// The first `start` line.
    pub start: Option<InfoRecord>,
    /// Number of `start` lines (a run started more than once on the same directory).
    pub start_count: u64,
    /// `resume` lines.
    pub resumes: Vec<InfoRecord>,
    /// Number of `config` lines.
    pub config_lines: u64,
    /// Lines of stages this reader does not know, by stage name: ignored on purpose.
    pub unknown_stages: BTreeMap<String, u64>,
    /// The first [`MAX_KEPT_WARNINGS`] warnings.
    pub warnings: Vec<LineWarning>,
    /// All warnings, including those not kept.
    pub warning_count: u64,
    /// Earliest `time` seen on a line of a known stage.
    pub first_time: Option<f64>,
    /// Latest `time` seen on a line of a known stage.
    pub last_time: Option<f64>,
    /// Distinct cycle numbers seen on self-play, training and evaluation lines.
    pub cycles: BTreeSet<i64>,
}

impl Metrics {
    /// True when no line of a known stage was read.
    pub fn is_empty(&self) -> bool {
        self.selfplay.is_empty()
            && self.train.is_empty()
            && self.eval.is_empty()
            && self.start_count == 0
            && self.resumes.is_empty()
            && self.config_lines == 0
    }

    fn warn(&mut self, line: u64, message: String) {
        self.warning_count += 1;
        if self.warnings.len() < MAX_KEPT_WARNINGS {
            self.warnings.push(LineWarning { line, message });
        }
    }

    fn note_time_and_cycle(&mut self, time: Option<f64>, cycle: Option<i64>) {
        if let Some(t) = time {
            self.first_time = Some(self.first_time.map_or(t, |f| f.min(t)));
            self.last_time = Some(self.last_time.map_or(t, |l| l.max(t)));
        }
        if let Some(c) = cycle {
            self.cycles.insert(c);
        }
    }
}

/// Reads a metrics file line by line.
///
/// Errors: [`ReportError::MissingMetrics`] when the file does not exist, [`ReportError::Read`]
/// when it cannot be read. Problems inside lines are warnings in the result, never errors; an
/// empty result is for the caller to judge (see [`Metrics::is_empty`]).
pub fn read_metrics(path: &Path) -> Result<Metrics, ReportError> {
    let file = std::fs::File::open(path).map_err(|source| {
        if source.kind() == io::ErrorKind::NotFound {
            ReportError::MissingMetrics {
                path: path.to_path_buf(),
            }
        } else {
            ReportError::Read {
                path: path.to_path_buf(),
                source,
            }
        }
    })?;
    let mut metrics = parse_metrics(BufReader::new(file)).map_err(|source| ReportError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    metrics.path = path.to_path_buf();
    Ok(metrics)
}

/// Parses metrics lines from any reader. Only I/O errors are errors.
pub fn parse_metrics<R: BufRead>(mut reader: R) -> io::Result<Metrics> {
    let mut metrics = Metrics::default();
    let mut buf = Vec::with_capacity(512);
    loop {
        buf.clear();
        let n = (&mut reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        metrics.lines += 1;
        let line_no = metrics.lines;
        let has_newline = buf.last() == Some(&b'\n');
        if !has_newline && buf.len() > MAX_LINE_BYTES {
            skip_to_newline(&mut reader)?;
            metrics.skipped_lines += 1;
            metrics.warn(
                line_no,
                format!("longer than {MAX_LINE_BYTES} bytes; skipped"),
            );
            continue;
        }
        let Ok(text) = std::str::from_utf8(&buf) else {
            metrics.skipped_lines += 1;
            metrics.warn(line_no, "not valid UTF-8; skipped".to_string());
            continue;
        };
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        // A final line without its newline is what a crash in the middle of a write leaves.
        let at_eof = !has_newline;
        parse_line(&mut metrics, line_no, text, at_eof);
    }
    Ok(metrics)
}

/// Consumes input up to and including the next newline (or to the end).
fn skip_to_newline<R: BufRead>(reader: &mut R) -> io::Result<()> {
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            return Ok(());
        }
        if let Some(i) = available.iter().position(|&b| b == b'\n') {
            reader.consume(i + 1);
            return Ok(());
        }
        let len = available.len();
        reader.consume(len);
    }
}

fn parse_line(metrics: &mut Metrics, line: u64, text: &str, at_eof: bool) {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let hint = if at_eof && e.is_eof() {
                " (last line of the file has no newline: truncated write?)"
            } else {
                ""
            };
            // serde_json says "at line 1 column N"; the line is ours to name, the column helps.
            let what = e.to_string();
            let what = what
                .rsplit_once(" at line ")
                .map_or(what.as_str(), |(w, _)| w);
            metrics.skipped_lines += 1;
            metrics.warn(
                line,
                format!(
                    "not valid JSON ({what}, column {}){hint}; skipped",
                    e.column()
                ),
            );
            return;
        }
    };
    let Value::Object(obj) = value else {
        metrics.skipped_lines += 1;
        metrics.warn(
            line,
            format!("not a JSON object but {}; skipped", kind_of(&value)),
        );
        return;
    };
    let stage = match obj.get("stage") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            metrics.skipped_lines += 1;
            metrics.warn(
                line,
                format!(
                    "field `stage` is {} instead of a string; skipped",
                    kind_of(other)
                ),
            );
            return;
        }
        None => {
            metrics.skipped_lines += 1;
            metrics.warn(line, "no `stage` field; skipped".to_string());
            return;
        }
    };
    if !matches!(
        stage.as_str(),
        "selfplay" | "train" | "eval" | "start" | "resume" | "config"
    ) {
        *metrics.unknown_stages.entry(stage).or_insert(0) += 1;
        metrics.records += 1;
        return;
    }
    metrics.records += 1;
    let mut f = Fields {
        obj: &obj,
        stage: &stage,
        warnings: Vec::new(),
    };
    let time = f.f64("time");
    let cycle = f.i64("cycle");
    match stage.as_str() {
        "selfplay" => {
            let mut r = SelfplayRecord {
                line,
                time,
                cycle,
                games: f.u64("games"),
                positions: f.u64("positions"),
                seconds: f.f64("seconds"),
                games_per_hour: f.f64("games_per_hour"),
                positions_per_second: f.f64("positions_per_second"),
                evals_per_second: f.f64("evals_per_second"),
                mean_batch: f.f64("mean_batch"),
                model: f.string("model"),
                plies_mean: f.f64("plies_mean"),
                white_wins: f.u64("white_wins"),
                draws: f.u64("draws"),
                black_wins: f.u64("black_wins"),
                resign_false_positive: f.f64("resign_false_positive"),
            };
            if r.games_per_hour.is_none() {
                r.games_per_hour = rate(r.games, r.seconds).map(|per_s| per_s * 3600.0);
            }
            if r.positions_per_second.is_none() {
                r.positions_per_second = rate(r.positions, r.seconds);
            }
            metrics.selfplay.push(r);
        }
        "train" => {
            let mut r = TrainRecord {
                line,
                time,
                cycle,
                step: f.u64("step"),
                samples: f.u64("samples"),
                seconds: f.f64("seconds"),
                samples_per_second: f.f64("samples_per_second"),
                loss: f.f64("loss"),
                policy_loss: f.f64("policy_loss"),
                value_loss: f.f64("value_loss"),
                moves_left_loss: f.f64("moves_left_loss"),
                lr: f.f64("lr"),
                window_positions: f.u64("window_positions"),
            };
            if r.samples_per_second.is_none() {
                r.samples_per_second = rate(r.samples, r.seconds);
            }
            metrics.train.push(r);
        }
        "eval" => {
            let r = EvalRecord {
                line,
                time,
                cycle,
                opponent: f.string("opponent"),
                games: f.u64("games"),
                wins: f.u64("wins"),
                draws: f.u64("draws"),
                losses: f.u64("losses"),
                score: f.f64("score"),
                elo: f.f64("elo"),
                elo_low: f.f64("elo_low"),
                elo_high: f.f64("elo_high"),
                model: f.string("model"),
            };
            metrics.eval.push(r);
        }
        _ => {
            let info = InfoRecord {
                line,
                time,
                fields: obj
                    .iter()
                    .filter(|(k, _)| k.as_str() != "time" && k.as_str() != "stage")
                    .map(|(k, v)| (k.clone(), render_value(v)))
                    .collect(),
            };
            match stage.as_str() {
                "start" => {
                    metrics.start_count += 1;
                    if metrics.start.is_none() {
                        metrics.start = Some(info);
                    }
                }
                "resume" => metrics.resumes.push(info),
                _ => metrics.config_lines += 1,
            }
        }
    }
    for message in std::mem::take(&mut f.warnings) {
        metrics.warn(line, message);
    }
    // Only work stages make a cycle: the loop's `start` and `resume` lines carry the cycle they
    // begin in (0 for a new run), which is no cycle of work.
    let work = matches!(stage.as_str(), "selfplay" | "train" | "eval");
    metrics.note_time_and_cycle(time, cycle.filter(|_| work));
}

/// `count / seconds`, when both are there and the duration is positive.
fn rate(count: Option<u64>, seconds: Option<f64>) -> Option<f64> {
    match (count, seconds) {
        (Some(c), Some(s)) if s > 0.0 => Some(c as f64 / s),
        _ => None,
    }
}

/// Typed access to the fields of one line; a field of the wrong type becomes a warning.
struct Fields<'a> {
    obj: &'a Map<String, Value>,
    stage: &'a str,
    warnings: Vec<String>,
}

impl Fields<'_> {
    fn wrong(&mut self, key: &str, expected: &str, got: &Value) {
        self.warnings.push(format!(
            "field `{key}` of stage `{}` is {} instead of {expected}; ignored",
            self.stage,
            kind_of(got)
        ));
    }

    /// A finite number. `null` counts as absent (serde_json writes NaN as `null`).
    fn f64(&mut self, key: &str) -> Option<f64> {
        match self.obj.get(key)? {
            Value::Null => None,
            Value::Number(n) => n.as_f64().filter(|x| x.is_finite()),
            other => {
                self.wrong(key, "a number", other);
                None
            }
        }
    }

    /// A non-negative integer; `12.0` is accepted as 12.
    fn u64(&mut self, key: &str) -> Option<u64> {
        let v = self.obj.get(key)?;
        if let Some(u) = v.as_u64() {
            return Some(u);
        }
        if let Some(x) = v.as_f64() {
            if x >= 0.0 && x.fract() == 0.0 && x < 2f64.powi(63) {
                return Some(x as u64);
            }
        }
        if v.is_null() {
            return None;
        }
        self.wrong(key, "a non-negative integer", v);
        None
    }

    /// An integer; `3.0` is accepted as 3.
    fn i64(&mut self, key: &str) -> Option<i64> {
        let v = self.obj.get(key)?;
        if let Some(i) = v.as_i64() {
            return Some(i);
        }
        if let Some(x) = v.as_f64() {
            if x.fract() == 0.0 && x.abs() < 2f64.powi(62) {
                return Some(x as i64);
            }
        }
        if v.is_null() {
            return None;
        }
        self.wrong(key, "an integer", v);
        None
    }

    fn string(&mut self, key: &str) -> Option<String> {
        match self.obj.get(key)? {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            other => {
                self.wrong(key, "a string", other);
                None
            }
        }
    }
}

fn kind_of(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.len() <= 40 => format!("the string {s:?}"),
        Value::String(_) => "a string".to_string(),
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

fn render_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Metrics {
        parse_metrics(text.as_bytes()).expect("reading from a slice cannot fail")
    }

    #[test]
    fn known_stages_are_typed_and_unknown_ones_counted() {
        let m = parse(concat!(
            r#"{"time": 10.0, "stage": "start", "seed": 7, "version": "0.1.0"}"#,
            "\n",
            r#"{"time": 11.0, "stage": "selfplay", "cycle": 0, "games": 12, "seconds": 6.0, "model": "m0"}"#,
            "\n",
            r#"{"time": 12.5, "stage": "train", "cycle": 0, "step": 100, "loss": 2.5, "samples": 400, "seconds": 2.0}"#,
            "\n",
            r#"{"time": 13.0, "stage": "eval", "cycle": 0, "opponent": "random", "elo": 120.5, "games": 20}"#,
            "\n",
            r#"{"time": 14.0, "stage": "gc", "cycle": 0, "freed": 3}"#,
            "\n",
        ));
        assert_eq!(m.lines, 5);
        assert_eq!(m.records, 5);
        assert_eq!(m.skipped_lines, 0);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        assert_eq!(m.selfplay.len(), 1);
        // Derived from games and seconds: 12 games in 6 s.
        assert_eq!(m.selfplay[0].games_per_hour, Some(7200.0));
        assert_eq!(m.selfplay[0].model.as_deref(), Some("m0"));
        assert_eq!(m.train[0].step, Some(100));
        assert_eq!(m.train[0].samples_per_second, Some(200.0));
        assert_eq!(m.eval[0].elo, Some(120.5));
        assert_eq!(m.unknown_stages.get("gc"), Some(&1));
        let start = m.start.as_ref().expect("start line");
        assert_eq!(
            start.fields,
            vec![
                ("seed".into(), "7".into()),
                ("version".into(), "0.1.0".into())
            ]
        );
        assert_eq!(m.first_time, Some(10.0));
        assert_eq!(
            m.last_time,
            Some(13.0),
            "the unknown stage's time is ignored"
        );
        assert_eq!(m.cycles.iter().copied().collect::<Vec<_>>(), vec![0]);
    }

    #[test]
    fn start_and_resume_lines_make_no_cycle() {
        let m = parse(concat!(
            r#"{"time": 10.0, "stage": "start", "cycle": 0, "seed": 7}"#,
            "\n",
            r#"{"time": 11.0, "stage": "selfplay", "cycle": 1, "games": 12, "seconds": 6.0}"#,
            "\n",
            r#"{"time": 12.0, "stage": "resume", "cycle": 2}"#,
            "\n",
        ));
        assert_eq!(m.cycles.iter().copied().collect::<Vec<_>>(), vec![1]);
    }

    #[test]
    fn bad_lines_are_skipped_with_their_line_numbers() {
        let m = parse(concat!(
            r#"{"time": 1.0, "stage": "train", "step": 1, "loss": 3.0}"#,
            "\n",
            "\n",
            "[1, 2]\n",
            r#"{"time": 2.0}"#,
            "\n",
            r#"{"time": 3.0, "stage": 5}"#,
            "\n",
            r#"{"time": 4.0, "stage": "train", "step": "ten", "loss": 2.0}"#,
            "\n",
            r#"{"time": 5.0, "stage": "train", "st"#,
        ));
        assert_eq!(m.lines, 7);
        assert_eq!(m.train.len(), 2);
        assert_eq!(
            m.train[1].step, None,
            "a field of the wrong type is dropped"
        );
        assert_eq!(m.train[1].loss, Some(2.0), "the rest of the line is kept");
        assert_eq!(m.skipped_lines, 4);
        let lines: Vec<u64> = m.warnings.iter().map(|w| w.line).collect();
        assert_eq!(lines, vec![3, 4, 5, 6, 7]);
        assert!(
            m.warnings[3].message.contains("`step`"),
            "{}",
            m.warnings[3]
        );
        assert!(
            m.warnings[4].message.contains("truncated"),
            "{}",
            m.warnings[4]
        );
        assert!(m.warnings[4]
            .to_string()
            .starts_with("metrics.jsonl line 7:"));
    }

    #[test]
    fn overlong_and_non_utf8_lines_are_skipped() {
        let mut text = Vec::new();
        text.extend_from_slice(b"{\"stage\": \"train\", \"step\": 1, \"loss\": 1.0}\n");
        text.extend(std::iter::repeat(b'x').take(MAX_LINE_BYTES + 10));
        text.push(b'\n');
        text.extend_from_slice(b"\xff\xfe\n");
        text.extend_from_slice(b"{\"stage\": \"train\", \"step\": 2, \"loss\": 0.5}\n");
        let m = parse_metrics(&text[..]).expect("slice");
        assert_eq!(m.lines, 4);
        assert_eq!(
            m.train.iter().map(|r| r.step).collect::<Vec<_>>(),
            vec![Some(1), Some(2)]
        );
        assert_eq!(
            m.warnings.iter().map(|w| w.line).collect::<Vec<_>>(),
            vec![2, 3]
        );
    }

    #[test]
    fn warnings_are_capped_but_counted() {
        let text = "garbage\n".repeat(MAX_KEPT_WARNINGS + 5);
        let m = parse(&text);
        assert_eq!(m.warnings.len(), MAX_KEPT_WARNINGS);
        assert_eq!(m.warning_count, MAX_KEPT_WARNINGS as u64 + 5);
        assert!(m.is_empty());
    }
}
