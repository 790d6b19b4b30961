//! The alpha-beta engine behind the protocol crate's `Searcher` seam (for `hub` and `dxp`).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use draughts_core::{Game, Move};
use draughts_engine::{Clock, Endgames, Engine, EngineConfig, Level, Limits, SearchOptions};
use draughts_nnue::Network;
use draughts_protocol::{Info, Param, ParamKind, SearchLimit, Searcher};

/// The alpha-beta engine at a level for people.
#[derive(Debug)]
pub struct AlphaBeta {
    engine: Engine,
    /// The learned evaluation, if any (kept when the table is resized).
    network: Option<Arc<Network>>,
    /// Endgame databases, if any (kept when the table is resized).
    egtb: Option<Endgames>,
    level: Level,
    tt_mib: usize,
    seed: u64,
    games: u64,
}

/// The Hub parameter of a search option: switches are Hub booleans (`true`, `false`).
fn option_param(options: &SearchOptions, name: &str) -> Param {
    let value = options.get(name).unwrap_or_default();
    match value.as_str() {
        "on" | "off" => Param { name: name.into(), value: (value == "on").to_string(), kind: ParamKind::Bool },
        _ if name == "threads" => Param { name: name.into(), value, kind: ParamKind::Int { min: 1, max: SearchOptions::MAX_THREADS as i64 } },
        _ => Param { name: name.into(), value, kind: ParamKind::Int { min: 0, max: 1000 } },
    }
}

impl AlphaBeta {
    pub fn new(level: Level, tt_mib: usize, seed: u64) -> anyhow::Result<AlphaBeta> {
        AlphaBeta::with_network(level, tt_mib, seed, None)
    }

    /// The engine with the learned evaluation of `network` (the hand-made one without).
    pub fn with_network(level: Level, tt_mib: usize, seed: u64, network: Option<Arc<Network>>) -> anyhow::Result<AlphaBeta> {
        let engine = Engine::new(EngineConfig { tt_mib, network: network.clone(), ..EngineConfig::default() })?;
        Ok(AlphaBeta { engine, network, egtb: None, level, tt_mib, seed, games: 0 })
    }

    /// The same engine probing `egtb` in its search.
    pub fn with_egtb(mut self, egtb: Option<Endgames>) -> anyhow::Result<AlphaBeta> {
        let options = self.engine.config().options;
        let network = self.network.clone();
        self.engine = Engine::new(EngineConfig { tt_mib: self.tt_mib, network, options, egtb: egtb.clone(), ..EngineConfig::default() })?;
        self.egtb = egtb;
        Ok(self)
    }
}

/// Converts a protocol limit into engine limits.
pub fn engine_limits(limit: &SearchLimit) -> Limits {
    Limits {
        depth: limit.depth,
        nodes: limit.nodes,
        movetime: limit.move_time,
        clock: limit.clock.map(|c| Clock { remaining: c.time, increment: c.inc, moves_to_go: c.moves }),
        noise: None,
    }
}

impl Searcher for AlphaBeta {
    fn name(&self) -> String {
        match &self.network {
            Some(n) => format!("draughts alpha-beta with network {} ({})", n.model_id(), self.level.name()),
            None => format!("draughts alpha-beta ({})", self.level.name()),
        }
    }

    fn new_game(&mut self) {
        self.engine.new_game();
        self.games += 1;
    }

    fn params(&self) -> Vec<Param> {
        let options = self.engine.config().options;
        let mut params = vec![
            Param {
                name: "level".into(),
                value: self.level.name().into(),
                kind: ParamKind::Enum { values: vec!["easy".into(), "medium".into(), "hard".into()] },
            },
            Param { name: "hash".into(), value: self.tt_mib.to_string(), kind: ParamKind::Int { min: 1, max: 65536 } },
            Param { name: "seed".into(), value: self.seed.to_string(), kind: ParamKind::Int { min: 0, max: i64::MAX } },
        ];
        params.extend(SearchOptions::NAMES.iter().map(|n| option_param(&options, n)));
        params
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        match name {
            "level" => self.level = value.parse().map_err(|e| format!("{e}"))?,
            "hash" => {
                let mib: usize = value.parse().map_err(|_| format!("`{value}` is not a size in MiB"))?;
                let options = self.engine.config().options;
                let (network, egtb) = (self.network.clone(), self.egtb.clone());
                self.engine = Engine::new(EngineConfig { tt_mib: mib, network, options, egtb, ..EngineConfig::default() })
                    .map_err(|e| e.to_string())?;
                self.tt_mib = mib;
            }
            "seed" => self.seed = value.parse().map_err(|_| format!("`{value}` is not a seed"))?,
            _ if SearchOptions::NAMES.contains(&name) => {
                let mut options = self.engine.config().options;
                options.set(name, value).map_err(|e| e.to_string())?;
                self.engine.set_options(options);
            }
            _ => return Err(format!("unknown parameter `{name}`")),
        }
        Ok(())
    }

    fn think(&mut self, game: &Game, limit: &SearchLimit, stop: &AtomicBool, info: &mut dyn FnMut(&Info)) -> Option<Move> {
        // Easy play draws its noise from the seed, the game number and the ply, so a replay with
        // the same seed gives the same moves.
        let seed = self.seed ^ self.games.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (game.ply() as u64) << 32;
        let limits = self.level.limits(&engine_limits(limit), seed);
        let result = self.engine.search(game, &limits, stop, &mut |i| {
            info(&Info { depth: i.depth, score: i.score, nodes: i.nodes, time: i.time, pv: i.pv.clone() })
        });
        result.best
    }
}
