//! Endgame databases for international draughts.
//!
//! - [`Material`]: the pieces by kind; one table per material, White to move (a position with
//!   Black to move is looked up as its colour-flipped twin).
//! - [`index`]: numbers the positions of a material densely (combination ranks).
//! - [`build`]: retrograde analysis of a material and its colour twin together, from the tables of
//!   the materials their captures and promotions lead to. Win/draw/loss under the move rules alone
//!   (FMJD captures, no draw-rule counters), as other engines' databases are.
//! - [`Table`]: 1.6 bits per position on disk and in memory, checksummed (format in [`table`]).
//! - [`Tablebase`]: a directory of tables, loaded on first use, and [`Tablebase::probe`].
//! - [`verify`]: checks every stored value against the values of its successors.

pub mod build;
pub mod index;
mod material;
pub mod table;
pub mod verify;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use draughts_core::{Color, Position};

pub use index::Indexer;
pub use material::{BadMaterial, Material};
pub use table::{Counts, Table, TableError};

/// The value of a position for the side to move, under best play and the move rules alone.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Wdl {
    /// The side to move loses.
    Loss,
    /// Neither side can force a win.
    Draw,
    /// The side to move wins.
    Win,
}

impl Wdl {
    /// The stored code: 0 draw, 1 win, 2 loss.
    #[inline]
    pub const fn code(self) -> u8 {
        match self {
            Wdl::Draw => 0,
            Wdl::Win => 1,
            Wdl::Loss => 2,
        }
    }

    /// The value of a stored code (codes above 2 read as draws; files are checked on load).
    #[inline]
    pub const fn from_code(code: u8) -> Wdl {
        match code {
            1 => Wdl::Win,
            2 => Wdl::Loss,
            _ => Wdl::Draw,
        }
    }

    /// The value for the other side.
    #[inline]
    pub const fn flip(self) -> Wdl {
        match self {
            Wdl::Win => Wdl::Loss,
            Wdl::Draw => Wdl::Draw,
            Wdl::Loss => Wdl::Win,
        }
    }

    /// `win`, `draw` or `loss`.
    pub const fn name(self) -> &'static str {
        match self {
            Wdl::Win => "win",
            Wdl::Draw => "draw",
            Wdl::Loss => "loss",
        }
    }
}

impl fmt::Display for Wdl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a position has no value in the databases.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// More pieces than the databases hold.
    #[error("{pieces} pieces on the board; the databases in {dir} hold at most {max}")]
    TooManyPieces {
        /// On the board.
        pieces: u32,
        /// The largest complete piece count.
        max: u32,
        /// The directory.
        dir: String,
    },
    /// The material's table is not in the directory.
    #[error("no table for material {material} (file {file} in {dir})")]
    Missing {
        /// The material (White to move after flipping).
        material: Material,
        /// The file it would be in.
        file: String,
        /// The directory.
        dir: String,
    },
    /// The side that is not to move has no pieces: the game is already over.
    #[error("{} has no pieces: the game is already over", .0.name())]
    GameOver(Color),
    /// The table could not be read.
    #[error("{0}")]
    Unreadable(String),
}

/// A loaded table, or why it could not be read (kept so that every probe says the same).
type Loaded = Result<Arc<Table>, String>;

#[derive(Debug)]
struct Slot {
    path: Option<PathBuf>,
    table: OnceLock<Loaded>,
}

/// The slot of a material: its four counts as decimal digits (`None` beyond 9 of a kind, which
/// no table holds).
#[inline]
fn slot_of(m: Material) -> Option<usize> {
    let c = [m.white_men, m.white_kings, m.black_men, m.black_kings];
    if c.iter().any(|&x| x > 9) {
        return None;
    }
    Some(c.iter().fold(0, |acc, &x| acc * 10 + x as usize))
}

fn empty_slots() -> Vec<Option<Box<Slot>>> {
    (0..10_000).map(|_| None).collect()
}

/// A directory of tables. Tables are read on first use and stay in memory.
#[derive(Debug)]
pub struct Tablebase {
    dir: Option<PathBuf>,
    /// By [`slot_of`] the material: a plain array, since a probe looks one up every time.
    slots: Vec<Option<Box<Slot>>>,
}

impl Tablebase {
    /// No tables (a build adds them as it solves them).
    pub fn empty() -> Tablebase {
        Tablebase { dir: None, slots: empty_slots() }
    }

    /// The tables in `dir` (every file named `{material}.wdl`). Each file's header is checked
    /// now, its contents and checksum when a probe first needs it.
    pub fn open(dir: &Path) -> Result<Tablebase, TableError> {
        let io = |source| TableError::Io { path: dir.to_owned(), source };
        let mut slots = empty_slots();
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let entry = entry.map_err(io)?;
            let name = entry.file_name();
            let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".wdl")) else { continue };
            let Ok(material) = stem.parse::<Material>() else { continue };
            let path = entry.path();
            Table::read_header(&path, material)?;
            slots[slot_of(material).expect("a file name holds digits")] = Some(Box::new(Slot { path: Some(path), table: OnceLock::new() }));
        }
        Ok(Tablebase { dir: Some(dir.to_owned()), slots })
    }

    /// The directory, if the tables come from one.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Adds a table held in memory (replacing one of the same material).
    pub fn insert(&mut self, table: Table) {
        let slot = Slot { path: None, table: OnceLock::new() };
        let material = table.material();
        slot.table.set(Ok(Arc::new(table))).expect("a new slot is empty");
        self.slots[slot_of(material).expect("at most 9 pieces of a kind in a table")] = Some(Box::new(slot));
    }

    /// Whether the table of `material` is here (read or not).
    pub fn has(&self, material: Material) -> bool {
        slot_of(material).is_some_and(|i| self.slots[i].is_some())
    }

    /// The materials present, in build order.
    pub fn materials(&self) -> Vec<Material> {
        let mut m: Vec<Material> = Material::all_up_to(9).into_iter().filter(|m| self.has(*m)).collect();
        m.sort_by_key(|m| (m.pieces(), m.men(), *m));
        m
    }

    /// The largest `n` such that every material of `n` pieces or fewer is present (0 if none).
    pub fn max_pieces(&self) -> u32 {
        let mut n = 1;
        while Material::all_up_to(n + 1).iter().all(|m| self.has(*m)) {
            n += 1;
        }
        if n == 1 {
            0
        } else {
            n
        }
    }

    /// The table of `material`, read now if it was not yet.
    pub fn table(&self, material: Material) -> Result<Arc<Table>, ProbeError> {
        self.loaded(material).cloned()
    }

    /// The table of `material` (read now if it was not yet), borrowed: no reference count.
    fn loaded(&self, material: Material) -> Result<&Arc<Table>, ProbeError> {
        let slot = slot_of(material).and_then(|i| self.slots[i].as_deref()).ok_or_else(|| ProbeError::Missing { material, file: material.file_name(), dir: self.dir_name() })?;
        slot.table
            .get_or_init(|| {
                let path = slot.path.as_deref().expect("tables held in memory are set when inserted");
                Table::read(path, material).map(Arc::new).map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(|e| ProbeError::Unreadable(e.clone()))
    }

    fn dir_name(&self) -> String {
        self.dir.as_ref().map_or_else(|| "memory".to_owned(), |d| d.display().to_string())
    }

    /// The value of `pos` for the side to move. A side to move without pieces has lost. Capture
    /// positions are stored like any other.
    pub fn probe(&self, pos: &Position) -> Result<Wdl, ProbeError> {
        let us = pos.side_to_move();
        if pos.pieces(us).is_empty() {
            return Ok(Wdl::Loss);
        }
        if pos.pieces(!us).is_empty() {
            return Err(ProbeError::GameOver(!us));
        }
        let white = if us == Color::White { *pos } else { pos.flipped() };
        let material = Material::of(&white);
        if !self.has(material) {
            let max = self.max_pieces();
            if material.pieces() > max {
                return Err(ProbeError::TooManyPieces { pieces: material.pieces(), max, dir: self.dir_name() });
            }
        }
        let table = self.loaded(material)?;
        Ok(table.get(table.indexer().index(&white)))
    }
}
