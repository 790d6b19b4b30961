//! The databases of up to three pieces against an independent solver, the successor check and
//! known endings; files written, read back and damaged.

use std::collections::HashMap;

use draughts_core::{Color, MoveList, Position};
use draughts_egtb::{build, verify, Indexer, Material, ProbeError, Table, Tablebase, Wdl};

use draughts_egtb::build::solve_all;

fn white_to_move(p: &Position) -> Position {
    if p.side_to_move() == Color::White {
        *p
    } else {
        p.flipped()
    }
}

/// Values by forward iteration only (no un-moves, no counts): a position is won once a move
/// reaches a lost one, lost once every move reaches a won one; what never settles is drawn.
fn forward_values(max_pieces: u32) -> HashMap<Material, Vec<Option<Wdl>>> {
    let materials = Material::all_up_to(max_pieces);
    let mut values: HashMap<Material, Vec<Option<Wdl>>> = materials.iter().map(|m| (*m, vec![None; Indexer::new(*m).size() as usize])).collect();
    let indexers: HashMap<Material, Indexer> = materials.iter().map(|m| (*m, Indexer::new(*m))).collect();
    let mut moves = MoveList::new();
    loop {
        let mut changed = false;
        for m in &materials {
            let ix = &indexers[m];
            for i in 0..ix.size() {
                if values[m][i as usize].is_some() {
                    continue;
                }
                let Some(pos) = ix.position(i) else {
                    values.get_mut(m).unwrap()[i as usize] = Some(Wdl::Draw);
                    continue;
                };
                pos.generate_moves(false, &mut moves);
                let mut all_won = true;
                let mut won = false;
                for mv in &moves {
                    let next = pos.play(mv);
                    let v = if next.pieces(next.side_to_move()).is_empty() {
                        Some(Wdl::Loss)
                    } else {
                        let n = white_to_move(&next);
                        let nm = Material::of(&n);
                        values[&nm][indexers[&nm].index(&n) as usize]
                    };
                    match v {
                        Some(Wdl::Loss) => {
                            won = true;
                            break;
                        }
                        Some(Wdl::Win) => {}
                        _ => all_won = false,
                    }
                }
                let v = if won {
                    Some(Wdl::Win)
                } else if all_won {
                    Some(Wdl::Loss)
                } else {
                    None
                };
                if v.is_some() {
                    values.get_mut(m).unwrap()[i as usize] = v;
                    changed = true;
                }
            }
        }
        if !changed {
            return values;
        }
    }
}

#[test]
fn retrograde_analysis_agrees_with_forward_iteration_on_every_position_of_up_to_three_pieces() {
    let tb = solve_all(3);
    let forward = forward_values(3);
    let mut checked = 0;
    let mut decided = [0u64; 3];
    for m in Material::all_up_to(3) {
        let table = tb.table(m).unwrap();
        for (i, want) in forward[&m].iter().enumerate() {
            let Some(pos) = table.indexer().position(i as u64) else { continue };
            let want = want.unwrap_or(Wdl::Draw);
            assert_eq!(table.get(i as u64), want, "{m} {pos}");
            assert_eq!(tb.probe(&pos).unwrap(), want);
            // The same position with Black to move is its flipped twin.
            assert_eq!(tb.probe(&pos.flipped()).unwrap(), want);
            decided[want.code() as usize] += 1;
            checked += 1;
        }
    }
    assert_eq!(checked, 8_885 + 813_660 - holes(3));
    // Every kind of value occurs (the check is not passing on all draws).
    assert!(decided.iter().all(|&n| n > 10_000), "{decided:?}");
}

fn holes(max_pieces: u32) -> u64 {
    Material::all_up_to(max_pieces)
        .iter()
        .map(|m| {
            let ix = Indexer::new(*m);
            (0..ix.size()).filter(|&i| ix.position(i).is_none()).count() as u64
        })
        .sum()
}

#[test]
fn every_stored_value_agrees_with_its_successors_and_counts_match() {
    let tb = solve_all(3);
    for m in Material::all_up_to(3) {
        let r = verify::verify(&tb, m, &|_| {}).unwrap();
        assert_eq!(r.wrong, 0, "{m}: {:?}", r.examples);
        assert!(r.counts_match, "{m}");
        assert_eq!(r.counts, tb.table(m).unwrap().counts());
    }
}

#[test]
fn the_check_finds_a_changed_value() {
    let tb = solve_all(2);
    // Build 1 king against 1 king again with one value changed.
    let m: Material = "0101".parse().unwrap();
    let t = tb.table(m).unwrap();
    let ix = t.indexer().clone();
    let target = (0..ix.size()).find(|&i| ix.position(i).is_some() && t.get(i) == Wdl::Draw).unwrap();
    let values = (0..ix.size()).map(|i| if i == target { Wdl::Win } else { t.get(i) }).collect();
    let changed = Table::from_values(ix.clone(), values);
    assert_eq!(changed.counts().wins, t.counts().wins + 1);
    let mut tb2 = Tablebase::empty();
    for other in Material::all_up_to(2) {
        let t = tb.table(other).unwrap();
        tb2.insert(Table::from_values(t.indexer().clone(), (0..t.indexer().size()).map(|i| t.get(i)).collect()));
    }
    tb2.insert(changed);
    let r = verify::verify(&tb2, m, &|_| {}).unwrap();
    assert!(r.wrong >= 1);
    assert!(r.counts_match);
    assert_eq!(r.examples.iter().find(|e| ix.index(&e.0) == target).map(|e| e.1), Some(Wdl::Win));
}

#[test]
fn files_round_trip_and_damage_is_named() {
    let tb = solve_all(2);
    let dir = tempfile::tempdir().unwrap();
    for m in Material::all_up_to(2) {
        tb.table(m).unwrap().write(dir.path()).unwrap();
    }
    let disk = Tablebase::open(dir.path()).unwrap();
    assert_eq!(disk.max_pieces(), 2);
    for m in Material::all_up_to(2) {
        let (a, b) = (tb.table(m).unwrap(), disk.table(m).unwrap());
        assert_eq!(a.counts(), b.counts());
        for i in 0..a.indexer().size() {
            assert_eq!(a.get(i), b.get(i));
        }
    }
    // No temporary file is left.
    let names: Vec<String> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(names.len(), Material::all_up_to(2).len(), "{names:?}");

    // A flipped byte in the payload: the checksum names the file.
    let path = dir.path().join("0101.wdl");
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let disk = Tablebase::open(dir.path()).unwrap();
    let king_v_king = Position::from_fen("W:WK46:BK5").unwrap();
    let err = disk.probe(&king_v_king).unwrap_err();
    assert!(matches!(err, ProbeError::Unreadable(_)));
    assert!(err.to_string().contains("0101.wdl") && err.to_string().contains("checksum"), "{err}");

    // A truncated file is refused when the directory is opened.
    std::fs::write(&path, &bytes[..100]).unwrap();
    let err = Tablebase::open(dir.path()).unwrap_err();
    assert!(err.to_string().contains("0101.wdl"), "{err}");
    let _ = Table::read(&path, "0101".parse().unwrap()).unwrap_err();
}

#[test]
fn probes_outside_the_databases_say_why() {
    let tb = solve_all(2);
    let three = Position::from_fen("W:WK46,K47:BK5").unwrap();
    let err = tb.probe(&three).unwrap_err();
    assert!(matches!(err, ProbeError::TooManyPieces { pieces: 3, max: 2, .. }), "{err}");
    let over = Position::from_fen("W:WK46:B").unwrap();
    assert_eq!(tb.probe(&over).unwrap_err(), ProbeError::GameOver(Color::Black));
    let lost = Position::from_fen("B:WK46:B").unwrap();
    assert_eq!(tb.probe(&lost).unwrap(), Wdl::Loss);
}

#[test]
fn known_endings() {
    // A king against a king needs no smaller table: every capture takes the last piece.
    assert!(build::solve(&Tablebase::empty(), "0101".parse().unwrap(), &|_| {}).rounds >= 1);
    let tb = solve_all(3);
    let v = |fen: &str| tb.probe(&Position::from_fen(fen).unwrap()).unwrap();
    // Kings on the two ends of the long diagonal: the side to move must step along it, and the
    // other king takes it (zugzwang).
    assert_eq!(v("W:WK46:BK5"), Wdl::Loss);
    assert_eq!(v("B:WK46:BK5"), Wdl::Loss);
    // A capture that takes the last piece wins.
    assert_eq!(v("W:WK46:BK28"), Wdl::Win);
    // With Black to move, 28-5 leaves White in the zugzwang above.
    assert_eq!(v("B:WK46:BK28"), Wdl::Win);
    // Black's man on 36 can neither step (41 is taken) nor take (47 behind 41 is taken): lost.
    assert_eq!(v("B:W41,47:B36"), Wdl::Loss);
}
