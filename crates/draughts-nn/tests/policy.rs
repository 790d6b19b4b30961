//! Policy indices over thousands of positions: every legal move gets one, and only moves that
//! share (from, to) share one.

mod common;

use std::collections::HashMap;

use draughts_core::Color;
use draughts_nn::policy::{index_squares, masked_softmax, move_index, policy_target, POLICY_SIZE};

#[test]
fn every_legal_move_has_an_index_shared_only_by_same_from_to() {
    let states = common::mixed_states(4000, 2000, 7);
    let (mut moves_seen, mut captures, mut king_moves, mut shared) = (0, 0, 0, 0);
    let mut from_eq_to = 0;
    for s in &states {
        let pos = &s.position;
        let side = pos.side_to_move();
        let moves = pos.legal_moves();
        let mirrored = pos.flipped().legal_moves();
        let mut by_index: HashMap<usize, (u8, u8)> = HashMap::new();
        let mut index_count: HashMap<usize, usize> = HashMap::new();
        for mv in &moves {
            let i = move_index(side, mv);
            assert!(i < POLICY_SIZE);
            let squares = (mv.from().number(), mv.to().number());
            // Round trip to the absolute squares.
            assert_eq!(index_squares(side, i), Some((mv.from(), mv.to())));
            // Same index <=> same (from, to).
            if let Some(&prev) = by_index.get(&i) {
                assert_eq!(
                    prev, squares,
                    "{pos:?}: {mv} shares index {i} with another (from, to)"
                );
            }
            by_index.insert(i, squares);
            *index_count.entry(i).or_default() += 1;
            // The mirrored move in the mirrored position has the same index.
            let flipped = mv.flipped();
            assert!(mirrored.contains(&flipped));
            assert_eq!(move_index(!side, &flipped), i);
            moves_seen += 1;
            captures += mv.is_capture() as usize;
            king_moves += mv.is_king_move() as usize;
            from_eq_to += (mv.from() == mv.to()) as usize;
        }
        // Distinct (from, to) pairs <=> distinct indices.
        let pairs: std::collections::HashSet<_> =
            moves.iter().map(|m| (m.from(), m.to())).collect();
        assert_eq!(pairs.len(), by_index.len());
        shared += index_count.values().filter(|&&c| c > 1).count();
    }
    println!(
        "{} positions, {moves_seen} moves, {captures} captures, {king_moves} king moves, \
         {shared} shared indices, {from_eq_to} captures back to the start square",
        states.len()
    );
    assert!(states.len() >= 6000 && captures > 1000 && king_moves > 5000);
    // Captures sharing (from, to) but taking different pieces do occur (they share a logit).
    assert!(shared > 0);
}

#[test]
fn index_of_black_move_is_mirrored() {
    // Black's 19-23 is White's 32-28 on the turned board.
    let pos = draughts_core::Position::start().with_side_to_move(Color::Black);
    let mv = pos.parse_hub_move("19-23").unwrap();
    assert_eq!(move_index(Color::Black, &mv), (32 - 1) * 50 + (28 - 1));
    let pos = draughts_core::Position::start();
    let mv = pos.parse_hub_move("32-28").unwrap();
    assert_eq!(move_index(Color::White, &mv), (32 - 1) * 50 + (28 - 1));
}

#[test]
fn masked_softmax_over_real_moves() {
    let states = common::mixed_states(300, 300, 3);
    let mut logits = vec![0.0f32; POLICY_SIZE];
    let mut probs = Vec::new();
    let mut dense = [0.0f32; POLICY_SIZE];
    for (k, s) in states.iter().enumerate() {
        for (i, l) in logits.iter_mut().enumerate() {
            *l = (((i * 31 + k * 17) % 97) as f32 - 48.0) / 8.0;
        }
        let side = s.position.side_to_move();
        let moves = s.position.legal_moves();
        let indices: Vec<u16> = moves.iter().map(|m| move_index(side, m) as u16).collect();
        masked_softmax(&logits, &indices, &mut probs);
        assert_eq!(probs.len(), moves.len());
        let total: f32 = probs.iter().sum();
        assert!((total - 1.0).abs() < 1e-5, "{total}");
        assert!(probs.iter().all(|&p| p > 0.0));
        // The dense target is the softmax restricted to the legal indices, zero elsewhere.
        policy_target(&indices, &probs, &mut dense);
        let z: f32 = indices
            .iter()
            .enumerate()
            .filter(|&(j, i)| !indices[..j].contains(i))
            .map(|(_, &i)| logits[i as usize].exp())
            .sum();
        for (i, &d) in dense.iter().enumerate() {
            if indices.contains(&(i as u16)) {
                assert!((d - logits[i].exp() / z).abs() < 1e-5);
            } else {
                assert_eq!(d, 0.0);
            }
        }
    }
}
