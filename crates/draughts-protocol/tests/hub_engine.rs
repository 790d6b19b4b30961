//! Golden Hub transcripts: `tests/data/hub/*.txt` hold what a GUI sends (`> `) and exactly what
//! the engine must answer (`< `). The harness plays the GUI: it sends one line, waits until the
//! lines expected after it have been written, and only then sends the next, as a real GUI does.
//! At the end it closes the input and compares the whole output with the transcript.
//!
//! Transcript syntax: `# searcher: first-move` or `# searcher: random SEED` picks the searcher;
//! other `#` lines are comments; `> @long N` sends a line of N `x` characters; `> @bytes HEX..`
//! sends raw bytes (and a newline).

use std::io::{self, BufReader, Read, Write};
use std::path::Path;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use draughts_protocol::{run_hub_with, FirstMove, HubConfig, RandomMover, SearchLimit, Searcher};

/// Input fed line by line through a channel; the end of the channel is the end of input.
struct ChannelReader {
    rx: Receiver<Vec<u8>>,
    buf: Vec<u8>,
    pos: usize,
}

impl Read for ChannelReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.buf.len() {
            match self.rx.recv() {
                Ok(chunk) => {
                    self.buf = chunk;
                    self.pos = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.buf.len() - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[derive(Clone, Default)]
struct SharedOut(Arc<Mutex<Vec<u8>>>);

impl Write for SharedOut {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl SharedOut {
    fn lines(&self) -> Vec<String> {
        let text = String::from_utf8(self.0.lock().unwrap().clone()).unwrap();
        text.lines().map(str::to_owned).collect()
    }
}

struct Step {
    input: Vec<u8>,
    shown: String,
    expect: Vec<String>,
}

fn parse_transcript(text: &str) -> (String, Vec<Step>) {
    let mut searcher = "first-move".to_owned();
    let mut steps: Vec<Step> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if let Some(s) = line.strip_prefix("# searcher: ") {
            searcher = s.trim().to_owned();
        } else if line.starts_with('#') || line.trim().is_empty() {
        } else if let Some(input) = line.strip_prefix("> ") {
            let bytes = if let Some(n) = input.strip_prefix("@long ") {
                vec![b'x'; n.trim().parse().unwrap()]
            } else if let Some(hex) = input.strip_prefix("@bytes ") {
                hex.split_whitespace()
                    .map(|h| u8::from_str_radix(h, 16).unwrap())
                    .collect()
            } else {
                input.as_bytes().to_vec()
            };
            let mut bytes = bytes;
            bytes.push(b'\n');
            steps.push(Step {
                input: bytes,
                shown: input.to_owned(),
                expect: Vec::new(),
            });
        } else if let Some(out) = line.strip_prefix("< ") {
            steps
                .last_mut()
                .unwrap_or_else(|| panic!("line {}: output before any input", n + 1))
                .expect
                .push(out.to_owned());
        } else {
            panic!("line {}: expected `> `, `< ` or `#`: {line}", n + 1);
        }
    }
    (searcher, steps)
}

fn make_searcher(spec: &str) -> Box<dyn Searcher + Send> {
    let words: Vec<&str> = spec.split_whitespace().collect();
    match words[..] {
        ["first-move"] => Box::new(FirstMove),
        ["random", seed] => Box::new(RandomMover::new(seed.parse().unwrap())),
        _ => panic!("unknown searcher `{spec}`"),
    }
}

fn run_transcript(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let (spec, steps) = parse_transcript(&text);
    let (tx, rx): (Sender<Vec<u8>>, Receiver<Vec<u8>>) = mpsc::channel();
    let out = SharedOut::default();
    let engine_out = out.clone();
    let config = HubConfig {
        version: "test".to_owned(),
        author: "The Authors".to_owned(),
        country: "Nowhere".to_owned(),
        default_limit: SearchLimit::depth(1),
        ..HubConfig::default()
    };
    let engine = thread::spawn(move || {
        let mut searcher = make_searcher(&spec);
        let input = BufReader::new(ChannelReader {
            rx,
            buf: Vec::new(),
            pos: 0,
        });
        run_hub_with(&mut searcher, input, engine_out, &config)
    });
    let mut expected: Vec<String> = Vec::new();
    for step in &steps {
        tx.send(step.input.clone()).unwrap();
        expected.extend(step.expect.iter().cloned());
        let deadline = Instant::now() + Duration::from_secs(10);
        while out.lines().len() < expected.len() && !engine.is_finished() {
            assert!(
                Instant::now() < deadline,
                "{}: no answer to `{}`; output so far:\n{}",
                path.display(),
                step.shown,
                out.lines().join("\n")
            );
            thread::sleep(Duration::from_millis(1));
        }
    }
    drop(tx);
    engine.join().unwrap().unwrap();
    let got = out.lines();
    assert!(
        got == expected,
        "{}: output differs\n--- got:\n{}\n--- expected:\n{}",
        path.display(),
        got.join("\n"),
        expected.join("\n")
    );
}

#[test]
fn golden_transcripts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/hub");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.retain(|p| p.extension().is_some_and(|e| e == "txt"));
    paths.sort();
    assert!(paths.len() >= 4, "transcripts missing in {}", dir.display());
    for p in &paths {
        run_transcript(p);
    }
}

#[test]
fn quit_and_eof_stop_a_running_search() {
    for ending in [&b"quit\n"[..], b""] {
        let out = SharedOut::default();
        let mut input = b"init\npos start\nlevel infinite\ngo analyze\n".to_vec();
        input.extend_from_slice(ending);
        let t0 = Instant::now();
        run_hub_with(
            &mut FirstMove,
            &input[..],
            out.clone(),
            &HubConfig::default(),
        )
        .unwrap();
        assert!(t0.elapsed() < Duration::from_secs(5));
        let lines = out.lines();
        assert_eq!(lines.first().map(String::as_str), Some("ready"));
        assert_eq!(
            lines.last().map(String::as_str),
            Some("done move=31-26"),
            "{lines:?}"
        );
    }
}

#[test]
fn move_time_is_enforced_after_ponder_hit() {
    // FirstMove searches until stopped while pondering; after ponder-hit the engine's watchdog
    // must stop it at the level's move time.
    let (tx, rx) = mpsc::channel();
    let out = SharedOut::default();
    let engine_out = out.clone();
    let engine = thread::spawn(move || {
        let input = BufReader::new(ChannelReader {
            rx,
            buf: Vec::new(),
            pos: 0,
        });
        run_hub_with(&mut FirstMove, input, engine_out, &HubConfig::default())
    });
    tx.send(b"init\npos start\nlevel move-time=0.2\ngo ponder\n".to_vec())
        .unwrap();
    // The engine thread answers `init` when it gets to it; then it ponders for longer than the
    // move time without ending by itself.
    let started = Instant::now();
    while out.lines().is_empty() {
        assert!(started.elapsed() < Duration::from_secs(30), "no answer to init");
        thread::sleep(Duration::from_millis(1));
    }
    thread::sleep(Duration::from_millis(300));
    assert_eq!(out.lines(), ["ready"], "pondering must not end by itself");
    let hit = Instant::now();
    tx.send(b"ponder-hit\n".to_vec()).unwrap();
    while !out.lines().iter().any(|l| l.starts_with("done")) {
        assert!(
            hit.elapsed() < Duration::from_secs(5),
            "no done after ponder-hit"
        );
        thread::sleep(Duration::from_millis(1));
    }
    let took = hit.elapsed();
    assert!(
        took >= Duration::from_millis(190) && took < Duration::from_secs(2),
        "{took:?}"
    );
    drop(tx);
    engine.join().unwrap().unwrap();
}
