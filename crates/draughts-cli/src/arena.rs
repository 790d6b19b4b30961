//! `draughts match`, `draughts tournament`, `draughts gate`: the evaluator.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;

use draughts_arena::{
    maker, openings, run_match, run_tournament, Builtin, Entrant, MatchConfig, MatchResult, Maker, PlayerFactory,
    PlayerSpec, Sprt, SprtConfig, SprtStatus, TimeControl,
};
use draughts_core::Rules;
use indicatif::{ProgressBar, ProgressStyle};

use crate::bad_input;

/// Settings shared by every arena command.
#[derive(Debug, clap::Args)]
pub struct Common {
    /// Openings: a file with one FEN per line, or a PDN file (each game's start and moves).
    /// Default: the shipped set of balanced 4-ply openings.
    #[arg(long)]
    openings: Option<PathBuf>,
    /// Write every game as PDN to this file.
    #[arg(long)]
    pdn: Option<PathBuf>,
    /// Games played at once.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Seed for the opening order and every player's random choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Rules preset: fmjd, no-capture-25, promote-in-capture.
    #[arg(long, default_value = "fmjd")]
    rules: String,
    /// A game still running after this many plies is a draw ("ply limit").
    #[arg(long, default_value_t = 600)]
    max_plies: usize,
    /// Time per move in milliseconds (exceeding it loses the game); 0 for none.
    #[arg(long, default_value_t = 0)]
    move_time: u64,
    /// A game clock per player, `BASE+INC` in seconds (`60+0.5`: a minute for the game and half
    /// a second added after each move); running out loses the game. Alpha-beta players then
    /// manage their clock (give them no `movetime`, e.g. `alphabeta:depth=100`).
    #[arg(long, value_name = "BASE+INC")]
    clock: Option<String>,
}

/// Parses `BASE+INC` (seconds, `60+0.5`; `+INC` may be left out).
fn parse_clock(text: &str) -> anyhow::Result<(std::time::Duration, std::time::Duration)> {
    let bad = |why: &str| bad_input(format!("--clock `{text}`: {why} (expected BASE+INC in seconds, e.g. 60+0.5)"));
    let (base, inc) = text.trim().split_once('+').unwrap_or((text.trim(), "0"));
    let secs = |s: &str, what: &str| -> anyhow::Result<std::time::Duration> {
        let v: f64 = s.trim().parse().map_err(|_| bad(&format!("the {what} `{s}` is not a number")))?;
        if !v.is_finite() || !(0.0..=86_400.0).contains(&v) {
            return Err(bad(&format!("the {what} must be from 0 to 86400 seconds")));
        }
        Ok(std::time::Duration::from_secs_f64(v))
    };
    let (base, inc) = (secs(base, "base")?, secs(inc, "increment")?);
    if base.is_zero() {
        return Err(bad("the base must be more than 0"));
    }
    Ok((base, inc))
}

impl Common {
    fn config(&self, games: usize, event: &str) -> anyhow::Result<MatchConfig> {
        let rules: Rules = self.rules.parse().map_err(bad_input)?;
        let openings = match &self.openings {
            Some(p) => openings::load(p, &rules).map_err(bad_input)?,
            None => openings::builtin(),
        };
        if openings.is_empty() {
            return Err(bad_input("the openings file holds no opening"));
        }
        let mut time = if self.move_time == 0 {
            TimeControl::NONE
        } else {
            TimeControl { move_limit: Some(std::time::Duration::from_millis(self.move_time)), ..TimeControl::NONE }
        };
        if let Some(c) = &self.clock {
            let (base, increment) = parse_clock(c)?;
            time.base = Some(base);
            time.increment = increment;
        }
        Ok(MatchConfig {
            games,
            concurrency: self.concurrency.max(1),
            seed: self.seed,
            rules,
            openings,
            max_plies: self.max_plies,
            time,
            event: event.to_owned(),
            pdn: self.pdn.clone(),
            ..MatchConfig::default()
        })
    }
}

#[derive(Debug, clap::Args)]
pub struct MatchArgs {
    /// First player (e.g. `alphabeta:depth=6`, `random`, `hub:cmd="scan hub"`).
    #[arg(long)]
    a: String,
    /// Second player.
    #[arg(long)]
    b: String,
    /// Number of games (even: each opening is played twice with colours swapped).
    #[arg(long)]
    games: usize,
    /// Print the result as one JSON object on the last line.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, clap::Args)]
pub struct TournamentArgs {
    /// The players (two or more specs).
    #[arg(long, num_args = 2.., required = true)]
    players: Vec<String>,
    /// Games per pairing (even).
    #[arg(long)]
    games_per_pair: usize,
    /// The player whose rating is fixed (default: the first).
    #[arg(long)]
    anchor: Option<String>,
    /// The anchor's rating.
    #[arg(long, default_value_t = 0.0)]
    anchor_elo: f64,
    /// Draws added to every pairing as a prior, so that a player who won or lost every game
    /// still gets a finite rating (0 for the pure maximum-likelihood fit).
    #[arg(long, default_value_t = 1.0)]
    virtual_draws: f64,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, clap::Args)]
pub struct GateArgs {
    /// The player under test.
    #[arg(long)]
    candidate: String,
    /// The player it must beat.
    #[arg(long)]
    baseline: String,
    /// Elo of the null hypothesis.
    #[arg(long, allow_hyphen_values = true)]
    elo0: f64,
    /// Elo of the alternative hypothesis.
    #[arg(long, allow_hyphen_values = true)]
    elo1: f64,
    /// False-positive rate.
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// False-negative rate.
    #[arg(long, default_value_t = 0.05)]
    beta: f64,
    /// Give up (exit 1) after this many games without a decision.
    #[arg(long, default_value_t = 2000)]
    max_games: usize,
    #[command(flatten)]
    common: Common,
}

/// The network models the player specs name (unparsable specs are left to the command's error).
fn spec_models<'a>(specs: impl IntoIterator<Item = &'a String>) -> Vec<PathBuf> {
    use draughts_arena::PlayerKind;
    specs
        .into_iter()
        .filter_map(|s| PlayerSpec::parse(s).ok())
        .filter_map(|spec| match spec.kind {
            PlayerKind::Mcts { model, .. } | PlayerKind::Policy { model } => Some(model),
            PlayerKind::AlphaBeta { model, .. } => model,
            _ => None,
        })
        .collect()
}

impl MatchArgs {
    /// The models the players name.
    pub fn models(&self) -> Vec<PathBuf> {
        spec_models([&self.a, &self.b])
    }
}

impl TournamentArgs {
    /// The models the players name.
    pub fn models(&self) -> Vec<PathBuf> {
        spec_models(&self.players)
    }
}

impl GateArgs {
    /// The models the players name.
    pub fn models(&self) -> Vec<PathBuf> {
        spec_models([&self.candidate, &self.baseline])
    }
}

fn parse_spec(text: &str) -> anyhow::Result<PlayerSpec> {
    PlayerSpec::parse(text).map_err(bad_input)
}

fn bar(total: usize) -> ProgressBar {
    let pb = ProgressBar::new(total as u64);
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} games  {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb
}

pub fn factory() -> impl PlayerFactory {
    Builtin::with_external(crate::nnplayers::NnFactory::default())
}

fn print_match(r: &MatchResult, a: &str, b: &str, json: bool) -> anyhow::Result<()> {
    println!("{a} vs {b}: {} games", r.games);
    println!("{}", r.progress_line());
    println!("pentanomial (pairs scoring 0, 0.5, 1, 1.5, 2): {:?}", r.pentanomial);
    if json {
        println!("{}", serde_json::to_string(r)?);
    }
    Ok(())
}

pub fn run_match_cmd(a: MatchArgs) -> anyhow::Result<ExitCode> {
    if a.games == 0 || a.games % 2 != 0 {
        return Err(bad_input(format!("--games {}: must be a positive even number (games come in pairs)", a.games)));
    }
    let config = a.common.config(a.games, "draughts match")?;
    let (sa, sb) = (parse_spec(&a.a)?, parse_spec(&a.b)?);
    let f = factory();
    // Build each player once up front, so a bad spec fails before any game starts.
    f.build(&sa).map_err(bad_input)?;
    f.build(&sb).map_err(bad_input)?;
    let pb = bar(a.games);
    let result = run_match(&config, &maker(&f, &sa), &maker(&f, &sb), |p| {
        pb.set_position(p.games_done as u64);
        pb.set_message(p.summary.progress_line());
        ControlFlow::Continue(())
    })
    .map_err(bad_input)?;
    pb.finish_and_clear();
    print_match(&result, &a.a, &a.b, a.json)?;
    Ok(ExitCode::SUCCESS)
}

pub fn run_tournament_cmd(a: TournamentArgs) -> anyhow::Result<ExitCode> {
    if a.games_per_pair == 0 || a.games_per_pair % 2 != 0 {
        return Err(bad_input(format!("--games-per-pair {}: must be a positive even number", a.games_per_pair)));
    }
    let specs: Vec<PlayerSpec> = a.players.iter().map(|s| parse_spec(s)).collect::<anyhow::Result<_>>()?;
    let anchor = match &a.anchor {
        None => 0,
        Some(name) => a
            .players
            .iter()
            .position(|p| p == name)
            .ok_or_else(|| bad_input(format!("--anchor {name} is not one of the --players")))?,
    };
    let f = factory();
    for s in &specs {
        f.build(s).map_err(bad_input)?;
    }
    let makers: Vec<Box<Maker<'_>>> = specs.iter().map(|s| Box::new(maker(&f, s)) as Box<Maker<'_>>).collect();
    let entrants: Vec<Entrant<'_>> =
        a.players.iter().zip(&makers).map(|(name, make)| Entrant { name: name.clone(), make: make.as_ref() }).collect();
    let config = a.common.config(a.games_per_pair, "draughts tournament")?;
    let n = specs.len();
    let pairings = n * (n - 1) / 2;
    let pb = bar(pairings * a.games_per_pair);
    if !(a.virtual_draws >= 0.0 && a.virtual_draws.is_finite()) {
        return Err(bad_input(format!("--virtual-draws {}: must be zero or more", a.virtual_draws)));
    }
    let rating = draughts_arena::stats::RatingOptions {
        anchor,
        anchor_elo: a.anchor_elo,
        virtual_draws: a.virtual_draws,
        ..Default::default()
    };
    let mut done = 0u64;
    let result = run_tournament(&entrants, &config, &rating, |i, j, p| {
        done += 1;
        pb.set_position(done);
        pb.set_message(format!("{} vs {}: {}", a.players[i], a.players[j], p.summary.progress_line()));
        ControlFlow::Continue(())
    })
    .map_err(bad_input)?;
    pb.finish_and_clear();
    for p in &result.pairings {
        println!("{} vs {}: {}", result.players[p.a], result.players[p.b], p.result.progress_line());
    }
    println!();
    match &result.rating_error {
        Some(e) => println!("no ratings: {e}"),
        None => {
            println!("ratings (anchor {} = {:+.0}), 95% intervals:", a.players[anchor], a.anchor_elo);
            for line in result.table() {
                println!("{line}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run_gate_cmd(a: GateArgs) -> anyhow::Result<ExitCode> {
    let sprt_config = SprtConfig { elo0: a.elo0, elo1: a.elo1, alpha: a.alpha, beta: a.beta, ..SprtConfig::default() };
    let mut sprt = Sprt::new(sprt_config).map_err(bad_input)?;
    let max_games = a.max_games + a.max_games % 2;
    let config = a.common.config(max_games, "draughts gate")?;
    let (sc, sb) = (parse_spec(&a.candidate)?, parse_spec(&a.baseline)?);
    let f = factory();
    f.build(&sc).map_err(bad_input)?;
    f.build(&sb).map_err(bad_input)?;
    let pb = bar(max_games);
    let result = run_match(&config, &maker(&f, &sc), &maker(&f, &sb), |p| {
        pb.set_position(p.games_done as u64);
        if let Some(pair) = p.pair {
            sprt.add_pair(pair);
        }
        pb.set_message(format!("{}  LLR {:.2}", p.summary.progress_line(), sprt.llr()));
        if sprt.status() == SprtStatus::Continue {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        }
    })
    .map_err(bad_input)?;
    pb.finish_and_clear();
    let (lower, upper) = sprt.bounds();
    println!("{} vs {}: {} games, {}", a.candidate, a.baseline, result.games, result.progress_line());
    println!("SPRT elo0={} elo1={} alpha={} beta={}: LLR {:.3} (bounds {:.3}, {:.3})", a.elo0, a.elo1, a.alpha, a.beta, sprt.llr(), lower, upper);
    Ok(match sprt.status() {
        SprtStatus::AcceptH1 => {
            println!("accepted: the candidate is stronger");
            ExitCode::SUCCESS
        }
        SprtStatus::AcceptH0 => {
            println!("rejected: the candidate is not stronger");
            ExitCode::from(1)
        }
        SprtStatus::Continue => {
            println!("undecided after {} games (limit --max-games)", result.games);
            ExitCode::from(1)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::parse_clock;
    use std::time::Duration;

    #[test]
    fn clocks() {
        assert_eq!(parse_clock("60+0.5").unwrap(), (Duration::from_secs(60), Duration::from_millis(500)));
        assert_eq!(parse_clock(" 5 ").unwrap(), (Duration::from_secs(5), Duration::ZERO));
        for bad in ["", "0+1", "x+1", "60+y", "-5+1", "1e9+0", "NaN+0"] {
            let e = parse_clock(bad).unwrap_err().to_string();
            assert!(e.contains("--clock") && e.contains(&format!("`{bad}`")), "{bad}: {e}");
        }
    }
}
