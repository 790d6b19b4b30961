//! `draughts train`, and the training stage of `draughts loop`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use draughts_nn::checkpoint;
use draughts_nn::train::{Trainer, Window};
use draughts_nn::CheckpointInfo;
use indicatif::{ProgressBar, ProgressStyle};

use crate::rundir::RunDir;
use crate::settings::Config;
use crate::{bad_input, models};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub run_args: crate::settings::RunArgs,
    /// Steps to train (default: as many as the new positions allow, `train.reuse` samples each).
    #[arg(long)]
    pub steps: Option<u64>,
    /// Keep training as self-play workers add games: train the steps new positions owe, write a
    /// checkpoint, look again after `--poll-seconds`; until `--minutes` or until stopped.
    #[arg(long)]
    pub follow: bool,
    /// With `--follow`: seconds between looks at the games directory when nothing is owed.
    #[arg(long, default_value_t = 30.0)]
    pub poll_seconds: f64,
    /// Stop after this many minutes (what was trained is saved).
    #[arg(long)]
    pub minutes: Option<f64>,
}

/// What a training stage did.
#[derive(Debug, Default)]
pub struct TrainOutcome {
    pub steps: u64,
    pub step: u64,
    pub model: Option<String>,
    pub fields: Option<serde_json::Value>,
}

fn trainer_dir(run: &RunDir, step: u64) -> PathBuf {
    run.checkpoints().join(format!("trainer-s{step:08}"))
}

/// The newest step with both a checkpoint and a trainer state (they are saved in that order,
/// so a kill between the two leaves the previous pair as the resume point).
fn resume_point(run: &RunDir) -> Option<(u64, PathBuf)> {
    let cps = models::checkpoints_in(&run.checkpoints());
    cps.into_iter().rev().find(|(step, _, _)| trainer_dir(run, *step).join("trainer.json").is_file()).map(|(s, p, _)| (s, p))
}

/// Steps trained between two looks at the deadline.
const DEADLINE_CHUNK: u64 = 8;

/// A trainer and its replay window, kept in memory between rounds (`draughts train --follow`).
pub struct Session {
    trainer: Trainer,
    window: Window,
    /// The model the next checkpoint descends from.
    parent: Option<String>,
}

impl Session {
    /// Resumes from the run's newest checkpoint with a trainer state, or starts from its newest
    /// checkpoint (a fresh net when it has none).
    pub fn open(run: &RunDir, cfg: &Config) -> anyhow::Result<Session> {
        let device = cfg.inference.device.resolve()?;
        draughts_nn::tch::set_num_threads(cfg.inference.torch_threads.max(1) as i32);
        let (trainer, mut window, parent) = match resume_point(run) {
            Some((step, path)) => {
                let (net, meta) = checkpoint::load(&path, device).map_err(bad_input)?;
                let (mut trainer, state) = Trainer::load(&trainer_dir(run, step), net).map_err(bad_input)?;
                trainer.set_config(cfg.train.clone()).map_err(bad_input)?;
                let (window, skipped) = Window::resume(run.games(), &cfg.train, state);
                for e in skipped {
                    eprintln!("warning: {e}");
                }
                (trainer, window, Some(meta.model_id))
            }
            None => {
                let (net, meta) = models::load_or_init(&run.checkpoints(), cfg, device)?;
                (Trainer::new(net, cfg.train.clone()).map_err(bad_input)?, Window::new(run.games(), &cfg.train), Some(meta.model_id))
            }
        };
        for dir in &cfg.train.extra_games {
            let added = window
                .add_games_from(dir, cfg.train.extra_reuse)
                .map_err(|e| bad_input(format!("train.extra_games: {e}")))?;
            for e in &added.skipped {
                eprintln!("warning: {e}");
            }
            if added.new_shards > 0 {
                eprintln!("extra games: {} positions from {} shards of {}", added.new_positions, added.new_shards, dir.display());
            }
        }
        Ok(Session { trainer, window, parent })
    }

    /// Reads the shards that arrived, trains (`steps`, or the steps they owe) and saves a
    /// checkpoint and the trainer state. With a `deadline`, training stops there (in whole
    /// chunks of steps; the steps not taken stay owed to the next round) and what was trained
    /// is saved.
    pub fn round(
        &mut self,
        run: &RunDir,
        cfg: &Config,
        steps: Option<u64>,
        show_progress: bool,
        deadline: Option<std::time::Instant>,
    ) -> anyhow::Result<TrainOutcome> {
        let Session { trainer, window, parent } = self;
        let refresh = window.refresh().map_err(bad_input)?;
        for e in &refresh.skipped {
            eprintln!("warning: {e}");
        }
        let owed = window.take_steps(cfg.train.batch_size);
        let steps = steps.unwrap_or(owed);
        if steps == 0 || window.is_empty() {
            return Ok(TrainOutcome { step: trainer.step(), ..TrainOutcome::default() });
        }
        let pb = if show_progress { ProgressBar::new(steps) } else { ProgressBar::hidden() };
        pb.set_style(
            ProgressStyle::with_template("train {elapsed_precise} [{bar:30}] {pos}/{len} steps  {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        let mut stats = draughts_nn::train::TrainStats::default();
        let mut done = 0;
        while done < steps {
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                window.give_back_steps(steps - done, cfg.train.batch_size);
                break;
            }
            let chunk = (steps - done).min(if deadline.is_some() { DEADLINE_CHUNK } else { steps });
            let s = trainer
                .train_steps(window, chunk, |s| {
                    pb.inc(1);
                    pb.set_message(format!("loss {:.3} (policy {:.3}, wdl {:.3})", s.loss, s.policy, s.wdl));
                })
                .map_err(bad_input)?;
            stats.merge(&s);
            done += chunk;
        }
        pb.finish_and_clear();
        if stats.steps == 0 {
            return Ok(TrainOutcome { step: trainer.step(), ..TrainOutcome::default() });
        }
        let step = trainer.step();
        let info = CheckpointInfo { name: cfg.name.clone(), step, rules: cfg.rules.clone(), seed: cfg.seed, parent: parent.clone() };
        let meta = checkpoint::save(trainer.net(), &run.checkpoints(), &info)?;
        trainer.save(&trainer_dir(run, step), window).map_err(bad_input)?;
        prune_trainer_states(run, step);
        *parent = Some(meta.model_id.clone());
        let mut fields = serde_json::json!({
            "step": step,
            "steps": stats.steps,
            "samples": stats.samples,
            "seconds": stats.seconds,
            "samples_per_second": stats.samples_per_s,
            "loss": stats.loss,
            "policy_loss": stats.policy,
            "value_loss": stats.wdl,
            "reg": stats.reg,
            "lr": stats.lr,
            "window_positions": window.len(),
            "new_shards": refresh.new_shards,
            "model": meta.model_id,
        });
        if cfg.net.moves_left_head {
            // Only a net with the head has this loss; a constant 0 would draw a misleading line.
            fields["moves_left_loss"] = serde_json::json!(stats.moves_left);
        }
        Ok(TrainOutcome { steps: stats.steps, step, model: Some(meta.model_id), fields: Some(fields) })
    }
}

/// Trains on the run's replay window and saves a checkpoint and the trainer state (one round of
/// a fresh [`Session`]; the training stage of `draughts loop`).
pub fn train_stage(
    run: &RunDir,
    cfg: &Config,
    steps: Option<u64>,
    show_progress: bool,
    deadline: Option<std::time::Instant>,
) -> anyhow::Result<TrainOutcome> {
    Session::open(run, cfg)?.round(run, cfg, steps, show_progress, deadline)
}

/// Keeps the two newest trainer states (the newest is the resume point; one more in case the
/// newest checkpoint is damaged).
fn prune_trainer_states(run: &RunDir, newest: u64) {
    let Ok(entries) = std::fs::read_dir(run.checkpoints()) else { return };
    let mut steps: Vec<u64> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("trainer-s")?.parse().ok())
        .filter(|s| *s <= newest)
        .collect();
    steps.sort_unstable();
    let n = steps.len();
    for s in steps.into_iter().take(n.saturating_sub(2)) {
        std::fs::remove_dir_all(trainer_dir(run, s)).ok();
    }
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let (cfg, run) = a.run_args.open_run()?;
    if let Some(m) = a.minutes.filter(|m| !(m.is_finite() && *m > 0.0)) {
        return Err(bad_input(format!("--minutes {m}: must be a positive number")));
    }
    if !(a.poll_seconds.is_finite() && a.poll_seconds > 0.0) {
        return Err(bad_input(format!("--poll-seconds {}: must be a positive number", a.poll_seconds)));
    }
    let deadline = a.minutes.map(|m| Instant::now() + Duration::from_secs_f64(m * 60.0));
    if let Some(s) = &run.sync {
        s.pull_resume_point()?;
    }
    let mut session = Session::open(&run.dir, &cfg)?;
    loop {
        if let Some(s) = &run.sync {
            s.pull_games()?;
        }
        let out = session.round(&run.dir, &cfg, a.steps, true, deadline)?;
        if let (Some(s), Some(model)) = (&run.sync, &out.model) {
            let sidecar = checkpoint::sidecar_path(&run.dir.checkpoints(), model);
            s.push_checkpoint(&sidecar, Some(&trainer_dir(&run.dir, out.step)))?;
            s.prune_trainer_states()?;
        }
        match &out.fields {
            Some(f) => {
                run.metric("train", f.clone())?;
                println!(
                    "trained {} steps to step {}: loss {:.4} (policy {:.4}, wdl {:.4}), {:.0} samples/s; checkpoint {}",
                    out.steps,
                    out.step,
                    f["loss"].as_f64().unwrap_or(f64::NAN),
                    f["policy_loss"].as_f64().unwrap_or(f64::NAN),
                    f["value_loss"].as_f64().unwrap_or(f64::NAN),
                    f["samples_per_second"].as_f64().unwrap_or(0.0),
                    out.model.as_deref().unwrap_or("-")
                );
            }
            None if !a.follow => {
                println!("nothing to train: no new positions owed (step {}); use --steps to train anyway", out.step)
            }
            None => {}
        }
        if !a.follow {
            break;
        }
        let now = Instant::now();
        if deadline.is_some_and(|d| now >= d) {
            println!("--minutes reached: stopping at step {}", out.step);
            break;
        }
        if out.steps == 0 {
            // Nothing new: wait for the workers (not past the deadline).
            let nap = Duration::from_secs_f64(a.poll_seconds);
            let nap = deadline.map_or(nap, |d| nap.min(d.saturating_duration_since(now)));
            std::thread::sleep(nap);
        }
    }
    Ok(ExitCode::SUCCESS)
}
