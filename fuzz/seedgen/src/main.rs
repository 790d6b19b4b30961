//! `draughts-fuzz-seedgen CORPUS_DIR`: writes generated seeds into `CORPUS_DIR/TARGET/`:
//! shard files (`shard`), safetensors files (`sidecar`, odd mode byte) and DXP message streams
//! (`dxp`). Each seed starts with the mode byte its target expects, where it has one.

use std::fs;
use std::path::Path;

use draughts_core::{Color, DrawReason, Game, Move, Outcome, Position, Rules, WinReason};
use draughts_protocol::dxp::{
    AcceptCode, BackCode, BackRequest, EndReason, GameAccept, GameEnd as DxpEnd, GameRequest, Message, MoveMessage,
    StopCode,
};
use draughts_selfplay::{
    encode_shard, quantise_policy, GameEnd, GameSummary, RecordFlags, ResignPoint, Shard, ShardHeader, TrainingRecord,
    Wdl,
};

fn write(dir: &Path, target: &str, name: &str, bytes: &[u8]) {
    let d = dir.join(target);
    fs::create_dir_all(&d).expect("create corpus directory");
    fs::write(d.join(name), bytes).expect("write seed");
}

/// A game of `plies` first-legal-moves from `start`, with a record per position.
fn records(start: Position, plies: usize) -> Vec<TrainingRecord> {
    let mut game = Game::from_position(start, Rules::FMJD);
    let mut out = Vec::new();
    for ply in 0..plies {
        let legal = game.legal_moves();
        let Some(&mv) = legal.first() else { break };
        let policy: Vec<(Move, f32)> = legal.iter().enumerate().map(|(i, &m)| (m, 1.0 + i as f32)).collect();
        out.push(TrainingRecord {
            position: *game.position(),
            counters: game.counters(),
            repetitions: 1,
            ply: ply as u16,
            moves_left: (plies - ply) as u16,
            policy: quantise_policy(&policy),
            result: [Wdl::Win, Wdl::Draw, Wdl::Loss][ply % 3],
            root_wdl: [0.5, 0.25, 0.25],
            flags: RecordFlags::FULL_SEARCH.with(RecordFlags::QUIET, !mv.is_capture()),
        });
        game.play(mv).expect("legal");
    }
    out
}

fn shards(dir: &Path) {
    let header = |model: &str| ShardHeader { model_id: model.into(), rules: "fmjd".into(), created_unix: 1_700_000_000, seed: 7 };
    let summary = |index, records, end| GameSummary {
        index,
        seed: index * 31,
        plies: 40,
        opening_plies: 2,
        records,
        end,
        playthrough: index % 2 == 1,
        resign: (index % 2 == 1).then_some(ResignPoint { ply: 12, loser: Color::Black }),
    };
    let a = records(Position::start(), 6);
    let b = records(Position::from_fen("W:WK47,33:B14,19,29,31,42").expect("fen"), 3);
    let c = records(Position::from_fen("B:W28,K44:BK7,20").expect("fen"), 4);
    let shards = [
        Shard { header: header("empty"), games: vec![], records: vec![] },
        Shard {
            header: header("quick-s00000100"),
            games: vec![summary(0, a.len() as u32, GameEnd::Rules(Outcome::Win { winner: Color::White, reason: WinReason::NoMoves }))],
            records: a.clone(),
        },
        Shard {
            header: header("quick-s00000200"),
            games: vec![
                summary(1, b.len() as u32, GameEnd::Resigned { loser: Color::Black }),
                summary(2, c.len() as u32, GameEnd::Rules(Outcome::Draw(DrawReason::TwoVsOne))),
                summary(3, 0, GameEnd::MaxPlies),
            ],
            records: [b, c].concat(),
        },
    ];
    for (i, shard) in shards.iter().enumerate() {
        let bytes = encode_shard(shard).expect("encodes");
        for mode in [0u8, 1] {
            let mut seed = vec![mode];
            seed.extend_from_slice(&bytes);
            write(dir, "shard", &format!("gen-shard-{i}-mode{mode}"), &seed);
        }
    }
    write(dir, "shard", "gen-build", &[2, 5, b'm', b'o', b'd', b'e', b'l', 4, b'f', b'm', b'j', b'd']);
}

/// A safetensors file: 8-byte little-endian header length, JSON header, data.
fn safetensors(tensors: &[(&str, &str, Vec<usize>, Vec<u8>)]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, dtype, shape, bytes) in tensors {
        let start = data.len();
        data.extend_from_slice(bytes);
        header.insert(
            (*name).to_owned(),
            serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [start, data.len()]}),
        );
    }
    header.insert("__metadata__".to_owned(), serde_json::json!({"format": "pt"}));
    let mut json = serde_json::to_vec(&header).expect("json");
    while json.len() % 8 != 0 {
        json.push(b' ');
    }
    let mut out = (json.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&json);
    out.extend_from_slice(&data);
    out
}

fn floats(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn weights(dir: &Path) {
    let good = safetensors(&[
        ("a", "F32", vec![2, 2], floats(&[1.0, -2.0, 0.5, 3.0])),
        ("b", "F32", vec![3], floats(&[0.0, 1.0, 2.0])),
    ]);
    let nan = safetensors(&[
        ("a", "F32", vec![2, 2], floats(&[1.0, f32::NAN, 0.5, 3.0])),
        ("b", "F32", vec![3], floats(&[0.0, 1.0, 2.0])),
    ]);
    let wrong = safetensors(&[
        ("a", "F16", vec![2, 2], vec![0; 8]),
        ("b", "F32", vec![1, 3], floats(&[0.0, 1.0, 2.0])),
        ("c", "F32", vec![1], floats(&[1.0])),
    ]);
    let odd = safetensors(&[("w", "F32", vec![], floats(&[4.0])), ("x.y", "F32", vec![1, 0, 2], vec![])]);
    // Mode byte: odd = weights; (mode >> 1) picks the expected list (0: a, b; 1: w, x.y).
    for (name, mode, bytes) in [("good", 1u8, good), ("nan", 1, nan), ("wrong", 1, wrong), ("odd", 3, odd)] {
        let mut seed = vec![mode];
        seed.extend_from_slice(&bytes);
        write(dir, "sidecar", &format!("gen-weights-{name}"), &seed);
    }
}

fn dxp(dir: &Path) {
    let frame = |msgs: &[Message]| {
        let mut out = Vec::new();
        for m in msgs {
            out.extend_from_slice(&m.encode());
            out.push(0);
        }
        out
    };
    let start = Position::start();
    let setup = Position::from_fen("B:W28,K44:BK7,20").expect("fen");
    let req = |position, follower_color| {
        Message::GameRequest(GameRequest {
            version: 1,
            initiator: "Scan 3.1".into(),
            follower_color,
            minutes: 5,
            moves: 0,
            position,
        })
    };
    let mv = |pos: &Position, text: &str| Message::Move(MoveMessage::from_move(&pos.parse_hub_move(text).expect("legal"), 3));
    let after = start.play(&start.parse_hub_move("32-28").expect("legal"));
    let singles = [
        req(None, Color::White),
        req(Some(setup), Color::Black),
        Message::GameAccept(GameAccept { follower: "Kingsrow".into(), code: AcceptCode::Accepted }),
        Message::GameAccept(GameAccept { follower: "x".into(), code: AcceptCode::Declined }),
        mv(&start, "32-28"),
        Message::Move(MoveMessage::from_move(&Position::from_fen("W:WK47:B14,19,29,31,42").expect("fen").legal_moves().first().expect("a move"), 12)),
        Message::GameEnd(DxpEnd { reason: EndReason::Draw, stop: StopCode::NoNextGame }),
        Message::Chat("good luck!".into()),
        Message::BackRequest(BackRequest { move_number: 12, color: Color::Black }),
        Message::BackAccept(BackCode::NotSupported),
    ];
    for (i, m) in singles.iter().enumerate() {
        write(dir, "dxp", &format!("gen-message-{i}"), &frame(std::slice::from_ref(m)));
    }
    // A follower's view: we play White after a request, the peer answers 32-28 with 19-23.
    let game = [
        req(None, Color::White),
        mv(&after, "19-23"),
        Message::Chat("hi".into()),
        Message::GameEnd(DxpEnd { reason: EndReason::ILose, stop: StopCode::NextGame }),
        req(None, Color::Black),
        mv(&start, "32-28"),
        Message::GameEnd(DxpEnd { reason: EndReason::Unknown, stop: StopCode::NoNextGame }),
    ];
    write(dir, "dxp", "gen-session-follower", &frame(&game));
    // An initiator's view: the peer accepts and plays Black.
    let session = [
        Message::GameAccept(GameAccept { follower: "peer".into(), code: AcceptCode::Accepted }),
        mv(&after, "19-23"),
        Message::GameEnd(DxpEnd { reason: EndReason::IWin, stop: StopCode::NextGame }),
        Message::GameAccept(GameAccept { follower: "peer".into(), code: AcceptCode::NoGame }),
    ];
    write(dir, "dxp", "gen-session-initiator", &frame(&session));
}

fn main() {
    let dir = std::env::args().nth(1).expect("usage: draughts-fuzz-seedgen CORPUS_DIR");
    let dir = Path::new(&dir);
    shards(dir);
    weights(dir);
    dxp(dir);
}
