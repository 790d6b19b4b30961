//! Material: how many men and kings each side has.

use std::fmt;
use std::str::FromStr;

use draughts_core::{Color, Position};

/// The pieces of a position by kind: White's men and kings, Black's men and kings.
///
/// A database file holds the positions of one material with White to move; a position with Black
/// to move is looked up as its colour-flipped twin ([`Position::flipped`]), which has White to move
/// and the material [`Material::swapped`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Material {
    /// White men.
    pub white_men: u8,
    /// White kings.
    pub white_kings: u8,
    /// Black men.
    pub black_men: u8,
    /// Black kings.
    pub black_kings: u8,
}

impl Material {
    /// The material of `pos` (whoever is to move).
    pub fn of(pos: &Position) -> Material {
        let n = |b: draughts_core::Bitboard| b.count() as u8;
        Material {
            white_men: n(pos.men(Color::White)),
            white_kings: n(pos.kings(Color::White)),
            black_men: n(pos.men(Color::Black)),
            black_kings: n(pos.kings(Color::Black)),
        }
    }

    /// Every piece on the board.
    pub const fn pieces(self) -> u32 {
        (self.white_men + self.white_kings + self.black_men + self.black_kings) as u32
    }

    /// Men of both sides.
    pub const fn men(self) -> u32 {
        (self.white_men + self.black_men) as u32
    }

    /// The same pieces with the colours exchanged.
    pub const fn swapped(self) -> Material {
        Material { white_men: self.black_men, white_kings: self.black_kings, black_men: self.white_men, black_kings: self.white_kings }
    }

    /// Whether both sides have at least one piece (a side without pieces has lost: nothing to store).
    pub const fn is_stored(self) -> bool {
        self.white_men + self.white_kings > 0 && self.black_men + self.black_kings > 0
    }

    /// Every stored material with 2 to `max_pieces` pieces, in the order a build solves them: by
    /// pieces, then by men (a capture leaves fewer pieces, a promotion fewer men, so every
    /// material a move can leave is solved before the material it leaves).
    pub fn all_up_to(max_pieces: u32) -> Vec<Material> {
        let mut out = Vec::new();
        for total in 2..=max_pieces {
            for wm in 0..=total {
                for wk in 0..=total - wm {
                    for bm in 0..=total - wm - wk {
                        let bk = total - wm - wk - bm;
                        let m = Material { white_men: wm as u8, white_kings: wk as u8, black_men: bm as u8, black_kings: bk as u8 };
                        if m.is_stored() {
                            out.push(m);
                        }
                    }
                }
            }
        }
        out.sort_by_key(|m| (m.pieces(), m.men(), *m));
        out
    }

    /// The file name of this material's table: the four counts and `.wdl`, `2101.wdl` for two
    /// white men and a white king against a black king.
    pub fn file_name(self) -> String {
        format!("{self}.wdl")
    }
}

impl fmt::Display for Material {
    /// The four counts as digits: white men, white kings, black men, black kings (`2101`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}{}{}", self.white_men, self.white_kings, self.black_men, self.black_kings)
    }
}

/// Text that is not a material (four digits).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a material: four digits, white men, white kings, black men, black kings (for example 2101)")]
pub struct BadMaterial(pub String);

impl FromStr for Material {
    type Err = BadMaterial;
    fn from_str(s: &str) -> Result<Material, BadMaterial> {
        let d: Vec<u8> = s.bytes().map(|b| b.wrapping_sub(b'0')).collect();
        if d.len() != 4 || d.iter().any(|&x| x > 9) {
            return Err(BadMaterial(s.to_owned()));
        }
        let m = Material { white_men: d[0], white_kings: d[1], black_men: d[2], black_kings: d[3] };
        if m.white_men > 20 || m.black_men > 20 {
            return Err(BadMaterial(s.to_owned()));
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_puts_every_successor_material_first() {
        let all = Material::all_up_to(5);
        assert_eq!(all.len(), 4 + 12 + 25 + 44);
        for (i, m) in all.iter().enumerate() {
            assert!(all.contains(&m.swapped()));
            // A promotion of a white man, then of a black man.
            if m.white_men > 0 {
                let p = Material { white_men: m.white_men - 1, white_kings: m.white_kings + 1, ..*m };
                assert!(all[..i].contains(&p), "{p} after {m}");
            }
            assert_eq!(m.to_string().parse::<Material>(), Ok(*m));
        }
        assert!("21x1".parse::<Material>().is_err());
        assert!("210".parse::<Material>().is_err());
    }
}
