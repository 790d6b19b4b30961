//! Input encoding: the side to move's view, known squares, counter planes.

mod common;

use draughts_core::{Counters, Position};
use draughts_nn::encoding::{
    encode, encode_batch, EncodeInput, ENDGAME, INPUT_SIZE, NO_CAPTURE, NO_PROGRESS, OPP_KINGS,
    OPP_MEN, OWN_KINGS, OWN_MEN, PIECE_PLANES, PLANES, PLANE_SIZE, REPETITION,
};

fn encoded(position: &Position, counters: Counters, repetitions: u32) -> Box<[f32; INPUT_SIZE]> {
    let mut out = Box::new([f32::NAN; INPUT_SIZE]);
    encode(
        &EncodeInput {
            position,
            counters,
            repetitions,
        },
        &mut out,
    );
    out
}

fn at(planes: &[f32; INPUT_SIZE], plane: usize, row: usize, col: usize) -> f32 {
    planes[plane * PLANE_SIZE + row * 10 + col]
}

/// The (row, col) cells where `plane` is non-zero, sorted.
fn cells(planes: &[f32; INPUT_SIZE], plane: usize) -> Vec<(usize, usize)> {
    (0..PLANE_SIZE)
        .filter(|&c| planes[plane * PLANE_SIZE + c] != 0.0)
        .map(|c| (c / 10, c % 10))
        .collect()
}

#[test]
fn flipped_twin_encodes_identically() {
    let states = common::mixed_states(1500, 500, 11);
    let mut asymmetric = 0;
    for s in &states {
        let a = encoded(&s.position, s.counters, s.repetitions);
        let twin = s.position.flipped();
        assert_ne!(twin.side_to_move(), s.position.side_to_move());
        let b = encoded(&twin, s.counters, s.repetitions);
        assert!(
            a[..] == b[..],
            "{:?} and its flipped twin encode differently",
            s.position
        );
        // The same board with the other side to move is another input (unless symmetric).
        let other = encoded(
            &s.position.with_side_to_move(!s.position.side_to_move()),
            s.counters,
            s.repetitions,
        );
        if s.position
            .flipped()
            .with_side_to_move(s.position.side_to_move())
            != s.position
        {
            assert!(a[..] != other[..], "{:?}: side to move ignored", s.position);
            asymmetric += 1;
        }
        // Every cell written; pieces only on dark squares; exactly one plane per piece.
        assert!(a.iter().all(|v| v.is_finite() && (0.0..=1.0).contains(v)));
        for plane in 0..PIECE_PLANES {
            for (row, col) in cells(&a, plane) {
                assert_eq!(
                    (row + col) % 2,
                    1,
                    "light square ({row}, {col}) set in plane {plane}"
                );
            }
        }
        let pieces: f32 = a[..PIECE_PLANES * PLANE_SIZE].iter().sum();
        assert_eq!(pieces as u32, s.position.piece_count());
    }
    assert!(asymmetric > 1500);
}

#[test]
fn known_squares_white_to_move() {
    // White: man 31 (row 6, col 1), king 46 (9, 0); Black: man 5 (0, 9), king 10 (1, 8).
    let pos = Position::from_fen("W:W31,K46:B5,K10").unwrap();
    let e = encoded(&pos, Counters::default(), 1);
    assert_eq!(cells(&e, OWN_MEN), vec![(6, 1)]);
    assert_eq!(cells(&e, OWN_KINGS), vec![(9, 0)]);
    assert_eq!(cells(&e, OPP_MEN), vec![(0, 9)]);
    assert_eq!(cells(&e, OPP_KINGS), vec![(1, 8)]);
    for plane in PIECE_PLANES..PLANES {
        assert!(cells(&e, plane).is_empty());
    }
}

#[test]
fn known_squares_black_to_move() {
    // Black to move: its man on 5 is seen on 46 (row 9, col 0), its king on 10 on 41 (8, 1);
    // White's man on 31 on 20 (3, 8), its king on 46 on 5 (0, 9).
    let pos = Position::from_fen("B:W31,K46:B5,K10").unwrap();
    let e = encoded(&pos, Counters::default(), 1);
    assert_eq!(cells(&e, OWN_MEN), vec![(9, 0)]);
    assert_eq!(cells(&e, OWN_KINGS), vec![(8, 1)]);
    assert_eq!(cells(&e, OPP_MEN), vec![(3, 8)]);
    assert_eq!(cells(&e, OPP_KINGS), vec![(0, 9)]);
}

#[test]
fn start_position_rows() {
    let e = encoded(&Position::start(), Counters::default(), 1);
    let own = cells(&e, OWN_MEN);
    assert_eq!(own.len(), 20);
    assert!(own.iter().all(|&(r, _)| r >= 6));
    let opp = cells(&e, OPP_MEN);
    assert_eq!(opp.len(), 20);
    assert!(opp.iter().all(|&(r, _)| r <= 3));
    assert_eq!(at(&e, OWN_MEN, 9, 8), 1.0); // square 50
    assert_eq!(at(&e, OPP_MEN, 0, 1), 1.0); // square 1
}

#[test]
fn counter_planes() {
    let pos = Position::start();
    let c = Counters {
        no_progress: 25,
        no_capture: 120,
        endgame: 8,
    };
    let e = encoded(&pos, c, 2);
    for cell in 0..PLANE_SIZE {
        assert_eq!(e[NO_PROGRESS * PLANE_SIZE + cell], 0.5);
        assert_eq!(e[NO_CAPTURE * PLANE_SIZE + cell], 1.0, "clamped");
        assert_eq!(e[ENDGAME * PLANE_SIZE + cell], 0.25);
        assert_eq!(e[REPETITION * PLANE_SIZE + cell], 0.5);
    }
    let e3 = encoded(&pos, Counters::default(), 3);
    assert_eq!(e3[REPETITION * PLANE_SIZE], 1.0);
    let e1 = encoded(&pos, Counters::default(), 1);
    assert!(e1[PIECE_PLANES * PLANE_SIZE..].iter().all(|&v| v == 0.0));
}

#[test]
fn batch_matches_single() {
    let states = common::mixed_states(40, 10, 5);
    let mut batch = vec![7.0; 3];
    encode_batch(
        states.iter().map(|s| EncodeInput {
            position: &s.position,
            counters: s.counters,
            repetitions: s.repetitions,
        }),
        &mut batch,
    );
    assert_eq!(batch.len(), states.len() * INPUT_SIZE);
    for (k, s) in states.iter().enumerate() {
        let one = encoded(&s.position, s.counters, s.repetitions);
        assert!(batch[k * INPUT_SIZE..(k + 1) * INPUT_SIZE] == one[..]);
    }
}
