//! `draughts export`: turns a checkpoint into a model directory that can ship (`models/NAME/`)
//! and be played with (`draughts hub --model DIR`, `draughts dxp --model DIR`,
//! `mcts:model=DIR,sims=N`).
//!
//! The directory holds the checkpoint's two files byte for byte (the sidecar keeps the
//! provenance: run name, step, seed, parent, versions, checksum), a model card (`README.md`) and,
//! when the checkpoint comes from a run directory, that run's `config.toml` (and the
//! `config.prev-N.toml` it replaced when a restart changed the config). The checkpoint is
//! loaded (checksum, every tensor's name and shape) before anything is written; every file is
//! written under a temporary name and renamed, the sidecar after the weights, so a directory
//! holds a usable model exactly when its sidecar is there.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use draughts_arena::MatchResult;
use draughts_nn::tch::Device;
use draughts_nn::{checkpoint, torchscript};
use draughts_nn::CheckpointMeta;

use crate::bad_input;
use crate::models::{checkpoints_in, resolve_model};
use crate::rundir::write_atomic;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The checkpoint: its sidecar (`ID.json`) or weights file, a checkpoint directory or a run
    /// directory (its newest checkpoint).
    #[arg(long)]
    checkpoint: PathBuf,
    /// The model directory to write (created if needed; it may already hold this same model,
    /// not another one).
    #[arg(long)]
    out: PathBuf,
    /// Results of `draughts match --json` runs of this model (the file as printed: the JSON
    /// object is the line that starts with `{`), listed in the model card. Repeatable.
    #[arg(long)]
    results: Vec<PathBuf>,
    /// The exact command that produced each `--results` file, in the same order (shown in the
    /// card so that a reader can reproduce the figure).
    #[arg(long)]
    results_command: Vec<String>,
    /// Simulations per move the card recommends for play (`draughts hub --sims`).
    #[arg(long, default_value_t = 200)]
    sims: u32,
    /// Write no TorchScript file (`ID.torchscript.pt` holds the weights again, as large as the
    /// safetensors file: 16 MB for a net with block patterns). The card says how to get one.
    #[arg(long)]
    no_torchscript: bool,
}

/// One evaluation line of a run's metrics.jsonl that concerns the exported model.
#[derive(Debug, serde::Deserialize)]
struct EvalLine {
    cycle: u64,
    opponent: String,
    games: u64,
    wins: u64,
    draws: u64,
    losses: u64,
    score: f64,
    elo: Option<f64>,
    elo_low: Option<f64>,
    elo_high: Option<f64>,
    sims: u64,
    /// The player the model was evaluated as (newer runs record it).
    #[serde(default)]
    candidate: Option<String>,
}

impl EvalLine {
    /// How the model played: the candidate's spec without its `model=` part, or MCTS at the
    /// recorded simulations.
    fn played_as(&self) -> String {
        match &self.candidate {
            Some(spec) => {
                let (kind, params) = spec.split_once(':').unwrap_or((spec.as_str(), ""));
                let params: Vec<&str> = params.split(',').filter(|p| !p.is_empty() && !p.starts_with("model=")).collect();
                if params.is_empty() { kind.to_owned() } else { format!("{kind}:{}", params.join(",")) }
            }
            None => format!("mcts:sims={}", self.sims),
        }
    }
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    if a.results_command.len() > a.results.len() {
        return Err(bad_input(format!(
            "--results-command given {} times but --results only {}: give one command per results file",
            a.results_command.len(),
            a.results.len()
        )));
    }
    let sidecar = resolve_model(&a.checkpoint)?;
    let sidecar = if sidecar.extension().is_some_and(|e| e == checkpoint::WEIGHTS_EXTENSION) {
        sidecar.with_extension(checkpoint::SIDECAR_EXTENSION)
    } else {
        sidecar
    };
    // Loading checks the checksum and every tensor against the architecture.
    let (mut net, meta) = checkpoint::load(&sidecar, Device::Cpu).map_err(bad_input)?;
    let params = net.parameter_count();
    let src_dir = sidecar.parent().unwrap_or(Path::new(".")).to_path_buf();
    let run_dir = find_run_dir(&src_dir);

    let results = a
        .results
        .iter()
        .map(|p| read_results(p))
        .collect::<anyhow::Result<Vec<_>>>()?;

    std::fs::create_dir_all(&a.out).map_err(|e| bad_input(format!("{}: cannot create the directory: {e}", a.out.display())))?;
    let others: Vec<String> = checkpoints_in(&a.out)
        .into_iter()
        .map(|(_, _, m)| m.model_id)
        .filter(|id| *id != meta.model_id)
        .collect();
    if !others.is_empty() {
        return Err(bad_input(format!(
            "{}: already holds model {} (a model directory holds one model); choose another --out",
            a.out.display(),
            others.join(", ")
        )));
    }

    let weights_src = src_dir.join(&meta.weights.file);
    let weights = std::fs::read(&weights_src).map_err(|e| bad_input(format!("{}: {e}", weights_src.display())))?;
    let sidecar_bytes = std::fs::read(&sidecar).map_err(|e| bad_input(format!("{}: {e}", sidecar.display())))?;
    let evals = run_dir.as_deref().map(|r| eval_lines(r, &meta.model_id)).unwrap_or_default();
    let work = run_dir.as_deref().and_then(|r| run_work(r, &meta.model_id));
    let config = run_dir.as_deref().and_then(|r| std::fs::read(r.join("config.toml")).ok());

    write_atomic(&a.out.join(&meta.weights.file), &weights)?;
    if let Some(c) = &config {
        write_atomic(&a.out.join("config.toml"), c)?;
    }
    let mut earlier = Vec::new();
    if let Some(r) = run_dir.as_deref() {
        for n in 1.. {
            let name = format!("config.prev-{n}.toml");
            let Ok(bytes) = std::fs::read(r.join(&name)) else { break };
            write_atomic(&a.out.join(&name), &bytes)?;
            earlier.push(name);
        }
    }
    // The run's report (`draughts report`), if it has one: summary and plots.
    let mut has_report = false;
    if let Some(r) = run_dir.as_deref() {
        if let Ok(entries) = std::fs::read_dir(r.join("report")) {
            let mut files: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "md" || x == "png"))
                .collect();
            files.sort();
            if files.iter().any(|p| p.ends_with("summary.md")) {
                std::fs::create_dir_all(a.out.join("report"))
                    .map_err(|e| bad_input(format!("{}: cannot create the directory: {e}", a.out.join("report").display())))?;
                for f in &files {
                    let bytes = std::fs::read(f).map_err(|e| bad_input(format!("{}: {e}", f.display())))?;
                    // Invariant: read_dir entries have a file name.
                    write_atomic(&a.out.join("report").join(f.file_name().expect("a file name")), &bytes)?;
                }
                has_report = true;
            }
        }
    }
    // TorchScript, for PyTorch, libtorch and the ONNX converter (scripts/onnx): traced, written,
    // loaded back and compared with the network on real-looking inputs at another batch size.
    let ts_path = torchscript::torchscript_path(&a.out, &meta.model_id);
    let ts_diff = if a.no_torchscript {
        // One left by an earlier export of this model would stay listed in the card.
        match std::fs::remove_file(&ts_path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(bad_input(format!("{}: cannot remove it: {e}", ts_path.display())))
            }
            _ => None,
        }
    } else {
        torchscript::save(&mut net, &ts_path).map_err(|e| anyhow::anyhow!("{}: cannot write TorchScript: {e}", ts_path.display()))?;
        let diff = torchscript_difference(&net, &ts_path)?;
        if diff > 1e-4 {
            return Err(anyhow::anyhow!("{}: the traced network differs from the checkpoint by {diff:e}", ts_path.display()));
        }
        Some(diff)
    };
    drop(net);

    // Where the run started and which other runs' games it trained on, from its config.
    let parsed = config.as_deref().and_then(|c| std::str::from_utf8(c).ok()).and_then(|t| t.parse::<toml::Table>().ok());
    // A non-empty string at `path` in the run's config.
    let text_at = |path: &[&str]| {
        let (last, sections) = path.split_last()?;
        let mut table = parsed.as_ref()?;
        for key in sections {
            table = table.get(*key)?.as_table()?;
        }
        Some(table.get(*last)?.as_str()?.trim().to_owned()).filter(|s| !s.is_empty())
    };
    let init = text_at(&["init"]);
    let extra_games: Vec<String> = parsed
        .as_ref()
        .and_then(|t| t.get("train")?.get("extra_games")?.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    let egtb = text_at(&["selfplay", "egtb"]);
    let facts = RunFacts {
        dir: run_dir,
        work,
        evals,
        has_config: config.is_some(),
        earlier_configs: earlier,
        has_report,
        init,
        extra_games,
        egtb,
    };
    let card = model_card(&meta, params, &facts, &results, &a);
    // The card ends with the SHA-256 of every file of the directory (the sidecar, written
    // after it, included), checked whenever the model is loaded from the directory.
    let sidecar_name = format!("{}.{}", meta.model_id, checkpoint::SIDECAR_EXTENSION);
    let mut files =
        draughts_model::directory_files(&a.out).map_err(|e| bad_input(format!("{}: {e}", a.out.display())))?;
    files.retain(|(name, _)| *name != sidecar_name);
    files.push((sidecar_name, sidecar_bytes.clone()));
    let card = draughts_model::with_sums_section(&card, &draughts_model::sums_section(&files));
    write_atomic(&a.out.join(draughts_model::CARD_FILE), card.as_bytes())?;
    // Last: the sidecar makes the directory a model.
    write_atomic(&checkpoint::sidecar_path(&a.out, &meta.model_id), &sidecar_bytes)?;

    // Read it back as a player would.
    checkpoint::load(&checkpoint::sidecar_path(&a.out, &meta.model_id), Device::Cpu)
        .map_err(|e| anyhow::anyhow!("the exported copy does not load: {e}"))?;
    println!("exported {} ({} parameters) to {}", meta.model_id, params, a.out.display());
    match ts_diff {
        Some(d) => println!(
            "TorchScript {} (reloaded: largest difference from the checkpoint {d:.1e}); {} files listed with SHA-256 in the card",
            ts_path.display(),
            files.len()
        ),
        None => println!("no TorchScript (--no-torchscript); {} files listed with SHA-256 in the card", files.len()),
    }
    println!("play it: draughts hub --model {} --level hard", a.out.display());
    Ok(ExitCode::SUCCESS)
}

/// The largest difference between the TorchScript file's outputs and `net`'s, on 37 seeded
/// random 0/1 inputs (another batch size than the traced one).
fn torchscript_difference(net: &draughts_nn::Net, path: &Path) -> anyhow::Result<f64> {
    let module = torchscript::load(path, Device::Cpu).map_err(|e| anyhow::anyhow!("{}: does not load back: {e}", path.display()))?;
    draughts_nn::tch::manual_seed(37);
    let xs = draughts_nn::tch::Tensor::rand([37, draughts_nn::INPUT_SIZE as i64], (draughts_nn::tch::Kind::Float, Device::Cpu)).round();
    torchscript::max_difference(&module, net, &xs).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// The run directory a checkpoint directory belongs to: `RUN/checkpoints/` with `RUN/metrics.jsonl`.
fn find_run_dir(checkpoint_dir: &Path) -> Option<PathBuf> {
    let dir = if checkpoint_dir.as_os_str().is_empty() { Path::new(".") } else { checkpoint_dir };
    if dir.file_name().is_some_and(|n| n == "checkpoints") {
        let run = dir.parent()?;
        if run.join("metrics.jsonl").is_file() {
            return Some(run.to_path_buf());
        }
    }
    None
}

/// The run's evaluation lines for `model_id` (lines that do not parse are not this model's).
fn eval_lines(run: &Path, model_id: &str) -> Vec<EvalLine> {
    let Ok(text) = std::fs::read_to_string(run.join("metrics.jsonl")) else { return Vec::new() };
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["stage"] == "eval" && v["model"] == model_id)
        .filter_map(|v| serde_json::from_value::<EvalLine>(v).ok())
        .collect()
}

/// What the checkpoint's run directory says about it.
struct RunFacts {
    dir: Option<PathBuf>,
    work: Option<RunWork>,
    evals: Vec<EvalLine>,
    has_config: bool,
    /// `config.prev-N.toml` files: configs the run replaced on a restart, oldest first.
    earlier_configs: Vec<String>,
    /// The run's `init` (the model it started from), when it names one.
    init: Option<String>,
    /// The run's `train.extra_games`: other runs' games directories in its replay window.
    extra_games: Vec<String>,
    /// The run's `selfplay.egtb`: endgame tables its self-play probed, when it names them.
    egtb: Option<String>,
    /// The run's report (`report/summary.md` and its plots) was copied along.
    has_report: bool,
}

/// How much self-play lies behind a model of a run.
struct RunWork {
    games: u64,
    positions: u64,
    hours: f64,
}

/// The run's self-play up to the training stage that wrote `model_id` (all of it if no line
/// names the model), and the hours from the run's first line to that point.
fn run_work(run: &Path, model_id: &str) -> Option<RunWork> {
    let text = std::fs::read_to_string(run.join("metrics.jsonl")).ok()?;
    let lines: Vec<serde_json::Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let first = lines.iter().find_map(|v| v["time"].as_f64())?;
    let end = lines
        .iter()
        .position(|v| v["stage"] == "train" && v["model"] == model_id)
        .unwrap_or(lines.len().saturating_sub(1));
    let upto = &lines[..=end.min(lines.len().saturating_sub(1))];
    let selfplay = upto.iter().filter(|v| v["stage"] == "selfplay");
    let (games, positions) = selfplay.fold((0, 0), |(g, p), v| {
        (g + v["games"].as_u64().unwrap_or(0), p + v["positions"].as_u64().unwrap_or(0))
    });
    let last = upto.iter().rev().find_map(|v| v["time"].as_f64()).unwrap_or(first);
    Some(RunWork { games, positions, hours: (last - first) / 3600.0 })
}

/// The match result in a file written by `draughts match --json` (its line starting with `{`).
fn read_results(path: &Path) -> anyhow::Result<MatchResult> {
    let text = std::fs::read_to_string(path).map_err(|e| bad_input(format!("{}: {e}", path.display())))?;
    let (n, line) = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with('{'))
        .last()
        .ok_or_else(|| bad_input(format!("{}: no JSON line (the output of `draughts match --json`)", path.display())))?;
    serde_json::from_str(line).map_err(|e| bad_input(format!("{}:{}: not a match result: {e}", path.display(), n + 1)))
}

fn elo_text(elo: Option<f64>, low: Option<f64>, high: Option<f64>) -> String {
    let f = |x: Option<f64>| match x {
        // `+ 0.0` turns a negative zero into zero (no "-0").
        Some(v) if v.is_finite() => format!("{:+.0}", v.round() + 0.0),
        _ => "n/a".to_owned(),
    };
    format!("{} [{}, {}]", f(elo), f(low), f(high))
}

/// The table cells `games | +W =D -L | score | elo` of one match.
fn result_cells(games: u64, [w, d, l]: [u64; 3], score: f64, elo: &str) -> String {
    format!("{games} | +{w} ={d} -{l} | {:.1}% | {elo}", 100.0 * score)
}

fn model_card(
    meta: &CheckpointMeta,
    params: usize,
    run: &RunFacts,
    results: &[MatchResult],
    a: &Args,
) -> String {
    let (work, evals, has_config) = (run.work.as_ref(), &run.evals, run.has_config);
    let arch = &meta.architecture;
    let out = a.out.display();
    let mut s = String::new();
    let _ = writeln!(s, "# {}\n", meta.model_id);
    let _ = writeln!(
        s,
        "A policy/value network for international draughts (10x10, {} rules), trained by self-play \
         with `draughts loop`. Exported with `draughts export` (draughts {}).\n",
        meta.rules,
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(s, "| | |\n|---|---|");
    let ml = if arch.moves_left_head { "; moves-left head" } else { "" };
    let _ = match arch.kind {
        draughts_model::NetKind::Resnet => writeln!(
            s,
            "| Architecture | ResNet: {} residual blocks x {} channels; policy head {} channels -> 2500 move logits; \
             value head {} hidden -> win/draw/loss{ml} (runs through libtorch) |",
            arch.blocks, arch.channels, arch.policy_channels, arch.value_hidden
        ),
        draughts_model::NetKind::Sparse => writeln!(
            s,
            "| Architecture | sparse: 2 x 200 piece-square features{patterns} -> accumulator 2 x {} (updated incrementally) -> \
             dense {} (clipped ReLU) -> win/draw/loss; policy 2 x {} -> 2500 move logits{ml}{pairwise}{buckets} \
             (runs natively, no libtorch) |",
            arch.accumulator,
            arch.hidden.iter().map(|h| h.to_string()).collect::<Vec<_>>().join(" -> "),
            arch.accumulator,
            patterns = if arch.patterns { " and 16 block patterns (4 x 4 squares, 6561 configurations each)" } else { "" },
            pairwise = if arch.pairwise { "; the first dense layer reads the pairwise products of each accumulator's halves" } else { "" },
            buckets = if arch.buckets > 1 {
                format!("; {} phase buckets (a stack of dense layers and heads for each range of the number of pieces)", arch.buckets)
            } else {
                String::new()
            },
        ),
    };
    let _ = writeln!(s, "| Parameters | {params} |");
    let _ = writeln!(s, "| Input encoding | version {} |", meta.encoding_version);
    let _ = writeln!(s, "| Rules | {} |", meta.rules);
    let _ = writeln!(s, "| Training | run `{}`, seed {}, {} training steps |", meta.name, meta.seed, meta.step);
    if let Some(init) = &run.init {
        let _ = writeln!(s, "| Started from | `{init}` (its weights were the run's step 0) |");
    }
    if !run.extra_games.is_empty() {
        let dirs: Vec<String> = run.extra_games.iter().map(|d| format!("`{d}`")).collect();
        let _ = writeln!(s, "| Other runs' games | {} (read only, in the replay window with the run's own) |", dirs.join(", "));
    }
    if let Some(w) = work {
        let _ = writeln!(
            s,
            "| Self-play behind it | {} games ({} positions) over the first {:.1} hours of the run (wall clock) |",
            w.games,
            w.positions,
            w.hours
        );
    }
    let _ = writeln!(s, "| Created | {} (tch {}, libtorch {}) |", meta.created, meta.tch_version, meta.libtorch_version);
    let _ = writeln!(
        s,
        "| Weights | `{}`, {} bytes, FNV-1a 64 `{}` (checked on every load) |",
        meta.weights.file, meta.weights.bytes, meta.weights.fnv1a64
    );
    if has_config {
        let earlier: Vec<String> = run.earlier_configs.iter().map(|n| format!("[`{n}`]({n})")).collect();
        let _ = writeln!(
            s,
            "| Training config | [`config.toml`](config.toml) (as the run ended{}) |",
            if earlier.is_empty() { String::new() } else { format!("; it replaced {} on a restart", earlier.join(", ")) }
        );
    }
    if run.has_report {
        let _ = writeln!(s, "| Training report | [`report/summary.md`](report/summary.md) and its plots (`draughts report` of the run as it ended) |");
    }
    let _ = writeln!(s, "\n## Use\n");
    let _ = writeln!(s, "```sh");
    if arch.kind == draughts_model::NetKind::Sparse {
        let _ = writeln!(s, "draughts hub --model {out} --level hard      # Hub engine (GUIs)");
        let _ = writeln!(s, "draughts dxp --listen 27531 --model {out}    # DXP follower");
        let _ = writeln!(s, "draughts search --model {out} --fen W:W31-50:B1-20 --movetime 1000");
        let _ = writeln!(
            s,
            "draughts match --a alphabeta:model={out},movetime=100 --b alphabeta:movetime=100 --games 200 --concurrency 2"
        );
        let _ = writeln!(s, "```\n");
        let _ = writeln!(
            s,
            "The hard player is the alpha-beta engine with this network as its evaluation (the \
             accumulator updated move by move, AVX2 where the CPU has it); it uses the time the GUI \
             gives. `mcts:model={out},sims=N` plays it through MCTS instead. Easy and medium levels \
             are the hand-made alpha-beta engine.\n"
        );
    } else {
        let _ = writeln!(s, "draughts hub --model {out} --level hard --sims {}   # Hub engine (GUIs)", a.sims);
        let _ = writeln!(s, "draughts dxp --listen 27531 --model {out} --sims {}  # DXP follower", a.sims);
        let _ = writeln!(
            s,
            "draughts match --a mcts:model={out},sims={} --b alphabeta:depth=2 --games 200 --concurrency 2",
            a.sims
        );
        let _ = writeln!(s, "```\n");
        let _ = writeln!(
            s,
            "The network plays through a Gumbel MCTS; its strength grows with the simulations per move \
             (`--sims`, or the GUI's time limit, which is turned into simulations). Easy and medium \
             levels are the alpha-beta engine.\n"
        );
    }
    let _ = writeln!(s, "## Measured strength\n");
    if results.is_empty() && evals.is_empty() {
        let _ = writeln!(s, "Nothing measured yet. Measure it with the `draughts match` line above.\n");
    }
    if !results.is_empty() {
        let _ = writeln!(s, "| Opponent | Games | +W =D -L | Score | Elo [95% interval] |\n|---|---|---|---|---|");
        for r in results {
            let elo = elo_text(Some(r.elo), Some(r.elo_low), Some(r.elo_high));
            let cells = result_cells(r.games, [r.wins_a, r.draws, r.losses_a], r.score_a, &elo);
            let _ = writeln!(s, "| {} vs {} | {cells} |", r.a, r.b);
        }
        let _ = writeln!(s);
        if !a.results_command.is_empty() {
            let _ = writeln!(s, "Commands (in the order of the table):\n\n```sh");
            for c in &a.results_command {
                let _ = writeln!(s, "{c}");
            }
            let _ = writeln!(s, "```\n");
        }
    }
    if !evals.is_empty() {
        let _ = writeln!(
            s,
            "Evaluated by the training loop (`{}/metrics.jsonl`, stage `eval`; openings from the shipped set):\n",
            run.dir.as_ref().map(|r| r.display().to_string()).unwrap_or_default()
        );
        let _ = writeln!(s, "| Cycle | Played as | Opponent | Games | +W =D -L | Score | Elo [95% interval] |\n|---|---|---|---|---|---|---|");
        for e in evals {
            let elo = elo_text(e.elo, e.elo_low, e.elo_high);
            let cells = result_cells(e.games, [e.wins, e.draws, e.losses], e.score, &elo);
            let _ = writeln!(s, "| {} | {} | {} | {cells} |", e.cycle, e.played_as(), e.opponent);
        }
        let _ = writeln!(s);
    }
    if a.no_torchscript {
        let _ = writeln!(
            s,
            "## Other formats\n\n\
             None written (`draughts export --no-torchscript`): `draughts export --checkpoint \
             {out}/{id}.json --out DIR` writes `{id}.{ts}`, the network traced to TorchScript, \
             and its card says how to read it.\n",
            id = meta.model_id,
            ts = torchscript::TORCHSCRIPT_EXTENSION,
        );
    } else {
        let _ = writeln!(
            s,
            "## Other formats\n\n\
             `{id}.{ts}` is the network traced to TorchScript (`torch.jit.load` in PyTorch, \
             `torch::jit::load` in libtorch): one input, float32 `[B, 800]` (the position encoding, \
             version {enc}; see `crates/draughts-nn/src/encoding.rs`), one output, float32 `[B, {cols}]`: \
             columns 0..2500 the policy logits (not masked to the legal moves), 2500..2503 the \
             win/draw/loss logits for the side to move{ml_col}. `scripts/onnx {out}` turns it into \
             ONNX and checks the ONNX output against it.\n",
            id = meta.model_id,
            ts = torchscript::TORCHSCRIPT_EXTENSION,
            enc = meta.encoding_version,
            cols = 2503 + usize::from(arch.moves_left_head),
            ml_col = if arch.moves_left_head { ", 2503 the moves-left output" } else { "" },
        );
    }
    let _ = writeln!(
        s,
        "## Limitations\n\n{}",
        limitations(run, &meta.rules)
    );
    s
}

/// The card's limitations: what the model was and was not trained with.
fn limitations(run: &RunFacts, rules: &str) -> String {
    let origin = match &run.init {
        Some(init) => format!("Trained by self-play only, starting from `{init}`, with the compute of its run"),
        None => "Trained from zero by self-play only, with the compute of its run".to_owned(),
    };
    let egtb = match &run.egtb {
        Some(dir) => format!(
            "no opening book; its self-play probed endgame tables (`{dir}`) for adjudication and targets, but the model \
             plays without them unless the engine is given tables (`--egtb`)"
        ),
        None => "no opening book, no endgame database".to_owned(),
    };
    format!(
        "{origin}; {egtb}. Trained for the `{rules}` rules preset only. Strength figures hold for the players stated \
         (simulations, depth or time per move); under a time limit the strength depends on the machine."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limitations_follow_the_run() {
        let mut run = RunFacts {
            dir: None,
            work: None,
            evals: Vec::new(),
            has_config: true,
            earlier_configs: Vec::new(),
            init: None,
            extra_games: Vec::new(),
            egtb: None,
            has_report: false,
        };
        let plain = limitations(&run, "fmjd");
        assert!(plain.starts_with("Trained from zero") && plain.contains("no endgame database"), "{plain}");
        run.init = Some("models/sparse-2h".into());
        run.egtb = Some("egtb/db".into());
        let warm = limitations(&run, "fmjd");
        assert!(warm.contains("starting from `models/sparse-2h`") && warm.contains("endgame tables (`egtb/db`)"), "{warm}");
        assert!(!warm.contains("from zero") && !warm.contains("no endgame database"), "{warm}");
    }

    #[test]
    fn run_dir_is_found_only_for_a_checkpoints_folder_with_metrics() {
        let dir = std::env::temp_dir().join(format!("draughts-export-{}", std::process::id()));
        let ck = dir.join("checkpoints");
        std::fs::create_dir_all(&ck).unwrap();
        assert_eq!(find_run_dir(&ck), None);
        std::fs::write(dir.join("metrics.jsonl"), "").unwrap();
        assert_eq!(find_run_dir(&ck), Some(dir.clone()));
        assert_eq!(find_run_dir(&dir), None);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn elo_text_shows_missing_values() {
        assert_eq!(elo_text(Some(21.4), Some(-39.0), Some(82.2)), "+21 [-39, +82]");
        assert_eq!(elo_text(None, None, Some(f64::INFINITY)), "n/a [n/a, n/a]");
    }
}
