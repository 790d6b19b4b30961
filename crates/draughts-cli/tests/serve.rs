//! `draughts serve` over real HTTP on loopback: the API a game site calls, its errors, its
//! limits, and concurrent requests.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

struct Server {
    child: Child,
    addr: String,
    /// The rest of the server's standard output (kept open, as a supervisor would).
    _stdout: BufReader<std::process::ChildStdout>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(extra: &[&str]) -> Server {
    spawn(&["--no-model"], extra)
}

fn serve_with_model(extra: &[&str]) -> Server {
    spawn(&["--model", SHIPPED], extra)
}

fn spawn(model: &[&str], extra: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_draughts"))
        .args(["serve", "--addr", "127.0.0.1:0"])
        .args(model)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    stdout.read_line(&mut line).unwrap();
    let addr = line.trim().strip_prefix("listening on http://").unwrap_or_else(|| panic!("first line: {line}")).to_owned();
    Server { child, addr, _stdout: stdout }
}

/// One request on its own connection: (status, body).
fn request(addr: &str, method: &str, path: &str, body: &[u8]) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(s, "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len()).unwrap();
    // The server may answer (413) before it has read a long body.
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw);
    let status = text.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("no status in {text}"));
    let start = raw.windows(4).position(|w| w == b"\r\n\r\n").map_or(raw.len(), |i| i + 4);
    let head = String::from_utf8_lossy(&raw[..start]).to_ascii_lowercase();
    if head.contains("transfer-encoding: chunked") {
        return (status, dechunk(&raw[start..]));
    }
    (status, raw[start..].to_vec())
}

/// A chunked body (a streamed answer), decoded.
fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = raw.windows(2).position(|w| w == b"\r\n").expect("a chunk size line");
        let size = usize::from_str_radix(std::str::from_utf8(&raw[..line_end]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&raw[line_end + 2..line_end + 2 + size]);
        raw = &raw[line_end + 2 + size + 2..];
    }
}

fn post(addr: &str, path: &str, body: &Value) -> (u16, Value) {
    let (status, body) = request(addr, "POST", path, body.to_string().as_bytes());
    (status, serde_json::from_slice(&body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&body))))
}

fn error_of(addr: &str, path: &str, body: &Value) -> String {
    let (status, v) = post(addr, path, body);
    assert_eq!(status, 400, "{v}");
    v["error"].as_str().unwrap().to_owned()
}

#[test]
fn every_level_answers_a_legal_move_with_the_new_state() {
    let s = serve(&[]);
    let (status, info) = request(&s.addr, "GET", "/api/info", b"");
    assert_eq!(status, 200);
    let info: Value = serde_json::from_slice(&info).unwrap();
    let levels: Vec<&str> = info["levels"].as_array().unwrap().iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(levels, ["beginner", "novice", "easy", "casual", "medium", "strong", "expert", "hard"]);
    for level in levels {
        let (status, v) = post(&s.addr, "/api/move", &json!({"fen": "W:W31-50:B1-20", "level": level, "movetime_ms": 100, "analysis": true}));
        assert_eq!(status, 200, "{v}");
        let legal = ["31-26", "31-27", "32-27", "32-28", "33-28", "33-29", "34-29", "34-30", "35-30"];
        assert!(legal.contains(&v["pdn"].as_str().unwrap()), "{v}");
        assert_eq!(v["hub"], v["pdn"]);
        assert_eq!(v["state"]["turn"], "black");
        assert_eq!(v["state"]["ply"], 1);
        assert_eq!(v["state"]["legal"].as_array().unwrap().len(), 9);
        assert_eq!(v["pv"][0], v["pdn"]);
        assert!(v["score"].is_i64() && v["level"] == level);
    }
    // The history replays: after 32-28 19-23 White must take.
    let (status, v) = post(&s.addr, "/api/move", &json!({"moves": ["32-28", "19-23"], "level": "medium"}));
    assert_eq!(status, 200, "{v}");
    assert_eq!((v["pdn"].as_str(), v["hub"].as_str()), (Some("28x19"), Some("28x19x23")));
    assert_eq!(v["captured"], json!([23]));
    assert_eq!(v["state"]["pdn"], "1. 32-28 19-23 2. 28x19");
    assert_eq!(v["state"]["fen"], "B:W19,31,33-50:B1-18,20");
}

#[test]
fn a_request_without_a_seed_gets_a_fresh_one_and_the_seed_replays_the_move() {
    // The easy level chooses at random within its margin at every ply: the same moves asked
    // again get other answers (a person who repeats their moves does not replay the game), and
    // the seed sent back gives the same answer again (the easy level searches to a fixed depth).
    let s = serve(&[]);
    let mut moves = std::collections::BTreeSet::new();
    let mut seeds = std::collections::BTreeSet::new();
    for _ in 0..24 {
        let (status, v) = post(&s.addr, "/api/move", &json!({"level": "easy"}));
        assert_eq!(status, 200, "{v}");
        moves.insert(v["pdn"].as_str().unwrap().to_owned());
        seeds.insert(v["seed"].as_u64().expect("the reply names its seed"));
        let (_, again) = post(&s.addr, "/api/move", &json!({"level": "easy", "seed": v["seed"]}));
        assert_eq!(again["pdn"], v["pdn"], "seed {}", v["seed"]);
    }
    assert!(moves.len() >= 2, "24 requests, always {moves:?}");
    assert!(seeds.len() >= 20, "seeds {seeds:?}");
}

#[test]
fn clock_games_spend_the_engine_s_clock_and_never_overstep_it() {
    // The hard level (1 s a move) with 300 ms left and no increment: the engine keeps well within
    // its clock, move after move.
    let s = serve(&[]);
    let mut moves: Vec<String> = Vec::new();
    let mut left: u64 = 300;
    for _ in 0..6 {
        let (status, v) = post(&s.addr, "/api/move", &json!({"level": "hard", "moves": moves, "time_ms": left}));
        assert_eq!(status, 200, "{v}");
        let used = v["time_ms"].as_u64().unwrap();
        assert!(used < left, "{used} ms used with {left} ms left");
        left -= used;
        moves.push(v["pdn"].as_str().unwrap().to_owned());
        // The other side answers with the medium level, off the clock.
        let (_, v) = post(&s.addr, "/api/move", &json!({"level": "medium", "moves": moves}));
        moves.push(v["pdn"].as_str().unwrap().to_owned());
    }
    assert!(left > 0);
    assert!(error_of(&s.addr, "/api/move", &json!({"level": "hard", "time_ms": 0})).contains("time_ms"));
    assert!(error_of(&s.addr, "/api/move", &json!({"level": "hard", "inc_ms": 100})).contains("needs `time_ms`"));
}

#[test]
fn state_shows_paths_promotions_and_the_end_of_a_game() {
    let s = serve(&[]);
    // Two captures from 47 to 36 that take different pieces: each named by its path.
    let (status, v) = post(&s.addr, "/api/state", &json!({"fen": "W:WK47:B14,19,29,31,42"}));
    assert_eq!(status, 200, "{v}");
    let mut pdn: Vec<&str> = v["legal"].as_array().unwrap().iter().map(|m| m["pdn"].as_str().unwrap()).collect();
    pdn.sort();
    assert_eq!(pdn, ["47x38x20x9x36", "47x38x24x13x36"]);
    for m in v["legal"].as_array().unwrap() {
        let path: Vec<String> = m["path"].as_array().unwrap().iter().map(|s| s.to_string()).collect();
        assert_eq!(path.join("x"), m["pdn"].as_str().unwrap(), "{m}");
        assert_eq!(m["captured"].as_array().unwrap().len(), 4, "{m}");
    }
    // Each path takes other pieces: one is left, a different one.
    let left: Vec<Value> = pdn
        .iter()
        .map(|p| {
            let (status, v) = post(&s.addr, "/api/state", &json!({"fen": "W:WK47:B14,19,29,31,42", "moves": [p]}));
            assert_eq!(status, 200, "{v}");
            v["board"]["black_men"].clone()
        })
        .collect();
    assert_eq!(left, [json!([19]), json!([14])]);
    // The draw rules that count: none at the start; in king against king and man, the 5-move
    // rule from the first ply, the 25-move rule and repetition as the kings go back and forth.
    let (_, v) = post(&s.addr, "/api/state", &json!({}));
    assert_eq!(v["draw_rules"], json!([]));
    let (status, v) = post(&s.addr, "/api/state", &json!({"fen": "W:WK50:BK1,3", "moves": ["50-44", "1-7", "44-50", "7-1"]}));
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        v["draw_rules"],
        json!([
            {"rule": "repetition", "count": 2, "limit": 3, "left": 1},
            {"rule": "25-move rule", "count": 4, "limit": 50, "left": 46},
            {"rule": "5-move rule", "count": 4, "limit": 10, "left": 6},
        ])
    );
    // A man crowned on the far row.
    let (status, v) = post(&s.addr, "/api/state", &json!({"fen": "W:W7:B40", "moves": ["7-2"]}));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["board"]["white_kings"], json!([2]));
    // The last capture ends the game, with its result and reason.
    let (status, v) = post(&s.addr, "/api/state", &json!({"fen": "W:W28:B23", "moves": ["28x19"]}));
    assert_eq!(status, 200, "{v}");
    assert_eq!((v["over"].as_bool(), v["result"].as_str()), (Some(true), Some("2-0")));
    assert!(v["reason"].as_str().unwrap().contains("no pieces"), "{v}");
    assert!(v["pdn"].as_str().unwrap().ends_with("2-0"), "{v}");
    assert!(error_of(&s.addr, "/api/move", &json!({"fen": "W:W28:B23", "moves": ["28x19"], "level": "easy"})).contains("over"));
    // A draw rule: 25 plies of king moves without capture under the no-capture-25 preset... the
    // preset's name is checked here, the rule itself by the rules core's tests.
    let (status, v) = post(&s.addr, "/api/state", &json!({"rules": "promote-in-capture"}));
    assert_eq!((status, v["rules"].as_str()), (200, Some("promote-in-capture")));
    // Black to move first: the move text says so.
    let (_, v) = post(&s.addr, "/api/state", &json!({"fen": "B:W31-50:B1-20", "moves": ["19-23", "32-28"]}));
    assert_eq!(v["pdn"], "1... 19-23 2. 32-28");
}

#[test]
fn bad_requests_answer_400_naming_the_problem() {
    let s = serve(&[]);
    let e = |body: Value| error_of(&s.addr, "/api/move", &body);
    assert!(e(json!({"fen": "W:W31-50:B1-20", "level": "grandmaster"})).contains("unknown level `grandmaster`"));
    assert!(e(json!({"level": "easy", "rules": "russian"})).contains("russian"));
    assert!(e(json!({"level": "easy", "fen": "X:W1"})).contains("`fen`"));
    assert!(e(json!({"level": "easy", "moves": ["32-28", "32-28"]})).contains("`moves`[1] `32-28`"));
    assert!(e(json!({"level": "easy", "moves": ["hello"]})).contains("`moves`[0]"));
    assert!(e(json!({"levle": "easy"})).contains("unknown field `levle`"));
    assert!(e(json!({"level": "easy", "movetime_ms": 0})).contains("movetime_ms"));
    assert!(e(json!({"level": "easy", "checkpoint": "x"})).contains("--run"));
    assert!(e(json!({"level": "easy", "moves": vec!["32-28"; 2001]})).contains("at most 2000"));
    let (status, body) = request(&s.addr, "POST", "/api/move", b"{\"level\": ");
    assert_eq!(status, 400);
    assert!(String::from_utf8_lossy(&body).contains("bad JSON"));
    let (status, _) = request(&s.addr, "POST", "/api/move", &[0xff, 0xfe]);
    assert_eq!(status, 400);
    let (status, body) = request(&s.addr, "POST", "/api/move", &vec![b' '; 200_000]);
    assert_eq!(status, 413, "{}", String::from_utf8_lossy(&body));
    assert_eq!(request(&s.addr, "GET", "/api/move", b"").0, 405);
    assert_eq!(request(&s.addr, "GET", "/nowhere", b"").0, 404);
    assert_eq!(request(&s.addr, "GET", "/run", b"").0, 404);
    // Still serving after all that.
    assert_eq!(post(&s.addr, "/api/state", &json!({})).0, 200);
}

#[test]
fn a_long_search_does_not_hold_up_other_games() {
    let s = serve(&[]);
    let slow: Vec<_> = (0..3)
        .map(|_| {
            let addr = s.addr.clone();
            std::thread::spawn(move || {
                let (status, v) = post(&addr, "/api/move", &json!({"level": "hard", "movetime_ms": 6000, "moves": ["32-28", "18-22"]}));
                assert_eq!(status, 200, "{v}");
                Instant::now()
            })
        })
        .collect();
    // The hard searches stop no earlier than their soft limit, seconds after the easy request
    // (sent once they have started) is answered.
    std::thread::sleep(Duration::from_millis(300));
    let (status, v) = post(&s.addr, "/api/move", &json!({"level": "easy"}));
    assert_eq!(status, 200, "{v}");
    let easy_done = Instant::now();
    for t in slow {
        assert!(t.join().unwrap() > easy_done, "a hard search finished before the easy request was answered");
    }
}

#[test]
fn bad_server_arguments_exit_2() {
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_draughts")).arg("serve").args(args).output().unwrap();
    let o = run(&["--addr", "nowhere"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--addr `nowhere`"));
    let dir = std::env::temp_dir().join(format!("draughts-serve-levels-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("levels.toml");
    std::fs::write(&file, "[[level]]\nname = \"x\"\n").unwrap();
    let o = run(&["--levels", file.to_str().unwrap(), "--no-model"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("levels.toml: level 1 `x`: needs a limit"));
    let o = run(&["--run", dir.to_str().unwrap(), "--no-model"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a training run"));
    let _ = std::fs::remove_dir_all(&dir);
}

const SHIPPED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/sparse-pat32-g2");

#[test]
fn hard_plays_with_the_model_and_a_run_s_checkpoints_can_be_chosen() {
    // A run directory with one checkpoint (the shipped model's) and two metric lines.
    let run = std::env::temp_dir().join(format!("draughts-serve-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&run);
    std::fs::create_dir_all(run.join("checkpoints")).unwrap();
    for f in std::fs::read_dir(SHIPPED).unwrap() {
        let p = f.unwrap().path();
        if p.extension().is_some_and(|e| e == "json" || e == "safetensors") {
            std::fs::copy(&p, run.join("checkpoints").join(p.file_name().unwrap())).unwrap();
        }
    }
    std::fs::write(run.join("metrics.jsonl"), "{\"stage\":\"train\",\"cycle\":1,\"loss\":2.3}\n{\"stage\":\"eval\",\"cycle\":1,\"elo\":40}\n{\"cut sh").unwrap();
    let s = serve_with_model(&["--run", run.to_str().unwrap()]);
    let (_, info) = request(&s.addr, "GET", "/api/info", b"");
    let info: Value = serde_json::from_slice(&info).unwrap();
    let networks: Vec<&Value> = info["levels"].as_array().unwrap().iter().map(|l| &l["network"]).collect();
    let net = json!("sparse-pat32-s00004577");
    // The shipped levels: six with the hand-made evaluation, then expert and hard with the network.
    let expected: Vec<&Value> = std::iter::repeat_n(&Value::Null, 6).chain([&net, &net]).collect();
    assert_eq!(networks, expected);
    let (status, v) = post(&s.addr, "/api/move", &json!({"level": "hard", "movetime_ms": 50}));
    assert_eq!(status, 200, "{v}");
    assert!(v["player"].as_str().unwrap().contains("network sparse-pat32-s00004577"), "{v}");
    let (_, v) = post(&s.addr, "/api/move", &json!({"level": "easy"}));
    assert!(v["player"].as_str().unwrap().contains("hand-made"), "{v}");
    let (status, body) = request(&s.addr, "GET", "/api/run", b"");
    assert_eq!(status, 200);
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["metrics"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(v["checkpoints"][0]["name"], "sparse-pat32-s00004577");
    assert_eq!(v["checkpoints"][0]["step"], 4577);
    let (status, v) = post(&s.addr, "/api/move", &json!({"level": "easy", "checkpoint": "sparse-pat32-s00004577"}));
    assert_eq!(status, 200, "{v}");
    assert!(v["player"].as_str().unwrap().contains("network sparse-pat32-s00004577"), "{v}");
    assert!(error_of(&s.addr, "/api/move", &json!({"level": "easy", "checkpoint": "nope"})).contains("no checkpoint `nope`"));
    assert_eq!(request(&s.addr, "GET", "/run", b"").0, 200);
    drop(s);
    let _ = std::fs::remove_dir_all(&run);
}

#[test]
fn the_openapi_description_parses_and_names_what_is_served() {
    let s = serve(&[]);
    let (status, body) = request(&s.addr, "GET", "/api/openapi.json", b"");
    assert_eq!(status, 200);
    let v: Value = serde_json::from_slice(&body).unwrap();
    let paths = v["paths"].as_object().unwrap();
    assert_eq!(paths.len(), 6);
    for (path, ops) in paths {
        let method = if ops.get("post").is_some() { "POST" } else { "GET" };
        let body: &[u8] = if path == "/api/analyse" { b"{\"movetime_ms\": 50}" } else { b"{}" };
        let (status, _) = request(&s.addr, method, path, body);
        // /api/run is described with its 404 (no --run here); /api/move needs a level.
        assert!(matches!((path.as_str(), status), (_, 200) | ("/api/run", 404) | ("/api/move", 400)), "{path}: {status}");
    }
}

#[test]
fn levels_with_egtb_probe_the_served_tables() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let o = Command::new(env!("CARGO_BIN_EXE_draughts")).args(["egtb", "build", "--pieces", "3", "--out", db.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s = serve(&["--egtb", db.to_str().unwrap()]);
    let (status, body) = request(&s.addr, "GET", "/api/info", b"");
    assert_eq!(status, 200);
    let v: Value = serde_json::from_slice(&body).unwrap();
    let levels = v["levels"].as_array().unwrap();
    let pieces = |name: &str| levels.iter().find(|l| l["name"] == name).unwrap()["egtb_pieces"].clone();
    assert_eq!(pieces("hard"), json!(3), "{v}");
    assert_eq!(pieces("easy"), Value::Null);
    // Black wins only by 28-5 (a zugzwang on the long diagonal); rules without a lone-king counter.
    let (status, v) = post(&s.addr, "/api/move", &json!({"level": "hard", "fen": "B:WK46:BK28", "rules": "no-capture-25", "movetime_ms": 50}));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["hub"], "28-5", "{v}");
}

/// Server-sent events of a body: (name, data) pairs.
fn events(body: &[u8]) -> Vec<(String, Value)> {
    String::from_utf8_lossy(body)
        .split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let name = e.lines().find_map(|l| l.strip_prefix("event: ")).unwrap_or_else(|| panic!("no name: {e}"));
            let data = e.lines().find_map(|l| l.strip_prefix("data: ")).unwrap_or_else(|| panic!("no data: {e}"));
            (name.to_owned(), serde_json::from_str(data).unwrap_or_else(|x| panic!("{x}: {data}")))
        })
        .collect()
}

#[test]
fn analysis_streams_each_iteration_and_its_best_move() {
    let s = serve_with_model(&[]);
    let body = json!({"moves": ["32-28", "19-23"], "movetime_ms": 400});
    let (status, raw) = request(&s.addr, "POST", "/api/analyse", body.to_string().as_bytes());
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&raw));
    let ev = events(&raw);
    assert_eq!(ev[0].0, "start");
    assert_eq!(ev[0].1["turn"], "white");
    assert!(ev[0].1["player"].as_str().unwrap().contains("network sparse-pat32-s00004577"), "{}", ev[0].1);
    let infos: Vec<&Value> = ev.iter().filter(|(n, _)| n == "info").map(|(_, d)| d).collect();
    assert!(infos.len() >= 3, "{ev:?}");
    let depths: Vec<u64> = infos.iter().map(|d| d["depth"].as_u64().unwrap()).collect();
    assert!(depths.windows(2).all(|w| w[0] < w[1]), "{depths:?}");
    let (name, done) = ev.last().unwrap();
    assert_eq!(name, "done");
    // White must take back: 28x19 is the only move.
    assert_eq!(done["best"], "28x19", "{done}");
    assert_eq!(done["pv"][0], "28x19");
    assert_eq!(done["reason"], "time");
    assert!(depths.len() >= 5, "a single legal move is analysed deeper: {depths:?}");
    assert!(infos.iter().all(|d| d["pv"][0] == "28x19"), "{infos:?}");

    let e = |body: Value| error_of(&s.addr, "/api/analyse", &body);
    assert!(e(json!({"movetime_ms": 0})).contains("movetime_ms"));
    assert!(e(json!({"movetime_ms": 3_600_000})).contains("at most 60000"));
    assert!(e(json!({"fen": "B:W31:B"})).contains("game is over"));
    assert!(e(json!({"moves": ["11-15"]})).contains("`moves`[0]"));
    assert!(e(json!({"level": "hard"})).contains("unknown field `level`"));
    assert_eq!(request(&s.addr, "GET", "/api/analyse", b"").0, 405);
}

/// A levels file with a level that would search for a minute.
fn slow_levels(dir: &std::path::Path) -> String {
    let path = dir.join("levels.toml");
    let text = "[[level]]\nname = \"easy\"\ndescription = \"d\"\ndepth = 2\nhash_mib = 1\n\n\
                [[level]]\nname = \"slow\"\ndescription = \"d\"\nmovetime_ms = 60000\nhash_mib = 1\n";
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// Starts `path` with `body` on its own connection and reads the answer's first bytes (the
/// search is under way), then hangs up; returns when the easy request after it is answered.
fn hang_up_then_ask_easy(addr: &str, path: &str, body: &Value, wait_for: &str) -> Duration {
    let mut c = TcpStream::connect(addr).unwrap();
    let text = body.to_string();
    write!(c, "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{text}", text.len()).unwrap();
    if !wait_for.is_empty() {
        c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&seen).contains(wait_for) {
            let n = c.read(&mut buf).unwrap();
            assert!(n > 0, "closed before `{wait_for}`: {}", String::from_utf8_lossy(&seen));
            seen.extend_from_slice(&buf[..n]);
        }
    } else {
        std::thread::sleep(Duration::from_millis(300));
    }
    drop(c);
    let t = Instant::now();
    let (status, v) = post(addr, "/api/move", &json!({"level": "easy"}));
    assert_eq!(status, 200, "{v}");
    t.elapsed()
}

#[test]
fn a_search_ends_when_its_client_goes_away() {
    let dir = tempfile::tempdir().unwrap();
    // One search thread: the easy request can only be answered once the minute-long search
    // whose client hung up has let go of it.
    let s = serve_with_model(&["--threads", "1", "--levels", &slow_levels(dir.path())]);
    let waited = hang_up_then_ask_easy(&s.addr, "/api/move", &json!({"level": "slow"}), "");
    assert!(waited < Duration::from_secs(10), "the thread was held {waited:?} after the client went away");
    let waited = hang_up_then_ask_easy(&s.addr, "/api/analyse", &json!({}), "event: info");
    assert!(waited < Duration::from_secs(10), "the analysis held its thread {waited:?} after the client went away");
    // A search still running when a second one asks waits its turn (one thread), and both are
    // answered.
    let addr = s.addr.clone();
    let first = std::thread::spawn(move || post(&addr, "/api/move", &json!({"level": "slow", "movetime_ms": 500})).0);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(post(&s.addr, "/api/move", &json!({"level": "easy"})).0, 200);
    assert_eq!(first.join().unwrap(), 200);
}

#[test]
fn slow_idle_and_flooding_clients_are_cut_off() {
    let s = serve(&["--client-timeout-ms", "500", "--max-connections", "16", "--threads", "1"]);
    let (status, info) = request(&s.addr, "GET", "/api/info", b"");
    assert_eq!(status, 200);
    let info: Value = serde_json::from_slice(&info).unwrap();
    assert_eq!(info["limits"]["server"]["client_timeout_ms"], 500, "{info}");
    assert_eq!(info["limits"]["server"]["max_connections"], 16, "{info}");
    let closed_within = |c: &mut TcpStream| {
        let t = Instant::now();
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut raw = Vec::new();
        let _ = c.read_to_end(&mut raw);
        (t.elapsed(), String::from_utf8_lossy(&raw).into_owned())
    };
    // Connects and says nothing.
    let mut idle = TcpStream::connect(&s.addr).unwrap();
    let (t, _) = closed_within(&mut idle);
    assert!(t < Duration::from_secs(5), "an idle connection stayed open {t:?}");
    // Sends half its headers.
    let mut slow = TcpStream::connect(&s.addr).unwrap();
    slow.write_all(b"POST /api/move HTTP/1.1\r\nHost: x\r\n").unwrap();
    let (t, _) = closed_within(&mut slow);
    assert!(t < Duration::from_secs(5), "a half-sent request held its connection {t:?}");
    // Sends its headers and part of its body: 408.
    let mut slow = TcpStream::connect(&s.addr).unwrap();
    slow.write_all(b"POST /api/move HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"level\":").unwrap();
    let (t, answer) = closed_within(&mut slow);
    assert!(t < Duration::from_secs(5) && answer.starts_with("HTTP/1.1 408"), "{t:?}: {answer}");
    // A flood of connections that never finish their requests: more than the server keeps open.
    // They are closed in time, and a request behind them is answered.
    let flood: Vec<TcpStream> = (0..40)
        .map(|_| {
            let mut c = TcpStream::connect(&s.addr).unwrap();
            let _ = c.write_all(b"GET /api/info HTTP/1.1\r\n");
            c
        })
        .collect();
    let t = Instant::now();
    let (status, v) = post(&s.addr, "/api/move", &json!({"level": "easy"}));
    assert_eq!(status, 200, "{v}");
    assert!(t.elapsed() < Duration::from_secs(15), "answered after {:?}", t.elapsed());
    drop(flood);
}

#[test]
fn levels_rate_writes_ratings_that_serve_show_and_hub_name() {
    let dir = tempfile::tempdir().unwrap();
    let levels = dir.path().join("levels.toml");
    let text = "[[level]]\nname = \"one\"\ndepth = 1\nnoise_cp = 100\nhash_mib = 1\n\n[[level]]\nname = \"two\"\ndepth = 3\nhash_mib = 1\n";
    std::fs::write(&levels, text).unwrap();
    let l = levels.to_str().unwrap();
    let draughts = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_draughts")).args(args).stdin(Stdio::null()).output().unwrap();
    let rate = [
        "levels", "rate", "--levels", l, "--no-model", "--anchors", "random", "alphabeta:depth=1", "alphabeta:depth=2", "--scale",
        "alphabeta:depth=1", "--scale-elo", "1000", "--placement-games", "2", "--games-per-pair", "4", "--concurrency", "2",
    ];
    let o = draughts(&rate);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(out.contains("logistic Elo; alphabeta:depth=1 = 1000") && out.contains("over level one"), "{out}");
    let ratings: Value = serde_json::from_slice(&std::fs::read(dir.path().join("levels.ratings.json")).unwrap()).unwrap();
    let players = ratings["players"].as_array().unwrap();
    assert_eq!(players.len(), 5, "{ratings}");
    let games: u64 = ratings["pairings"].as_array().unwrap().iter().map(|p| ["wins", "draws", "losses"].iter().map(|k| p[k].as_u64().unwrap()).sum::<u64>()).sum();
    assert_eq!(games, ratings["games"].as_u64().unwrap());
    // Placement: each level against anchors and one against two (2 games each); the ladder tops
    // pairs up to 4 games.
    assert!(games >= 4 * 2, "{games} games");
    let anchor = players.iter().find(|p| p["name"] == "alphabeta:depth=1").unwrap();
    assert_eq!(anchor["rating"]["elo"], 1000.0);

    let o = draughts(&["levels", "show", "--levels", l, "--no-model"]);
    let shown = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(shown.lines().filter(|l| l.contains("Elo ")).count() == 2, "{shown}");
    // The server's info and the Hub engine's name carry the ratings.
    let s = serve(&["--levels", l]);
    let (_, info) = request(&s.addr, "GET", "/api/info", b"");
    let info: Value = serde_json::from_slice(&info).unwrap();
    assert!(info["levels"][1]["rating"]["elo"].as_f64().is_some(), "{info}");
    let mut hub = Command::new(env!("CARGO_BIN_EXE_draughts"))
        .args(["hub", "--levels", l, "--level", "two"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    hub.stdin.take().unwrap().write_all(b"hub\nquit\n").unwrap();
    let o = hub.wait_with_output().unwrap();
    let id = String::from_utf8_lossy(&o.stdout).lines().find(|l| l.starts_with("id ")).unwrap_or_default().to_owned();
    assert!(id.contains("(two, Elo "), "{id}");
    // A level changed since it was rated shows no rating.
    std::fs::write(&levels, text.replace("depth = 3", "depth = 4")).unwrap();
    let o = draughts(&["levels", "show", "--levels", l, "--no-model"]);
    let shown = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(shown.lines().any(|x| x.starts_with("two") && x.contains("not rated")), "{shown}");
    // Bad arguments: exit 2, named.
    let mut bad = rate.to_vec();
    bad[14] = "3";
    let o = draughts(&bad);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--placement-games 3"), "{}", String::from_utf8_lossy(&o.stderr));
    let o = draughts(&["levels", "rate", "--levels", l, "--no-model", "--scale", "alphabeta:depth=9"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not one of the --anchors"));
}
