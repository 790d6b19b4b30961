//! The play-only binary: `draughts` does not load libtorch, and hands the commands that need it
//! to `draughts-train` (or says clearly that it is missing).

use std::process::Command;

fn draughts() -> Command {
    Command::new(env!("CARGO_BIN_EXE_draughts"))
}

#[test]
fn draughts_loads_no_libtorch() {
    // glibc's loader lists every library it looks for when LD_DEBUG=libs.
    let o = draughts().args(["moves", "--fen", "W:W31-50:B1-20"]).env("LD_DEBUG", "libs").output().unwrap();
    assert!(o.status.success());
    let trace = String::from_utf8_lossy(&o.stderr);
    assert!(trace.contains("find library=libc.so"), "LD_DEBUG gave no trace: {trace}");
    assert!(!trace.contains("libtorch") && !trace.contains("libc10"), "draughts loaded libtorch:\n{trace}");
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 9);
}

#[test]
fn training_commands_are_handed_to_draughts_train() {
    let o = draughts().args(["loop", "--help"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(help.contains("--config") && help.contains("Usage: draughts loop"), "{help}");
    // Bad input keeps its exit status through the hand-over.
    let o = draughts().args(["train", "--config", "/nonexistent.toml", "--run", "/nonexistent"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_missing_training_binary_is_named() {
    let o = draughts().args(["loop", "--config", "x.toml", "--run", "r"]).env("DRAUGHTS_TRAIN", "/nonexistent/draughts-train").output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/nonexistent/draughts-train") && err.contains("libtorch"), "{err}");
    // Play commands do not need it.
    let o = draughts().args(["moves", "--fen", "W:W31-50:B1-20"]).env("DRAUGHTS_TRAIN", "/nonexistent/draughts-train").output().unwrap();
    assert!(o.status.success());
}
