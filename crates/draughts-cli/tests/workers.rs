//! Many self-play workers and one trainer on one run directory, as on a cluster: workers are
//! killed (SIGKILL) at seeded random moments and restarted while `draughts train --follow`
//! consumes the run. Afterwards every shard is whole, no game is in two shards (games are told
//! apart by their seeds), the trainer consumed every shard at most once and counted exactly the
//! positions of what it consumed, and the workers went on with the trainer's newer models between
//! games.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/quickstart.toml");

/// The same for every process (a run keeps one config): small searches, small shards, small
/// batches, so that shards and checkpoints come every second or so.
const SETTINGS: [&str; 9] = [
    "selfplay.workers=1",
    "selfplay.alphabeta_nodes=300",
    "selfplay.alphabeta_hash_mib=1",
    "selfplay.records_per_shard=150",
    "selfplay.write_pdn=false",
    "train.batch_size=64",
    "train.window_min=3000",
    "train.warmup_steps=1",
    "train.reuse=1.0",
];

fn command(run: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_draughts"));
    cmd.args(args).args(["--config", CONFIG, "--run", run.to_str().unwrap()]);
    for s in SETTINGS {
        cmd.args(["--set", s]);
    }
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    cmd
}

fn worker(run: &Path, id: u64) -> Child {
    command(run, &["selfplay", "--games", "0", "--worker-id", &id.to_string(), "--model-poll-seconds", "0.3"])
        .spawn()
        .unwrap()
}

/// xorshift64*: the kill schedule is seeded (printed on failure).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn files(dir: &Path, ends: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(ends))
        .collect();
    v.sort();
    v
}

fn stop(mut child: Child) -> String {
    child.kill().ok();
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// What the workers and the trainer have written so far.
#[derive(Debug, Default)]
struct Progress {
    shards: usize,
    consumed: usize,
    models: usize,
    switch_line: bool,
    train_line: bool,
}

impl Progress {
    /// Reads the run directory as it is now (files are written atomically, so whatever is there
    /// is whole).
    fn of(run: &Path) -> Progress {
        let listed = |dir: &str, ends: &str| if run.join(dir).is_dir() { files(&run.join(dir), ends) } else { Vec::new() };
        let shards = listed("games", ".bin");
        let models: BTreeSet<String> =
            shards.iter().filter_map(|s| draughts_selfplay::read_shard(s).ok()).map(|s| s.header.model_id).collect();
        let consumed = listed("checkpoints", "")
            .iter()
            .rfind(|p| p.join("trainer.json").is_file())
            .and_then(|p| std::fs::read_to_string(p.join("trainer.json")).ok())
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["window"]["consumed"].as_array().map(Vec::len))
            .unwrap_or(0);
        let metrics = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap_or_default();
        let line = |stage: &str| metrics.lines().any(|l| l.contains(&format!("\"stage\":\"{stage}\"")));
        Progress { shards: shards.len(), consumed, models: models.len(), switch_line: line("selfplay"), train_line: line("train") }
    }

    fn is_enough(&self) -> bool {
        self.shards >= 10 && self.consumed >= 5 && self.models >= 2 && self.switch_line && self.train_line
    }
}

#[test]
fn killed_workers_and_a_following_trainer_share_one_run() {
    let seed = 12;
    let mut rng = Rng(seed);
    let dir = std::env::temp_dir().join(format!("draughts-workers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = dir.join("run");

    // Three workers and the trainer start together on a run that does not exist yet.
    let mut workers: Vec<Child> = (0..3).map(|id| worker(&run, id)).collect();
    let trainer = command(&run, &["train", "--follow", "--poll-seconds", "0.3"]).spawn().unwrap();

    let start = Instant::now();
    let mut kills = 0;
    while start.elapsed() < Duration::from_secs(40) && kills < 8 {
        std::thread::sleep(Duration::from_millis(500 + rng.below(2500)));
        let w = rng.below(workers.len() as u64) as usize;
        if let Ok(Some(status)) = workers[w].try_wait() {
            let err = stop(std::mem::replace(&mut workers[w], worker(&run, w as u64)));
            panic!("worker {w} exited by itself ({status}), seed {seed}: {err}");
        }
        let old = std::mem::replace(&mut workers[w], worker(&run, w as u64));
        stop(old);
        kills += 1;
    }
    assert_eq!(kills, 8, "seed {seed}");
    // How much the processes have done by now depends on the machine's load (each restart loads
    // libtorch, the trainer needs a window before its first checkpoint): wait until there is
    // enough to check (at least 10 shards, a trainer state that consumed 5, shards from two
    // models and a worker's switch line), with a deadline as a safety net only. Then stop
    // everything (the trainer by SIGKILL too).
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut progress = Progress::default();
    while Instant::now() < deadline {
        progress = Progress::of(&run);
        if progress.is_enough() {
            break;
        }
        for (w, child) in workers.iter_mut().enumerate() {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("worker {w} exited by itself ({status}), seed {seed}");
            }
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    for w in workers {
        stop(w);
    }
    let trainer_err = stop(trainer);
    assert!(progress.is_enough(), "not enough done within 300 s: {progress:?} (seed {seed}): {trainer_err}");

    // Every shard is whole, and no game is in two of them.
    let shards = files(&run.join("games"), ".bin");
    assert!(shards.len() >= 10, "only {} shards (seed {seed})", shards.len());
    let mut seeds = HashSet::new();
    let mut records = HashMap::new();
    // (worker pid, name, model) of every shard, in name order (a worker's shards in creation order).
    let mut headers = Vec::new();
    for s in &shards {
        let shard = draughts_selfplay::read_shard(s).unwrap_or_else(|e| panic!("{e} (seed {seed})"));
        let name = s.file_name().unwrap().to_string_lossy().into_owned();
        let pid = name.split('-').nth(2).unwrap().to_owned();
        headers.push((pid, name, shard.header.model_id.clone()));
        for g in &shard.games {
            assert!(seeds.insert(g.seed), "game seed {} twice, second in {} (seed {seed})", g.seed, s.display());
        }
        assert_eq!(shard.records.len() as u64, shard.games.iter().map(|g| g.records as u64).sum::<u64>());
        records.insert(headers.last().unwrap().1.clone(), shard.records.len() as u64);
    }

    // The trainer's newest state: each shard consumed at most once, positions counted once.
    let states = files(&run.join("checkpoints"), "");
    let newest = states.iter().rfind(|p| p.join("trainer.json").is_file()).unwrap_or_else(|| {
        panic!("no trainer state (seed {seed}): {trainer_err}");
    });
    let state: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(newest.join("trainer.json")).unwrap()).unwrap();
    let consumed: Vec<String> =
        state["window"]["consumed"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect();
    let unique: BTreeSet<&String> = consumed.iter().collect();
    assert_eq!(unique.len(), consumed.len(), "a shard consumed twice (seed {seed})");
    assert!(consumed.len() >= 5, "the trainer consumed {} shards (seed {seed}): {trainer_err}", consumed.len());
    let counted: u64 = consumed.iter().map(|n| records.get(n).copied().unwrap_or_else(|| panic!("consumed {n}, not a shard"))).sum();
    assert_eq!(state["window"]["seen"].as_u64(), Some(counted), "positions counted (seed {seed})");

    // The workers went on with newer models: the shards name more than one model, and each
    // worker process's shards (by the process id in their names, in the order they were
    // written) never go back to an older one. A switch writes the worker's metrics line for the
    // model it leaves.
    let models: BTreeSet<&str> = headers.iter().map(|(_, _, m)| m.as_str()).collect();
    assert!(models.len() >= 2, "the workers played only with {models:?} (seed {seed})");
    let written = |name: &str| std::fs::metadata(run.join("games").join(name)).unwrap().modified().unwrap();
    headers.sort_by_key(|(pid, name, _)| (pid.clone(), written(name)));
    let mut last: HashMap<&str, &str> = HashMap::new();
    for (pid, _, m) in &headers {
        if let Some(prev) = last.insert(pid, m) {
            assert!(m.as_str() >= prev, "worker {pid} went from {prev} to {m} (seed {seed})");
        }
    }
    let metrics = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = metrics.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(lines.iter().any(|v| v["stage"] == "selfplay"), "no worker switched models (seed {seed})");
    assert!(lines.iter().any(|v| v["stage"] == "train"), "no training line (seed {seed})");
    std::fs::remove_dir_all(&dir).ok();
}
