//! A run in an object store (`--run s3://BUCKET/PREFIX`): the stages work in a local cache
//! directory (a run directory like any other) that this module keeps in step with the store
//! (see `draughts_store` for the rules: atomic downloads, create-only uploads).
//!
//! What moves where:
//! - `config.toml`: created in the store by the first process (create-only), compared by the
//!   others (a run keeps one config);
//! - self-play workers push each shard (and its PDN) as it is written, and pull the newest
//!   checkpoint before each model and whenever they look for a newer one;
//! - the trainer pulls the newest trainer state (and its checkpoint) when it starts and every
//!   new shard before each round, and pushes each checkpoint (weights, then sidecar, so a reader
//!   that sees the sidecar finds the weights) and trainer state; it deletes its older trainer
//!   states from the store as it does from its cache;
//! - every process writes its metrics lines into its own object `metrics/HOST-PID-START.jsonl`
//!   (rewritten whole as lines are added: object stores have no append), and into the cache's
//!   `metrics.jsonl`.
//!
//! Step-0 checkpoints (the untrained net every process can make from the config's seed) are
//! never pushed: they are the same net everywhere, but their sidecars carry different times.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use draughts_store::{Remote, StoreError};

use crate::bad_input;
use crate::rundir::RunDir;

/// The store side of a run whose cache is a local [`RunDir`].
#[derive(Debug)]
pub struct RunSync {
    remote: Remote,
    cache: PathBuf,
    /// This process's metrics object and the lines written to it so far.
    metrics_object: String,
    metrics_lines: Mutex<Vec<String>>,
    /// Shards already in the cache or known to be unreadable there.
    pulled_games: Mutex<HashSet<String>>,
}

fn store_err(e: StoreError) -> anyhow::Error {
    match e {
        StoreError::Url { .. } => bad_input(e.to_string()),
        e => anyhow::anyhow!(e),
    }
}

/// The default cache directory of a run URL: `${XDG_CACHE_HOME:-~/.cache}/draughts/runs/BUCKET/PREFIX`.
pub fn default_cache(url: &str) -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let mut dir = base.join("draughts").join("runs");
    for part in rest.split('/').filter(|p| !p.is_empty() && *p != "." && *p != "..") {
        dir.push(part);
    }
    dir
}

/// `NAME-sSTEP.json` in `checkpoints/` (not in a trainer state's folder): the step.
fn checkpoint_step(rel: &str) -> Option<u64> {
    let name = rel.strip_prefix("checkpoints/")?;
    if name.contains('/') {
        return None;
    }
    let stem = name.strip_suffix(".json")?;
    stem.rsplit_once("-s")?.1.parse().ok()
}

/// `checkpoints/trainer-sSTEP/FILE`: the step.
fn trainer_step(rel: &str) -> Option<u64> {
    let dir = rel.strip_prefix("checkpoints/trainer-s")?.split('/').next()?;
    dir.parse().ok()
}

impl RunSync {
    /// Opens the store at `url`, with the cache at `cache` (created if needed).
    pub fn open(url: &str, cache: &Path) -> anyhow::Result<RunSync> {
        let remote = Remote::open(url).map_err(store_err)?;
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .unwrap_or_else(|| "host".into());
        let host: String = host.trim().chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
        let metrics_object =
            format!("metrics/{host}-{}-{}.jsonl", std::process::id(), crate::rundir::unix_now() as u64);
        Ok(RunSync {
            remote,
            cache: cache.to_path_buf(),
            metrics_object,
            metrics_lines: Mutex::new(Vec::new()),
            pulled_games: Mutex::new(HashSet::new()),
        })
    }

    /// The run's URL.
    pub fn url(&self) -> &str {
        self.remote.url()
    }

    /// Pins `effective` as the run's config in the store (the first process creates it; the
    /// others must bring the same) and in the cache.
    /// `same(pinned)` accepts a config that differs from `effective` in text only (as
    /// [`RunDir::pin_config_by`]).
    pub fn pin_config(&self, run: &RunDir, effective: &str, allow_change: bool, same: impl Fn(&str) -> bool) -> anyhow::Result<()> {
        let there = match self.remote.put_create("config.toml", effective.as_bytes().to_vec()) {
            Ok(()) => None,
            Err(StoreError::AlreadyExists { .. }) => self.remote.get("config.toml").map_err(store_err)?,
            Err(e) => return Err(store_err(e)),
        };
        let mut pinned = effective.to_owned();
        if let Some(existing) = there {
            let existing = String::from_utf8_lossy(&existing).into_owned();
            if existing != effective && !same(&existing) {
                return Err(bad_input(format!(
                    "{} holds a different config than the one given: every process of a run must bring the same config \
                     and --set values{}",
                    self.remote.url_of("config.toml"),
                    if allow_change { " (--allow-config-change is for local runs only)" } else { "" }
                )));
            }
            pinned = existing;
        }
        // The store's config is the run's: the cache follows it.
        crate::rundir::write_atomic(&run.config(), pinned.as_bytes())
    }

    fn rel(&self, path: &Path) -> anyhow::Result<String> {
        let rel = path
            .strip_prefix(&self.cache)
            .map_err(|_| anyhow::anyhow!("{}: not inside the cache {}", path.display(), self.cache.display()))?;
        let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        Ok(parts.join("/"))
    }

    /// Uploads a file of the cache (create-only).
    pub fn push(&self, path: &Path) -> anyhow::Result<()> {
        let rel = self.rel(path)?;
        self.remote.upload(&self.cache, &rel).map_err(store_err)
    }

    /// Uploads a shard and the PDN beside it (when there is one).
    pub fn push_shard(&self, shard: &Path) -> anyhow::Result<()> {
        let pdn = shard.with_extension("pdn");
        if pdn.is_file() {
            self.push(&pdn)?;
        }
        self.push(shard)
    }

    /// Uploads a checkpoint (weights, then sidecar) and, when given, a trainer state folder.
    pub fn push_checkpoint(&self, sidecar: &Path, trainer_state: Option<&Path>) -> anyhow::Result<()> {
        self.push(&sidecar.with_extension(draughts_model::WEIGHTS_EXTENSION))?;
        self.push(sidecar)?;
        if let Some(dir) = trainer_state {
            let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
                .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file() && !p.to_string_lossy().ends_with(".tmp"))
                .collect();
            // trainer.json last: a trainer state is whole when it is there.
            files.sort_by_key(|p| p.file_name().is_some_and(|n| n == draughts_nn::train::TRAINER_FILE));
            for f in files {
                self.push(&f)?;
            }
        }
        Ok(())
    }

    /// Downloads the checkpoint with sidecar `rel` (weights first) unless the cache has it.
    fn pull_checkpoint(&self, rel: &str) -> anyhow::Result<()> {
        let local = self.cache.join(rel);
        if local.is_file() {
            return Ok(());
        }
        let weights = format!("{}.{}", rel.trim_end_matches(".json"), draughts_model::WEIGHTS_EXTENSION);
        self.remote.download(&weights, &self.cache).map_err(store_err)?;
        self.remote.download(rel, &self.cache).map_err(store_err)?;
        Ok(())
    }

    /// Downloads the store's newest checkpoint into the cache (when it is not there yet); its
    /// step, or `None` when the store has none.
    pub fn pull_newest_checkpoint(&self) -> anyhow::Result<Option<u64>> {
        let listed = self.remote.list("checkpoints").map_err(store_err)?;
        let newest = listed.iter().filter_map(|(rel, _)| checkpoint_step(rel).map(|s| (s, rel))).max();
        match newest {
            Some((step, rel)) => {
                self.pull_checkpoint(rel)?;
                Ok(Some(step))
            }
            None => Ok(None),
        }
    }

    /// Downloads the newest whole trainer state (one with its `trainer.json`) and its
    /// checkpoint, for a trainer that starts; falls back to the newest checkpoint.
    pub fn pull_resume_point(&self) -> anyhow::Result<()> {
        let listed = self.remote.list("checkpoints").map_err(store_err)?;
        let whole = listed
            .iter()
            .filter(|(rel, _)| rel.ends_with(&format!("/{}", draughts_nn::train::TRAINER_FILE)))
            .filter_map(|(rel, _)| trainer_step(rel))
            .max();
        if let Some(step) = whole {
            let sidecar = listed.iter().find(|(rel, _)| checkpoint_step(rel) == Some(step));
            if let Some((sidecar, _)) = sidecar {
                self.pull_checkpoint(sidecar)?;
                let prefix = format!("checkpoints/trainer-s{step:08}/");
                for (rel, _) in listed.iter().filter(|(rel, _)| rel.starts_with(&prefix)) {
                    self.remote.download(rel, &self.cache).map_err(store_err)?;
                }
                return Ok(());
            }
        }
        self.pull_newest_checkpoint().map(drop)
    }

    /// Downloads every shard of the store the cache does not hold yet; how many.
    pub fn pull_games(&self) -> anyhow::Result<usize> {
        let listed = self.remote.list("games").map_err(store_err)?;
        let mut pulled = self.pulled_games.lock().expect("not poisoned");
        let mut n = 0;
        for (rel, _) in listed.iter().filter(|(rel, _)| rel.ends_with(".bin")) {
            if pulled.contains(rel) || self.cache.join(rel).is_file() {
                pulled.insert(rel.clone());
                continue;
            }
            self.remote.download(rel, &self.cache).map_err(store_err)?;
            pulled.insert(rel.clone());
            n += 1;
        }
        Ok(n)
    }

    /// Deletes the store's trainer states but the two newest (as the trainer prunes its cache).
    pub fn prune_trainer_states(&self) -> anyhow::Result<()> {
        let listed = self.remote.list("checkpoints").map_err(store_err)?;
        let mut steps: Vec<u64> = listed.iter().filter_map(|(rel, _)| trainer_step(rel)).collect();
        steps.sort_unstable();
        steps.dedup();
        let Some(&keep_from) = steps.iter().rev().nth(1) else { return Ok(()) };
        // The trainer.json of each one first, so a half-deleted state is never taken for whole.
        let mut old: Vec<&String> =
            listed.iter().map(|(rel, _)| rel).filter(|rel| trainer_step(rel).is_some_and(|s| s < keep_from)).collect();
        old.sort_by_key(|rel| !rel.ends_with(draughts_nn::train::TRAINER_FILE));
        for rel in old {
            self.remote.delete(rel).map_err(store_err)?;
        }
        Ok(())
    }

    /// Appends a metrics line to the cache's `metrics.jsonl` and to this process's object.
    pub fn metric(&self, run: &RunDir, stage: &str, fields: serde_json::Value) -> anyhow::Result<()> {
        let line = run.metric_line(stage, fields)?;
        crate::rundir::append_line(&run.metrics(), &line)?;
        let mut lines = self.metrics_lines.lock().expect("not poisoned");
        lines.push(line);
        let mut text = lines.join("\n");
        text.push('\n');
        self.remote.put_overwrite(&self.metrics_object, text.into_bytes()).map_err(store_err)
    }
}

/// A run directory, and its store when the run is in one.
#[derive(Debug)]
pub struct Run {
    pub dir: RunDir,
    pub sync: Option<RunSync>,
}

impl Run {
    /// Appends a metrics line (to the store too, for a run in one).
    pub fn metric(&self, stage: &str, fields: serde_json::Value) -> anyhow::Result<()> {
        match &self.sync {
            Some(s) => s.metric(&self.dir, stage, fields),
            None => self.dir.metric(stage, fields),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_the_store() {
        assert_eq!(checkpoint_step("checkpoints/quickstart-s00000045.json"), Some(45));
        assert_eq!(checkpoint_step("checkpoints/quickstart-s00000045.safetensors"), None);
        assert_eq!(checkpoint_step("checkpoints/trainer-s00000045/trainer.json"), None);
        assert_eq!(checkpoint_step("games/x.json"), None);
        assert_eq!(trainer_step("checkpoints/trainer-s00000045/trainer.json"), Some(45));
        assert_eq!(trainer_step("checkpoints/quickstart-s00000045.json"), None);
        let d = default_cache("s3://bucket/a/../b/");
        assert!(d.ends_with("draughts/runs/bucket/a/b"), "{}", d.display());
    }
}
