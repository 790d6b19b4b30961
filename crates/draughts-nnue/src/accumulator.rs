//! The accumulator: the first layer's output for both points of view, in fixed point.

use crate::features::BlockConfigs;
use crate::kernels::Aligned;

/// How a network evaluates: the reference (`Float`) or the quantised network (`Int8`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Precision {
    /// A 32-bit accumulator (first-layer weights times [`crate::Q`] = 2^16) and `f32` dense
    /// layers: within float rounding of the libtorch forward. MCTS and the tests against
    /// libtorch use it.
    #[default]
    Float,
    /// A 16-bit accumulator, activations in bytes (0..=127) and 8-bit dense weights with a
    /// scale per output (see `crate::network`, "Quantisation"): the alpha-beta engine's default.
    Int8,
}

impl Precision {
    /// `float` or `int8`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Float => "float",
            Precision::Int8 => "int8",
        }
    }
}

/// The first layer's output for White's point of view, then Black's (`2 * width` values; with
/// block patterns, without the blocks' rows, which an evaluation adds from `configs`). In
/// [`Precision::Float`] each value is the layer's output times [`crate::Q`] (`i32`); in
/// [`Precision::Int8`] times the network's 16-bit scale (`i16`). Updated move by move with
/// [`crate::Network::update`]; equal, bit for bit, to [`crate::Network::refresh`] of the same
/// position whatever moves led there.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Accumulator {
    values: Values,
    /// Pieces on the board of the position it is for (which phase bucket evaluates it).
    pieces: u8,
    /// Its blocks' configurations (White's point of view; zeros for a network without
    /// patterns), whose rows an evaluation adds to the first `pattern_width` values: `values`
    /// hold the piece squares' part only.
    configs: BlockConfigs,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Values {
    Wide(Aligned<i32>),
    Narrow(Aligned<i16>),
}

impl Default for Values {
    fn default() -> Values {
        Values::Wide(Aligned::default())
    }
}

impl Accumulator {
    pub(crate) fn zeros(width: usize, precision: Precision) -> Accumulator {
        let mut acc = Accumulator::default();
        acc.resize(width, precision);
        acc
    }

    /// Sizes the accumulator for `width` values per point of view in `precision` (values are
    /// kept when nothing changes).
    pub(crate) fn resize(&mut self, width: usize, precision: Precision) {
        match (&mut self.values, precision) {
            (Values::Wide(v), Precision::Float) => v.resize(2 * width),
            (Values::Narrow(v), Precision::Int8) => v.resize(2 * width),
            (_, Precision::Float) => self.values = Values::Wide(Aligned::zeros(2 * width)),
            (_, Precision::Int8) => self.values = Values::Narrow(Aligned::zeros(2 * width)),
        }
    }

    /// The number of pieces on the board of the position it is for.
    pub fn pieces(&self) -> usize {
        self.pieces as usize
    }

    pub(crate) fn set_pieces(&mut self, pieces: usize) {
        self.pieces = pieces.min(u8::MAX as usize) as u8;
    }

    pub(crate) fn configs(&self) -> &BlockConfigs {
        &self.configs
    }

    pub(crate) fn set_configs(&mut self, configs: BlockConfigs) {
        self.configs = configs;
    }

    /// The precision of its values.
    pub fn precision(&self) -> Precision {
        match self.values {
            Values::Wide(_) => Precision::Float,
            Values::Narrow(_) => Precision::Int8,
        }
    }

    /// All values of a [`Precision::Float`] accumulator (White's point of view, then Black's);
    /// empty in the other precision.
    pub fn values(&self) -> &[i32] {
        match &self.values {
            Values::Wide(v) => v,
            Values::Narrow(_) => &[],
        }
    }

    /// All values of a [`Precision::Int8`] accumulator; empty in the other precision.
    pub fn narrow_values(&self) -> &[i16] {
        match &self.values {
            Values::Narrow(v) => v,
            Values::Wide(_) => &[],
        }
    }

    pub(crate) fn values_mut(&mut self) -> &mut [i32] {
        match &mut self.values {
            Values::Wide(v) => v,
            Values::Narrow(_) => &mut [],
        }
    }

    pub(crate) fn narrow_values_mut(&mut self) -> &mut [i16] {
        match &mut self.values {
            Values::Narrow(v) => v,
            Values::Wide(_) => &mut [],
        }
    }

    /// Copies `other` into `self`, without allocating once sized.
    pub fn copy_from(&mut self, other: &Accumulator) {
        self.pieces = other.pieces;
        self.configs = other.configs;
        match (&mut self.values, &other.values) {
            (Values::Wide(a), Values::Wide(b)) => {
                a.resize(b.len());
                a.copy_from_slice(b);
            }
            (Values::Narrow(a), Values::Narrow(b)) => {
                a.resize(b.len());
                a.copy_from_slice(b);
            }
            _ => *self = other.clone(),
        }
    }
}
