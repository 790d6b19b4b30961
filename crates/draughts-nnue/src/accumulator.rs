//! The accumulator: the first layer's output for both points of view, in fixed point.

use draughts_core::Color;

use crate::kernels::Aligned;

/// The first layer's output for White's point of view, then Black's (`2 * width` values, each
/// the layer's output times [`crate::Q`]). Updated move by move with
/// [`crate::Network::update`]; equal, bit for bit, to [`crate::Network::refresh`] of the same
/// position whatever moves led there.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Accumulator {
    values: Aligned<i32>,
}

impl Accumulator {
    pub(crate) fn zeros(width: usize) -> Accumulator {
        Accumulator { values: Aligned::zeros(2 * width) }
    }

    pub(crate) fn resize(&mut self, width: usize) {
        self.values.resize(2 * width);
    }

    /// All values: White's point of view, then Black's.
    pub fn values(&self) -> &[i32] {
        &self.values
    }

    pub(crate) fn values_mut(&mut self) -> &mut [i32] {
        &mut self.values
    }

    /// The half of one point of view.
    pub fn perspective(&self, color: Color) -> &[i32] {
        let a = self.values.len() / 2;
        match color {
            Color::White => &self.values[..a],
            Color::Black => &self.values[a..],
        }
    }

    /// Copies `other` into `self` (same width), without allocating once sized.
    pub fn copy_from(&mut self, other: &Accumulator) {
        self.values.resize(other.values.len());
        self.values.copy_from_slice(&other.values);
    }
}
