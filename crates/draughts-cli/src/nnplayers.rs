//! Network players for the arena (`mcts:model=DIR,sims=N`, `policy:model=DIR`) and the network
//! behind the Hub and DXP protocols (`draughts hub --model DIR`). A sparse model is evaluated
//! natively (`draughts-nnue`, no inference thread); a ResNet through libtorch, which only the
//! training binary `draughts-train` links: it installs a [`ResnetBackend`] at start. The
//! play-only `draughts` has none and hands a command that names a ResNet to `draughts-train`
//! before it starts (see `handoff`), so the error below is only met by library users.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use draughts_arena::{BuildError, ClockState, Player, PlayerError, PlayerFactory, PlayerKind, PlayerSpec};
use draughts_core::{Game, Move, Rules};
use draughts_mcts::{Algorithm, Budget, EvalRequest, Evaluator, MctsConfig, NnueEvaluator, Search, SearchKind};
use draughts_nnue::{Network, Precision};
use draughts_protocol::{Info, SearchLimit, Searcher};

use crate::models;

/// The search settings used when a network plays to win (evaluation and the Hub engine):
/// Gumbel without root noise, so play is deterministic for a given model and position.
pub fn play_config(sims: u32) -> MctsConfig {
    MctsConfig { algorithm: Algorithm::Gumbel, simulations: sims, gumbel_scale: 0.0, reuse_tree: false, ..MctsConfig::default() }
}

/// An evaluator and the model's id.
pub type Loaded = (Box<dyn Evaluator + Send>, String);

/// What only the training binary has: libtorch, to evaluate a ResNet.
pub trait ResnetBackend: Send + Sync {
    /// An evaluator of the ResNet `model` (resolved) for the calling thread.
    fn evaluator(&self, model: &Path) -> Result<Loaded, String>;
    /// An inference thread for the ResNet `model` (resolved), whose handles evaluate the
    /// positions of games played at once together in batches; it stops when dropped.
    fn server(&self, model: &Path) -> Result<Started, String>;
}

/// A started inference thread and the model's id.
pub type Started = (Box<dyn Server>, String);

/// An inference thread that hands out evaluators.
pub trait Server: Send {
    fn handle(&self) -> Box<dyn Evaluator + Send>;
}

static RESNET: OnceLock<Box<dyn ResnetBackend>> = OnceLock::new();

/// Makes ResNet models playable in this process (called once by `draughts-train` at start).
pub fn install_resnet_backend(backend: Box<dyn ResnetBackend>) {
    let _ = RESNET.set(backend);
}

fn resnet_backend(model: &Path) -> Result<&'static dyn ResnetBackend, String> {
    RESNET.get().map(|b| b.as_ref()).ok_or_else(|| {
        format!(
            "{}: a ResNet model, which plays through libtorch; this binary does not load libtorch (the full one, `draughts-train`, does)",
            model.display()
        )
    })
}

/// An evaluator for `model` on the calling thread: native for a sparse net, libtorch for a ResNet.
fn load_evaluator(model: &Path) -> Result<Loaded, String> {
    let text = |e: anyhow::Error| format!("{e:#}");
    if models::is_sparse(model).map_err(text)? {
        let net = models::load_native(model).map_err(text)?;
        let id = net.model_id().to_owned();
        return Ok((Box::new(NnueEvaluator::new(net)), id));
    }
    let path = models::resolve_model(model).map_err(text)?;
    resnet_backend(model)?.evaluator(&path)
}

/// A sparse network that an MCTS player evaluates natively, in `precision`; its evaluator is
/// built for the rules of the game being played (the capture resolution follows them).
struct Native {
    net: Arc<Network>,
    precision: Precision,
    rules: Rules,
}

/// Picks a move by MCTS guided by the network.
pub struct MctsPlayer {
    evaluator: Box<dyn Evaluator + Send>,
    /// With a sparse network: the network, from which `evaluator` is built.
    native: Option<Native>,
    model_id: String,
    config: MctsConfig,
    /// Time per move, when the player is limited by time (simulations then follow the speed
    /// measured on earlier moves).
    movetime: Option<Duration>,
    /// Simulations per second seen so far (starts with a cautious guess).
    rate: f64,
}

impl std::fmt::Debug for MctsPlayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MctsPlayer({}, {} sims)", self.model_id, self.config.simulations)
    }
}

impl MctsPlayer {
    pub fn new(model: &Path, sims: u32) -> Result<MctsPlayer, String> {
        MctsPlayer::load(model, sims, Precision::Float)
    }

    /// MCTS with `model` on the calling thread: a sparse network natively in `precision` (see
    /// [`MctsPlayer::native`]), a ResNet through libtorch (float only).
    pub fn load(model: &Path, sims: u32, precision: Precision) -> Result<MctsPlayer, String> {
        let text = |e: anyhow::Error| format!("{e:#}");
        if models::is_sparse(model).map_err(text)? {
            return Ok(MctsPlayer::native(models::load_native(model).map_err(text)?, precision, sims));
        }
        if precision != Precision::Float {
            return Err(format!("{}: a ResNet model, which runs in float through libtorch (`quantised` is for sparse networks)", model.display()));
        }
        let (evaluator, model_id) = load_evaluator(model)?;
        Ok(MctsPlayer::with_evaluator(evaluator, model_id, sims))
    }

    /// MCTS with a sparse network evaluated natively in `precision` (float where it cannot be
    /// quantised). A leaf with a capture pending takes the value of its forced captures
    /// (`MctsConfig::capture_resolution` positions at most, as in the MCTS generator): the
    /// network is trained on quiet positions, and without it the player lost +171 =73 -756 at
    /// equal simulations (ARCHITECTURE.md).
    pub fn native(net: Arc<Network>, precision: Precision, sims: u32) -> MctsPlayer {
        let precision = net.supported(precision);
        let model_id = match precision {
            // The name says so (results keep the two apart).
            Precision::Int8 => format!("{},quantised=on", net.model_id()),
            Precision::Float => net.model_id().to_owned(),
        };
        let mut player = MctsPlayer::with_evaluator(Box::new(NnueEvaluator::new(net.clone())), model_id, sims);
        player.native = Some(Native { net, precision, rules: Rules::FMJD });
        player.build_native();
        player
    }

    /// A player that sends its positions to `evaluator` (for example a handle of an inference
    /// thread shared with other players, which batches their positions together).
    pub fn with_evaluator(evaluator: Box<dyn Evaluator + Send>, model_id: String, sims: u32) -> MctsPlayer {
        MctsPlayer { evaluator, native: None, model_id, config: play_config(sims.max(1)), movetime: None, rate: 500.0 }
    }

    /// Builds the native network's evaluator for its rules.
    fn build_native(&mut self) {
        if let Some(n) = &self.native {
            let resolution = self.config.capture_resolution as usize;
            let e = NnueEvaluator::new(n.net.clone()).with_precision(n.precision).with_capture_resolution(n.rules, resolution);
            self.evaluator = Box::new(e);
        }
    }

    /// Limits every move to `movetime` as well (simulations from the measured speed, at most
    /// the configured number).
    pub fn with_movetime(mut self, movetime: Option<Duration>) -> MctsPlayer {
        self.movetime = movetime;
        self
    }

    /// Simulations for a move of `budget` (the time left for it), from the speed seen so far.
    fn sims_for(&self, budget: Duration) -> u32 {
        ((budget.as_secs_f64() * 0.8 * self.rate) as u32).clamp(1, 1_000_000)
    }

    fn search(&mut self, game: &Game, sims: u32) -> Result<(Move, f32), String> {
        let start = Instant::now();
        let mut search = Search::new(game.clone(), self.config).map_err(|e| e.to_string())?;
        let out = search
            .search(self.evaluator.as_ref(), Budget { simulations: sims, kind: SearchKind::Full })
            .map_err(|e| e.to_string())?;
        let secs = start.elapsed().as_secs_f64();
        // A search cut short (a proven result) says nothing of the speed.
        if out.simulations >= sims / 2 {
            let measured = out.simulations.max(1) as f64 / secs.max(1e-6);
            if secs > 0.02 || measured < self.rate {
                self.rate = 0.5 * self.rate + 0.5 * measured;
            } else {
                // A search far shorter than its time (the first guess suits a network behind
                // libtorch; the native one is a thousand times faster) only shows that the
                // player is faster than it thought: grow toward what it measured, at most
                // eightfold a move. (Growing only after searches of 20 ms kept a native network
                // at 40 simulations a move at 100 ms a move.)
                self.rate = measured.min(8.0 * self.rate);
            }
        }
        Ok((out.best, out.root_value))
    }
}

impl Player for MctsPlayer {
    fn name(&self) -> String {
        match self.movetime {
            Some(t) => format!("mcts:{},sims={},movetime={}", self.model_id, self.config.simulations, t.as_millis()),
            None => format!("mcts:{},sims={}", self.model_id, self.config.simulations),
        }
    }

    fn choose(&mut self, game: &Game, clock: &ClockState) -> Result<Move, PlayerError> {
        if let Some(n) = self.native.as_mut().filter(|n| n.rules != *game.rules()) {
            n.rules = *game.rules();
            self.build_native();
        }
        let limit = match (self.movetime, clock.move_limit) {
            (Some(a), Some(b)) => Some(a.min(b.mul_f64(0.8))),
            (a, b) => a.or(b.map(|b| b.mul_f64(0.8))),
        };
        let sims = match limit {
            Some(t) => self.sims_for(t).min(self.config.simulations),
            None => self.config.simulations,
        };
        self.search(game, sims).map(|(m, _)| m).map_err(|detail| PlayerError::Crashed { detail })
    }
}

/// Plays the network's most likely legal move, without search.
pub struct PolicyPlayer {
    evaluator: Box<dyn Evaluator + Send>,
    model_id: String,
}

impl std::fmt::Debug for PolicyPlayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PolicyPlayer({})", self.model_id)
    }
}

impl Player for PolicyPlayer {
    fn name(&self) -> String {
        format!("policy:{}", self.model_id)
    }

    fn choose(&mut self, game: &Game, _clock: &ClockState) -> Result<Move, PlayerError> {
        let request = EvalRequest {
            position: *game.position(),
            counters: game.counters(),
            repetitions: game.repetition_count(),
            moves: game.legal_moves(),
        };
        let eval = self
            .evaluator
            .evaluate(std::slice::from_ref(&request))
            .map_err(|e| PlayerError::Crashed { detail: e.to_string() })?;
        let policy = &eval.first().ok_or(PlayerError::Crashed { detail: "no evaluation".into() })?.policy;
        // The first of the most likely moves (generation order breaks ties deterministically).
        let best = (0..request.moves.len()).fold(0, |b, i| if policy[i] > policy[b] { i } else { b });
        request.moves.get(best).copied().ok_or(PlayerError::Crashed { detail: "no legal move".into() })
    }
}

/// Builds the network players for the arena. Every player of one ResNet shares one inference
/// thread ([`ResnetBackend::server`], stopped with the factory), so the positions of games
/// played at once (`--concurrency`) are evaluated together in batches.
#[derive(Default)]
pub struct NnFactory {
    servers: Mutex<HashMap<PathBuf, Started>>,
}

impl std::fmt::Debug for NnFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NnFactory")
    }
}

impl NnFactory {
    fn evaluator(&self, model: &Path) -> Result<Loaded, String> {
        if models::is_sparse(model).map_err(|e| format!("{e:#}"))? {
            // Native: cheap per player, nothing to share but the (cached) network.
            return load_evaluator(model);
        }
        let path = models::resolve_model(model).map_err(|e| format!("{e:#}"))?;
        let mut servers = self.servers.lock().map_err(|_| "an earlier model load panicked".to_owned())?;
        if let Some((server, id)) = servers.get(&path) {
            return Ok((server.handle(), id.clone()));
        }
        let (server, id) = resnet_backend(model)?.server(&path)?;
        let handle = server.handle();
        servers.insert(path, (server, id.clone()));
        Ok((handle, id))
    }
}

impl PlayerFactory for NnFactory {
    fn build(&self, spec: &PlayerSpec) -> Result<Box<dyn Player>, BuildError> {
        let failed = |detail: String| BuildError::Failed { spec: spec.to_string(), detail };
        match &spec.kind {
            PlayerKind::Mcts { model, sims, movetime, quantised } => {
                // Without a simulation count the time limit alone decides.
                let sims = sims.unwrap_or(1_000_000);
                let precision = if *quantised { Precision::Int8 } else { Precision::Float };
                let player = if *quantised || models::is_sparse(model).map_err(|e| failed(format!("{e:#}")))? {
                    MctsPlayer::load(model, sims, precision).map_err(failed)?
                } else {
                    // A ResNet: the shared inference thread.
                    let (evaluator, model_id) = self.evaluator(model).map_err(failed)?;
                    MctsPlayer::with_evaluator(evaluator, model_id, sims)
                };
                Ok(Box::new(player.with_movetime(*movetime)))
            }
            PlayerKind::Policy { model } => {
                let (evaluator, model_id) = self.evaluator(model).map_err(failed)?;
                Ok(Box::new(PolicyPlayer { evaluator, model_id }))
            }
            other => Err(BuildError::Unsupported { spec: spec.to_string(), kind: other.keyword() }),
        }
    }
}

/// The network behind the Hub protocol: MCTS with a simulation budget taken from the limit
/// (`nodes` = simulations; a time limit is turned into simulations with the speed measured on
/// earlier moves).
pub struct NetSearcher {
    player: MctsPlayer,
    default_sims: u32,
}

impl std::fmt::Debug for NetSearcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NetSearcher({:?})", self.player)
    }
}

impl NetSearcher {
    pub fn new(model: &Path, default_sims: u32) -> anyhow::Result<NetSearcher> {
        let player = MctsPlayer::new(model, default_sims).map_err(crate::bad_input)?;
        Ok(NetSearcher { player, default_sims })
    }
}

impl Searcher for NetSearcher {
    fn name(&self) -> String {
        format!("draughts network {}", self.player.model_id)
    }

    fn think(&mut self, game: &Game, limit: &SearchLimit, _stop: &AtomicBool, info: &mut dyn FnMut(&Info)) -> Option<Move> {
        if game.outcome().is_some() {
            return None;
        }
        let sims = match (limit.nodes, limit.time_budget()) {
            (Some(n), _) => n.clamp(1, 1_000_000) as u32,
            (None, Some(t)) => self.player.sims_for(t),
            (None, None) => self.default_sims,
        };
        let start = Instant::now();
        let (mv, value) = self.player.search(game, sims).ok()?;
        info(&Info { depth: 1, score: (value * 100.0) as i32, nodes: sims as u64, time: start.elapsed(), pv: vec![mv] });
        Some(mv)
    }
}

/// The engine arguments `draughts hub` and `draughts dxp` share (flattened into each).
#[derive(Debug, clap::Args)]
pub struct EngineArgs {
    /// Playing strength: a level of the levels file (the shipped ones: beginner, easy, casual,
    /// medium, strong, expert, hard).
    #[arg(long, default_value = "hard")]
    pub level: String,
    /// A model to play the levels with `network = true` (hard, expert): an exported model
    /// directory, run directory or checkpoint. A sparse network is the alpha-beta engine's
    /// evaluation; a ResNet plays through its MCTS.
    #[arg(long)]
    pub model: Option<std::path::PathBuf>,
    /// Simulations per move for a ResNet model when nothing else limits a move.
    #[arg(long, default_value_t = 200)]
    pub sims: u32,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = 64)]
    pub hash: usize,
    /// Endgame databases (`draughts egtb build`), probed at the levels with `egtb = true`.
    #[arg(long)]
    pub egtb: Option<std::path::PathBuf>,
    /// The levels, as `draughts serve --levels` takes them (default: the shipped
    /// configs/levels.toml); `--level` names one of them.
    #[arg(long)]
    pub levels: Option<std::path::PathBuf>,
    /// Vary the first moves as the level says (`noise_plies`: the shipped hard level, 12 plies
    /// within 10 centi-men), as `draughts serve` does for people; off by default, since engine
    /// matches want the full strength (the variety costs about 25 Elo at 100 ms a move).
    #[arg(long)]
    pub variety: bool,
    /// Search threads of the alpha-beta engine (Lazy SMP, 1 to 256; Hub: also `set-param
    /// name=threads`).
    #[arg(long)]
    pub threads: Option<u16>,
    /// Seed of the levels' random choices (mixed with the game's number and the ply).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

impl EngineArgs {
    /// The model the engine plays with, if any.
    pub fn models(&self) -> Vec<std::path::PathBuf> {
        self.model.iter().cloned().collect()
    }

    /// The engine these arguments describe ([`protocol_engine`], with `--threads`).
    pub fn engine(&self) -> anyhow::Result<Box<dyn Searcher + Send>> {
        let levels = crate::serve::levels::load(self.levels.as_deref())?;
        let egtb = crate::egtb::load(self.egtb.as_deref())?;
        let mut searcher = protocol_engine(levels, &self.level, self.model.as_deref(), self.sims, self.hash, self.seed, egtb, self.variety)?;
        if let Some(t) = self.threads {
            searcher.set_param("threads", &t.to_string()).map_err(|e| crate::bad_input(format!("--threads: {e}")))?;
        }
        Ok(searcher)
    }
}

/// The engine behind `draughts hub` and `draughts dxp`, at level `level` of `levels` (the levels
/// file `draughts serve` reads): the alpha-beta engine at that level (see
/// [`crate::alphabeta::AlphaBeta`]), with a sparse model as the evaluation of the levels with
/// `network = true`. A ResNet model plays those levels through its MCTS instead (`sims`
/// simulations when nothing else limits a move; measured, see the model cards: at equal time the
/// sparse network's alpha-beta beats its own MCTS, and a ResNet evaluates too slowly for
/// alpha-beta). The other levels, and every level without a model, are the hand-made engine,
/// whose strength is easy to limit. `variety`: whether a level's variety in the opening applies
/// (see [`crate::alphabeta::AlphaBeta::with_variety`]).
pub fn protocol_engine(
    levels: Vec<crate::serve::levels::LevelSpec>,
    level: &str,
    model: Option<&Path>,
    sims: u32,
    hash_mib: usize,
    seed: u64,
    egtb: Option<draughts_engine::Endgames>,
    variety: bool,
) -> anyhow::Result<Box<dyn Searcher + Send>> {
    let index = crate::alphabeta::level_index(&levels, level).map_err(crate::bad_input)?;
    let network = match model {
        Some(model) if models::is_sparse(model)? => Some(models::load_native(model)?),
        Some(model) if levels[index].network => return Ok(Box::new(NetSearcher::new(model, sims)?)),
        _ => None,
    };
    Ok(Box::new(crate::alphabeta::AlphaBeta::new(levels, level, hash_mib.max(1), seed, network, egtb)?.with_variety(variety)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/sparse-2h")
    }

    /// A native network's MCTS values a leaf with a capture pending by its captures (as the
    /// generator does), under the rules of the game it plays.
    #[test]
    fn a_native_mcts_player_resolves_captures_under_the_game_rules() {
        let net = models::load_native(&shipped()).unwrap();
        let mut player = MctsPlayer::native(net, Precision::Float, 16);
        // White must take the last black man: won, whatever the network makes of the position.
        let pos = draughts_core::Position::from_fen("W:W28:B23").unwrap();
        let eval = player.evaluator.evaluate(&[EvalRequest::new(pos, &Rules::FMJD)]).unwrap();
        assert_eq!(eval[0].wdl, [1.0, 0.0, 0.0]);
        let game = Game::new(Rules::PROMOTE_IN_CAPTURE);
        player.choose(&game, &ClockState::default()).unwrap();
        assert_eq!(player.native.as_ref().unwrap().rules, Rules::PROMOTE_IN_CAPTURE);
        let eval = player.evaluator.evaluate(&[EvalRequest::new(pos, &Rules::PROMOTE_IN_CAPTURE)]).unwrap();
        assert_eq!(eval[0].wdl, [1.0, 0.0, 0.0]);
        // Quantised, and named so.
        let net = models::load_native(&shipped()).unwrap();
        assert!(MctsPlayer::native(net, Precision::Int8, 16).name().contains("quantised=on"));
    }

    /// With a time per move, a native network's MCTS learns its speed within a few moves (it
    /// starts from a guess that suits libtorch, a thousand times slower) and then spends the
    /// time: its rate grows far past the guess, and later moves search many simulations.
    #[test]
    fn a_timed_native_mcts_player_learns_its_speed() {
        let mut player = MctsPlayer::new(&shipped(), 1_000_000).unwrap().with_movetime(Some(Duration::from_millis(50)));
        let first_guess = player.rate;
        let mut game = Game::new(draughts_core::Rules::FMJD);
        for _ in 0..8 {
            let mv = player.choose(&game, &ClockState::default()).unwrap();
            game.play(mv).unwrap();
        }
        assert!(player.rate > 10.0 * first_guess, "rate {} from {first_guess}", player.rate);
        assert!(player.sims_for(Duration::from_millis(40)) > 400);
    }
}
