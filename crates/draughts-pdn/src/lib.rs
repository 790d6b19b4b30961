//! PDN (placeholder while the reader is written).
