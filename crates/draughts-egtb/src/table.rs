//! One material's table in memory and on disk.
//!
//! # File format (`{material}.wdl`, little-endian)
//!
//! ```text
//! offset  size  field
//!      0     8  magic "DRWDL\0\0\x01" (the last byte is the format version)
//!      8     4  material: white men, white kings, black men, black kings (one byte each)
//!     12     4  move rules: 0 = FMJD (a man crowned during a capture stops there)
//!     16     8  indices (positions and holes, see `index`)
//!     24     8  positions won by the side to move (White)
//!     32     8  positions drawn
//!     40     8  positions lost
//!     48     4  CRC-32 of the payload
//!     52    12  zero
//!     64     -  payload: ceil(indices / 5) bytes
//! ```
//!
//! The payload packs five values to a byte in base 3 (`3^5 = 243 <= 256`): value `j` of a byte is
//! `byte / 3^j % 3`, with 0 = draw, 1 = win, 2 = loss for the side to move: **1.6 bits per
//! position**, read in place without decompression. Holes (indices that are not positions) are
//! stored as draws. Capture positions are stored too, so a probe never searches.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::index::Indexer;
use crate::{Material, Wdl};

const MAGIC: [u8; 8] = *b"DRWDL\0\0\x01";
const HEADER: usize = 64;

/// What is wrong with a database file.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The file is not a table this version can read, or it is damaged.
    #[error("{path}: {what}")]
    Bad {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
}

/// Counts of a table's positions by value (holes excluded), from White's side (White is to move).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Won by the side to move.
    pub wins: u64,
    /// Drawn.
    pub draws: u64,
    /// Lost by the side to move.
    pub losses: u64,
}

impl Counts {
    /// All positions.
    pub fn positions(&self) -> u64 {
        self.wins + self.draws + self.losses
    }
}

/// The values of every position of one material with White to move.
#[derive(Debug)]
pub struct Table {
    indexer: Indexer,
    counts: Counts,
    packed: Vec<u8>,
}

/// `DIGITS[b][j]`: value `j` of packed byte `b`.
static DIGITS: [[u8; 5]; 243] = {
    let mut t = [[0u8; 5]; 243];
    let mut b = 0;
    while b < 243 {
        let mut j = 0;
        let mut x = b;
        while j < 5 {
            t[b][j] = (x % 3) as u8;
            x /= 3;
            j += 1;
        }
        b += 1;
    }
    t
};

impl Table {
    /// Packs `values` (one [`Wdl`] code per index: 0 draw, 1 win, 2 loss) with their counts.
    pub(crate) fn pack(indexer: Indexer, values: impl Iterator<Item = u8>, counts: Counts) -> Table {
        let mut packed = Vec::with_capacity(indexer.size().div_ceil(5) as usize);
        let (mut byte, mut j, mut pow) = (0u32, 0, 1u32);
        for v in values {
            byte += v as u32 * pow;
            j += 1;
            pow *= 3;
            if j == 5 {
                packed.push(byte as u8);
                (byte, j, pow) = (0, 0, 1);
            }
        }
        if j > 0 {
            packed.push(byte as u8);
        }
        assert_eq!(packed.len() as u64, indexer.size().div_ceil(5), "one value per index");
        Table { indexer, counts, packed }
    }

    /// A table of `values`, one per index (holes should be draws); the counts are taken from them.
    pub fn from_values(indexer: Indexer, values: Vec<Wdl>) -> Table {
        assert_eq!(values.len() as u64, indexer.size(), "one value per index of {}", indexer.material());
        let mut counts = Counts::default();
        for (i, v) in values.iter().enumerate() {
            if indexer.position(i as u64).is_some() {
                match v {
                    Wdl::Win => counts.wins += 1,
                    Wdl::Draw => counts.draws += 1,
                    Wdl::Loss => counts.losses += 1,
                }
            }
        }
        Table::pack(indexer, values.into_iter().map(Wdl::code), counts)
    }

    /// The material.
    pub fn material(&self) -> Material {
        self.indexer.material()
    }

    /// The indexer.
    pub fn indexer(&self) -> &Indexer {
        &self.indexer
    }

    /// Positions by value.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Bytes of the payload.
    pub fn payload_bytes(&self) -> usize {
        self.packed.len()
    }

    /// The value at `index` for the side to move (White).
    #[inline]
    pub fn get(&self, index: u64) -> Wdl {
        let b = self.packed[(index / 5) as usize];
        Wdl::from_code(DIGITS[b as usize][(index % 5) as usize])
    }

    /// Writes the table to `dir/{material}.wdl` through a temporary name and a rename. Returns the
    /// path and the bytes written.
    pub fn write(&self, dir: &Path) -> Result<(PathBuf, u64), TableError> {
        let path = dir.join(self.material().file_name());
        let tmp = dir.join(format!(".{}.tmp", self.material().file_name()));
        let io = |source| TableError::Io { path: path.clone(), source };
        let m = self.material();
        let mut h = Vec::with_capacity(HEADER);
        h.extend_from_slice(&MAGIC);
        h.extend_from_slice(&[m.white_men, m.white_kings, m.black_men, m.black_kings]);
        h.extend_from_slice(&0u32.to_le_bytes());
        for x in [self.indexer.size(), self.counts.wins, self.counts.draws, self.counts.losses] {
            h.extend_from_slice(&x.to_le_bytes());
        }
        h.extend_from_slice(&crc32fast::hash(&self.packed).to_le_bytes());
        h.resize(HEADER, 0);
        let mut f = fs::File::create(&tmp).map_err(io)?;
        f.write_all(&h).map_err(io)?;
        f.write_all(&self.packed).map_err(io)?;
        f.sync_all().map_err(io)?;
        drop(f);
        fs::rename(&tmp, &path).map_err(io)?;
        Ok((path, (HEADER + self.packed.len()) as u64))
    }

    /// Reads and checks the header of `path`: the material it names must be `material`.
    pub(crate) fn read_header(path: &Path, material: Material) -> Result<(Counts, u32, u64), TableError> {
        let io = |source| TableError::Io { path: path.to_owned(), source };
        let bad = |what: String| TableError::Bad { path: path.to_owned(), what };
        let mut h = [0u8; HEADER];
        let mut f = fs::File::open(path).map_err(io)?;
        io::Read::read_exact(&mut f, &mut h).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                bad("shorter than the 64-byte header".into())
            } else {
                io(e)
            }
        })?;
        if h[..7] != MAGIC[..7] {
            return Err(bad("not an endgame table (bad magic)".into()));
        }
        if h[7] != MAGIC[7] {
            return Err(bad(format!("format version {} (this program reads version {})", h[7], MAGIC[7])));
        }
        let named = Material { white_men: h[8], white_kings: h[9], black_men: h[10], black_kings: h[11] };
        if named != material {
            return Err(bad(format!("holds material {named}, but its name says {material}")));
        }
        let u32_at = |o: usize| u32::from_le_bytes(h[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().expect("8 bytes"));
        if u32_at(12) != 0 {
            return Err(bad(format!("built for move rules {} (this program knows 0 = FMJD)", u32_at(12))));
        }
        let size = Indexer::new(material).size();
        if u64_at(16) != size {
            return Err(bad(format!("{} indices, {material} has {size}", u64_at(16))));
        }
        let counts = Counts { wins: u64_at(24), draws: u64_at(32), losses: u64_at(40) };
        let len = f.metadata().map_err(io)?.len();
        let want = HEADER as u64 + size.div_ceil(5);
        if len != want {
            return Err(bad(format!("{len} bytes, a complete table of {material} has {want}")));
        }
        Ok((counts, u32_at(48), size))
    }

    /// Reads `path`, which must hold `material`, and checks its checksum.
    pub fn read(path: &Path, material: Material) -> Result<Table, TableError> {
        let (counts, crc, _) = Table::read_header(path, material)?;
        let bytes = fs::read(path).map_err(|source| TableError::Io { path: path.to_owned(), source })?;
        let packed = bytes[HEADER..].to_vec();
        if crc32fast::hash(&packed) != crc {
            return Err(TableError::Bad { path: path.to_owned(), what: "checksum mismatch: the file is damaged".into() });
        }
        if packed.iter().any(|&b| b >= 243) {
            return Err(TableError::Bad { path: path.to_owned(), what: "a payload byte above 242".into() });
        }
        Ok(Table { indexer: Indexer::new(material), counts, packed })
    }
}
