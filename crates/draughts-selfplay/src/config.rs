//! Self-play configuration.

use draughts_core::{Position, Rules};
use serde::{Deserialize, Serialize};

/// The player that generates the games.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Generator {
    /// MCTS guided by the network (the search in `[mcts]`); policy targets from the search.
    #[default]
    Mcts,
    /// The alpha-beta engine with the network as its evaluation (the hand-made one while the
    /// run has no trained network yet) at `alphabeta_nodes` nodes per move; value targets from
    /// the game result blended with the search score (`train.root_value_mix`), policy targets
    /// the searched move.
    Alphabeta,
}

/// Self-play parameters. Every field has a default (`SelfplayConfig::default()`); a config file
/// names only what it changes, and unknown keys are errors.
///
/// The search itself (simulations, fast simulations, the playout-cap probability
/// `full_search_prob`, Gumbel or PUCT) is configured by [`draughts_mcts::MctsConfig`], which
/// self-play takes alongside this. Self-play draws each move's budget with
/// [`draughts_mcts::MctsConfig::draw_budget`], so there is one knob for playout-cap randomisation,
/// not two.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfplayConfig {
    /// Games each worker keeps in flight. Each contributes one leaf per round (more with the
    /// search's `max_in_flight`), so this is what fills a batch. Default 64.
    pub games_in_flight: usize,
    /// Most positions in one evaluator call. Requests beyond it wait for the next round, so that
    /// every call is a full batch until the run is draining. Default 64.
    pub max_batch: usize,
    /// Worker threads; each runs its own pool with its own evaluator. Two workers sharing one
    /// inference thread overlap one worker's tree work with the other's forward pass. Default 1.
    pub workers: usize,
    /// Move-selection temperature for the first `temperature_plies` plies of a game (random
    /// opening plies count). Default 1.0.
    pub temperature: f32,
    /// Plies played at `temperature`. Default 16.
    pub temperature_plies: u32,
    /// Temperature after `temperature_plies`. 0 plays the search's choice (for a Gumbel search
    /// that choice is already a sample). Default 0.0.
    pub final_temperature: f32,
    /// Record fast searches (playout-cap randomisation) too, with the `FULL_SEARCH` flag clear.
    /// If false (default) only full searches become training records; fast ones only move the
    /// game on.
    pub record_fast_searches: bool,
    /// Resign when the root value (`win - loss`, in [-1, 1]) of the losing side stays below this
    /// for `resign_consecutive` plies in a row. Default -0.9.
    pub resign_threshold: f32,
    /// Consecutive plies, searched by either side, that must agree on the same loser (its value
    /// below `resign_threshold`, its opponent's above `-resign_threshold`) before it resigns;
    /// 0 turns resignation off. Default 6.
    pub resign_consecutive: u32,
    /// Fraction of games in which resignation is disabled (they are played out to keep the
    /// threshold honest: each records whether it would have resigned, and whether that was
    /// right). Default 0.1.
    pub resign_playthrough_fraction: f32,
    /// A game still going after this many plies is adjudicated a draw. Default 400.
    pub max_plies: u32,
    /// Uniformly random plies played from the start position before the first search, for
    /// opening diversity (seeded; not recorded). Default 0.
    pub random_opening_plies: u32,
    /// Where every game starts, as FEN (for example an ending to study); empty (default): the
    /// start position.
    pub start_fen: String,
    /// Rules preset name: `fmjd` (default), `no-capture-25`, `promote-in-capture`.
    pub rules: String,
    /// Master seed. Game `i` of a run plays with a seed derived from (`seed`, `i`) only, so a run
    /// is reproducible with a deterministic evaluator whatever `workers` and `games_in_flight`
    /// are. Processes that share a run directory need different seeds. Default 0.
    pub seed: u64,
    /// Records per shard file; a shard is written once this many records are collected (and at
    /// the end of a run). Default 4096.
    pub records_per_shard: usize,
    /// Also write every game as PDN, one `.pdn` file beside each shard. Default true.
    pub write_pdn: bool,
    /// `"mcts"` (default) or `"alphabeta"`, see [`Generator`].
    pub generator: Generator,
    /// Alpha-beta generator: nodes per move. Default 4000.
    pub alphabeta_nodes: u64,
    /// Alpha-beta generator: for the first `temperature_plies` plies a move is picked
    /// uniformly (seeded) among those within this many centi-men of the best, so that games
    /// open differently; 0 always plays the best. Default 30.
    pub alphabeta_margin: i32,
    /// Alpha-beta generator: transposition table per worker, MiB. Default 16.
    pub alphabeta_hash_mib: usize,
    /// Alpha-beta generator: a directory of endgame tables (`draughts egtb build`) that the
    /// engine probes. Empty (default): none.
    pub egtb: String,
    /// With `egtb`: a game ends as soon as its position has a database value the search would
    /// trust (`draughts_engine::Endgames::value_in_game`), with that result. Default true.
    pub egtb_adjudicate: bool,
    /// With `egtb`: a record of a database position takes the database value as its result and
    /// as its root estimate (instead of the game's result and the search score). Default true.
    pub egtb_targets: bool,
    /// Alpha-beta generator: a sparse model (an exported directory, a run directory or a
    /// checkpoint) whose network plays one side of every game, at the same node budget and with
    /// its own table: White in even-numbered games, Black in odd ones. Its games reach positions
    /// the run's own network does not; its moves are recorded too, with its own search score as
    /// the root estimate. Empty (default): self-play, the run's network on both sides.
    pub alphabeta_opponent: String,
}

impl Default for SelfplayConfig {
    fn default() -> SelfplayConfig {
        SelfplayConfig {
            games_in_flight: 64,
            max_batch: 64,
            workers: 1,
            temperature: 1.0,
            temperature_plies: 16,
            final_temperature: 0.0,
            record_fast_searches: false,
            resign_threshold: -0.9,
            resign_consecutive: 6,
            resign_playthrough_fraction: 0.1,
            max_plies: 400,
            random_opening_plies: 0,
            start_fen: String::new(),
            rules: "fmjd".to_owned(),
            seed: 0,
            records_per_shard: 4096,
            write_pdn: true,
            generator: Generator::Mcts,
            alphabeta_nodes: 4000,
            alphabeta_margin: 30,
            alphabeta_hash_mib: 16,
            egtb: String::new(),
            egtb_adjudicate: true,
            egtb_targets: true,
            alphabeta_opponent: String::new(),
        }
    }
}

/// A self-play configuration value out of range.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("selfplay config: `{field}` {problem}")]
pub struct ConfigError {
    /// The offending key.
    pub field: &'static str,
    /// What is wrong with its value.
    pub problem: String,
}

impl SelfplayConfig {
    /// Where games start: `start_fen`, or the start position when it is empty.
    pub fn start_position(&self) -> Result<Position, ConfigError> {
        if self.start_fen.is_empty() {
            return Ok(Position::start());
        }
        Position::from_fen(&self.start_fen).map_err(|e| ConfigError { field: "start_fen", problem: format!("`{}`: {e}", self.start_fen) })
    }

    /// Checks every value and returns the rules the preset names; the error names the key and
    /// the allowed range.
    pub fn validate(&self) -> Result<Rules, ConfigError> {
        let err = |field, problem: String| Err(ConfigError { field, problem });
        let at_least_one = [
            ("games_in_flight", self.games_in_flight),
            ("max_batch", self.max_batch),
            ("workers", self.workers),
            ("records_per_shard", self.records_per_shard),
        ];
        for (field, v) in at_least_one {
            if v == 0 {
                return err(field, "must be at least 1".into());
            }
        }
        for (field, v) in [("temperature", self.temperature), ("final_temperature", self.final_temperature)] {
            if !v.is_finite() || v < 0.0 {
                return err(field, format!("must be a finite number >= 0, not {v}"));
            }
        }
        if !(-1.0..=0.0).contains(&self.resign_threshold) {
            return err("resign_threshold", format!("must be in [-1, 0], not {}", self.resign_threshold));
        }
        if !(0.0..=1.0).contains(&self.resign_playthrough_fraction) {
            return err(
                "resign_playthrough_fraction",
                format!("must be in [0, 1], not {}", self.resign_playthrough_fraction),
            );
        }
        if self.max_plies == 0 || self.max_plies > u16::MAX as u32 {
            return err("max_plies", format!("must be in 1..=65535, not {}", self.max_plies));
        }
        if self.alphabeta_nodes == 0 {
            return err("alphabeta_nodes", "must be at least 1".into());
        }
        let start = self.start_position()?;
        if start.count_legal_moves() == 0 {
            return err("start_fen", format!("`{}`: the side to move has no move", self.start_fen));
        }
        if !self.egtb.is_empty() && self.generator != Generator::Alphabeta {
            return err("egtb", "is used by the alpha-beta generator only (generator = \"alphabeta\")".into());
        }
        if !self.alphabeta_opponent.is_empty() && self.generator != Generator::Alphabeta {
            return err("alphabeta_opponent", "is used by the alpha-beta generator only (generator = \"alphabeta\")".into());
        }
        if self.alphabeta_margin < 0 {
            return err("alphabeta_margin", format!("must be >= 0, not {}", self.alphabeta_margin));
        }
        if self.alphabeta_hash_mib == 0 {
            return err("alphabeta_hash_mib", "must be at least 1".into());
        }
        if self.random_opening_plies >= self.max_plies {
            return err(
                "random_opening_plies",
                format!("must be below max_plies ({}), not {}", self.max_plies, self.random_opening_plies),
            );
        }
        Rules::from_name(&self.rules).or_else(|e| err("rules", e.to_string()))
    }

    /// The temperature for the move at `ply` (0 = the first move of the game).
    pub fn temperature_at(&self, ply: usize) -> f32 {
        if ply < self.temperature_plies as usize {
            self.temperature
        } else {
            self.final_temperature
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_toml_parses() {
        assert_eq!(SelfplayConfig::default().validate(), Ok(Rules::FMJD));
        let c: SelfplayConfig = toml::from_str("games_in_flight = 8\nrules = \"no-capture-25\"").unwrap();
        assert_eq!(c.games_in_flight, 8);
        assert_eq!(c.max_batch, 64);
        assert_eq!(c.validate(), Ok(Rules::NO_CAPTURE_25));
        let e = toml::from_str::<SelfplayConfig>("games_in_fligth = 8").unwrap_err();
        assert!(e.to_string().contains("games_in_fligth"), "{e}");
    }

    #[test]
    fn validation_names_the_field() {
        let d = SelfplayConfig::default;
        let bad = [
            (SelfplayConfig { games_in_flight: 0, ..d() }, "games_in_flight"),
            (SelfplayConfig { max_batch: 0, ..d() }, "max_batch"),
            (SelfplayConfig { temperature: f32::NAN, ..d() }, "temperature"),
            (SelfplayConfig { resign_threshold: -1.5, ..d() }, "resign_threshold"),
            (SelfplayConfig { resign_playthrough_fraction: 2.0, ..d() }, "resign_playthrough_fraction"),
            (SelfplayConfig { start_fen: "W:W99:B1".into(), ..d() }, "start_fen"),
            (SelfplayConfig { start_fen: "W:W46:B41,37".into(), ..d() }, "start_fen"),
            (SelfplayConfig { egtb: "db".into(), ..d() }, "egtb"),
            (SelfplayConfig { alphabeta_opponent: "models/m".into(), ..d() }, "alphabeta_opponent"),
            (SelfplayConfig { max_plies: 0, ..d() }, "max_plies"),
            (SelfplayConfig { random_opening_plies: 400, ..d() }, "random_opening_plies"),
            (SelfplayConfig { rules: "russian".into(), ..d() }, "rules"),
        ];
        for (c, field) in bad {
            let e = c.validate().unwrap_err();
            assert_eq!(e.field, field);
            assert!(e.to_string().contains(field), "{e}");
        }
    }

    #[test]
    fn temperature_schedule() {
        let c = SelfplayConfig { temperature: 1.0, temperature_plies: 2, final_temperature: 0.25, ..Default::default() };
        let t: Vec<f32> = (0..4).map(|p| c.temperature_at(p)).collect();
        assert_eq!(t, [1.0, 1.0, 0.25, 0.25]);
    }
}
