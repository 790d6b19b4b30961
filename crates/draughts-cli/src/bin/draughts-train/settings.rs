//! The run config: one TOML file whose sections are the crates' own config structs. Every key is
//! documented in `configs/quickstart.toml`; unknown keys are errors.

use draughts_core::Rules;
use draughts_mcts::MctsConfig;
use draughts_nn::train::TrainConfig;
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

/// The arguments every run command takes: the config, the run directory, overrides.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The config file (TOML).
    #[arg(long)]
    pub config: std::path::PathBuf,
    /// The run directory (created if needed; an existing one is continued), or an object store
    /// prefix `s3://BUCKET/PREFIX` (selfplay and train; credentials and endpoint from the AWS_*
    /// environment variables).
    #[arg(long)]
    pub run: std::path::PathBuf,
    /// For a run in an object store: the local cache directory it is worked in (default
    /// `${XDG_CACHE_HOME:-~/.cache}/draughts/runs/BUCKET/PREFIX`).
    #[arg(long)]
    pub cache: Option<std::path::PathBuf>,
    /// Override a config value: `--set selfplay.games_in_flight=32` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Accept a config that differs from the one the run directory was started with.
    #[arg(long)]
    pub allow_config_change: bool,
}

impl RunArgs {
    /// Loads and checks the config, opens the run directory and pins the config in it. For a
    /// command that needs a local run directory (`loop`): a store URL is refused.
    pub fn open(&self) -> anyhow::Result<(Config, crate::rundir::RunDir)> {
        let (cfg, run) = self.open_run()?;
        if let Some(sync) = &run.sync {
            return Err(bad_input(format!(
                "--run {}: this command needs a run directory; a run in an object store is worked by                  `draughts selfplay` workers and one `draughts train --follow` (docs/cluster.md)",
                sync.url()
            )));
        }
        Ok((cfg, run.dir))
    }

    /// [`RunArgs::open`] for a run directory or an object store (`s3://BUCKET/PREFIX`, worked in
    /// a local cache directory).
    pub fn open_run(&self) -> anyhow::Result<(Config, crate::remote::Run)> {
        let (mut cfg, effective) = crate::config::load::<Config>(&self.config, &self.overrides)?;
        cfg.resolve()?;
        let location = self.run.to_string_lossy();
        if draughts_store::is_remote(&location) {
            let cache = self.cache.clone().unwrap_or_else(|| crate::remote::default_cache(&location));
            let sync = crate::remote::RunSync::open(&location, &cache)?;
            let dir = crate::rundir::RunDir::create(&cache)?;
            sync.pin_config(&dir, &effective, self.allow_config_change, |pinned| same_values(pinned, &effective))?;
            return Ok((cfg, crate::remote::Run { dir, sync: Some(sync) }));
        }
        if self.cache.is_some() {
            return Err(bad_input("--cache is for a run in an object store (--run s3://BUCKET/PREFIX)"));
        }
        let dir = crate::rundir::RunDir::create(&self.run)?;
        dir.pin_config_by(&effective, self.allow_config_change, |pinned| same_values(pinned, &effective))?;
        Ok((cfg, crate::remote::Run { dir, sync: None }))
    }
}

/// Whether two config texts give the same values (defaults filled in): a run pinned from an
/// older copy of a shipped config resumes under a newer copy that only spells out new keys at
/// their defaults, or differs in comments and order.
fn same_values(a: &str, b: &str) -> bool {
    matches!((toml::from_str::<Config>(a), toml::from_str::<Config>(b)), (Ok(a), Ok(b)) if a == b)
}

/// The whole config.
#[derive(Clone, Debug, PartialEq, Deserialize)]
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
    /// The run's starting weights: an exported model directory or a checkpoint of the same
    /// `[net]` and rules (warm start); empty: a fresh network seeded by `seed`.
    #[serde(default)]
    pub init: String,
    #[serde(default)]
    pub net: NetConfig,
    #[serde(default)]
    pub inference: InferenceConfig,
    #[serde(default)]
    pub mcts: MctsConfig,
    #[serde(default)]
    pub selfplay: SelfplayConfig,
    #[serde(default)]
    pub train: TrainConfig,
    #[serde(default)]
    pub eval: EvalConfig,
    #[serde(default, rename = "loop")]
    pub budget: LoopConfig,
}

fn default_ladder() -> Vec<String> {
    vec!["random".to_owned(), "alphabeta:depth=1".to_owned(), "alphabeta:depth=2".to_owned()]
}

/// Evaluation of each new checkpoint in `draughts loop`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvalConfig {
    /// Games against each opponent (even: openings are played twice, colours swapped).
    pub games: usize,
    /// Simulations per move of the candidate's search (when `candidate` is empty).
    pub sims: u32,
    /// The candidate's player spec without its model, which the loop adds: for example
    /// `alphabeta:movetime=100` (a sparse network as the engine's evaluation) or `mcts:sims=64`.
    /// Empty: `mcts` with `sims` simulations.
    pub candidate: String,
    /// The fixed ladder of opponents (player specs).
    #[serde(default = "default_ladder")]
    pub ladder: Vec<String>,
    /// Also play the previous checkpoint.
    pub previous: bool,
    /// Games played at once.
    pub concurrency: usize,
    /// A game still running after this many plies is a draw.
    pub max_plies: usize,
}

impl Default for EvalConfig {
    fn default() -> EvalConfig {
        EvalConfig {
            games: 20,
            sims: 32,
            candidate: String::new(),
            ladder: default_ladder(),
            previous: true,
            concurrency: 1,
            max_plies: 300,
        }
    }
}

impl EvalConfig {
    /// The candidate's player spec for the checkpoint `model`.
    pub fn candidate_spec(&self, model: &std::path::Path) -> Result<draughts_arena::PlayerSpec, draughts_arena::SpecError> {
        let quoted = format!("model=\"{}\"", model.display().to_string().replace('\\', "\\\\").replace('"', "\\\""));
        let text = if self.candidate.trim().is_empty() {
            format!("mcts:{quoted},sims={}", self.sims)
        } else {
            match self.candidate.split_once(':') {
                Some((kind, rest)) if !rest.trim().is_empty() => format!("{kind}:{quoted},{rest}"),
                _ => format!("{}:{quoted}", self.candidate.trim().trim_end_matches(':')),
            }
        };
        draughts_arena::PlayerSpec::parse(&text)
    }
}

/// When `draughts loop` stops: the first budget reached ends the run (a budget left out does not
/// limit). Every cycle is self-play, training, evaluation.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoopConfig {
    /// Self-play games per cycle.
    pub games_per_cycle: u64,
    /// Cycles in the run.
    pub cycles: Option<u64>,
    /// Self-play games in the run.
    pub max_games: Option<u64>,
    /// Training steps in the run.
    pub max_steps: Option<u64>,
    /// Minutes of work in the run (time spent in earlier invocations counts).
    pub max_minutes: Option<f64>,
}

impl Config {
    /// Checks the values and returns the rules. Top-level `seed` and `rules` are copied into
    /// the sections that have their own (so they are set in one place).
    pub fn resolve(&mut self) -> anyhow::Result<Rules> {
        let rules: Rules = self.rules.parse().map_err(bad_input)?;
        self.selfplay.rules = self.rules.clone();
        self.selfplay.seed = self.seed;
        self.mcts.seed = self.seed;
        self.train.seed = self.seed;
        self.train.validate().map_err(|e| bad_input(format!("[train] {e}")))?;
        if self.eval.games % 2 != 0 {
            return Err(bad_input(format!("[eval] games = {}: must be even (games come in pairs)", self.eval.games)));
        }
        for spec in &self.eval.ladder {
            draughts_arena::PlayerSpec::parse(spec).map_err(|e| bad_input(format!("[eval] ladder: {e}")))?;
        }
        self.eval.candidate_spec(std::path::Path::new("MODEL")).map_err(|e| bad_input(format!("[eval] candidate: {e}")))?;
        if self.selfplay.generator == draughts_selfplay::Generator::Alphabeta && self.net.kind != draughts_model::NetKind::Sparse {
            return Err(bad_input("[selfplay] generator = \"alphabeta\" needs [net] kind = \"sparse\" (a ResNet is too slow for alpha-beta)"));
        }
        self.net.validate().map_err(|e| bad_input(format!("[net] {e}")))?;
        self.mcts.validate().map_err(|e| bad_input(format!("[mcts] {e}")))?;
        self.selfplay.validate().map_err(|e| bad_input(format!("[selfplay] {e}")))?;
        self.inference.validate().map_err(|e| bad_input(format!("[inference] {e}")))?;
        Ok(rules)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every shipped config parses, with no unknown key, and passes validation.
    #[test]
    fn shipped_configs_are_valid() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            // levels.toml is `draughts serve`'s levels (checked by its own test).
            if path.extension().is_some_and(|e| e == "toml") && !path.ends_with("levels.toml") {
                let (mut cfg, _) = crate::config::load::<Config>(&path, &[]).unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
                cfg.resolve().unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
                n += 1;
            }
        }
        assert!(n >= 5, "quickstart, quickstart-resnet, sparse, cpu and gpu configs");
    }

    #[test]
    fn configs_that_differ_in_text_only_have_the_same_values() {
        let old = "seed = 3\n[mcts]\nsimulations = 64\n";
        assert!(same_values(old, "# a comment\nseed = 3\ninit = \"\"\n[mcts]\ncapture_resolution = 64\nsimulations = 64\n"));
        assert!(!same_values(old, "seed = 3\n[mcts]\nsimulations = 64\ncapture_resolution = 8\n"));
        assert!(!same_values(old, "seed = 4\n[mcts]\nsimulations = 64\n"));
        assert!(!same_values(old, "seed = 3\n[mcts]\nsimulashuns = 64\n"), "a text that does not parse is not the same");
    }

    #[test]
    fn unknown_keys_are_errors() {
        let e = crate::config::parse::<Config>("seed = 1\n[selfplay]\ngames_in_flite = 3\n", "x.toml", &[]).unwrap_err();
        let msg = format!("{e:#}");
        assert!(msg.contains("games_in_flite") && msg.contains("line 3"), "{msg}");
        let e = crate::config::parse::<Config>("seed = 1\n[mcts]\nsimulations = -1\n", "x.toml", &[]).unwrap_err();
        assert!(format!("{e:#}").contains("simulations"), "{e:#}");
    }
}
