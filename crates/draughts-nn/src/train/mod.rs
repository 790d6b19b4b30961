//! Training: replay window, batches, loss, optimizer, and a [`Trainer`] whose state can be saved
//! and loaded for an exact resume.
//!
//! - [`TrainConfig`] ([`config`]): every hyperparameter, with defaults; unknown keys are errors.
//! - [`Window`] ([`window`]): the newest `N` positions of the run's shards, refreshed as new
//!   shards arrive; uniform sampling with replacement.
//! - [`Batch`] ([`batch`]): records -> encoded inputs, dense policy targets, legal-move masks,
//!   win/draw/loss and moves-left targets.
//! - [`loss`]: masked policy cross-entropy, WDL cross-entropy, moves-left Huber loss.
//! - [`Optimizer`] ([`optim`]): SGD with momentum and Adam(W) with state that is saved.
//! - [`Trainer`]: owns the [`Net`] and the optimizer, trains steps on batches drawn from a
//!   window (building the next batch on a second thread while the current one trains), and saves
//!   and loads its state.
//!
//! # Saved state
//! [`Trainer::save`] writes two files into a directory, each to a hidden temporary name first and
//! then renamed, the JSON last:
//! - `optimizer.safetensors`: the optimizer's state tensors ([`Optimizer::state`]);
//! - `trainer.json` ([`TRAINER_FILE`]): format, step, the config and its hash, the sampling
//!   generator's seed and position, the architecture and a fingerprint (FNV-1a of every variable)
//!   of the weights the state goes with, the size and checksum of the optimizer file, and the
//!   window's [`WindowState`].
//!
//! The weights themselves are saved by the caller as a checkpoint ([`crate::checkpoint::save`])
//! at the same step. [`Trainer::load`] takes the net loaded from that checkpoint and refuses one
//! whose fingerprint differs, so a trainer state never silently continues from other weights. A
//! save torn between the two renames is caught by the optimizer file's checksum.
//!
//! # Determinism
//! Sampling uses a ChaCha8 generator seeded from [`TrainConfig::seed`] whose position is saved.
//! With one libtorch thread on the CPU, training `a + b` steps in one go and training `a` steps,
//! saving, loading into a new net and trainer, and training `b` more give bit-identical weights
//! (tested in `tests/train.rs`).

pub mod batch;
pub mod config;
pub mod loss;
pub mod optim;
pub mod window;

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Instant;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use tch::{Device, Kind, Tensor};

use crate::checkpoint::fnv1a64;
use crate::net::{Net, NetConfig, NetError};

pub use batch::{key_index, Batch, BatchTensors, TargetParams};
pub use config::{LrSchedule, OptimizerKind, TrainConfig};
pub use optim::{Optimizer, StateError};
pub use window::{Refresh, Window, WindowState};

/// File name of the trainer's JSON state.
pub const TRAINER_FILE: &str = "trainer.json";
/// File name of the optimizer's state tensors.
pub const OPTIMIZER_FILE: &str = "optimizer.safetensors";
/// Version of the `trainer.json` format.
pub const TRAINER_FORMAT: u32 = 1;

/// What can go wrong configuring, running, saving or loading a [`Trainer`].
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// A config field out of range.
    #[error("train config: `{field}` {message}")]
    Config {
        /// The field.
        field: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// A state file is not there.
    #[error("trainer state file {} does not exist", .path.display())]
    Missing {
        /// The file.
        path: PathBuf,
    },
    /// Reading or writing a file failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// `trainer.json` is not valid JSON, or a field is missing, unknown or of the wrong type or
    /// value.
    #[error("{}: bad trainer state at `{field}`: {message}", .path.display())]
    BadState {
        /// The file.
        path: PathBuf,
        /// Path of the field (`.` for the whole document).
        field: String,
        /// What is wrong.
        message: String,
    },
    /// `trainer.json` of a format this program does not read.
    #[error("{}: trainer state format {found}, this program reads format {expected}", .path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// The format in the file.
        found: u32,
        /// [`TRAINER_FORMAT`].
        expected: u32,
    },
    /// The net given to [`Trainer::load`] has another architecture than the saved state.
    #[error("{}: the state is for a {saved} net, the net given is {given}", .path.display())]
    Architecture {
        /// `trainer.json`.
        path: PathBuf,
        /// Saved architecture (short name).
        saved: String,
        /// The net's (short name).
        given: String,
    },
    /// The net given to [`Trainer::load`] does not have the weights the state was saved with.
    #[error("{}: the state goes with weights {saved}, the net given has weights {given} (load the checkpoint saved at step {step})", .path.display())]
    Weights {
        /// `trainer.json`.
        path: PathBuf,
        /// Saved fingerprint.
        saved: String,
        /// The net's fingerprint.
        given: String,
        /// The saved step.
        step: u64,
    },
    /// The optimizer file is not the one `trainer.json` describes, or not valid safetensors.
    #[error("{}: {message}", .path.display())]
    OptimizerFile {
        /// `optimizer.safetensors`.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The optimizer file does not fit the net's variables.
    #[error("{}: {source}", .path.display())]
    OptimizerState {
        /// `optimizer.safetensors`.
        path: PathBuf,
        /// What does not fit.
        #[source]
        source: StateError,
    },
    /// [`Trainer::set_config`] with another optimizer than the state's.
    #[error("cannot switch the optimizer from {from:?} to {to:?} on a saved state")]
    OptimizerChange {
        /// The state's optimizer.
        from: OptimizerKind,
        /// The one asked for.
        to: OptimizerKind,
    },
    /// Training asked of a window with no position.
    #[error("the replay window over {} holds no position", .dir.display())]
    EmptyWindow {
        /// The games directory.
        dir: PathBuf,
    },
    /// A loss term is NaN or infinite; the optimizer step was skipped (the weights are as they
    /// were; the forward pass in training mode has updated the batch-norm running statistics).
    #[error("step {step}: the {term} loss is {value}; the optimizer step was skipped")]
    NonFinite {
        /// The step (0-based) that failed.
        step: u64,
        /// Which term.
        term: &'static str,
        /// Its value.
        value: f64,
    },
    /// Building or running the net failed.
    #[error(transparent)]
    Net(#[from] NetError),
    /// libtorch failed.
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
}

/// The result of one training step.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct StepStats {
    /// Steps taken, this one included.
    pub step: u64,
    /// Learning rate used.
    pub lr: f64,
    /// Total loss (weighted sum of the terms, without the weight decay).
    pub loss: f64,
    /// Policy cross-entropy.
    pub policy: f64,
    /// Win/draw/loss cross-entropy.
    pub wdl: f64,
    /// Moves-left Huber loss (0 without the head).
    pub moves_left: f64,
    /// `weight_decay / 2 * |w|^2` after the step (see [`TrainConfig::weight_decay`]).
    pub reg: f64,
    /// Positions in the batch.
    pub samples: usize,
    /// Positions of the batch that trained the policy.
    pub policy_samples: usize,
}

/// What [`Trainer::train_steps`] did.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct TrainStats {
    /// Steps taken.
    pub steps: u64,
    /// Positions trained on.
    pub samples: u64,
    /// Mean total loss over the steps.
    pub loss: f64,
    /// Mean policy cross-entropy.
    pub policy: f64,
    /// Mean win/draw/loss cross-entropy.
    pub wdl: f64,
    /// Mean moves-left loss.
    pub moves_left: f64,
    /// Weight-decay term after the last step.
    pub reg: f64,
    /// Learning rate of the last step.
    pub lr: f64,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Samples per second.
    pub samples_per_s: f64,
    /// Seconds the training thread spent waiting for batches (building them, without prefetch).
    pub wait_seconds: f64,
}

impl TrainStats {
    /// Adds the stats of a later run of steps (means weighted by steps; the last rate and
    /// regulariser win).
    pub fn merge(&mut self, other: &TrainStats) {
        let (a, b) = (self.steps as f64, other.steps as f64);
        let total = (a + b).max(1.0);
        let mean = |x: f64, y: f64| (x * a + y * b) / total;
        self.loss = mean(self.loss, other.loss);
        self.policy = mean(self.policy, other.policy);
        self.wdl = mean(self.wdl, other.wdl);
        self.moves_left = mean(self.moves_left, other.moves_left);
        self.steps += other.steps;
        self.samples += other.samples;
        self.reg = other.reg;
        self.lr = other.lr;
        self.seconds += other.seconds;
        self.wait_seconds += other.wait_seconds;
        self.samples_per_s = self.samples as f64 / self.seconds.max(1e-9);
    }
}

/// Owns a [`Net`] and its optimizer, and trains it.
#[derive(Debug)]
pub struct Trainer {
    net: Net,
    config: TrainConfig,
    params: TargetParams,
    optimizer: Optimizer,
    rng_seed: u64,
    rng: ChaCha8Rng,
    step: u64,
    batch: Batch,
}

/// `trainer.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrainerFile {
    format: u32,
    step: u64,
    optimizer_steps: u64,
    optimizer: OptimizerKind,
    config: TrainConfig,
    /// [`TrainConfig::hash`] of `config`: a short name for the config in logs (not checked on
    /// load, so a config changed by hand still loads).
    config_hash: String,
    rng_seed: u64,
    /// `ChaCha8Rng::get_word_pos`, a u128, in decimal (JSON numbers stop at 2^64).
    rng_word_pos: String,
    architecture: NetConfig,
    weights_fnv1a64: String,
    optimizer_file: FileInfo,
    window: WindowState,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileInfo {
    file: String,
    bytes: u64,
    fnv1a64: String,
}

impl Trainer {
    /// A trainer with a fresh optimizer for `net`; the sampling generator is seeded with
    /// `config.seed`.
    pub fn new(net: Net, config: TrainConfig) -> Result<Trainer, TrainError> {
        config.validate()?;
        let optimizer = Optimizer::new(&net, config.optimizer)?;
        Ok(Trainer {
            params: TargetParams::of(&config),
            rng_seed: config.seed,
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            net,
            config,
            optimizer,
            step: 0,
            batch: Batch::new(),
        })
    }

    /// The net.
    pub fn net(&self) -> &Net {
        &self.net
    }

    /// The net, giving up the trainer.
    pub fn into_net(self) -> Net {
        self.net
    }

    /// The config.
    pub fn config(&self) -> &TrainConfig {
        &self.config
    }

    /// Steps taken.
    pub fn step(&self) -> u64 {
        self.step
    }

    /// The optimizer.
    pub fn optimizer(&self) -> &Optimizer {
        &self.optimizer
    }

    /// Replaces the config (e.g. a config file changed between runs). The optimizer cannot
    /// change kind (its state would not fit); the sampling generator keeps its seed and position.
    pub fn set_config(&mut self, config: TrainConfig) -> Result<(), TrainError> {
        config.validate()?;
        if config.optimizer != self.optimizer.kind() {
            return Err(TrainError::OptimizerChange {
                from: self.optimizer.kind(),
                to: config.optimizer,
            });
        }
        self.params = TargetParams::of(&config);
        self.config = config;
        Ok(())
    }

    /// Zeroes the gradients of the trainable variables (a step does it itself; for callers that
    /// ran a backward pass of their own).
    pub fn zero_grad(&mut self) {
        self.optimizer.zero_grad();
    }

    /// Builds a batch of `config.batch_size` positions drawn from `window` with the trainer's
    /// generator (what [`Trainer::train_steps`] does before each step).
    pub fn sample_batch(&mut self, window: &Window) -> Result<Batch, TrainError> {
        let mut batch = Batch::new();
        if !window.fill_batch(
            &mut self.rng,
            self.config.batch_size,
            &self.params,
            &mut batch,
        ) {
            return Err(TrainError::EmptyWindow {
                dir: window.dir().to_path_buf(),
            });
        }
        Ok(batch)
    }

    /// One step on `batch` (on the net's device): forward in training mode, loss, backward,
    /// optimizer update. A non-finite loss is an error and leaves the weights alone.
    pub fn train_batch(&mut self, batch: &BatchTensors) -> Result<StepStats, TrainError> {
        let lr = self.config.lr_at(self.step);
        self.optimizer.zero_grad();
        let out = self.net.forward_t(&batch.inputs, true)?;
        let terms = loss::compute(&out, batch, &self.config)?;
        let value = |t: &Tensor| t.f_double_value(&[]);
        let stats_loss = value(&terms.total)?;
        let policy = value(&terms.policy)?;
        let wdl = value(&terms.wdl)?;
        let moves_left = match &terms.moves_left {
            Some(t) => value(t)?,
            None => 0.0,
        };
        for (term, v) in [
            ("total", stats_loss),
            ("policy", policy),
            ("wdl", wdl),
            ("moves-left", moves_left),
        ] {
            if !v.is_finite() {
                return Err(TrainError::NonFinite {
                    step: self.step,
                    term,
                    value: v,
                });
            }
        }
        terms.total.f_backward()?;
        self.optimizer.step(lr, &self.config)?;
        self.net.clamp_to_quantisable()?;
        self.step += 1;
        Ok(StepStats {
            step: self.step,
            lr,
            loss: stats_loss,
            policy,
            wdl,
            moves_left,
            reg: self.optimizer.l2_penalty(self.config.weight_decay)?,
            samples: batch.size,
            policy_samples: batch.policy_rows,
        })
    }

    /// Trains `steps` steps on batches of `config.batch_size` positions drawn from `window`,
    /// calling `progress` after each. With `config.prefetch > 0` a second thread samples and
    /// builds the batches (at most `prefetch` ahead) while this one trains; it draws exactly
    /// `steps` batches, so the generator ends where it would without prefetch and the result is
    /// the same.
    pub fn train_steps(
        &mut self,
        window: &Window,
        steps: u64,
        mut progress: impl FnMut(&StepStats),
    ) -> Result<TrainStats, TrainError> {
        let mut acc = TrainStats::default();
        if steps == 0 {
            return Ok(acc);
        }
        if window.is_empty() {
            return Err(TrainError::EmptyWindow {
                dir: window.dir().to_path_buf(),
            });
        }
        let start = Instant::now();
        let device = self.net.device();
        let size = self.config.batch_size;
        let params = self.params;
        let mut record = |stats: &StepStats, acc: &mut TrainStats| {
            acc.steps += 1;
            acc.samples += stats.samples as u64;
            acc.loss += stats.loss;
            acc.policy += stats.policy;
            acc.wdl += stats.wdl;
            acc.moves_left += stats.moves_left;
            acc.reg = stats.reg;
            acc.lr = stats.lr;
            progress(stats);
        };
        if self.config.prefetch == 0 {
            let mut batch = std::mem::take(&mut self.batch);
            let result = (|| {
                for _ in 0..steps {
                    let t = Instant::now();
                    window.fill_batch(&mut self.rng, size, &params, &mut batch);
                    let tensors = batch.to_tensors(device)?;
                    acc.wait_seconds += t.elapsed().as_secs_f64();
                    let stats = self.train_batch(&tensors)?;
                    record(&stats, &mut acc);
                }
                Ok::<(), TrainError>(())
            })();
            self.batch = batch;
            result?;
        } else {
            // The builder thread borrows the generator; the trainer keeps the rest.
            let mut rng = std::mem::replace(&mut self.rng, ChaCha8Rng::seed_from_u64(0));
            let (full_tx, full_rx) = mpsc::sync_channel::<Batch>(self.config.prefetch);
            let (empty_tx, empty_rx) = mpsc::channel::<Batch>();
            let result = std::thread::scope(|scope| {
                // Owned by this closure, so it is dropped when the closure returns, before the
                // scope joins the builder: a builder blocked on a full channel then sees the
                // receiver gone and stops, even when training stopped early with an error.
                let full_rx = full_rx;
                let rng = &mut rng;
                scope.spawn(move || {
                    for _ in 0..steps {
                        let mut batch = empty_rx.try_recv().unwrap_or_default();
                        window.fill_batch(rng, size, &params, &mut batch);
                        if full_tx.send(batch).is_err() {
                            break; // The trainer stopped (an error): stop too.
                        }
                    }
                });
                for _ in 0..steps {
                    let t = Instant::now();
                    // The builder sends exactly `steps` batches unless it panicked.
                    let batch = full_rx.recv().map_err(|_| {
                        TrainError::Torch(tch::TchError::Torch(
                            "the batch builder thread stopped".to_owned(),
                        ))
                    })?;
                    let tensors = batch.to_tensors(device)?;
                    acc.wait_seconds += t.elapsed().as_secs_f64();
                    let _ = empty_tx.send(batch);
                    let stats = self.train_batch(&tensors)?;
                    record(&stats, &mut acc);
                }
                Ok::<(), TrainError>(())
            });
            self.rng = rng;
            result?;
        }
        let n = acc.steps.max(1) as f64;
        acc.loss /= n;
        acc.policy /= n;
        acc.wdl /= n;
        acc.moves_left /= n;
        acc.seconds = start.elapsed().as_secs_f64();
        acc.samples_per_s = acc.samples as f64 / acc.seconds.max(1e-9);
        Ok(acc)
    }

    /// Saves the optimizer state and `trainer.json` (with `window`'s state) into `dir`, created
    /// if needed. Save the net's checkpoint at the same step alongside.
    pub fn save(&self, dir: &Path, window: &Window) -> Result<(), TrainError> {
        fs::create_dir_all(dir).map_err(io_err(dir))?;
        let opt_path = dir.join(OPTIMIZER_FILE);
        let opt_tmp = dir.join(format!(".{OPTIMIZER_FILE}.tmp"));
        let state: Vec<(String, Tensor)> = self
            .optimizer
            .state()
            .into_iter()
            .map(|(n, t)| (n, t.to_device(Device::Cpu).contiguous()))
            .collect();
        Tensor::write_safetensors(&state, &opt_tmp).map_err(|e| TrainError::OptimizerFile {
            path: opt_tmp.clone(),
            message: e.to_string(),
        })?;
        let bytes = fs::read(&opt_tmp).map_err(io_err(&opt_tmp))?;
        File::open(&opt_tmp)
            .and_then(|f| f.sync_all())
            .map_err(io_err(&opt_tmp))?;
        fs::rename(&opt_tmp, &opt_path).map_err(io_err(&opt_path))?;

        let file = TrainerFile {
            format: TRAINER_FORMAT,
            step: self.step,
            optimizer_steps: self.optimizer.steps(),
            optimizer: self.optimizer.kind(),
            config: self.config.clone(),
            config_hash: format!("{:016x}", self.config.hash()),
            rng_seed: self.rng_seed,
            rng_word_pos: self.rng.get_word_pos().to_string(),
            architecture: self.net.config().clone(),
            weights_fnv1a64: weights_fingerprint(&self.net)?,
            optimizer_file: FileInfo {
                file: OPTIMIZER_FILE.to_owned(),
                bytes: bytes.len() as u64,
                fnv1a64: format!("{:016x}", fnv1a64(&bytes)),
            },
            window: window.state().clone(),
        };
        let json_path = dir.join(TRAINER_FILE);
        let json_tmp = dir.join(format!(".{TRAINER_FILE}.tmp"));
        // Plain data with string keys and finite floats serialises.
        let mut json = serde_json::to_vec_pretty(&file).map_err(|e| TrainError::BadState {
            path: json_path.clone(),
            field: ".".to_owned(),
            message: e.to_string(),
        })?;
        json.push(b'\n');
        File::create(&json_tmp)
            .and_then(|mut f| {
                f.write_all(&json)?;
                f.sync_all()
            })
            .map_err(io_err(&json_tmp))?;
        fs::rename(&json_tmp, &json_path).map_err(io_err(&json_path))?;
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    /// Loads a state saved by [`Trainer::save`] in `dir` for `net`, which must hold the weights
    /// the state was saved with (the checkpoint of the same step). Returns the trainer, with the
    /// saved config, and the window's state for [`Window::resume`]. Every failure names the file.
    pub fn load(dir: &Path, net: Net) -> Result<(Trainer, WindowState), TrainError> {
        let json_path = dir.join(TRAINER_FILE);
        let bytes = read_file(&json_path)?;
        let bad = |field: String, message: String| TrainError::BadState {
            path: json_path.clone(),
            field,
            message,
        };
        let file: TrainerFile =
            crate::checkpoint::parse_json_named(&bytes).map_err(|(field, message)| bad(field, message))?;
        if file.format != TRAINER_FORMAT {
            return Err(TrainError::Format {
                path: json_path,
                found: file.format,
                expected: TRAINER_FORMAT,
            });
        }
        file.config.validate().map_err(|e| match e {
            TrainError::Config { field, message } => bad(format!("config.{field}"), message),
            other => other,
        })?;
        if file.optimizer != file.config.optimizer {
            return Err(bad(
                "optimizer".to_owned(),
                format!(
                    "{:?} differs from config.optimizer {:?}",
                    file.optimizer, file.config.optimizer
                ),
            ));
        }
        let word_pos: u128 = file.rng_word_pos.parse().map_err(|_| {
            bad(
                "rng_word_pos".to_owned(),
                format!("`{}` is not a decimal u128", file.rng_word_pos),
            )
        })?;
        let opt_name = &file.optimizer_file.file;
        if opt_name.is_empty() || opt_name.contains(['/', '\\']) || opt_name.starts_with('.') {
            return Err(bad(
                "optimizer_file.file".to_owned(),
                format!("`{opt_name}` is not a plain file name"),
            ));
        }
        if &file.architecture != net.config() {
            return Err(TrainError::Architecture {
                path: json_path,
                saved: file.architecture.short_name(),
                given: net.config().short_name(),
            });
        }
        let given = weights_fingerprint(&net)?;
        if given != file.weights_fnv1a64 {
            return Err(TrainError::Weights {
                path: json_path,
                saved: file.weights_fnv1a64.clone(),
                given,
                step: file.step,
            });
        }

        let opt_path = dir.join(opt_name);
        let opt_bytes = read_file(&opt_path)?;
        let opt_bad = |message: String| TrainError::OptimizerFile {
            path: opt_path.clone(),
            message,
        };
        if opt_bytes.len() as u64 != file.optimizer_file.bytes {
            return Err(opt_bad(format!(
                "{} bytes, {TRAINER_FILE} says {} (truncated, or a save was interrupted)",
                opt_bytes.len(),
                file.optimizer_file.bytes
            )));
        }
        let sum = format!("{:016x}", fnv1a64(&opt_bytes));
        if sum != file.optimizer_file.fnv1a64 {
            return Err(opt_bad(format!(
                "checksum {sum}, {TRAINER_FILE} says {} (damaged, or a save was interrupted)",
                file.optimizer_file.fnv1a64
            )));
        }
        let st = safetensors::SafeTensors::deserialize(&opt_bytes)
            .map_err(|e| opt_bad(format!("not a valid safetensors file: {e}")))?;
        let mut tensors = HashMap::new();
        for (name, view) in st.tensors() {
            if view.dtype() != safetensors::Dtype::F32 {
                return Err(opt_bad(format!(
                    "tensor `{name}` has element type {:?}, expected F32",
                    view.dtype()
                )));
            }
            let shape: Vec<i64> = view.shape().iter().map(|&d| d as i64).collect();
            let t = Tensor::f_from_data_size(view.data(), &shape, Kind::Float)?;
            tensors.insert(name, t);
        }

        let mut trainer = Trainer::new(net, file.config)?;
        trainer
            .optimizer
            .load_state(tensors)
            .map_err(|source| TrainError::OptimizerState {
                path: opt_path.clone(),
                source,
            })?;
        trainer.optimizer.set_steps(file.optimizer_steps);
        trainer.step = file.step;
        trainer.rng_seed = file.rng_seed;
        trainer.rng = ChaCha8Rng::seed_from_u64(file.rng_seed);
        trainer.rng.set_word_pos(word_pos);
        Ok((trainer, file.window))
    }
}

/// FNV-1a over every variable of `net` (sorted by name; name bytes, then the `f32` values
/// little-endian), 16 hex digits: tells whether two nets hold the same weights.
pub fn weights_fingerprint(net: &Net) -> Result<String, tch::TchError> {
    let mut vars: Vec<(String, Tensor)> = net.var_store().variables().into_iter().collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    let mut bytes = Vec::new();
    for (name, t) in vars {
        bytes.extend_from_slice(name.as_bytes());
        let values: Vec<f32> = Vec::try_from(
            t.f_to_device(Device::Cpu)?
                .f_to_kind(Kind::Float)?
                .f_flatten(0, -1)?,
        )?;
        for v in values {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    Ok(format!("{:016x}", fnv1a64(&bytes)))
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> TrainError {
    let path = path.to_path_buf();
    move |source| TrainError::Io { path, source }
}

fn read_file(path: &Path) -> Result<Vec<u8>, TrainError> {
    fs::read(path).map_err(|source| {
        if source.kind() == io::ErrorKind::NotFound {
            TrainError::Missing {
                path: path.to_path_buf(),
            }
        } else {
            TrainError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    })
}
