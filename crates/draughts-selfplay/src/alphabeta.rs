//! The alpha-beta generator: games played by the alpha-beta engine against itself at a fixed
//! node budget, with the learned evaluation (or the hand-made one for the first generation).
//!
//! Every position searched becomes a record: the policy target is the move the search played
//! (one-hot), the root estimate is the search score turned into win/draw/loss
//! ([`draughts_engine::wdl_from_score`]), which the trainer blends with the game result
//! (`train.root_value_mix`), and the [`RecordFlags::QUIET`](crate::RecordFlags::QUIET) flag says
//! whether a capture was pending. Openings are diverse: `random_opening_plies` random plies,
//! then for `temperature_plies` plies a seeded choice among the moves within
//! `alphabeta_margin` centi-men of the best. Node-limited searches are deterministic, so game
//! `i` of a run depends only on (seed, i) and the network, as with the MCTS generator. With an
//! opponent (`alphabeta_opponent`), its engine plays one side of every game (White in even
//! games, Black in odd ones) and the records of its moves carry its own search score.

use std::error::Error as StdError;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};

use draughts_core::{Color, Rules};
use draughts_engine::{wdl_from_score, Engine, EngineConfig, Limits, Noise};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::config::SelfplayConfig;
use crate::pool::{drive, game_seed, random_opening, sub_seed, FinishedGame, Games, PendingRecord, Played, Progress, SelfplayError, Stop};
use crate::record::{quantise_policy, GameEnd, Wdl};

/// The side the opponent plays in game `index`: White in even games, Black in odd ones.
pub fn opponent_side(index: u64) -> Color {
    if index % 2 == 0 {
        Color::White
    } else {
        Color::Black
    }
}

/// Plays game `index` of a run with `engine`, and `opponent` on [`opponent_side`] when there is
/// one. Returns `None` when `stop` was set mid-game.
#[allow(clippy::too_many_arguments)]
pub fn play_game(
    engine: &mut Engine,
    mut opponent: Option<&mut Engine>,
    config: &SelfplayConfig,
    rules: Rules,
    index: u64,
    worker: usize,
    stop: &AtomicBool,
    nodes: &mut u64,
) -> Option<FinishedGame> {
    let seed = game_seed(config.seed, index);
    let mut rng = ChaCha8Rng::seed_from_u64(sub_seed(seed, 1));
    let start = config.start_position().expect("the config was validated");
    let (mut game, opening_plies) = random_opening(start, rules, config.random_opening_plies, &mut rng);
    engine.new_game();
    if let Some(o) = opponent.as_deref_mut() {
        o.new_game();
    }
    let mut pending = Vec::new();
    let end = loop {
        if let Some(outcome) = game.outcome() {
            break GameEnd::Rules(outcome);
        }
        if game.ply() >= config.max_plies as usize {
            break GameEnd::MaxPlies;
        }
        let exact = engine.config().egtb.as_ref().and_then(|e| e.value_in_game(&game)).map(|v| match v {
            draughts_egtb::Wdl::Win => Wdl::Win,
            draughts_egtb::Wdl::Draw => Wdl::Draw,
            draughts_egtb::Wdl::Loss => Wdl::Loss,
        });
        if let (Some(v), true) = (exact, config.egtb_adjudicate) {
            let side = game.position().side_to_move();
            let winner = match v {
                Wdl::Win => Some(side),
                Wdl::Draw => None,
                Wdl::Loss => Some(!side),
            };
            break GameEnd::Egtb { winner };
        }
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let noise = (game.ply() < config.temperature_plies as usize && config.alphabeta_margin > 0)
            .then(|| Noise { margin: config.alphabeta_margin, seed: rng.gen() });
        let limits = Limits { nodes: Some(config.alphabeta_nodes), noise, ..Limits::default() };
        let mover = match opponent.as_deref_mut() {
            Some(o) if game.position().side_to_move() == opponent_side(index) => o,
            _ => &mut *engine,
        };
        let r = mover.search(&game, &limits, stop, &mut |_| {});
        *nodes += r.nodes;
        // Invariant: a game that is not over always gets a move.
        let mv = r.best?;
        let mut record = PendingRecord::of(&game, quantise_policy(&[(mv, 1.0)]), wdl_from_score(r.score), true, false);
        record.exact = exact.filter(|_| config.egtb_targets);
        pending.push(record);
        game.play_unchecked(mv);
    };
    let searches = pending.len() as u32;
    Some(
        Played {
            index,
            seed,
            worker,
            game,
            end,
            opening_plies,
            playthrough: false,
            resign: None,
            pending,
            full_searches: searches,
            fast_searches: 0,
        }
        .finish(),
    )
}

/// Runs `config.workers` alpha-beta workers (each with its own engine, built from `engine` with
/// `alphabeta_hash_mib` of table, and its own `opponent` engine when there is one) until `games`
/// are finished, handing every finished game to `sink` on the calling thread; `progress` as in
/// [`crate::run_workers`] (its `positions` count the nodes searched, `evaluator_calls` the
/// searches).
pub fn run_alphabeta_workers<S, SE, P>(
    config: &SelfplayConfig,
    engine: &EngineConfig,
    opponent: Option<&EngineConfig>,
    games: impl Into<Games>,
    sink: S,
    progress: P,
) -> Result<Progress, SelfplayError>
where
    S: FnMut(FinishedGame) -> Result<(), SE>,
    SE: Into<Box<dyn StdError + Send + Sync>>,
    P: FnMut(&Progress) -> ControlFlow<Stop>,
{
    let rules = config.validate()?;
    let engine = EngineConfig { tt_mib: config.alphabeta_hash_mib, ..engine.clone() };
    let opponent = opponent.map(|o| EngineConfig { tt_mib: config.alphabeta_hash_mib, ..o.clone() });
    let build = |c: &EngineConfig| Engine::new(c.clone()).map_err(|err| SelfplayError::Engine(err.to_string()));
    drive(
        config,
        games.into(),
        |w, claim, emit, stop, live| {
            let mut e = build(&engine)?;
            let mut o = opponent.as_ref().map(build).transpose()?;
            while let Some(index) = claim() {
                let mut nodes = 0;
                let Some(game) = play_game(&mut e, o.as_mut(), config, rules, index, w, stop, &mut nodes) else { return Ok(()) };
                live.positions.fetch_add(nodes, Ordering::Relaxed);
                live.calls.fetch_add(game.full_searches as u64, Ordering::Relaxed);
                live.moves.fetch_add(game.full_searches as u64, Ordering::Relaxed);
                if emit(game).is_break() {
                    return Ok(());
                }
            }
            Ok(())
        },
        sink,
        progress,
    )
}
