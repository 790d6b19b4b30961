//! The alpha-beta engine behind the protocol crate's `Searcher` seam (for `hub` and `dxp`).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use draughts_core::{Game, Move};
use draughts_engine::{Clock, Endgames, Engine, EngineConfig, Limits, SearchOptions};
use draughts_nnue::Network;
use draughts_protocol::{Info, Param, ParamKind, SearchLimit, Searcher};

use crate::serve::levels::LevelSpec;

/// The alpha-beta engine at a level for people, one of a levels file's (`configs/levels.toml`,
/// the levels `draughts serve` offers): the level's limits (see [`LevelSpec::protocol_limits`]),
/// random choices, search options and evaluation (the network where the level has
/// `network = true` and a model was given, else the hand-made one) and endgame tables (where the
/// level has `egtb = true`).
#[derive(Debug)]
pub struct AlphaBeta {
    engine: Engine,
    /// The learned evaluation, if a model was given (levels with `network = true` use it).
    network: Option<Arc<Network>>,
    /// Endgame databases, if any (levels with `egtb = true` probe them).
    egtb: Option<Endgames>,
    levels: Vec<LevelSpec>,
    /// Index of the level in `levels`.
    level: usize,
    tt_mib: usize,
    seed: u64,
    games: u64,
    /// Whether a level's variety in the opening (`noise_plies`) applies; off by default.
    variety: bool,
}

/// The Hub parameter of a search option: switches are Hub booleans (`true`, `false`).
fn option_param(options: &SearchOptions, name: &str) -> Param {
    let value = options.get(name).unwrap_or_default();
    match SearchOptions::range(name) {
        Some((min, max)) => Param { name: name.into(), value, kind: ParamKind::Int { min: min as i64, max: max as i64 } },
        None => Param { name: name.into(), value: (value == "on").to_string(), kind: ParamKind::Bool },
    }
}

impl AlphaBeta {
    /// The engine at level `level` of `levels` (a name; a bad-input error naming the levels when
    /// none has it), with the learned evaluation of `network` for the levels that use one, and
    /// `egtb` for the levels that probe tables.
    pub fn new(
        levels: Vec<LevelSpec>,
        level: &str,
        tt_mib: usize,
        seed: u64,
        network: Option<Arc<Network>>,
        egtb: Option<Endgames>,
    ) -> anyhow::Result<AlphaBeta> {
        let index = level_index(&levels, level).map_err(crate::bad_input)?;
        let spec = &levels[index];
        let engine = Engine::new(engine_config(spec, tt_mib, &network, &egtb, spec.search_options()))?;
        Ok(AlphaBeta { engine, network, egtb, levels, level: index, tt_mib, seed, games: 0, variety: false })
    }

    /// The same engine with the levels' variety in the opening on or off. Off (the default), a
    /// level with `noise_plies` plays its best move at every ply: engine matches want the full
    /// strength, and the variety costs some (ARCHITECTURE.md, draughts serve); a level random at
    /// every ply (easy) stays random.
    pub fn with_variety(mut self, on: bool) -> AlphaBeta {
        self.variety = on;
        self
    }

    fn spec(&self) -> &LevelSpec {
        &self.levels[self.level]
    }

    /// A new engine for the current level with `options` (the table is new too).
    fn rebuild(&mut self, tt_mib: usize, options: SearchOptions) -> anyhow::Result<()> {
        self.engine = Engine::new(engine_config(self.spec(), tt_mib, &self.network, &self.egtb, options))?;
        self.tt_mib = tt_mib;
        Ok(())
    }
}

/// The index of level `name` in `levels`, or a message naming the levels there are.
pub fn level_index(levels: &[LevelSpec], name: &str) -> Result<usize, String> {
    levels.iter().position(|l| l.name == name).ok_or_else(|| {
        let names: Vec<&str> = levels.iter().map(|l| l.name.as_str()).collect();
        format!("unknown level `{name}` (levels: {})", names.join(", "))
    })
}

fn engine_config(
    spec: &LevelSpec,
    tt_mib: usize,
    network: &Option<Arc<Network>>,
    egtb: &Option<Endgames>,
    options: SearchOptions,
) -> EngineConfig {
    EngineConfig {
        tt_mib,
        network: network.clone().filter(|_| spec.network),
        egtb: egtb.clone().filter(|_| spec.egtb),
        options,
        ..EngineConfig::default()
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
        let network = self.network.as_ref().filter(|_| self.spec().network).map(|n| n.model_id());
        // The level's measured rating, when the levels' ratings file has one for it as it plays here.
        let level = match self.spec().rating_for(network) {
            Some(r) => format!("{}, Elo {:.0}", self.spec().name, r.elo),
            None => self.spec().name.clone(),
        };
        match network {
            Some(id) => format!("draughts alpha-beta with network {id} ({level})"),
            None => format!("draughts alpha-beta ({level})"),
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
                value: self.spec().name.clone(),
                kind: ParamKind::Enum { values: self.levels.iter().map(|l| l.name.clone()).collect() },
            },
            Param { name: "hash".into(), value: self.tt_mib.to_string(), kind: ParamKind::Int { min: 1, max: 65536 } },
            Param { name: "seed".into(), value: self.seed.to_string(), kind: ParamKind::Int { min: 0, max: i64::MAX } },
        ];
        params.extend(SearchOptions::NAMES.iter().map(|n| option_param(&options, n)));
        params
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        match name {
            "level" => {
                // The level's evaluation, tables and search options (the table is new).
                let index = level_index(&self.levels, value)?;
                let old = self.level;
                self.level = index;
                let options = self.spec().search_options();
                if let Err(e) = self.rebuild(self.tt_mib, options) {
                    self.level = old;
                    return Err(e.to_string());
                }
            }
            "hash" => {
                let mib: usize = value.parse().map_err(|_| format!("`{value}` is not a size in MiB"))?;
                let options = self.engine.config().options;
                self.rebuild(mib, options).map_err(|e| e.to_string())?;
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
        let mut limits = self.spec().protocol_limits(&engine_limits(limit), seed, game.ply());
        if !self.variety && self.spec().noise_plies.is_some() {
            limits.noise = None;
        }
        let result = self.engine.search(game, &limits, stop, &mut |i| {
            info(&Info { depth: i.depth, score: i.score, nodes: i.nodes, time: i.time, pv: i.pv.clone() })
        });
        result.best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hard_level_varies_its_opening_only_with_variety_on() {
        // The shipped hard level (hand-made evaluation here: no model) at a node limit, from the
        // start: with variety each seed may choose another near-best move; without, one move.
        let game = Game::new(draughts_core::Rules::FMJD);
        let limit = SearchLimit { nodes: Some(3_000), ..SearchLimit::default() };
        let moves = |variety: bool| {
            let mut seen = std::collections::BTreeSet::new();
            for seed in 0..16 {
                let levels = crate::serve::levels::load(None).unwrap();
                let mut ab = AlphaBeta::new(levels, "hard", 1, seed, None, None).unwrap().with_variety(variety);
                let mv = ab.think(&game, &limit, &AtomicBool::new(false), &mut |_| {}).unwrap();
                seen.insert(mv.to_string());
            }
            seen
        };
        assert_eq!(moves(false).len(), 1, "{:?}", moves(false));
        assert!(moves(true).len() >= 2, "{:?}", moves(true));
    }
}
