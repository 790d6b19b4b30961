//! The replay window: the newest positions of a run, in memory, to sample training batches from.
//!
//! # Which positions
//! The window reads the shard files of one directory (`RUN/games/`), and those of other runs'
//! games directories that [`Window::add_games_from`] adds (`train.extra_games`: only read, named
//! by their full path in the resume state). Shards enter the window in
//! the order the trainer first sees them (arrival order; the shards new at one
//! [`Window::refresh`] enter in file-name order, which for names from
//! [`draughts_selfplay::ShardWriter`] is creation order to the second). "Newest" means latest to arrive, so a
//! shard from a machine whose clock is behind still counts as new. The window keeps the newest
//! `N` positions, `N = TrainConfig::window_size(seen)` (see [`super::TrainConfig`]): whole shards
//! from the newest back, and the newest records (the tail) of the oldest shard it still needs.
//!
//! A damaged or unreadable shard, or one for rules this program does not know, is skipped with
//! its error reported by [`Window::refresh`] and not retried (shards are written atomically, so a
//! damaged shard stays damaged).
//!
//! # Sampling
//! Batches are drawn uniformly **with replacement** over the whole window with the trainer's
//! seeded ChaCha generator, so the positions of a batch come from different games (consecutive
//! positions of one game are strongly correlated; a window of `N` positions from games of ~100
//! records puts two positions of one game in a batch of 256 only rarely). Every position, whether
//! it trains the policy or not, is equally likely; see [`super::batch`] for which rows train what.
//!
//! # Resuming
//! [`Window::state`] is what a restart needs to rebuild the same window: the names of every shard
//! consumed, in arrival order, the count of positions seen and the sample budget. It is saved in
//! `trainer.json` by [`super::Trainer::save`]. [`Window::resume`] reads back only the shards the
//! window still holds and then picks up new ones as usual.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};

use draughts_core::Rules;
use draughts_selfplay::{list_shards, read_shard, ShardError, ShardErrorKind, TrainingRecord};
use rand::Rng;
use serde::{Deserialize, Serialize};

use super::batch::{Batch, TargetParams};
use super::TrainConfig;

/// The window-related part of the config.
#[derive(Copy, Clone, Debug, PartialEq)]
struct WindowParams {
    min: u64,
    max: u64,
    growth: f64,
    reuse: f64,
}

impl WindowParams {
    fn of(c: &TrainConfig) -> WindowParams {
        WindowParams {
            min: c.window_min,
            max: c.window_max,
            growth: c.window_growth,
            reuse: c.reuse,
        }
    }

    fn size(&self, seen: u64) -> u64 {
        TrainConfig {
            window_min: self.min,
            window_max: self.max,
            window_growth: self.growth,
            ..TrainConfig::default()
        }
        .window_size(seen)
    }
}

/// One shard's records in the window.
#[derive(Clone, Debug)]
struct WindowShard {
    name: String,
    rules: Rules,
    /// The records still in the window (the shard's tail when the window cut it).
    records: Vec<TrainingRecord>,
}

/// What a restart needs to rebuild a [`Window`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WindowState {
    /// File names (in the games directory) of every shard consumed, in arrival order, damaged
    /// ones included.
    pub consumed: Vec<String>,
    /// Positions loaded since the run began.
    pub seen: u64,
    /// Training samples owed to the positions loaded so far and not yet taken (see
    /// [`Window::take_steps`]).
    pub sample_budget: f64,
}

/// What a [`Window::refresh`] found.
#[derive(Debug, Default)]
pub struct Refresh {
    /// New shards added to the window.
    pub new_shards: usize,
    /// Positions they hold.
    pub new_positions: u64,
    /// New shards that could not be used, with why.
    pub skipped: Vec<ShardError>,
}

/// The replay window. See the module docs.
#[derive(Debug)]
pub struct Window {
    dir: PathBuf,
    params: WindowParams,
    /// Oldest first.
    shards: VecDeque<WindowShard>,
    /// `starts[i]`: index of the first record of `shards[i]` in the window.
    starts: Vec<u64>,
    len: u64,
    state: WindowState,
    known: HashSet<String>,
}

impl Window {
    /// An empty window over the shards of `games_dir` (nothing is read until [`Window::refresh`]).
    pub fn new(games_dir: impl Into<PathBuf>, config: &TrainConfig) -> Window {
        Window {
            dir: games_dir.into(),
            params: WindowParams::of(config),
            shards: VecDeque::new(),
            starts: Vec::new(),
            len: 0,
            state: WindowState::default(),
            known: HashSet::new(),
        }
    }

    /// A window with the given records in memory, as if they had come from one shard called
    /// `name` played under `rules` (for tests and benchmarks). `refresh` still reads `games_dir`
    /// for more.
    pub fn from_records(
        games_dir: impl Into<PathBuf>,
        config: &TrainConfig,
        name: &str,
        rules: Rules,
        records: Vec<TrainingRecord>,
    ) -> Window {
        let mut w = Window::new(games_dir, config);
        w.known.insert(name.to_owned());
        w.state.consumed.push(name.to_owned());
        w.add(name.to_owned(), rules, records, w.params.reuse);
        w.trim();
        w
    }

    /// Rebuilds the window a run had when it saved `state`: reads the consumed shards from the
    /// newest back until the window is full. A consumed shard that can no longer be read is
    /// skipped and reported; nothing is retried. Call [`Window::refresh`] afterwards for shards
    /// that arrived since.
    pub fn resume(
        games_dir: impl Into<PathBuf>,
        config: &TrainConfig,
        state: WindowState,
    ) -> (Window, Vec<ShardError>) {
        let mut w = Window::new(games_dir, config);
        let target = w.params.size(state.seen);
        let mut skipped = Vec::new();
        let mut loaded: Vec<WindowShard> = Vec::new();
        let mut held = 0u64;
        for name in state.consumed.iter().rev() {
            if held >= target {
                break;
            }
            match w.read(name) {
                Ok(shard) => {
                    held += shard.records.len() as u64;
                    loaded.push(shard);
                }
                Err(e) => skipped.push(e),
            }
        }
        w.known = state.consumed.iter().cloned().collect();
        w.state = state;
        for shard in loaded.into_iter().rev() {
            w.push_shard(shard);
        }
        w.trim();
        (w, skipped)
    }

    /// Reads the shards of the directory that the window has not seen yet, adds them as the
    /// newest (in file-name order), and drops the oldest positions beyond the window size. Fails
    /// only when the directory cannot be listed.
    pub fn refresh(&mut self) -> Result<Refresh, ShardError> {
        let dir = self.dir.clone();
        self.absorb(&dir, false, self.params.reuse)
    }

    /// Adds the shards of another directory (another run's `games/`, read and never written)
    /// that the window has not seen yet, as the newest positions in file-name order, each owing
    /// `reuse` training samples (0: they fill the window and train only through the steps that
    /// other positions pay for). They count as seen, so the window grows to hold them as it
    /// would for the run's own. Their names in the resume state are their full paths, so
    /// [`Window::resume`] reads them from there and a later call adds only what is new. Fails
    /// only when the directory cannot be listed.
    pub fn add_games_from(&mut self, dir: &Path, reuse: f64) -> Result<Refresh, ShardError> {
        let dir = std::fs::canonicalize(dir).map_err(|e| ShardError {
            path: dir.to_path_buf(),
            kind: ShardErrorKind::Io(e),
        })?;
        self.absorb(&dir, true, reuse)
    }

    fn absorb(&mut self, dir: &Path, full_names: bool, reuse: f64) -> Result<Refresh, ShardError> {
        let mut report = Refresh::default();
        let paths = list_shards(dir)?;
        for path in paths {
            let name = if full_names { path.to_str() } else { path.file_name().and_then(|n| n.to_str()) };
            let Some(name) = name.map(str::to_owned) else {
                continue;
            };
            if self.known.contains(&name) {
                continue;
            }
            self.known.insert(name.clone());
            self.state.consumed.push(name.clone());
            match self.read(&name) {
                Ok(shard) => {
                    report.new_shards += 1;
                    report.new_positions += shard.records.len() as u64;
                    let WindowShard {
                        name,
                        rules,
                        records,
                    } = shard;
                    self.add(name, rules, records, reuse);
                }
                Err(e) => report.skipped.push(e),
            }
        }
        self.trim();
        Ok(report)
    }

    fn read(&self, name: &str) -> Result<WindowShard, ShardError> {
        let path = self.dir.join(name);
        let shard = read_shard(&path)?;
        let rules = Rules::from_name(&shard.header.rules).map_err(|e| ShardError {
            path: path.clone(),
            kind: ShardErrorKind::Rules(e),
        })?;
        Ok(WindowShard {
            name: name.to_owned(),
            rules,
            records: shard.records,
        })
    }

    /// Adds a newly arrived shard: counts its positions as seen and owes `reuse` samples each.
    fn add(&mut self, name: String, rules: Rules, records: Vec<TrainingRecord>, reuse: f64) {
        let n = records.len() as u64;
        self.state.seen += n;
        self.state.sample_budget += n as f64 * reuse;
        self.push_shard(WindowShard {
            name,
            rules,
            records,
        });
    }

    fn push_shard(&mut self, shard: WindowShard) {
        if shard.records.is_empty() {
            return;
        }
        self.len += shard.records.len() as u64;
        self.shards.push_back(shard);
    }

    /// Drops the oldest positions beyond the window size and rebuilds the index.
    fn trim(&mut self) {
        let cap = self.capacity();
        while let Some(front) = self.shards.front() {
            let n = front.records.len() as u64;
            if self.len - n >= cap {
                self.len -= n;
                self.shards.pop_front();
            } else {
                break;
            }
        }
        if self.len > cap {
            if let Some(front) = self.shards.front_mut() {
                let cut = (self.len - cap) as usize;
                front.records.drain(..cut);
                self.len = cap;
            }
        }
        self.starts.clear();
        let mut at = 0u64;
        for s in &self.shards {
            self.starts.push(at);
            at += s.records.len() as u64;
        }
    }

    /// The directory the window reads.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Positions in the window.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the window holds no position.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The window size `N` for the positions seen so far.
    pub fn capacity(&self) -> u64 {
        self.params.size(self.state.seen)
    }

    /// Positions loaded since the run began.
    pub fn seen(&self) -> u64 {
        self.state.seen
    }

    /// Names of the shards in the window, oldest first.
    pub fn shard_names(&self) -> impl Iterator<Item = &str> {
        self.shards.iter().map(|s| s.name.as_str())
    }

    /// The resume state (see the module docs).
    pub fn state(&self) -> &WindowState {
        &self.state
    }

    /// Training samples owed and not yet taken.
    pub fn sample_budget(&self) -> f64 {
        self.state.sample_budget
    }

    /// Takes as many whole batches of `batch_size` as the sample budget allows (each new position
    /// adds `reuse` samples) and returns that number of steps; the remainder stays for later.
    pub fn take_steps(&mut self, batch_size: usize) -> u64 {
        let b = batch_size.max(1) as f64;
        let steps = (self.state.sample_budget / b).floor().max(0.0);
        self.state.sample_budget -= steps * b;
        steps as u64
    }

    /// Returns `steps` steps of `batch_size` that [`Window::take_steps`] handed out but were
    /// not trained (a stage cut short by its deadline), so a later stage takes them.
    pub fn give_back_steps(&mut self, steps: u64, batch_size: usize) {
        self.state.sample_budget += steps as f64 * batch_size.max(1) as f64;
    }

    /// Sets the window parameters from `config` (a changed config on restart) and trims.
    pub fn set_config(&mut self, config: &TrainConfig) {
        self.params = WindowParams::of(config);
        self.trim();
    }

    /// The `i`-th position of the window (0 = oldest) and its rules, if `i < len()`.
    pub fn get(&self, i: u64) -> Option<(&TrainingRecord, &Rules)> {
        if i >= self.len {
            return None;
        }
        // The last shard starting at or before `i`.
        let k = self.starts.partition_point(|&s| s <= i).checked_sub(1)?;
        let shard = &self.shards[k];
        let record = shard.records.get((i - self.starts[k]) as usize)?;
        Some((record, &shard.rules))
    }

    /// Draws a position uniformly (with replacement); `None` if the window is empty.
    pub fn sample<R: Rng>(&self, rng: &mut R) -> Option<(&TrainingRecord, &Rules)> {
        if self.len == 0 {
            return None;
        }
        self.get(rng.gen_range(0..self.len))
    }

    /// Fills `batch` with `size` positions drawn with [`Window::sample`]. Returns false (and
    /// leaves `batch` empty) if the window is empty.
    pub fn fill_batch<R: Rng>(
        &self,
        rng: &mut R,
        size: usize,
        params: &TargetParams,
        batch: &mut Batch,
    ) -> bool {
        batch.clear();
        if self.len == 0 {
            return false;
        }
        for _ in 0..size {
            if let Some((record, rules)) = self.sample(rng) {
                batch.push(record, rules, params);
            }
        }
        true
    }
}
