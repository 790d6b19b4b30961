//! The network's input: a position, its draw-rule counters and its repetition count, as planes on
//! a 10x10 grid seen from the side to move.
//!
//! # Layout (version 1)
//!
//! `PLANES` planes of 10x10 `f32`, plane-major (`[plane][row][col]`, what a `[N, C, H, W]` tensor
//! wants), for a total of [`INPUT_SIZE`] floats per position:
//!
//! | plane | contents |
//! |---|---|
//! | 0 | own men (1.0 on their squares) |
//! | 1 | own kings |
//! | 2 | opponent men |
//! | 3 | opponent kings |
//! | 4 | `no_progress / 50`, on every cell |
//! | 5 | `no_capture / 50`, on every cell |
//! | 6 | `endgame / 32`, on every cell |
//! | 7 | `min(repetitions - 1, 2) / 2`, on every cell |
//!
//! The board is seen from the side to move: for Black it is turned 180 degrees (square `n` becomes
//! `51 - n`) and the colours swapped, exactly [`Position::flipped`]. Square `n` (after that turn)
//! sits at `(row, col) = (sq.row(), sq.col())`: row 0 is the far side (squares 1..5), so the side
//! to move always plays "up" the grid, from row 9 toward row 0. Light squares stay 0 in the piece
//! planes.
//!
//! The counter planes are constant planes rather than a side vector so that the net is a plain
//! convolutional stack. Each counter is divided by the FMJD limit of its rule (50 plies for the
//! no-progress and no-capture rules, 32 plies for the 16-move rule) and clamped to 1, whatever
//! rules the game is played under: the scale is part of the encoding, not of the rules.
//!
//! Any change to this layout must bump [`ENCODING_VERSION`]; checkpoints record the version they
//! were trained with and refuse to load under another one.

use draughts_core::{Counters, Position, Square};

/// Version of the input layout described in this module. Stored in checkpoint sidecars (the
/// value lives with the file format in `draughts-model`, which readers without libtorch check).
pub use draughts_model::ENCODING_VERSION;

/// Rows and columns of the grid.
pub const BOARD_SIDE: usize = 10;
/// Cells in one plane.
pub const PLANE_SIZE: usize = BOARD_SIDE * BOARD_SIDE;
/// Piece planes: own men, own kings, opponent men, opponent kings.
pub const PIECE_PLANES: usize = 4;
/// Constant planes: no-progress, no-capture and endgame counters, repetitions.
pub const SCALAR_PLANES: usize = 4;
/// All input planes.
pub const PLANES: usize = PIECE_PLANES + SCALAR_PLANES;
/// Floats per encoded position.
pub const INPUT_SIZE: usize = PLANES * PLANE_SIZE;

/// Plane of the side to move's men.
pub const OWN_MEN: usize = 0;
/// Plane of the side to move's kings.
pub const OWN_KINGS: usize = 1;
/// Plane of the opponent's men.
pub const OPP_MEN: usize = 2;
/// Plane of the opponent's kings.
pub const OPP_KINGS: usize = 3;
/// Plane of the no-progress counter.
pub const NO_PROGRESS: usize = 4;
/// Plane of the no-capture counter.
pub const NO_CAPTURE: usize = 5;
/// Plane of the endgame (16-move / 5-move rule) counter.
pub const ENDGAME: usize = 6;
/// Plane of the repetition count.
pub const REPETITION: usize = 7;

/// Scale of the no-progress counter (FMJD: 25 moves each of king moves only).
pub const NO_PROGRESS_SCALE: f32 = 50.0;
/// Scale of the no-capture counter (25 moves each).
pub const NO_CAPTURE_SCALE: f32 = 50.0;
/// Scale of the endgame counter (FMJD 16-move rule: 32 plies).
pub const ENDGAME_SCALE: f32 = 32.0;

/// Everything the encoder reads: the position, its draw-rule counters and how often it has
/// occurred ([`draughts_core::Game::repetition_count`]: 1 the first time).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct EncodeInput<'a> {
    /// The position (either side to move).
    pub position: &'a Position,
    /// The game's draw-rule counters in this position.
    pub counters: Counters,
    /// Occurrences of this position with this side to move, this one included (1 = first time).
    pub repetitions: u32,
}

/// The grid cell `row * 10 + col` of each square index 0..50.
const SQUARE_CELL: [u8; 50] = {
    let mut cells = [0u8; 50];
    let mut i = 0;
    while i < 50 {
        let row = i / 5;
        let col = 2 * (i % 5) + if row % 2 == 0 { 1 } else { 0 };
        cells[i] = (row * BOARD_SIDE + col) as u8;
        i += 1;
    }
    cells
};

/// The grid cell (`row * 10 + col`, 0..100) of `sq`, as the board stands (no turning).
#[inline]
pub fn square_cell(sq: Square) -> usize {
    SQUARE_CELL[sq.index()] as usize
}

pub use draughts_nnue::features::relative_square;

/// The repetition plane's value for a repetition count (1 = first occurrence).
#[inline]
pub fn repetition_value(repetitions: u32) -> f32 {
    repetitions.saturating_sub(1).min(2) as f32 / 2.0
}

/// Writes the encoding of `input` into `out`, overwriting all of it. Allocates nothing.
pub fn encode(input: &EncodeInput<'_>, out: &mut [f32; INPUT_SIZE]) {
    out.fill(0.0);
    let pos = input.position;
    let us = pos.side_to_move();
    let planes = [
        (OWN_MEN, pos.men(us)),
        (OWN_KINGS, pos.kings(us)),
        (OPP_MEN, pos.men(!us)),
        (OPP_KINGS, pos.kings(!us)),
    ];
    for (plane, set) in planes {
        let base = plane * PLANE_SIZE;
        for sq in set.squares() {
            out[base + square_cell(relative_square(us, sq))] = 1.0;
        }
    }
    let c = input.counters;
    let scalars = [
        (NO_PROGRESS, scaled(c.no_progress, NO_PROGRESS_SCALE)),
        (NO_CAPTURE, scaled(c.no_capture, NO_CAPTURE_SCALE)),
        (ENDGAME, scaled(c.endgame, ENDGAME_SCALE)),
        (REPETITION, repetition_value(input.repetitions)),
    ];
    for (plane, value) in scalars {
        if value != 0.0 {
            out[plane * PLANE_SIZE..(plane + 1) * PLANE_SIZE].fill(value);
        }
    }
}

fn scaled(count: u16, scale: f32) -> f32 {
    (count as f32 / scale).min(1.0)
}

/// Encodes a batch into `out`, which is resized to `inputs.len() * INPUT_SIZE` floats (reuse the
/// same `Vec` across batches and it stops allocating once it has reached the largest batch).
pub fn encode_batch<'a>(inputs: impl IntoIterator<Item = EncodeInput<'a>>, out: &mut Vec<f32>) {
    out.clear();
    for input in inputs {
        let start = out.len();
        out.resize(start + INPUT_SIZE, 0.0);
        let slot: &mut [f32; INPUT_SIZE] = (&mut out[start..])
            .try_into()
            .expect("the slice was just resized to INPUT_SIZE"); // invariant: length is exact
        encode(&input, slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_match_square_geometry() {
        for s in Square::all() {
            let cell = square_cell(s);
            assert_eq!((cell / 10, cell % 10), (s.row() as usize, s.col() as usize));
            // Dark squares only: row + col odd.
            assert_eq!((cell / 10 + cell % 10) % 2, 1);
        }
    }

    #[test]
    fn repetition_scale() {
        assert_eq!(repetition_value(0), 0.0);
        assert_eq!(repetition_value(1), 0.0);
        assert_eq!(repetition_value(2), 0.5);
        assert_eq!(repetition_value(3), 1.0);
        assert_eq!(repetition_value(9), 1.0);
    }
}
