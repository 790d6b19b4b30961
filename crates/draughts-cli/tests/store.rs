//! A run in an object store (`--run s3://BUCKET/PREFIX`) against a real S3-compatible server on
//! the loopback address (moto_server; `scripts/test` installs it): workers push their shards,
//! the trainer pulls them and pushes checkpoints and its state, a worker with another cache
//! picks up the newest checkpoint, a trainer with another cache resumes, and a process bringing
//! another config is refused.

use std::path::Path;
use std::process::{Command, Output};

use draughts_store::testing::MotoServer;
use draughts_store::Remote;

const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/quickstart.toml");
const SETTINGS: [&str; 6] = [
    "selfplay.workers=1",
    "selfplay.alphabeta_nodes=300",
    "selfplay.alphabeta_hash_mib=1",
    "selfplay.records_per_shard=100",
    "train.batch_size=64",
    "train.window_min=2000",
];
const RUN: &str = "s3://runs/team/store-test";

fn draughts(server: &MotoServer, cache: &Path, args: &[&str], extra: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_draughts"));
    cmd.args(args).args(["--config", CONFIG, "--run", RUN, "--cache", cache.to_str().unwrap()]);
    for s in SETTINGS.iter().chain(extra) {
        cmd.args(["--set", s]);
    }
    cmd.envs(server.env());
    cmd.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn names(remote: &Remote, dir: &str, ends: &str) -> Vec<String> {
    remote.list(dir).unwrap().into_iter().map(|(n, _)| n).filter(|n| n.ends_with(ends)).collect()
}

#[test]
fn workers_and_a_trainer_share_a_run_in_an_object_store() {
    let Some(server) = MotoServer::start("runs") else { return };
    let remote = Remote::open_with(RUN, &server.settings()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (w1, w2, t1, t2) = (dir.path().join("w1"), dir.path().join("w2"), dir.path().join("t1"), dir.path().join("t2"));

    // Two workers, each with its own cache, push their shards (and PDN).
    for (cache, id) in [(&w1, "1"), (&w2, "2")] {
        let o = draughts(&server, cache, &["selfplay", "--games", "4", "--worker-id", id], &[]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let shards = names(&remote, "games", ".bin");
    assert!(shards.len() >= 2, "{shards:?}");
    assert_eq!(names(&remote, "games", ".pdn").len(), shards.len());
    assert!(remote.get("config.toml").unwrap().is_some());
    // Nothing but the cache's own files is uploaded: no step-0 checkpoint, no temporary file.
    assert!(names(&remote, "checkpoints", "").is_empty());
    assert!(names(&remote, "", ".tmp").is_empty());

    // The trainer pulls every shard, trains, pushes the checkpoint and its state.
    let o = draughts(&server, &t1, &["train", "--steps", "3"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let pulled = std::fs::read_dir(t1.join("games")).unwrap().filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "bin")).count();
    assert_eq!(pulled, shards.len());
    assert_eq!(names(&remote, "checkpoints", ".json").iter().filter(|n| !n.contains("trainer")).count(), 1);
    assert!(names(&remote, "checkpoints", "").contains(&"checkpoints/quickstart-s00000003.safetensors".to_owned()));
    assert!(names(&remote, "checkpoints/trainer-s00000003", "").contains(&"checkpoints/trainer-s00000003/trainer.json".to_owned()));
    // Every process wrote its own metrics object.
    let metrics = names(&remote, "metrics", ".jsonl");
    assert_eq!(metrics.len(), 3, "{metrics:?}");
    let text: String = metrics.iter().map(|m| String::from_utf8(remote.get(m).unwrap().unwrap()).unwrap()).collect();
    assert_eq!(text.lines().filter(|l| l.contains("\"stage\":\"selfplay\"")).count(), 2, "{text}");
    assert_eq!(text.lines().filter(|l| l.contains("\"stage\":\"train\"")).count(), 1, "{text}");

    // A worker on another machine (a fresh cache) plays with the newest checkpoint.
    let w3 = dir.path().join("w3");
    let o = draughts(&server, &w3, &["selfplay", "--games", "2"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    // How many shards two games make depends on their lengths (a shard is cut once it holds
    // `records_per_shard` records, and games are never split), so the count is not asserted: what
    // matters is that every new shard is whole, was played with the newest checkpoint, has its
    // PDN beside it, and that the two games are there once each.
    let new: Vec<String> = names(&remote, "games", ".bin").into_iter().filter(|n| !shards.contains(n)).collect();
    assert!(!new.is_empty(), "the worker pushed no shard");
    let mut seeds = Vec::new();
    for name in &new {
        let local = draughts_selfplay::read_shard(w3.join(name)).unwrap();
        assert_eq!(local.header.model_id, "quickstart-s00000003", "{name}");
        let bytes = remote.get(name).unwrap().unwrap();
        assert_eq!(bytes, std::fs::read(w3.join(name)).unwrap(), "{name}: the store's copy differs from the worker's");
        assert!(remote.get(&name.replace(".bin", ".pdn")).unwrap().is_some(), "{name} has no PDN");
        seeds.extend(local.games.iter().map(|g| g.seed));
    }
    seeds.sort_unstable();
    seeds.dedup();
    assert_eq!(seeds.len(), 2, "the worker asked for 2 games pushed {} distinct ones in {new:?}", seeds.len());

    // A trainer on another machine resumes from the state in the store.
    let o = draughts(&server, &t2, &["train", "--steps", "2"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("to step 5"), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(remote.get("checkpoints/quickstart-s00000005.json").unwrap().is_some());

    // Another config is refused, naming the store's config; so is the loop.
    let o = draughts(&server, &w1, &["selfplay", "--games", "1"], &["selfplay.alphabeta_nodes=301"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("{RUN}/config.toml")), "{}", stderr(&o));
    let o = draughts(&server, &w1, &["loop"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("docs/cluster.md"), "{}", stderr(&o));
}
