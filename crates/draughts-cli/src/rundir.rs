//! The run directory: the only interface between the stages of training.
//!
//! ```text
//! RUN/config.toml        the effective config (written once; a restart checks it is the same)
//! RUN/run.json           seed, versions, creation time
//! RUN/metrics.jsonl      one JSON object per line, appended by every stage
//! RUN/games/             self-play shards (*.bin) and PDN of every game
//! RUN/checkpoints/       NAME-sSTEP.safetensors + .json sidecars; trainer state
//! RUN/eval/              PDN of every evaluation game
//! RUN/report/            plots and summary (draughts report)
//! ```
//!
//! Every file is written to a temporary name and renamed, so a kill at any moment leaves only
//! whole files; metrics lines are appended with one write each, and a torn last line left by a
//! kill is cut off before the next append.

use std::fs::{self, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;

/// Paths inside a run directory.
#[derive(Clone, Debug)]
pub struct RunDir {
    pub root: PathBuf,
}

impl RunDir {
    /// Opens (creating if needed) a run directory.
    pub fn create(root: &Path) -> anyhow::Result<RunDir> {
        let run = RunDir { root: root.to_path_buf() };
        for d in [run.games(), run.checkpoints(), run.eval()] {
            fs::create_dir_all(&d).with_context(|| format!("cannot create {}", d.display()))?;
        }
        Ok(run)
    }

    pub fn games(&self) -> PathBuf {
        self.root.join("games")
    }
    pub fn checkpoints(&self) -> PathBuf {
        self.root.join("checkpoints")
    }
    pub fn eval(&self) -> PathBuf {
        self.root.join("eval")
    }
    pub fn metrics(&self) -> PathBuf {
        self.root.join("metrics.jsonl")
    }
    pub fn config(&self) -> PathBuf {
        self.root.join("config.toml")
    }

    /// Appends one metrics line (an object; `time` and `stage` are added).
    pub fn metric(&self, stage: &str, fields: serde_json::Value) -> anyhow::Result<()> {
        append_line(&self.metrics(), &self.metric_line(stage, fields)?)
    }

    /// The metrics line [`RunDir::metric`] appends.
    pub fn metric_line(&self, stage: &str, mut fields: serde_json::Value) -> anyhow::Result<String> {
        if let Some(obj) = fields.as_object_mut() {
            obj.insert("time".into(), serde_json::json!(unix_now()));
            obj.insert("stage".into(), serde_json::json!(stage));
        }
        Ok(serde_json::to_string(&fields)?)
    }

    /// Writes the effective config on the first start; on a restart, refuses a different one
    /// (a run is one experiment) unless `allow_change`. An allowed change keeps the config it
    /// replaces as `config.prev-N.toml` (N = 1, 2, ...), so the run still tells how every cycle
    /// was made.
    pub fn pin_config(&self, effective: &str, allow_change: bool) -> anyhow::Result<()> {
        self.pin_config_by(effective, allow_change, |_| false)
    }

    /// [`RunDir::pin_config`] where `same(pinned)` also accepts a pinned config whose text differs
    /// from `effective` but whose values do not (a key added at its default, comments, order): the
    /// run goes on under the pinned text.
    pub fn pin_config_by(&self, effective: &str, allow_change: bool, same: impl Fn(&str) -> bool) -> anyhow::Result<()> {
        let path = self.config();
        match fs::read_to_string(&path) {
            Ok(existing) if existing == effective || same(&existing) => Ok(()),
            Ok(existing) if allow_change => {
                let kept = (1..)
                    .map(|n| self.root.join(format!("config.prev-{n}.toml")))
                    .find(|p| !p.exists())
                    .expect("a free name");
                write_atomic(&kept, existing.as_bytes())?;
                eprintln!("config changed: the previous one is kept as {}", kept.display());
                write_atomic(&path, effective.as_bytes())
            }
            Ok(_) => Err(crate::bad_input(format!(
                "{} holds a different config than the one given: a run keeps one config (use a new --run directory, or --allow-config-change)",
                path.display()
            ))),
            Err(_) => write_atomic(&path, effective.as_bytes()),
        }
    }
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename. The
/// temporary name holds the process id, so processes sharing a run directory (self-play workers
/// pinning the same config) never write into one another's temporary file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let tmp = path.with_extension(format!("{ext}.{}.tmp", std::process::id()));
    {
        let mut f = fs::File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path).with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))?;
    Ok(())
}

/// Removes the temporary files (`*.tmp`, `*.partial`) a killed process left in the run
/// directory and its folders; returns how many. Only for a process that owns the run (the loop):
/// another writer's file being written would go too.
pub fn remove_leftovers(root: &Path) -> anyhow::Result<usize> {
    let mut removed = 0;
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            match entry.file_type() {
                Ok(t) if t.is_dir() => dirs.push(path),
                Ok(t) if t.is_file() && (name.ends_with(".tmp") || name.ends_with(".partial")) => {
                    fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
                    removed += 1;
                }
                _ => {}
            }
        }
    }
    Ok(removed)
}

/// Appends `line` and a newline with one write, after cutting off a torn last line (one without
/// its newline, left by a kill during an earlier append).
pub fn append_line(path: &Path, line: &str) -> anyhow::Result<()> {
    let mut f = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let len = f.metadata()?.len();
    if len > 0 {
        let mut last = [0u8; 1];
        f.seek(SeekFrom::Start(len - 1))?;
        f.read_exact(&mut last)?;
        if last[0] != b'\n' {
            // Find the start of the torn line and cut it off.
            let text = fs::read(path)?;
            let keep = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            f.set_len(keep as u64)?;
        }
    }
    let mut buf = String::with_capacity(line.len() + 1);
    buf.push_str(line);
    buf.push('\n');
    f.write_all(buf.as_bytes())?;
    f.sync_data()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allowed_config_change_keeps_the_old_config() {
        let dir = std::env::temp_dir().join(format!("draughts-rundir-cfg-{}", std::process::id()));
        fs::remove_dir_all(&dir).ok();
        let run = RunDir::create(&dir).unwrap();
        run.pin_config("a = 1\n", false).unwrap();
        run.pin_config("a = 1\n", false).unwrap();
        assert!(run.pin_config("a = 2\n", false).is_err());
        run.pin_config("a = 2\n", true).unwrap();
        run.pin_config("a = 3\n", true).unwrap();
        // The same values in other words are accepted, and the pinned text stays.
        let same = |t: &str| t.parse::<toml::Table>().ok() == "a = 3 # three\n".parse::<toml::Table>().ok();
        run.pin_config_by("a = 3 # three\n", false, same).unwrap();
        assert_eq!(fs::read_to_string(run.config()).unwrap(), "a = 3\n");
        assert!(run.pin_config_by("a = 4\n", false, |t: &str| t == "a = 4\n").is_err());
        assert_eq!(fs::read_to_string(run.config()).unwrap(), "a = 3\n");
        assert_eq!(fs::read_to_string(dir.join("config.prev-1.toml")).unwrap(), "a = 1\n");
        assert_eq!(fs::read_to_string(dir.join("config.prev-2.toml")).unwrap(), "a = 2\n");
        fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn torn_metrics_line_is_cut_before_the_next_append() {
        let dir = std::env::temp_dir().join(format!("draughts-rundir-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let p = dir.join("m.jsonl");
        fs::write(&p, "{\"a\":1}\n{\"b\":").unwrap();
        append_line(&p, "{\"c\":3}").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\"a\":1}\n{\"c\":3}\n");
        append_line(&p, "{\"d\":4}").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap().lines().count(), 3);
        fs::remove_dir_all(&dir).ok();
    }
}
