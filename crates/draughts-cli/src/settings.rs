//! The run config: one TOML file whose sections are the crates' own config structs. Every key is
//! documented in `configs/quickstart.toml`; unknown keys are errors.

use draughts_core::Rules;
use draughts_mcts::MctsConfig;
use draughts_nn::{InferenceConfig, NetConfig};
use draughts_selfplay::SelfplayConfig;
use serde::Deserialize;

use crate::bad_input;

fn default_rules() -> String {
    "fmjd".to_owned()
}

fn default_name() -> String {
    "draughts".to_owned()
}

/// The whole config.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Name of the model line (checkpoint ids are `NAME-sSTEP`).
    #[serde(default = "default_name")]
    pub name: String,
    /// Master seed: every random choice of the run derives from it.
    #[serde(default)]
    pub seed: u64,
    /// Rules preset.
    #[serde(default = "default_rules")]
    pub rules: String,
    #[serde(default)]
    pub net: NetConfig,
    #[serde(default)]
    pub inference: InferenceConfig,
    #[serde(default)]
    pub mcts: MctsConfig,
    #[serde(default)]
    pub selfplay: SelfplayConfig,
}

impl Config {
    /// Checks the values and returns the rules. Top-level `seed` and `rules` are copied into
    /// the sections that have their own (so they are set in one place).
    pub fn resolve(&mut self) -> anyhow::Result<Rules> {
        let rules: Rules = self.rules.parse().map_err(bad_input)?;
        self.selfplay.rules = self.rules.clone();
        self.selfplay.seed = self.seed;
        self.mcts.seed = self.seed;
        self.net.validate().map_err(|e| bad_input(format!("[net] {e}")))?;
        self.mcts.validate().map_err(|e| bad_input(format!("[mcts] {e}")))?;
        self.selfplay.validate().map_err(|e| bad_input(format!("[selfplay] {e}")))?;
        self.inference.validate().map_err(|e| bad_input(format!("[inference] {e}")))?;
        Ok(rules)
    }
}
