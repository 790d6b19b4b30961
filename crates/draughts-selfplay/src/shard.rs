//! Shard files: immutable, versioned, checksummed batches of training records.
//!
//! # Format, version 2
//!
//! Version 2 is version 1 with one more record flag ([`crate::RecordFlags::QUIET`]); readers
//! accept both (a version-1 record never has the flag).
//!
//! All integers little-endian.
//!
//! ```text
//! offset  size  field
//!      0     8  magic "DRSHARD\0"
//!      8     4  format version (u32) = 2
//!     12     8  file length in bytes, checksum included (u64)
//!     20     8  creation time, Unix seconds (u64)
//!     28     8  master seed of the self-play run (u64)
//!     36     4  number of games (u32)
//!     40     4  number of records (u32)
//!     44  2+n   model id: u16 byte length, UTF-8
//!      .  2+n   rules preset name: u16 byte length, UTF-8
//!      .        games table: one entry per game (30 bytes each, below)
//!      .        records, game after game, in game order (variable size, below)
//!  len-4     4  CRC-32 (IEEE) of every byte before it
//! ```
//!
//! Game entry: index u64, seed u64, plies u16, opening plies u16, records u32, end code u8
//! (0 win by no pieces, 1 win by no moves, 2 draw by repetition, 3 no progress, 4 no capture,
//! 5 16-move rule, 6 5-move rule, 7 resigned, 8 adjudicated at the ply limit), colour u8 (the
//! winner for codes 0-1, the resigning side for 7; 0 White, 1 Black), flags u8 (bit 0
//! resignation playthrough, bit 1 resign point present), resign ply u16, resigning side u8.
//!
//! Record: white pieces u64, black pieces u64, kings u64 (bit `n - 1` is square `n`), side to
//! move u8 (0 White, 1 Black), repetitions u8, counters no-progress u16, no-capture u16,
//! endgame u16, ply u16, moves left u16, result for the side to move u8 (0 win, 1 draw, 2 loss),
//! flags u8 ([`crate::RecordFlags`]), root win/draw/loss 3 x f32, policy length u16, then per policy
//! entry: from u8 (square number; bit 7 set when a captured set follows), to u8, weight u16
//! (probability x 65535; the weights sum to 65535), and for captures the captured squares u64.
//!
//! A reader checks, in order: the magic, the version, the file length against the length field
//! (a short file is reported as truncated), the checksum, then every field. Writers write to
//! `NAME.tmp` in the same directory, fsync, and rename, so a reader never sees half a shard.

use std::collections::BTreeSet;
use std::fmt;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use draughts_core::Rules;

use crate::codec::{DecodeError, Put, Reader};
use crate::pool::FinishedGame;
use crate::record::{GameSummary, TrainingRecord};
use crate::SelfplayConfig;

/// The first eight bytes of every shard.
pub const MAGIC: [u8; 8] = *b"DRSHARD\0";
/// The format version this crate writes.
pub const VERSION: u32 = 2;
/// The oldest format version this crate reads.
pub const OLDEST_VERSION: u32 = 1;
/// The largest shard a reader accepts (a guard against reading a huge stray file).
pub const MAX_SHARD_BYTES: u64 = 1 << 30;
/// Size of magic, version and length: what a reader needs before it can tell truncation.
const PREFIX: usize = 20;
const CHECKSUM: usize = 4;

/// What a shard says about where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardHeader {
    /// The model that played the games.
    pub model_id: String,
    /// The rules preset the games were played under.
    pub rules: String,
    /// When the shard was written, Unix seconds.
    pub created_unix: u64,
    /// The master seed of the self-play run.
    pub seed: u64,
}

/// A shard: its header, its games and their records.
#[derive(Clone, Debug, PartialEq)]
pub struct Shard {
    /// Provenance.
    pub header: ShardHeader,
    /// One entry per game; `games[i].records` records of `records` belong to game `i`, in order.
    pub games: Vec<GameSummary>,
    /// Every record of every game.
    pub records: Vec<TrainingRecord>,
}

/// A shard that could not be read or written, with the file it concerns.
#[derive(Debug, thiserror::Error)]
#[error("shard {}: {kind}", path.display())]
pub struct ShardError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    #[source]
    pub kind: ShardErrorKind,
}

/// What is wrong with a shard.
#[derive(Debug, thiserror::Error)]
pub enum ShardErrorKind {
    /// The file system failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The file does not start with the shard magic.
    #[error("not a shard file (bad magic {found:02x?}, expected {:02x?})", MAGIC)]
    BadMagic {
        /// The first bytes of the file.
        found: Vec<u8>,
    },
    /// A format version this reader does not know.
    #[error("unsupported format version {found} (this reader knows version {supported})")]
    UnsupportedVersion {
        /// The version in the file.
        found: u32,
        /// The version this reader knows.
        supported: u32,
    },
    /// The file ends early.
    #[error("truncated at byte {at} (the file should be {expected} bytes long)")]
    Truncated {
        /// The file's actual length.
        at: u64,
        /// The length it should have, if known (otherwise the length needed to read on).
        expected: u64,
    },
    /// The file is longer than its length field says.
    #[error("{extra} unexpected bytes after the end of the shard at byte {expected}")]
    TrailingBytes {
        /// Where the shard should end.
        expected: u64,
        /// Bytes beyond that.
        extra: u64,
    },
    /// The checksum does not match the contents.
    #[error("checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): the file is damaged")]
    ChecksumMismatch {
        /// The checksum in the file.
        stored: u32,
        /// The checksum of the contents.
        computed: u32,
    },
    /// The checksum matches but a field is invalid (a writer bug or a crafted file).
    #[error("corrupt at byte {offset}: {what}")]
    Corrupt {
        /// The offset of the field.
        offset: u64,
        /// What is wrong with it.
        what: String,
    },
    /// The file is larger than [`MAX_SHARD_BYTES`].
    #[error("{len} bytes is larger than a shard can be ({MAX_SHARD_BYTES})")]
    TooLarge {
        /// The file's length.
        len: u64,
    },
    /// A header string too long for its u16 length field.
    #[error("{field} is {len} bytes long; at most 65535 fit")]
    StringTooLong {
        /// Which string.
        field: &'static str,
        /// Its length.
        len: usize,
    },
    /// The rules preset is unknown.
    #[error(transparent)]
    Rules(#[from] draughts_core::UnknownRules),
    /// A game could not be written as PDN.
    #[error("writing game {game} as PDN: {message}")]
    Pdn {
        /// The game's index.
        game: u64,
        /// The PDN writer's error.
        message: String,
    },
}

impl ShardErrorKind {
    fn at(self, path: &Path) -> ShardError {
        ShardError { path: path.to_owned(), kind: self }
    }
}

impl From<DecodeError> for ShardErrorKind {
    fn from(e: DecodeError) -> ShardErrorKind {
        match e {
            DecodeError::Truncated { offset, need } => ShardErrorKind::Corrupt {
                offset: offset as u64,
                what: format!("a field of {need} bytes runs past the end of the shard's contents"),
            },
            DecodeError::Invalid { offset, what } => ShardErrorKind::Corrupt { offset: offset as u64, what },
        }
    }
}

/// The bytes of `shard` in the format above.
pub fn encode_shard(shard: &Shard) -> Result<Vec<u8>, ShardErrorKind> {
    let h = &shard.header;
    for (field, s) in [("model id", &h.model_id), ("rules name", &h.rules)] {
        if s.len() > u16::MAX as usize {
            return Err(ShardErrorKind::StringTooLong { field, len: s.len() });
        }
    }
    let mut out = Vec::with_capacity(64 + shard.games.len() * 30 + shard.records.len() * 100);
    out.extend_from_slice(&MAGIC);
    out.put_u32(VERSION);
    out.put_u64(0); // the length, patched below
    out.put_u64(h.created_unix);
    out.put_u64(h.seed);
    out.put_u32(shard.games.len() as u32);
    out.put_u32(shard.records.len() as u32);
    out.put_str(&h.model_id);
    out.put_str(&h.rules);
    for g in &shard.games {
        g.encode(&mut out);
    }
    for r in &shard.records {
        r.encode(&mut out);
    }
    let len = (out.len() + CHECKSUM) as u64;
    out[12..20].copy_from_slice(&len.to_le_bytes());
    let crc = crc32fast::hash(&out);
    out.put_u32(crc);
    Ok(out)
}

/// Decodes the bytes of a shard; `path` only names the file in errors.
pub fn decode_shard(bytes: &[u8], path: &Path) -> Result<Shard, ShardError> {
    decode(bytes).map_err(|k| k.at(path))
}

fn decode(bytes: &[u8]) -> Result<Shard, ShardErrorKind> {
    let len = bytes.len() as u64;
    let magic_len = bytes.len().min(MAGIC.len());
    if bytes[..magic_len] != MAGIC[..magic_len] {
        return Err(ShardErrorKind::BadMagic { found: bytes[..magic_len].to_vec() });
    }
    if bytes.len() < 12 {
        return Err(ShardErrorKind::Truncated { at: len, expected: PREFIX as u64 });
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if !(OLDEST_VERSION..=VERSION).contains(&version) {
        return Err(ShardErrorKind::UnsupportedVersion { found: version, supported: VERSION });
    }
    if bytes.len() < PREFIX {
        return Err(ShardErrorKind::Truncated { at: len, expected: PREFIX as u64 });
    }
    let mut declared = [0u8; 8];
    declared.copy_from_slice(&bytes[12..20]);
    let declared = u64::from_le_bytes(declared);
    if len < declared {
        return Err(ShardErrorKind::Truncated { at: len, expected: declared });
    }
    if len > declared {
        return Err(ShardErrorKind::TrailingBytes { expected: declared, extra: len - declared });
    }
    let min = (PREFIX + CHECKSUM) as u64;
    if declared < min {
        return Err(ShardErrorKind::Corrupt { offset: 12, what: format!("length field {declared} is below {min}") });
    }
    let body = &bytes[..bytes.len() - CHECKSUM];
    let mut stored = [0u8; 4];
    stored.copy_from_slice(&bytes[bytes.len() - CHECKSUM..]);
    let stored = u32::from_le_bytes(stored);
    let computed = crc32fast::hash(body);
    if stored != computed {
        return Err(ShardErrorKind::ChecksumMismatch { stored, computed });
    }

    let mut r = Reader::new(&body[PREFIX..], PREFIX);
    let created_unix = r.u64()?;
    let seed = r.u64()?;
    let n_games = r.u32()? as usize;
    let n_records = r.u32()? as usize;
    let model_id = r.string()?;
    let rules = r.string()?;
    // Bound the allocations by what the bytes can hold (30 bytes a game, 46 a record at least).
    let mut games = Vec::with_capacity(n_games.min(r.remaining() / 30));
    for _ in 0..n_games {
        games.push(GameSummary::decode(&mut r)?);
    }
    let mut records = Vec::with_capacity(n_records.min(r.remaining() / 46));
    for _ in 0..n_records {
        records.push(TrainingRecord::decode(&mut r)?);
    }
    if r.remaining() != 0 {
        return Err(ShardErrorKind::Corrupt {
            offset: r.offset() as u64,
            what: format!("{} bytes left after the last record", r.remaining()),
        });
    }
    let claimed: u64 = games.iter().map(|g| g.records as u64).sum();
    if claimed != records.len() as u64 {
        return Err(ShardErrorKind::Corrupt {
            offset: 36,
            what: format!("the games claim {claimed} records but the shard holds {}", records.len()),
        });
    }
    Ok(Shard { header: ShardHeader { model_id, rules, created_unix, seed }, games, records })
}

/// Reads and checks one shard file.
pub fn read_shard(path: impl AsRef<Path>) -> Result<Shard, ShardError> {
    let path = path.as_ref();
    let io = |e: io::Error| ShardErrorKind::Io(e).at(path);
    let len = fs::metadata(path).map_err(io)?.len();
    if len > MAX_SHARD_BYTES {
        return Err(ShardErrorKind::TooLarge { len }.at(path));
    }
    let bytes = fs::read(path).map_err(io)?;
    decode_shard(&bytes, path)
}

/// Writes `shard` to `path` atomically (temporary file, fsync, rename).
pub fn write_shard(path: impl AsRef<Path>, shard: &Shard) -> Result<(), ShardError> {
    let path = path.as_ref();
    let bytes = encode_shard(shard).map_err(|k| k.at(path))?;
    write_atomically(path, &bytes).map_err(|e| ShardErrorKind::Io(e).at(path))
}

/// Writes `bytes` to `path.tmp` in the same directory, syncs it, and renames it to `path`, so a
/// reader sees either no file or the whole file. The directory is synced too (best effort) so
/// the rename survives a crash.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let result = (|| {
        let mut f = io::BufWriter::new(File::create(&tmp)?);
        f.write_all(bytes)?;
        f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // Not every platform or file system can open or sync a directory; the data is safe
        // either way.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// The shard files in `dir` (`*.bin`; unfinished `*.tmp` files are not listed), sorted by name
/// (for names from [`ShardWriter`], oldest first).
pub fn list_shards(dir: impl AsRef<Path>) -> Result<Vec<PathBuf>, ShardError> {
    let dir = dir.as_ref();
    let io = |e: io::Error| ShardErrorKind::Io(e).at(dir);
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.extension().is_some_and(|e| e == "bin") && path.is_file() {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// The readable shards of a directory, and an error for each one that was skipped.
#[derive(Debug, Default)]
pub struct ShardSet {
    /// Every shard that passed all checks, in [`list_shards`] order.
    pub shards: Vec<(PathBuf, Shard)>,
    /// One error per damaged or unreadable shard, naming it and what is wrong.
    pub skipped: Vec<ShardError>,
}

impl ShardSet {
    /// Records over all good shards.
    pub fn records(&self) -> impl Iterator<Item = &TrainingRecord> {
        self.shards.iter().flat_map(|(_, s)| &s.records)
    }

    /// Games over all good shards.
    pub fn games(&self) -> impl Iterator<Item = &GameSummary> {
        self.shards.iter().flat_map(|(_, s)| &s.games)
    }
}

/// Reads every shard of `dir`, skipping damaged ones (their errors come back in
/// [`ShardSet::skipped`]). Fails only if the directory itself cannot be listed.
pub fn read_all(dir: impl AsRef<Path>) -> Result<ShardSet, ShardError> {
    let mut set = ShardSet::default();
    for path in list_shards(dir)? {
        match read_shard(&path) {
            Ok(shard) => set.shards.push((path, shard)),
            Err(e) => set.skipped.push(e),
        }
    }
    Ok(set)
}

/// The indices of the games in `dir`'s shards that `model_id` played under the master seed
/// `seed`: what a stopped self-play stage had written, for its restart with the same seed to
/// skip (see [`crate::Games`]). Only shards whose header names `seed` are read in full; damaged
/// ones are left out (their games are played again). A missing directory has none.
pub fn played_indices(dir: impl AsRef<Path>, model_id: &str, seed: u64) -> Result<BTreeSet<u64>, ShardError> {
    let dir = dir.as_ref();
    let mut out = BTreeSet::new();
    if !dir.exists() {
        return Ok(out);
    }
    for path in list_shards(dir)? {
        // The seed sits at a fixed offset after the prefix and the creation time.
        let mut head = [0u8; PREFIX + 16];
        let read = File::open(&path).and_then(|mut f| io::Read::read_exact(&mut f, &mut head));
        if read.is_err() || head[..MAGIC.len()] != MAGIC || head[PREFIX + 8..] != seed.to_le_bytes() {
            continue;
        }
        if let Ok(shard) = read_shard(&path) {
            if shard.header.seed == seed && shard.header.model_id == model_id {
                out.extend(shard.games.iter().map(|g| g.index));
            }
        }
    }
    Ok(out)
}

/// Collects finished games into shards of about `records_per_shard` records (a game is never
/// split, so a shard may hold up to one game's records more) and writes each shard, and the PDN
/// of its games, atomically into one directory.
///
/// File names are `shard-<unix seconds>-<pid>-<random token>-<sequence>.bin` (and `.pdn`), so
/// processes on many machines writing into one shared directory never collide. Call
/// [`ShardWriter::flush`] at the end of a run: games not yet in a shard are not written on drop.
#[derive(Debug)]
pub struct ShardWriter {
    dir: PathBuf,
    header: ShardHeader,
    rules: Rules,
    records_per_shard: usize,
    write_pdn: bool,
    opponent: Option<String>,
    games: Vec<GameSummary>,
    records: Vec<TrainingRecord>,
    pdn: Vec<u8>,
    prefix: String,
    seq: u64,
    written: Vec<PathBuf>,
}

impl ShardWriter {
    /// A writer into `dir` (created if missing) for games of `model_id`, with the rules, seed,
    /// shard size and PDN switch of `config` (and its `alphabeta_opponent`, named in the PDN).
    pub fn new(dir: impl Into<PathBuf>, model_id: &str, config: &SelfplayConfig) -> Result<ShardWriter, ShardError> {
        let dir = dir.into();
        let rules = Rules::from_name(&config.rules).map_err(|e| ShardErrorKind::Rules(e).at(&dir))?;
        fs::create_dir_all(&dir).map_err(|e| ShardErrorKind::Io(e).at(&dir))?;
        // The token only makes names unique across processes and machines; it is not a game
        // choice, so it comes from the OS rather than the run's seed (which processes may share).
        let token: u32 = rand::random();
        let prefix = format!("shard-{:010}-{}-{token:08x}", unix_now(), std::process::id());
        Ok(ShardWriter {
            dir,
            header: ShardHeader { model_id: model_id.to_owned(), rules: config.rules.clone(), created_unix: 0, seed: config.seed },
            rules,
            records_per_shard: config.records_per_shard.max(1),
            write_pdn: config.write_pdn,
            opponent: (!config.alphabeta_opponent.is_empty()).then(|| config.alphabeta_opponent.clone()),
            games: Vec::new(),
            records: Vec::new(),
            pdn: Vec::new(),
            prefix,
            seq: 0,
            written: Vec::new(),
        })
    }

    /// Adds a game; writes a shard (returning its path) once enough records are collected.
    pub fn add(&mut self, game: &FinishedGame) -> Result<Option<PathBuf>, ShardError> {
        if self.write_pdn {
            let pdn = game.to_pdn(&self.header.model_id, self.opponent.as_deref());
            let mut w = draughts_pdn::Writer::new(&mut self.pdn).with_rules(self.rules);
            if let Err(e) = w.write_game(&pdn) {
                return Err(ShardErrorKind::Pdn { game: game.summary.index, message: e.to_string() }.at(&self.dir));
            }
        }
        self.games.push(game.summary);
        self.records.extend(game.records.iter().cloned());
        if self.records.len() >= self.records_per_shard {
            self.flush()
        } else {
            Ok(None)
        }
    }

    /// Writes the games collected so far as a shard (and PDN), if there are any.
    pub fn flush(&mut self) -> Result<Option<PathBuf>, ShardError> {
        if self.games.is_empty() {
            return Ok(None);
        }
        let stem = format!("{}-{:06}", self.prefix, self.seq);
        let path = self.dir.join(format!("{stem}.bin"));
        let shard = Shard {
            header: ShardHeader { created_unix: unix_now(), ..self.header.clone() },
            games: std::mem::take(&mut self.games),
            records: std::mem::take(&mut self.records),
        };
        // PDN first: a shard on disk then always has its PDN beside it. On failure the games stay
        // collected, so a later flush retries under the same names.
        let mut result = Ok(());
        if self.write_pdn {
            let pdn_path = self.dir.join(format!("{stem}.pdn"));
            result = write_atomically(&pdn_path, &self.pdn).map_err(|e| ShardErrorKind::Io(e).at(&pdn_path));
        }
        if let Err(e) = result.and_then(|()| write_shard(&path, &shard)) {
            self.games = shard.games;
            self.records = shard.records;
            return Err(e);
        }
        self.pdn.clear();
        self.seq += 1;
        self.written.push(path.clone());
        Ok(Some(path))
    }

    /// Flushes, then labels later games with `model_id` (after the pool switched models).
    pub fn set_model_id(&mut self, model_id: &str) -> Result<Option<PathBuf>, ShardError> {
        let written = self.flush()?;
        self.header.model_id = model_id.to_owned();
        Ok(written)
    }

    /// Records collected and not yet written.
    pub fn pending_records(&self) -> usize {
        self.records.len()
    }

    /// The shards written so far.
    pub fn written(&self) -> &[PathBuf] {
        &self.written
    }
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl fmt::Display for ShardHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "model {}, rules {}, seed {}, created {}", self.model_id, self.rules, self.seed, self.created_unix)
    }
}
