//! `draughts loop`: self-play -> training -> evaluation, cycle after cycle, until a budget is
//! spent. Safe to kill at any moment and restart with the same command:
//! - `RUN/loop.json` (written atomically) records the last finished stage of each cycle, so a
//!   restart resumes with the next stage;
//! - a killed self-play stage keeps the shards it had flushed (whole files) and is run again
//!   with the same seed, playing only the games not in them (no game twice, none lost);
//! - a killed training stage resumes from the last checkpoint + trainer state pair;
//! - a killed evaluation skips the opponents whose result line is already in metrics.jsonl.

use std::collections::HashSet;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use draughts_arena::{maker, openings, run_match, Builtin, MatchConfig, PlayerSpec};
use serde::{Deserialize, Serialize};

use crate::nnplayers::NnFactory;
use crate::rundir::{write_atomic, RunDir};
use crate::selfplay::{metrics_fields, mix, play};
use crate::settings::Config;
use crate::train::train_stage;
use crate::{bad_input, models};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub run_args: crate::settings::RunArgs,
}

/// Progress of the loop, rewritten atomically after every stage.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct LoopState {
    /// The cycle in progress or last finished (0 before the first).
    cycle: u64,
    /// Stages of `cycle` that are finished: "selfplay", "train", "eval".
    done: Vec<String>,
    /// Self-play games over the run.
    games: u64,
    /// Training step reached.
    step: u64,
    /// Seconds of work over all invocations.
    seconds: f64,
    /// Model id evaluated at the end of each cycle, oldest first.
    models: Vec<String>,
    /// Seconds the last finished self-play, training and evaluation stages took (to plan the
    /// last cycle within the time budget).
    #[serde(default)]
    last_seconds: [f64; 3],
}

fn state_path(run: &RunDir) -> PathBuf {
    run.root.join("loop.json")
}

fn load_state(run: &RunDir) -> anyhow::Result<LoopState> {
    let p = state_path(run);
    match std::fs::read(&p) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| bad_input(format!("{}: {e}", p.display()))),
        Err(_) => Ok(LoopState::default()),
    }
}

fn save_state(run: &RunDir, s: &LoopState) -> anyhow::Result<()> {
    write_atomic(&state_path(run), serde_json::to_string_pretty(s)?.as_bytes())
}

/// Opponents already rated for `cycle` (their lines are in metrics.jsonl).
fn evaluated(run: &RunDir, cycle: u64) -> HashSet<String> {
    let Ok(text) = std::fs::read_to_string(run.metrics()) else { return HashSet::new() };
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["stage"] == "eval" && v["cycle"].as_u64() == Some(cycle))
        .filter_map(|v| v["opponent"].as_str().map(str::to_owned))
        .collect()
}

/// Seconds of self-play for a cycle starting with `left` seconds of budget, given the last
/// cycle's stage times `[self-play, training, evaluation]`: what is left after evaluation,
/// shared with training in the last cycle's proportion. Before any cycle finished, half of
/// what is left.
fn selfplay_share(left: f64, last: &[f64; 3]) -> f64 {
    let [sp, train, eval] = *last;
    if sp <= 0.0 {
        return left * 0.5;
    }
    ((left - eval) / (1.0 + train / sp)).max(0.0)
}

/// Why no new cycle fits in `left` seconds, if none does: its self-play would get less than a
/// tenth of the last one's time (a cycle that short trains on too little to be worth its
/// evaluation).
fn too_short(left: f64, last: &[f64; 3]) -> Option<String> {
    if left <= 0.0 {
        return Some("the time budget is spent".to_owned());
    }
    let share = selfplay_share(left, last);
    (last[0] > 0.0 && share < 0.1 * last[0])
        .then(|| format!("{:.1} minutes left, too few for another cycle (the last took {:.1})", left / 60.0, last.iter().sum::<f64>() / 60.0))
}

/// Why the run is over, if it is. Checked between stages, right after `s.seconds` was brought up
/// to date (it holds the work time of this and every earlier invocation).
fn budget_left(cfg: &Config, s: &LoopState) -> Option<String> {
    let b = &cfg.budget;
    let seconds = s.seconds;
    if b.cycles.is_some_and(|c| s.cycle >= c && s.done.len() == 3) {
        return Some(format!("{} cycles done", s.cycle));
    }
    if b.max_games.is_some_and(|g| s.games >= g) {
        return Some(format!("{} games played", s.games));
    }
    if b.max_steps.is_some_and(|n| s.step >= n) {
        return Some(format!("{} training steps taken", s.step));
    }
    if b.max_minutes.is_some_and(|m| seconds >= m * 60.0) {
        return Some(format!("{:.1} minutes spent", seconds / 60.0));
    }
    None
}

fn eval_stage(run: &RunDir, cfg: &Config, cycle: u64, state: &LoopState, deadline: Option<Instant>) -> anyhow::Result<()> {
    let Some((model_path, meta)) = models::newest(&run.checkpoints()) else { return Ok(()) };
    let rules = cfg.rules.parse().map_err(bad_input)?;
    let candidate = cfg.eval.candidate_spec(&model_path).map_err(bad_input)?;
    let mut opponents: Vec<(String, PlayerSpec)> = Vec::new();
    for spec in &cfg.eval.ladder {
        opponents.push((spec.clone(), PlayerSpec::parse(spec).map_err(bad_input)?));
    }
    if cfg.eval.previous {
        if let Some(prev) = state.models.last().filter(|m| **m != meta.model_id) {
            let path = run.checkpoints().join(format!("{prev}.json"));
            if path.is_file() {
                opponents.push(("previous".to_owned(), cfg.eval.candidate_spec(&path).map_err(bad_input)?));
            }
        }
    }
    let done = evaluated(run, cycle);
    let factory = Builtin::with_external(NnFactory::default());
    for (i, (label, spec)) in opponents.iter().enumerate() {
        if done.contains(label) || cfg.eval.games == 0 {
            continue;
        }
        let safe: String = label.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        let match_cfg = MatchConfig {
            games: cfg.eval.games,
            concurrency: cfg.eval.concurrency.max(1),
            seed: mix(cfg.seed, &[3, cycle, i as u64]),
            rules,
            openings: openings::builtin(),
            max_plies: cfg.eval.max_plies,
            event: format!("{} cycle {cycle}", cfg.name),
            pdn: Some(run.eval().join(format!("cycle-{cycle:04}-{safe}.pdn"))),
            ..MatchConfig::default()
        };
        let past = || deadline.is_some_and(|d| Instant::now() >= d);
        if past() {
            println!("cycle {cycle}: no time left to play {label}");
            continue;
        }
        let result = run_match(&match_cfg, &maker(&factory, &candidate), &maker(&factory, spec), |_| {
            if past() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .map_err(bad_input)?;
        let cut = if result.games < cfg.eval.games as u64 { format!(" (cut at {} games by the time budget)", result.games) } else { String::new() };
        println!("cycle {cycle}: {} vs {label}: {}{cut}", meta.model_id, result.progress_line());
        run.metric(
            "eval",
            serde_json::json!({
                "cycle": cycle,
                "opponent": label,
                "games": result.games,
                "wins": result.wins_a,
                "draws": result.draws,
                "losses": result.losses_a,
                "score": result.score_a,
                "elo": result.elo,
                "elo_low": result.elo_low,
                "elo_high": result.elo_high,
                "model": meta.model_id,
                "candidate": candidate.to_string(),
                "sims": cfg.eval.sims,
            }),
        )?;
    }
    Ok(())
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let (cfg, run) = a.run_args.open()?;
    if cfg.budget.games_per_cycle == 0 {
        return Err(bad_input("[loop] games_per_cycle must be at least 1"));
    }
    let mut state = load_state(&run)?;
    // The loop owns its run: what a killed process was writing is gone with it.
    let leftovers = crate::rundir::remove_leftovers(&run.root)?;
    if leftovers > 0 {
        println!("removed {leftovers} temporary files left by an interrupted run");
    }
    run.metric(
        if state.cycle == 0 && state.done.is_empty() { "start" } else { "resume" },
        serde_json::json!({
            "seed": cfg.seed,
            "rules": cfg.rules,
            "name": cfg.name,
            "cycle": state.cycle,
            "version": env!("CARGO_PKG_VERSION"),
            "tch": "0.24.0",
            "libtorch": draughts_nn::LIBTORCH_LIB,
            "net": cfg.net.short_name(),
            "init": cfg.init.trim(),
            "extra_games": cfg.train.extra_games,
        }),
    )?;
    if state.cycle == 0 {
        println!("run {} (seed {}): starting", run.root.display(), cfg.seed);
    } else {
        println!("run {} (seed {}): resuming in cycle {} ({} games, step {})", run.root.display(), cfg.seed, state.cycle, state.games, state.step);
    }
    let mut stage_start = Instant::now();
    let mut account = |state: &mut LoopState, run: &RunDir, stage: usize| -> anyhow::Result<()> {
        let took = stage_start.elapsed().as_secs_f64();
        state.seconds += took;
        state.last_seconds[stage] = took;
        stage_start = Instant::now();
        save_state(run, state)
    };
    // Work seconds left in the time budget (from the last stage boundary), if there is one.
    let left = |state: &LoopState| cfg.budget.max_minutes.map(|m| m * 60.0 - state.seconds);
    let at = |secs: f64| Instant::now() + Duration::from_secs_f64(secs.max(0.0));
    loop {
        if state.done.len() == 3 || state.cycle == 0 {
            if let Some(why) = budget_left(&cfg, &state) {
                println!("budget reached: {why}");
                break;
            }
            if let Some(why) = left(&state).and_then(|l| too_short(l, &state.last_seconds)) {
                println!("budget reached: {why}");
                break;
            }
            state.cycle += 1;
            state.done.clear();
        }
        let cycle = state.cycle;
        if !state.done.iter().any(|d| d == "selfplay") {
            // Self-play gets what the budget leaves after training and evaluation at the pace of
            // the last cycle, so that the run ends on its budget (stages only look at the clock
            // between games and steps).
            let deadline = left(&state).map(|l| at(selfplay_share(l, &state.last_seconds)));
            let stats = play(&run, &cfg, cfg.budget.games_per_cycle, &[2, cycle], true, deadline, Default::default())?;
            run.metric("selfplay", metrics_fields(&stats, Some(cycle)))?;
            println!(
                "cycle {cycle}: self-play {} games, {} positions, {:.0} games/hour, {:.0} {}/s",
                stats.games,
                stats.records,
                stats.games as f64 * 3600.0 / stats.seconds.max(1e-9),
                stats.evals_per_second,
                if cfg.selfplay.generator == draughts_selfplay::Generator::Alphabeta { "nodes" } else { "evals" }
            );
            state.games += stats.resumed + stats.games;
            state.done.push("selfplay".into());
            account(&mut state, &run, 0)?;
        }
        if !state.done.iter().any(|d| d == "train") {
            let eval_reserve = state.last_seconds[2];
            let deadline = left(&state).map(|l| at(l - eval_reserve));
            let out = train_stage(&run, &cfg, None, true, deadline)?;
            if let Some(mut f) = out.fields {
                f["cycle"] = serde_json::json!(cycle);
                println!(
                    "cycle {cycle}: trained {} steps to step {}, loss {:.3}",
                    out.steps,
                    out.step,
                    f["loss"].as_f64().unwrap_or(f64::NAN)
                );
                run.metric("train", f)?;
            }
            state.step = out.step;
            state.done.push("train".into());
            account(&mut state, &run, 1)?;
        }
        if !state.done.iter().any(|d| d == "eval") {
            // Evaluation may run past the budget by 5% at most; the matches are cut there.
            let deadline = cfg.budget.max_minutes.map(|m| at(m * 60.0 * 1.05 - state.seconds));
            eval_stage(&run, &cfg, cycle, &state, deadline)?;
            if let Some((_, meta)) = models::newest(&run.checkpoints()) {
                if state.models.last() != Some(&meta.model_id) {
                    state.models.push(meta.model_id);
                }
            }
            state.done.push("eval".into());
            account(&mut state, &run, 2)?;
        }
    }
    match draughts_report::write_report(&run.root, &run.root.join("report")) {
        Ok(r) => println!("report: {}", r.summary_path.display()),
        Err(e) => eprintln!("warning: no report: {e}"),
    }
    Ok(ExitCode::SUCCESS)
}
