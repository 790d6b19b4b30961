//! `scripts/spsa`, the tuner of numeric search options, driving this binary: each iteration's
//! step follows its match result, the state resumes, and bad parameters are named.

use std::path::PathBuf;
use std::process::{Command, Output};

fn spsa(dir: &std::path::Path, extra: &[&str]) -> Output {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/spsa");
    Command::new("python3")
        .arg(script)
        .args(["--draughts", env!("CARGO_BIN_EXE_draughts"), "--base", "alphabeta:depth=2,hash=1", "--pairs", "1"])
        .args(["--state", dir.join("state.json").to_str().unwrap(), "--log", dir.join("log.jsonl").to_str().unwrap()])
        .args(extra)
        .output()
        .expect("python3 runs")
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn steps_follow_the_results_and_a_run_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let params = ["--param", "aspiration:25:5:100:8", "--param", "lmr_moves:3:1:8:1", "--rate", "0.05", "--seed", "3"];
    let o = spsa(dir.path(), &[&params[..], &["--iterations", "2"]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = spsa(dir.path(), &[&params[..], &["--iterations", "3"]].concat());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("from iteration 2"), "{}", String::from_utf8_lossy(&o.stderr));
    let log = std::fs::read_to_string(dir.path().join("log.jsonl")).unwrap();
    let lines: Vec<_> = log.lines().map(json).collect();
    assert_eq!(lines.len(), 3, "{log}");
    // Each step is rate x c x (wins - losses) x delta, from where the last one left off.
    let (mut asp, mut lmr) = (25.0, 3.0);
    for (k, l) in lines.iter().enumerate() {
        assert_eq!(l["iteration"], k as u64);
        assert_eq!(l["wins"].as_i64().unwrap() + l["draws"].as_i64().unwrap() + l["losses"].as_i64().unwrap(), 2);
        let diff = (l["wins"].as_i64().unwrap() - l["losses"].as_i64().unwrap()) as f64;
        let delta: Vec<f64> = l["delta"].as_array().unwrap().iter().map(|d| d.as_f64().unwrap()).collect();
        asp += 0.05 * 8.0 * diff * delta[0];
        lmr += 0.05 * 1.0 * diff * delta[1];
        assert!((l["theta"]["aspiration"].as_f64().unwrap() - asp).abs() < 1e-9, "{l}");
        assert!((l["theta"]["lmr_moves"].as_f64().unwrap() - lmr).abs() < 1e-9, "{l}");
    }
    let last = json(String::from_utf8_lossy(&o.stdout).lines().last().unwrap());
    assert_eq!(last["iterations"], 3);
    assert_eq!(last["games"], 6);
    assert_eq!(last["played"]["lmr_moves"], lmr.round() as i64);
    // Another seed on the same state file is another run: refused.
    let o = spsa(dir.path(), &["--param", "aspiration:25:5:100:8", "--param", "lmr_moves:3:1:8:1", "--iterations", "4"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("state.json"), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn bad_parameters_and_options_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let o = spsa(dir.path(), &["--param", "aspiration:25:5", "--iterations", "1"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("aspiration:25:5"), "{}", String::from_utf8_lossy(&o.stderr));
    // An option the engine does not know fails in the first match, with the engine's message.
    let o = spsa(dir.path(), &["--param", "nullmove_margin:25:5:100:8", "--iterations", "1"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("nullmove_margin"), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!dir.path().join("state.json").exists());
}
