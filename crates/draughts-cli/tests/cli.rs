//! The `draughts` binary as other tools drive it: output formats and exit codes.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn draughts(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_draughts"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn draughts");
    if let Some(text) = stdin {
        // A run that refuses its input (exit 2 on a bad model) may close stdin before reading it.
        match child.stdin.take().unwrap().write_all(text.as_bytes()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            r => r.unwrap(),
        }
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn perft_text_and_json() {
    let o = draughts(&["perft", "--depth", "4"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("perft 4 = 4265 "), "{}", stdout(&o));

    let o = draughts(&["perft", "--fen", "W:WK31-50:BK1-20", "--depth", "3", "--divide", "--json", "--threads", "1"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["nodes"], 352);
    let divide = v["divide"].as_object().unwrap();
    assert_eq!(divide.len(), 17);
    assert_eq!(divide.values().map(|n| n.as_u64().unwrap()).sum::<u64>(), 352);
}

#[test]
fn moves_one_per_line() {
    let o = draughts(&["moves", "--fen", "W:WK46:B23"], None);
    assert!(o.status.success());
    let text = stdout(&o);
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    assert_eq!(lines, ["46x10x23", "46x14x23", "46x19x23", "46x5x23"]);

    let o = draughts(&["moves", "--fen", "W:WK47:B14,19,29,31,42", "--notation", "pdn"], None);
    let text = stdout(&o);
    assert_eq!(text.lines().count(), 2);
    assert!(text.lines().all(|l| l.starts_with("47x") && l.ends_with("x36") && l.matches('x').count() == 4), "{text}");
}

#[test]
fn moves_stdin_keeps_order_and_reports_bad_lines() {
    let input = "W:W31-50:B1-20\nW:W28,32:B23\nW:W31-50:B\nnot a fen\n\nB:W47:B42\n";
    let o = draughts(&["moves", "--stdin"], Some(input));
    assert_eq!(o.status.code(), Some(2), "a bad line makes the exit status 2");
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[1], "W:W28,32:B23\t1\t28x19x23");
    assert_eq!(lines[2], "W:W31-50:B\t9\t31-26 32-27 33-28 34-29 35-30 31-27 32-28 33-29 34-30");
    assert_eq!(lines[3], "B:W47:B42\t1\t42-48");
    let err = stderr(&o);
    assert!(err.contains("line 4"), "{err}");
    assert!(err.contains("not a fen"), "{err}");
}

#[test]
fn bad_input_exits_2_with_a_message() {
    for (args, needle) in [
        (vec!["moves", "--fen", "W:W31,31"], "listed twice"),
        (vec!["moves", "--fen", "W:W31-50:B1-20", "--rules", "russian"], "unknown rules"),
        (vec!["perft", "--fen", "Q:W31", "--depth", "2"], "side to move"),
        (vec!["perft", "--depth", "x"], "invalid value"),
        (vec!["moves"], "required"),
    ] {
        let o = draughts(&args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}");
    }
}

#[test]
fn pdn_check_reports_game_and_move() {
    let dir = std::env::temp_dir().join(format!("draughts-cli-pdn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = "[White \"a\"]\n[Black \"b\"]\n[Result \"2-0\"]\n\n1. 32-28 19-23 2. 28x19 14x23 2-0\n\n";
    let bad = "[Result \"*\"]\n\n1. 32-28 19-23 2. 33-29 *\n\n";
    let path = dir.join("games.pdn");
    std::fs::write(&path, format!("{good}{bad}{good}")).unwrap();
    let o = draughts(&["pdn", "check", path.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("game 2") && err.contains("move 2") && err.contains("33-29"), "{err}");
    assert!(stdout(&o).contains("3 games read, 2 ok, 1 failed"), "{}", stdout(&o));

    std::fs::write(&path, format!("{good}{good}")).unwrap();
    let o = draughts(&["pdn", "check", path.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));

    let o = draughts(&["pdn", "check", dir.join("missing.pdn").to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing.pdn"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn search_prints_iterations_and_bestmove() {
    let o = draughts(&["search", "--fen", "W:W28,32:B23", "--depth", "3"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.lines().any(|l| l.starts_with("1 ")), "{out}");
    assert_eq!(out.lines().last(), Some("bestmove 28x19"));
    let o = draughts(&["search", "--fen", "W:W28,32:B23"], None);
    assert_eq!(o.status.code(), Some(2), "a limit is required");
}

#[test]
fn hub_session_answers_with_a_legal_move() {
    let input = "hub\ninit\npos pos=Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww\nlevel depth=3\ngo think\nping\nnonsense\nquit\n";
    let o = draughts(&["hub", "--level", "hard"], Some(input));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.lines().any(|l| l.starts_with("id name=")), "{out}");
    assert!(out.lines().any(|l| l == "wait"), "{out}");
    assert!(out.lines().any(|l| l == "ready"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("error message=")), "{out}");
    let done = out.lines().find(|l| l.starts_with("done move=")).expect("a done line");
    let mv = done.trim_start_matches("done move=").split_whitespace().next().unwrap();
    let start = draughts_core::Position::start();
    assert!(start.parse_hub_move(mv).is_ok(), "{mv} is not legal from the start");
}

#[test]
fn search_options_by_name_in_search_and_hub() {
    // `search --opt`: the same position, options on, still a legal best move; bad names and
    // values exit 2 naming them.
    let o = draughts(&["search", "--fen", "W:W31-50:B1-20", "--depth", "6", "--opt", "probcut=on,single_reply=on", "--opt", "qs_threat"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).lines().last().is_some_and(|l| l.starts_with("bestmove ")), "{}", stdout(&o));
    let o = draughts(&["search", "--fen", "W:W31-50:B1-20", "--depth", "2", "--opt", "nullmove=on"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nullmove") && stderr(&o).contains("probcut"), "{}", stderr(&o));
    let o = draughts(&["search", "--fen", "W:W31-50:B1-20", "--depth", "2", "--opt", "probcut_margin=lots"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("lots"), "{}", stderr(&o));
    // Hub: every option is a parameter, set before init.
    let input = "hub\nset-param name=probcut value=true\nset-param name=probcut_margin value=20\nset-param name=qs_threat value=maybe\ninit\npos pos=Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww\nlevel depth=4\ngo think\nquit\n";
    let o = draughts(&["hub", "--level", "hard"], Some(input));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let names = ["full_time", "qs_threat", "qs_promotions", "single_reply", "probcut", "probcut_margin", "lmr_early", "time_policy"];
    for name in names.into_iter().chain(["drawish", "singular", "singular_all", "rfp", "rfp_margin", "lazy_eval", "lazy_margin", "qs_exchanges", "lmp", "lmp_moves", "lmr_history", "iir", "cont_history", "lmr_log", "policy_order", "policy_depth", "corr_history", "singular_margin", "singular_all_depth", "lmr_moves", "aspiration", "lmr_nonpv_moves", "futility", "futility_margin", "lmr_cut", "iir_cut", "singular_negative", "improving"]) {
        assert!(out.lines().any(|l| l.starts_with("param ") && l.contains(&format!("name={name} "))), "no param {name}: {out}");
    }
    assert!(out.lines().any(|l| l.starts_with("error") && l.contains("maybe")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("done move=")), "{out}");
}

#[test]
fn hub_plays_the_levels_of_a_levels_file() {
    // The levels `draughts serve --levels` reads: `--level` and the `level` parameter name them.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("levels.toml");
    std::fs::write(&file, "[[level]]\nname = \"club\"\ndepth = 3\n\n[[level]]\nname = \"master\"\ndepth = 5\nthreads = 2\n").unwrap();
    let levels = file.to_str().unwrap();
    let input = "hub\nset-param name=level value=grandmaster\nset-param name=level value=master\ninit\npos pos=Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww\nlevel infinite\ngo think\nquit\n";
    let o = draughts(&["hub", "--levels", levels, "--level", "club"], Some(input));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.lines().any(|l| l.starts_with("param name=level value=club ") && l.contains("club master")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("error") && l.contains("grandmaster") && l.contains("club master")), "{out}");
    // `level infinite` would never end: the level's depth ends the search.
    assert!(out.lines().any(|l| l.starts_with("done move=")), "{out}");
    // (A hub that refuses its arguments exits before reading standard input: no input for it.)
    let o = draughts(&["hub", "--levels", levels, "--level", "hard"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown level `hard` (levels: club, master)"), "{}", stderr(&o));
    std::fs::write(&file, "[[level]]\nname = \"x\"\n").unwrap();
    let o = draughts(&["dxp", "--levels", levels, "--level", "x", "--listen", "0"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("needs a limit"), "{}", stderr(&o));
}

#[test]
fn threads_in_search_and_hub() {
    let o = draughts(&["search", "--fen", "W:W31-50:B1-20", "--depth", "6", "--threads", "2"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).lines().any(|l| l.starts_with("6 ")), "{}", stdout(&o));
    assert!(stdout(&o).lines().last().is_some_and(|l| l.starts_with("bestmove ")), "{}", stdout(&o));
    for bad in ["0", "300"] {
        let o = draughts(&["search", "--fen", "W:W31-50:B1-20", "--depth", "2", "--threads", bad], None);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(stderr(&o).contains("--threads") && stderr(&o).contains(bad), "{}", stderr(&o));
    }
    // Hub: `--threads` and the `threads` parameter, with its range.
    let input = "hub\nset-param name=threads value=0\nset-param name=threads value=2\ninit\npos pos=Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww\nlevel depth=5\ngo think\nquit\n";
    let o = draughts(&["hub", "--level", "hard", "--threads", "2"], Some(input));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.lines().any(|l| l.starts_with("param name=threads ") && l.contains("value=2") && l.contains("max=256")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("error") && l.contains("threads")), "{out}");
    assert!(out.lines().any(|l| l.starts_with("done move=")), "{out}");
    let o = draughts(&["hub", "--threads", "0"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--threads"), "{}", stderr(&o));
}

/// A DXP follower (`draughts dxp --listen 0` + `args`) once it listens: the child, the address
/// it printed, and a thread that collects the rest of its standard output. (Waiting on the line
/// rather than retrying a connection or sleeping: the follower may take seconds to start on a
/// loaded machine, and a port picked by the test could be taken by another process meanwhile.)
fn dxp_follower(args: &[&str]) -> (std::process::Child, String, std::thread::JoinHandle<String>) {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_draughts"))
        .args(["dxp", "--listen", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut rest = String::new();
        for line in std::io::BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if let Some(addr) = line.strip_prefix("listening on ") {
                tx.send(addr.to_owned()).ok();
            }
            rest.push_str(&line);
            rest.push('\n');
        }
        rest
    });
    // A safety net only: the follower prints the line as soon as it listens.
    match rx.recv_timeout(std::time::Duration::from_secs(120)) {
        Ok(addr) => (child, addr, reader),
        Err(_) => {
            child.kill().ok();
            panic!("the DXP follower did not print `listening on` within 120 s: {}", stderr(&child.wait_with_output().unwrap()))
        }
    }
}

/// A DXP follower (`draughts dxp --listen 0` + `follower`) and an initiator (`draughts dxp
/// --connect` + `initiator`) once the follower listens; returns the initiator's output and the
/// follower's standard output once the follower has exited successfully.
fn dxp_pair(follower: &[&str], initiator: &[&str]) -> (Output, String) {
    let (child, addr, reader) = dxp_follower(follower);
    let mut args = vec!["dxp", "--connect", addr.as_str()];
    args.extend_from_slice(initiator);
    let initiator = draughts(&args, None);
    assert!(initiator.status.success(), "{}", stderr(&initiator));
    let follower = child.wait_with_output().unwrap();
    assert!(follower.status.success(), "{}", stderr(&follower));
    (initiator, reader.join().unwrap())
}

#[test]
fn dxp_game_between_two_binaries_on_loopback() {
    let (initiator, follower) =
        dxp_pair(&["--level", "easy", "--seed", "3"], &["--games", "1", "--time", "1", "--level", "easy", "--seed", "4"]);
    let (a, b) = (stdout(&initiator), follower);
    let line_a = a.lines().find(|l| l.starts_with("game 1:")).expect("initiator result");
    let line_b = b.lines().find(|l| l.starts_with("game 1:")).expect("follower result");
    // Both sides agree on the number of plies and on the result.
    let plies = |l: &str| l.split(" after ").nth(1).unwrap().split(' ').next().unwrap().to_owned();
    assert_eq!(plies(line_a), plies(line_b), "{line_a} / {line_b}");
    // Line format: `game 1: <colour> vs <peer>: <won|drew|lost> after N plies (...)`.
    let verdict = |l: &str| l.split(": ").nth(2).unwrap().split(" after").next().unwrap().to_owned();
    let expected_b = match verdict(line_a).as_str() {
        "won" => "lost",
        "lost" => "won",
        other => other,
    }
    .to_owned();
    assert_eq!(verdict(line_b), expected_b, "{line_a} / {line_b}");
    let colour = |l: &str| l.split(": ").nth(1).unwrap().split(' ').next().unwrap().to_owned();
    assert_ne!(colour(line_a), colour(line_b));
}

#[test]
fn match_json_and_gate_exit_codes() {
    let o = draughts(&["match", "--a", "alphabeta:depth=2", "--b", "random", "--games", "4", "--json"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let v: serde_json::Value = serde_json::from_str(out.lines().last().unwrap()).unwrap();
    for key in ["games", "wins_a", "draws", "losses_a", "score_a", "elo", "elo_low", "elo_high"] {
        assert!(v.get(key).is_some(), "missing {key} in {v}");
    }
    assert_eq!(v["games"], 4);
    assert!(v["score_a"].as_f64().unwrap() > 0.7);

    let gate = |cand: &str, base: &str| {
        draughts(&["gate", "--candidate", cand, "--baseline", base, "--elo0", "0", "--elo1", "100", "--max-games", "60"], None)
    };
    assert_eq!(gate("alphabeta:depth=2", "random").status.code(), Some(0));
    assert_eq!(gate("random", "alphabeta:depth=2").status.code(), Some(1));
    let o = draughts(&["match", "--a", "alphabeta:depth=x", "--b", "random", "--games", "2"], None);
    assert_eq!(o.status.code(), Some(2));
    let o = draughts(&["match", "--a", "random", "--b", "random", "--games", "3"], None);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn match_against_a_dxp_engine_equals_the_in_process_match() {
    // A level without the shipped hard level's variety in the opening, so that the follower plays
    // as the in-process engine does.
    let dir = tempfile::tempdir().unwrap();
    let levels = dir.path().join("levels.toml");
    std::fs::write(&levels, "[[level]]\nname = \"plain\"\nnodes = 1000000\n").unwrap();
    let levels = levels.to_str().unwrap();
    let (mut follower, addr, _) = dxp_follower(&["--nodes", "300", "--connections", "4", "--levels", levels, "--level", "plain"]);
    let dxp = draughts(&["match", "--a", "alphabeta:nodes=1200", "--b", &format!("dxp:addr={addr}"), "--games", "4", "--json"], None);
    let local = draughts(&["match", "--a", "alphabeta:nodes=1200", "--b", "alphabeta:nodes=300", "--games", "4", "--json"], None);
    follower.kill().ok();
    follower.wait().ok();
    assert!(dxp.status.success(), "{}", stderr(&dxp));
    let json = |o: &Output| -> serde_json::Value { serde_json::from_str(stdout(o).lines().last().unwrap()).unwrap() };
    let (a, b) = (json(&dxp), json(&local));
    for key in ["wins_a", "draws", "losses_a"] {
        assert_eq!(a[key], b[key], "{key}: over DXP {a} / in process {b}");
    }
}

/// A temporary folder holding a run directory `run` with a fresh ResNet quickstart network (step 0)
/// and two self-play games of two simulations.
fn fresh_run(tag: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("draughts-cli-{tag}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/quickstart-resnet.toml");
    let run = dir.join("run");
    let o = draughts(
        &["selfplay", "--config", config, "--run", run.to_str().unwrap(), "--games", "2", "--set", "selfplay.games_in_flight=2",
          "--set", "selfplay.max_batch=2", "--set", "mcts.simulations=2", "--set", "mcts.fast_simulations=1"],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    (dir, run)
}

#[test]
fn network_players_from_a_fresh_run_directory() {
    let (dir, run) = fresh_run("nn");
    assert!(run.join("checkpoints/resnet-quickstart-s00000000.json").is_file());
    assert!(std::fs::read_dir(run.join("games")).unwrap().count() >= 2, "a shard and its PDN");
    let metrics = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    assert!(metrics.lines().any(|l| l.contains("\"stage\":\"selfplay\"")), "{metrics}");
    // The same match with one and two games at a time: the network players share one inference
    // thread per model, and batching must not change a single move.
    let spec = format!("mcts:model={},sims=4", run.display());
    let game = |c: &str| draughts(&["match", "--a", &spec, "--b", "random", "--games", "4", "--concurrency", c, "--json"], None);
    let (one, two) = (game("1"), game("2"));
    assert!(one.status.success(), "{}", stderr(&one));
    let json = |o: &Output| -> serde_json::Value { serde_json::from_str(stdout(o).lines().last().unwrap()).unwrap() };
    for key in ["wins_a", "draws", "losses_a", "mean_plies"] {
        assert_eq!(json(&one)[key], json(&two)[key], "{key}");
    }
    let o = draughts(&["match", "--a", &format!("policy:model={}", run.display()), "--b", "random", "--games", "2"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn export_writes_a_model_directory_that_hub_and_dxp_play_with() {
    let (dir, run) = fresh_run("export");
    let spec = format!("mcts:model={},sims=2", run.display());
    let o = draughts(&["match", "--a", &spec, "--b", "random", "--games", "2", "--json"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let results = dir.join("vs-random.txt");
    std::fs::write(&results, &o.stdout).unwrap();

    // A config the run replaced on a restart travels with the model.
    std::fs::write(run.join("config.prev-1.toml"), "seed = 0\n").unwrap();
    let model = dir.join("model");
    let export = |from: &std::path::Path| {
        draughts(
            &["export", "--checkpoint", from.to_str().unwrap(), "--out", model.to_str().unwrap(), "--results",
              results.to_str().unwrap(), "--results-command", "draughts match --a mcts:model=M,sims=2 --b random --games 2"],
            None,
        )
    };
    let o = export(&run);
    assert!(o.status.success(), "{}", stderr(&o));
    let id = "resnet-quickstart-s00000000";
    for f in [format!("{id}.json"), format!("{id}.safetensors"), "README.md".into(), "config.toml".into(), "config.prev-1.toml".into()] {
        assert!(model.join(&f).is_file(), "{f} missing");
    }
    // Byte-for-byte copies of the checkpoint.
    for ext in ["json", "safetensors"] {
        let a = std::fs::read(run.join(format!("checkpoints/{id}.{ext}"))).unwrap();
        assert_eq!(a, std::fs::read(model.join(format!("{id}.{ext}"))).unwrap(), "{ext}");
    }
    let card = std::fs::read_to_string(model.join("README.md")).unwrap();
    assert!(card.starts_with(&format!("# {id}")), "{card}");
    assert!(card.contains("4 residual blocks x 32 channels"), "{card}");
    assert!(card.contains("+W =D -L") && card.contains("--b random --games 2"), "{card}");
    // TorchScript beside it (export loads it back and compares it with the checkpoint).
    assert!(model.join(format!("{id}.torchscript.pt")).is_file());
    assert!(stdout(&o).contains("largest difference from the checkpoint"), "{}", stdout(&o));
    // The card lists every other file with its SHA-256 ...
    let listed: Vec<&str> = card
        .lines()
        .skip_while(|l| *l != "## Files (SHA-256)")
        .filter(|l| l.len() > 66 && l.as_bytes()[64] == b' ')
        .map(|l| &l[66..])
        .collect();
    let mut want = vec![
        "config.prev-1.toml".to_owned(),
        "config.toml".into(),
        format!("{id}.json"),
        format!("{id}.safetensors"),
        format!("{id}.torchscript.pt"),
    ];
    want.sort();
    assert_eq!(listed, want, "{card}");
    // ... checked on load: a changed file is an error naming it, exit 2.
    let hub = |m: &std::path::Path| draughts(&["hub", "--model", m.to_str().unwrap()], Some("hub\nquit\n"));
    assert!(hub(&model).status.success());
    let cfg = model.join("config.toml");
    let good = std::fs::read(&cfg).unwrap();
    std::fs::write(&cfg, [&good[..], b"\n"].concat()).unwrap();
    let o = hub(&model);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("config.toml") && stderr(&o).contains("SHA-256"), "{}", stderr(&o));
    std::fs::write(&cfg, &good).unwrap();
    // Exporting the same model again is fine; a second model into the same directory is not.
    assert!(export(&run).status.success());
    // Without TorchScript: the file is gone, the card neither lists it nor describes it, and the
    // model still loads (its sums checked); exported again with it, it is back.
    let o = draughts(&["export", "--checkpoint", run.to_str().unwrap(), "--out", model.to_str().unwrap(), "--no-torchscript"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!model.join(format!("{id}.torchscript.pt")).exists());
    let card = std::fs::read_to_string(model.join("README.md")).unwrap();
    assert!(!card.lines().any(|l| l.ends_with(".torchscript.pt")) && !card.contains("torch.jit.load"), "{card}");
    assert!(card.contains("--no-torchscript"), "{card}");
    assert!(hub(&model).status.success());
    assert!(export(&run).status.success());
    assert!(model.join(format!("{id}.torchscript.pt")).is_file());
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let meta = std::fs::read_to_string(model.join(format!("{id}.json"))).unwrap();
    // Renamed by hand, so without the seal of the original.
    let mut renamed: serde_json::Value = serde_json::from_str(&meta.replace(id, "x-s00000007")).unwrap();
    renamed.as_object_mut().unwrap().remove("sidecar_fnv1a64");
    std::fs::write(other.join("x-s00000007.json"), serde_json::to_string_pretty(&renamed).unwrap()).unwrap();
    std::fs::copy(model.join(format!("{id}.safetensors")), other.join("x-s00000007.safetensors")).unwrap();
    let o = export(&other);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(id), "{}", stderr(&o));
    let o = draughts(&["export", "--checkpoint", dir.join("nothing").to_str().unwrap(), "--out", other.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));

    // The hard level is the network: a Hub session gets a legal move.
    let input = "hub\ninit\npos pos=Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww\nlevel nodes=3\ngo think\nquit\n";
    let o = draughts(&["hub", "--model", model.to_str().unwrap(), "--level", "hard"], Some(input));
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains(id), "the engine names its model: {out}");
    let done = out.lines().find(|l| l.starts_with("done move=")).expect("a done line");
    let mv = done.trim_start_matches("done move=").split_whitespace().next().unwrap();
    assert!(draughts_core::Position::start().parse_hub_move(mv).is_ok(), "{mv}");

    // And over DXP: a whole game against the alpha-beta engine.
    let (initiator, follower) = dxp_pair(&["--model", model.to_str().unwrap(), "--nodes", "2"], &["--games", "1", "--depth", "1"]);
    assert!(stdout(&initiator).contains("game 1:"), "{}", stdout(&initiator));
    assert!(follower.contains(&format!("engine: draughts network {id}")), "{follower}");

    // The card's limitations come from the run's config: from zero without tables here; a run
    // that started from a model and probed tables says so.
    assert!(card.contains("Trained from zero") && card.contains("no endgame database"), "{card}");
    let config = std::fs::read_to_string(run.join("config.toml")).unwrap();
    let warm: Vec<&str> = config
        .lines()
        .filter(|l| !l.starts_with("egtb = "))
        .map(|l| match l {
            "init = \"\"" => "init = \"models/x\"",
            "[selfplay]" => "[selfplay]\negtb = \"tables/db\"",
            l => l,
        })
        .collect();
    assert!(warm.contains(&"init = \"models/x\"") && warm.contains(&"[selfplay]\negtb = \"tables/db\""), "{config}");
    std::fs::write(run.join("config.toml"), warm.join("\n")).unwrap();
    let third = dir.join("third");
    let o = draughts(&["export", "--checkpoint", run.to_str().unwrap(), "--out", third.to_str().unwrap()], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let card = std::fs::read_to_string(third.join("README.md")).unwrap();
    assert!(card.contains("starting from `models/x`") && card.contains("endgame tables (`tables/db`)"), "{card}");
    assert!(!card.contains("from zero") && !card.contains("no endgame database"), "{card}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn every_shipped_model_loads_and_has_its_card() {
    let models = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models"));
    for entry in std::fs::read_dir(models).unwrap().flatten() {
        let dir = entry.path();
        if !dir.is_dir() {
            continue;
        }
        let sidecars: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        assert_eq!(sidecars.len(), 1, "{}: a model directory holds exactly one checkpoint", dir.display());
        let (_, meta) = draughts_nn::checkpoint::load(&sidecars[0], draughts_nn::tch::Device::Cpu)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let card = std::fs::read_to_string(dir.join("README.md")).expect("a model card");
        assert!(card.starts_with(&format!("# {}", meta.model_id)), "{}: the card names another model", dir.display());
        // The hard level plays it.
        let input = "hub\ninit\npos pos=Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww\nlevel nodes=8\ngo think\nquit\n";
        let o = draughts(&["hub", "--model", dir.to_str().unwrap()], Some(input));
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).lines().any(|l| l.starts_with("done move=")), "{}", stdout(&o));
    }
}

/// The sparse network end to end: a loop of the alpha-beta generator (its first generation with
/// the hand-made evaluation), then every way to play the result without libtorch.
#[test]
fn sparse_network_loop_and_players() {
    let dir = std::env::temp_dir().join(format!("draughts-cli-sparse-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    let run = dir.join("run");
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/sparse.toml");
    let sets = [
        "net.accumulator=16", "net.hidden=[8]", "loop.games_per_cycle=6", "loop.cycles=2",
        "selfplay.alphabeta_nodes=200", "selfplay.max_plies=120", "selfplay.alphabeta_hash_mib=1", "train.batch_size=32",
        "train.window_min=100", "eval.games=2", "eval.candidate=alphabeta:depth=1", "eval.ladder=[\"alphabeta:depth=1\"]",
    ];
    let mut args = vec!["loop", "--config", config, "--run", run.to_str().unwrap()];
    for s in &sets {
        args.extend(["--set", s]);
    }
    let o = draughts(&args, None);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("cycle 2: sparse-s") && out.contains("vs alphabeta:depth=1"), "{out}");
    let metrics = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    let generators: Vec<String> = metrics
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["stage"] == "selfplay")
        .map(|v| v["generator"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(generators.len(), 2, "{metrics}");
    assert!(generators[0].contains("hand-made"), "{generators:?}");
    assert!(generators[1].contains("network sparse-s"), "{generators:?}");
    let (_, sidecar, meta) = draughts_model::checkpoints_in(&run.join("checkpoints"), &mut |w| panic!("{w}")).pop().unwrap();
    assert_eq!(meta.architecture.kind, draughts_model::NetKind::Sparse);
    let sidecar_text = std::fs::read_to_string(&sidecar).unwrap();
    assert!(sidecar_text.contains("\"kind\": \"sparse\"") && !sidecar_text.contains("blocks"), "{sidecar_text}");
    let r = run.to_str().unwrap();

    // draughts search with the network.
    let o = draughts(&["search", "--fen", "W:W31-50:B1-20", "--depth", "3", "--model", r], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("# evaluation: network sparse-s") && stdout(&o).contains("bestmove "), "{}", stdout(&o));
    // The arena: alpha-beta with the network, and its MCTS (native).
    let ab = format!("alphabeta:model={r},depth=2");
    let o = draughts(&["match", "--a", &ab, "--b", "alphabeta:depth=2", "--games", "2", "--json"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = draughts(&["match", "--a", &format!("mcts:model={r},sims=16"), "--b", "random", "--games", "2", "--json"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = draughts(&["match", "--a", &format!("mcts:model={r},movetime=20"), "--b", "random", "--games", "2"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    // Quantised MCTS, named as such in the results.
    let o = draughts(&["match", "--a", &format!("mcts:model={r},sims=16,quantised=on"), "--b", "random", "--games", "2"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("quantised=on"), "{}", stdout(&o));
    // The Hub hard level is the engine with the network.
    let input = "hub\ninit\npos pos=Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww\nlevel nodes=500\ngo think\nquit\n";
    let o = draughts(&["hub", "--model", r, "--level", "hard"], Some(input));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("alpha-beta with network sparse-s"), "{}", stdout(&o));
    assert!(stdout(&o).lines().any(|l| l.starts_with("done move=")), "{}", stdout(&o));
    // Export: the card describes the sparse kind and how it plays.
    let model = dir.join("model");
    let o = draughts(&["export", "--checkpoint", r, "--out", model.to_str().unwrap()], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let card = std::fs::read_to_string(model.join("README.md")).unwrap();
    assert!(card.contains("sparse: 2 x 200 piece-square features") && card.contains("alphabeta:model="), "{card}");
    // The loop's evaluations name the player the network was (not MCTS simulations it never ran).
    assert!(card.contains("| 2 | alphabeta:depth=1 | alphabeta:depth=1 |"), "{card}");
    // The run's report travels with the model.
    assert!(model.join("report/summary.md").is_file() && card.contains("report/summary.md"), "{card}");

    // A warm start: a new run whose `init` is that model plays its first games with it (not
    // the hand-made evaluation), and its step-0 checkpoint names it as the parent.
    let warm = dir.join("warm");
    let init = format!("init=\"{}\"", model.display());
    let mut args = vec!["selfplay", "--games", "2", "--config", config, "--run", warm.to_str().unwrap(), "--set", &init];
    for s in &sets {
        args.extend(["--set", s]);
    }
    let o = draughts(&args, None);
    assert!(o.status.success(), "{}", stderr(&o));
    let metrics = std::fs::read_to_string(warm.join("metrics.jsonl")).unwrap();
    assert!(metrics.contains("alphabeta, network sparse-s00000000"), "{metrics}");
    let (_, _, meta) = draughts_model::checkpoints_in(&warm.join("checkpoints"), &mut |w| panic!("{w}")).pop().unwrap();
    let exported = draughts_model::checkpoints_in(&model, &mut |w| panic!("{w}")).pop().unwrap().2;
    assert_eq!((meta.step, meta.parent.as_deref()), (0, Some(exported.model_id.as_str())));
    // Another network as the opponent of every game, named in the metrics.
    let vs = dir.join("vs");
    let opponent = format!("selfplay.alphabeta_opponent=\"{}\"", model.display());
    let mut args = vec!["selfplay", "--games", "2", "--config", config, "--run", vs.to_str().unwrap(), "--set", &opponent];
    for s in &sets {
        args.extend(["--set", s]);
    }
    let o = draughts(&args, None);
    assert!(o.status.success(), "{}", stderr(&o));
    let metrics = std::fs::read_to_string(vs.join("metrics.jsonl")).unwrap();
    assert!(metrics.contains(&format!("against {} (network sparse-s", model.display())), "{metrics}");
    // The MCTS generator with the native network resolves captures at its leaves when asked.
    let mcts_run = dir.join("mcts");
    let mut args = vec!["selfplay", "--games", "2", "--config", config, "--run", mcts_run.to_str().unwrap()];
    let mcts_sets = ["selfplay.generator=\"mcts\"", "mcts.capture_resolution=32", "mcts.simulations=4", "mcts.fast_simulations=2", "selfplay.games_in_flight=2"];
    for s in sets.iter().chain(&mcts_sets) {
        args.extend(["--set", s]);
    }
    let o = draughts(&args, None);
    assert!(o.status.success(), "{}", stderr(&o));
    let metrics = std::fs::read_to_string(mcts_run.join("metrics.jsonl")).unwrap();
    assert!(metrics.contains("captures resolved at leaves (up to 32 positions)"), "{metrics}");
    // An init of another architecture is refused, naming both.
    let other = dir.join("other");
    let init = format!("init=\"{}\"", model.display());
    let o = draughts(&["selfplay", "--games", "2", "--config", config, "--run", other.to_str().unwrap(), "--set", &init], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("sparse-16-8") && stderr(&o).contains("sparse-128-32-32"), "{}", stderr(&o));
    // A wider accumulator with the same layers after it starts from the model widened (the same
    // outputs), its parent the model.
    let wider = dir.join("wider");
    let mut args = vec!["selfplay", "--games", "2", "--config", config, "--run", wider.to_str().unwrap(), "--set", &init];
    for s in sets.iter().map(|s| if s.starts_with("net.accumulator") { "net.accumulator=24" } else { *s }) {
        args.extend(["--set", s]);
    }
    let o = draughts(&args, None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("widened from sparse-16-8 to sparse-24-8"), "{}", stderr(&o));
    let (_, _, meta) = draughts_model::checkpoints_in(&wider.join("checkpoints"), &mut |w| panic!("{w}")).pop().unwrap();
    assert_eq!((meta.step, meta.parent.as_deref(), meta.architecture.accumulator), (0, Some(exported.model_id.as_str()), 24));
    // Phase buckets and block patterns: a model without them starts a run with them, each bucket a
    // copy of its dense stack, the patterns at zero; the exported model (TorchScript included)
    // has a card that names both and the model the run started from.
    let bucketed = dir.join("bucketed");
    let mut args = vec!["selfplay", "--games", "2", "--config", config, "--run", bucketed.to_str().unwrap(), "--set", &init];
    for s in sets.iter().chain(&["net.buckets=3", "net.patterns=true"]) {
        args.extend(["--set", s]);
    }
    let o = draughts(&args, None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("widened from sparse-16-8 to sparse-16-8-b3-pat"), "{}", stderr(&o));
    let (_, _, meta) = draughts_model::checkpoints_in(&bucketed.join("checkpoints"), &mut |w| panic!("{w}")).pop().unwrap();
    let arch = &meta.architecture;
    assert_eq!((meta.parent.as_deref(), arch.buckets, arch.patterns), (Some(exported.model_id.as_str()), 3, true));
    let bmodel = dir.join("bmodel");
    let o = draughts(&["export", "--checkpoint", bucketed.to_str().unwrap(), "--out", bmodel.to_str().unwrap()], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let card = std::fs::read_to_string(bmodel.join("README.md")).unwrap();
    assert!(card.contains("3 phase buckets") && card.contains(&format!("| Started from | `{}`", model.display())), "{card}");
    assert!(card.contains("16 block patterns"), "{card}");

    // A ResNet cannot be the engine's evaluation: a clear error, exit 2.
    let (rdir, resnet) = fresh_run("sparse-resnet");
    let o = draughts(&["search", "--fen", "W:W31-50:B1-20", "--depth", "2", "--model", resnet.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("needs a sparse network"), "{}", stderr(&o));
    let o = draughts(&["match", "--a", &format!("alphabeta:model={},depth=1", resnet.display()), "--b", "random", "--games", "2"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let opponent = format!("selfplay.alphabeta_opponent=\"{}\"", resnet.display());
    let vs_resnet = dir.join("vs-resnet");
    let mut args = vec!["selfplay", "--games", "2", "--config", config, "--run", vs_resnet.to_str().unwrap(), "--set", &opponent];
    for s in &sets {
        args.extend(["--set", s]);
    }
    let o = draughts(&args, None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("alphabeta_opponent") && stderr(&o).contains("needs a sparse network"), "{}", stderr(&o));
    std::fs::remove_dir_all(&rdir).ok();
    std::fs::remove_dir_all(&dir).ok();
}

/// The loop's time budget: stages look at the clock between games and steps, and the last
/// cycle is fitted into what is left, so the run ends near its budget.
#[test]
fn loop_ends_within_its_time_budget() {
    let dir = std::env::temp_dir().join(format!("draughts-cli-budget-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    let run = dir.join("run");
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/sparse.toml");
    let sets = [
        "net.accumulator=16", "net.hidden=[8]", "loop.games_per_cycle=1000000", "loop.max_minutes=0.25",
        "selfplay.alphabeta_nodes=200", "selfplay.alphabeta_hash_mib=1", "train.batch_size=16", "train.window_min=100",
        "eval.games=2", "eval.candidate=alphabeta:depth=1", "eval.ladder=[\"alphabeta:depth=1\"]",
    ];
    let mut args = vec!["loop", "--config", config, "--run", run.to_str().unwrap()];
    for s in &sets {
        args.extend(["--set", s]);
    }
    let o = draughts(&args, None);
    assert!(o.status.success(), "{}", stderr(&o));
    let state: serde_json::Value = serde_json::from_slice(&std::fs::read(run.join("loop.json")).unwrap()).unwrap();
    let seconds = state["seconds"].as_f64().unwrap();
    // A stage looks at the clock between games and between chunks of 8 steps, and the run ends
    // after the unit of work in progress: in a debug build on a busy machine one of those takes
    // a few seconds (a run that ignored the budget would play 1,000,000 games).
    assert!(seconds <= 15.0 + 10.0, "{seconds} s of work on a 15 s budget: {}", stdout(&o));
    assert!(seconds >= 15.0 * 0.5, "{seconds} s: {}", stdout(&o));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn egtb_build_probe_verify_and_resume() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("db");
    let out_s = out.to_str().unwrap();
    let o = draughts(&["egtb", "build", "--pieces", "3", "--out", out_s, "--threads", "2"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(table.contains("0101") && table.contains("2010"), "{table}");
    // The summary's total: every position of up to three pieces.
    let total = table.lines().find(|l| l.starts_with("total")).unwrap();
    assert_eq!(total.split_whitespace().nth(1), Some("815145"), "{total}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 16);

    // Run again: every table is kept.
    let o = draughts(&["egtb", "build", "--pieces", "3", "--out", out_s, "--json"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: Vec<serde_json::Value> = stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 16);
    assert!(rows.iter().all(|r| r["seconds"].is_null()), "{rows:?}");

    // Removing a table: only that pair is solved again.
    std::fs::remove_file(out.join("1101.wdl")).unwrap();
    let o = draughts(&["egtb", "build", "--pieces", "3", "--out", out_s, "--json"], None);
    let rows: Vec<serde_json::Value> = stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let solved: Vec<&str> = rows.iter().filter(|r| !r["seconds"].is_null()).map(|r| r["material"].as_str().unwrap()).collect();
    assert_eq!(solved, ["0111", "1101"]);

    let o = draughts(&["egtb", "probe", "--dir", out_s, "--fen", "W:WK46:BK5"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "loss");
    let o = draughts(&["egtb", "probe", "--dir", out_s], Some("W:WK46:BK28\nnot a fen\nB:W41,47:B36\nW:WK1,K2,K3:BK46\n"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stdout(&o), "W:WK46:BK28\twin\nB:W41,47:B36\tloss\n");
    let err = stderr(&o);
    assert!(err.contains("line 2: not a fen"), "{err}");
    assert!(err.contains("line 4:") && err.contains("4 pieces"), "{err}");
    let o = draughts(&["egtb", "probe", "--dir", out_s, "--fen", "W:WK1,K2,K3:BK46"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("at most 3"), "{}", stderr(&o));

    let o = draughts(&["egtb", "verify", "--dir", out_s, "--material", "0201", "--material", "1011"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert_eq!(text.lines().filter(|l| l.ends_with(" ok")).count(), 2, "{text}");

    // The engine with the databases: Black wins only by 28-5 (a zugzwang), under rules without a
    // lone-king counter (FMJD's 5-move rule would count here, and the engine does not probe then).
    let o = draughts(&["search", "--fen", "B:WK46:BK28", "--depth", "3", "--rules", "no-capture-25", "--egtb", out_s], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("# endgame databases: up to 3 pieces") && text.contains("bestmove 28-5"), "{text}");
    let o = draughts(&["match", "--a", &format!("alphabeta:depth=1,egtb={out_s}"), "--b", "alphabeta:depth=1", "--games", "2"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = draughts(&["match", "--a", "alphabeta:depth=1,egtb=/nonexistent", "--b", "alphabeta:depth=1", "--games", "2"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("/nonexistent"), "{}", stderr(&o));
    let o = draughts(&["hub", "--egtb", dir.path().to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no complete set of tables"), "{}", stderr(&o));

    let o = draughts(&["egtb", "bench", "--dir", out_s, "--positions", "100"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("ns per probe"), "{}", stdout(&o));

    // Bad input: exit 2 with a message naming it.
    let o = draughts(&["egtb", "build", "--pieces", "9", "--out", out_s], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--pieces 9"));
    let o = draughts(&["egtb", "verify", "--dir", out_s, "--material", "12x"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("12x"));
    let o = draughts(&["egtb", "probe", "--dir", dir.path().join("missing").to_str().unwrap(), "--fen", "W:WK46:BK5"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing"));
}
