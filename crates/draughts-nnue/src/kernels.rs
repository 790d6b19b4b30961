//! The hot loops, in a scalar version (the reference, and what runs on any x86-64-v2 or other
//! CPU) and an AVX2+FMA version chosen at run time.
//!
//! The AVX2 versions use the `std::arch` intrinsics inside functions compiled with
//! `#[target_feature(enable = "avx2,fma")]`, so the binary's baseline stays x86-64-v2. Such a
//! function may only be called where the feature is present: the `unsafe` of this module (the
//! only `unsafe` in the workspace) is those calls and the raw loads and stores inside them,
//! reached only from a [`Kernels`] value that [`Kernels::detect`] builds after
//! `is_x86_feature_detected!` said yes, on slices whose lengths are checked before.
//!
//! The integer kernels (accumulator updates) give identical results in both versions. The float
//! kernels differ in rounding only: a fused multiply-add rounds once where the scalar version
//! rounds twice (measured differences are around 1e-6 of an output; the tests bound them).
#![allow(unsafe_code)]

/// Fixed-point scale of the accumulator: a first-layer weight `w` is stored as `round(w * Q)`.
pub const Q: i32 = 1 << 16;
const INV_Q: f32 = 1.0 / Q as f32;

/// A buffer of 1-, 2- or 4-byte numbers whose start is aligned to 32 bytes, so that rows of 32
/// bytes can be read with aligned 256-bit loads. (With the x86-64-v2 baseline's tuning the
/// compiler splits every unaligned 256-bit load in two, which measured as the bottleneck of the
/// dense layers.)
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Aligned<T: Lane> {
    blocks: Vec<Block>,
    len: usize,
    lanes: std::marker::PhantomData<T>,
}

/// The element types an [`Aligned`] buffer holds: plain numbers for which every bit pattern is
/// a value.
pub trait Lane: Copy + Default + PartialEq + std::fmt::Debug + sealed::Sealed {}
impl Lane for f32 {}
impl Lane for i32 {}
impl Lane for i16 {}
impl Lane for i8 {}
impl Lane for u8 {}
mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for i32 {}
    impl Sealed for i16 {}
    impl Sealed for i8 {}
    impl Sealed for u8 {}
}

#[derive(Copy, Clone, Default, PartialEq, Eq)]
#[repr(C, align(32))]
struct Block([u8; 32]);

impl<T: Lane> Aligned<T> {
    /// `len` zeros.
    pub fn zeros(len: usize) -> Aligned<T> {
        let mut a = Aligned { blocks: Vec::new(), len: 0, lanes: std::marker::PhantomData };
        a.resize(len);
        a
    }

    /// A copy of `values`.
    pub fn from_slice(values: &[T]) -> Aligned<T> {
        let mut a = Aligned::zeros(values.len());
        a.copy_from_slice(values);
        a
    }

    /// Changes the length; new values are zeros.
    #[inline]
    pub fn resize(&mut self, len: usize) {
        if len == self.len {
            return;
        }
        let bytes = len * std::mem::size_of::<T>();
        // Values past the old length may hold old data: clear them before they become visible.
        let old = self.len * std::mem::size_of::<T>();
        self.blocks.resize(bytes.div_ceil(32), Block([0; 32]));
        if bytes > old {
            for (i, b) in self.blocks.iter_mut().enumerate().skip(old / 32) {
                for (j, byte) in b.0.iter_mut().enumerate() {
                    if i * 32 + j >= old {
                        *byte = 0;
                    }
                }
            }
        }
        self.len = len;
    }
}

impl<T: Lane> std::ops::Deref for Aligned<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: the blocks are `32 * blocks.len() >= len * size_of::<T>()` contiguous
        // initialised bytes, 32-byte aligned; `T` is a plain number of 1, 2 or 4 bytes (see
        // `Lane`), for which every bit pattern is a value and whose alignment divides 32.
        unsafe { std::slice::from_raw_parts(self.blocks.as_ptr() as *const T, self.len) }
    }
}

impl<T: Lane> std::ops::DerefMut for Aligned<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`; the borrow is unique.
        unsafe { std::slice::from_raw_parts_mut(self.blocks.as_mut_ptr() as *mut T, self.len) }
    }
}

impl<T: Lane> std::fmt::Debug for Aligned<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Which kernels to use.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Simd {
    /// The fastest the CPU supports: AVX2+FMA when present, with the VNNI byte dot product
    /// (AVX-VNNI, or AVX-512 VNNI on 256-bit registers) for the quantised dense layers when
    /// present too.
    #[default]
    Auto,
    /// AVX2+FMA without VNNI (where AVX2 is present; the scalar reference otherwise).
    Avx2,
    /// The scalar reference.
    Scalar,
}

/// `update(dst, src, table, adds, subs)`.
type UpdateFn = fn(&mut [i32], &[i32], &[i32], &[u32], &[u32]);
/// `affine(x, w, b, out, clip)`.
type AffineFn = fn(&[f32], &[f32], &[f32], &mut [f32], bool);
/// `update16(dst, src, table, adds, subs)`.
type Update16Fn = fn(&mut [i16], &[i16], &[i16], &[u32], &[u32]);
/// `dense8(x, w, b, scale, out)`.
type Dense8Fn = fn(&[u8], &[i8], &[i32], &[f32], &mut [u8]);

/// A set of kernels.
#[derive(Copy, Clone)]
pub(crate) struct Kernels {
    pub name: &'static str,
    /// `dst = src + sum of the rows `adds` - sum of the rows `subs`` of `table` (rows of
    /// `dst.len()` values, i32, wrapping).
    pub update: UpdateFn,
    /// `out = clamp(acc, 0, Q) / Q`.
    pub crelu: fn(&[i32], &mut [f32]),
    /// `out = b + x W` with `W` stored input-major (`w[j * out.len() + k]`), then clipped to
    /// [0, 1] when `clip`.
    pub affine: AffineFn,
    /// The dot product.
    pub dot: fn(&[f32], &[f32]) -> f32,
    /// The quantised network's accumulator update: `update` on `i16` (wrapping).
    pub update16: Update16Fn,
    /// `out = min(max(acc, 0), 127 << shift)` rounded to `shift` fewer bits (half up), as bytes
    /// in 0..=127.
    pub crelu8: fn(&[i16], &mut [u8], u32),
    /// `sum_j x[j] w[j]` in `i32` (the quantised heads; `x.len() == w.len()`).
    pub dot8: fn(&[u8], &[i16]) -> i32,
    /// `sum_j x[j] w[j]` in `i32` with 8-bit weights (the quantised policy's rows;
    /// `x.len() == w.len()`, `x <= 127` and `|w| <= 127`, so the AVX2 version's 16-bit pair sums
    /// cannot saturate).
    pub dot8i8: fn(&[u8], &[i8]) -> i32,
    /// A quantised dense layer with its clipped ReLU: `out[k] = clamp(round((b[k] + sum_j x[j]
    /// w(j, k)) * scale[k]), 0, 127)`, the sum in `i32`, the rounding half to even. `W` is stored
    /// in blocks of four inputs: `w(j, k) = w[((j / 4) * out.len() + k) * 4 + j % 4]`.
    /// `x.len()` is a multiple of 4 and `out.len()` of 8; `|w| <= 127` and `x <= 127`, so the
    /// AVX2 version's 16-bit pair sums cannot saturate and both versions give the same bytes.
    pub dense8: Dense8Fn,
}

impl std::fmt::Debug for Kernels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl Kernels {
    /// The kernels for `choice` on this CPU.
    pub fn detect(choice: Simd) -> Kernels {
        #[cfg(target_arch = "x86_64")]
        if choice != Simd::Scalar && std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            if choice == Simd::Auto && std::is_x86_feature_detected!("avxvnni") {
                return Kernels { name: "avx2+vnni", dense8: avx2::dense8_avxvnni, ..AVX2 };
            }
            if choice == Simd::Auto && std::is_x86_feature_detected!("avx512vnni") && std::is_x86_feature_detected!("avx512vl") {
                return Kernels { name: "avx2+vnni512", dense8: avx2::dense8_avx512vnni, ..AVX2 };
            }
            return AVX2;
        }
        let _ = choice;
        SCALAR
    }
}

const SCALAR: Kernels = Kernels {
    name: "scalar",
    update: update_scalar::<i32>,
    crelu: crelu_scalar,
    affine: affine_scalar,
    dot: dot_scalar,
    update16: update_scalar::<i16>,
    crelu8: crelu8_scalar,
    dense8: dense8_scalar,
    dot8: dot8_scalar,
    dot8i8: dot8i8_scalar,
};

fn dot8_scalar(x: &[u8], w: &[i16]) -> i32 {
    let mut lanes = [0i32; 16];
    let (cx, cw) = (x.chunks_exact(16), w.chunks_exact(16));
    let tail: i32 = cx.remainder().iter().zip(cw.remainder()).map(|(&x, &w)| x as i32 * w as i32).sum();
    for (xs, ws) in cx.zip(cw) {
        for t in 0..16 {
            lanes[t] += xs[t] as i32 * ws[t] as i32;
        }
    }
    lanes.iter().sum::<i32>() + tail
}

fn dot8i8_scalar(x: &[u8], w: &[i8]) -> i32 {
    x.iter().zip(w).map(|(&x, &w)| x as i32 * w as i32).sum()
}

fn crelu8_scalar(acc: &[i16], out: &mut [u8], shift: u32) {
    let (top, half) = (127i32 << shift, (1i32 << shift) >> 1);
    for (o, &a) in out.iter_mut().zip(acc) {
        *o = ((a as i32).clamp(0, top) + half).wrapping_shr(shift) as u8;
    }
}

/// The requantisation of one output of a quantised layer (shared by both versions' tails).
#[inline(always)]
fn requantise(sum: i32, scale: f32) -> u8 {
    ((sum as f32 * scale).round_ties_even() as i32).clamp(0, 127) as u8
}

fn dense8_scalar(x: &[u8], w: &[i8], b: &[i32], scale: &[f32], out: &mut [u8]) {
    let n = out.len();
    // Eight outputs at a time, their sums in a local array (registers).
    for k0 in (0..n).step_by(8) {
        let mut sums = [0i32; 8];
        sums.copy_from_slice(&b[k0..k0 + 8]);
        for (c, chunk) in x.chunks_exact(4).enumerate() {
            if chunk == [0; 4] {
                continue;
            }
            let rows = &w[(c * n + k0) * 4..(c * n + k0 + 8) * 4];
            for (s, wk) in sums.iter_mut().zip(rows.chunks_exact(4)) {
                *s += (0..4).map(|t| chunk[t] as i32 * wk[t] as i32).sum::<i32>();
            }
        }
        for (i, &s) in sums.iter().enumerate() {
            out[k0 + i] = requantise(s, scale[k0 + i]);
        }
    }
}

/// The accumulators' element types (`i32` for the float network, `i16` quantised): wrapping
/// addition and subtraction, and their AVX2 forms.
pub(crate) trait AccLane: Lane {
    /// Values in one 256-bit register.
    const PER_REGISTER: usize;
    fn wrapping_add(self, other: Self) -> Self;
    fn wrapping_sub(self, other: Self) -> Self;
    /// # Safety
    /// Only where AVX2 is present.
    #[cfg(target_arch = "x86_64")]
    unsafe fn add256(a: std::arch::x86_64::__m256i, b: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256i;
    /// # Safety
    /// Only where AVX2 is present.
    #[cfg(target_arch = "x86_64")]
    unsafe fn sub256(a: std::arch::x86_64::__m256i, b: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256i;
}

macro_rules! acc_lane {
    ($t:ty, $n:expr, $add:ident, $sub:ident) => {
        impl AccLane for $t {
            const PER_REGISTER: usize = $n;
            #[inline(always)]
            fn wrapping_add(self, other: $t) -> $t {
                <$t>::wrapping_add(self, other)
            }
            #[inline(always)]
            fn wrapping_sub(self, other: $t) -> $t {
                <$t>::wrapping_sub(self, other)
            }
            #[cfg(target_arch = "x86_64")]
            #[inline(always)]
            unsafe fn add256(a: std::arch::x86_64::__m256i, b: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256i {
                std::arch::x86_64::$add(a, b)
            }
            #[cfg(target_arch = "x86_64")]
            #[inline(always)]
            unsafe fn sub256(a: std::arch::x86_64::__m256i, b: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256i {
                std::arch::x86_64::$sub(a, b)
            }
        }
    };
}
acc_lane!(i32, 8, _mm256_add_epi32, _mm256_sub_epi32);
acc_lane!(i16, 16, _mm256_add_epi16, _mm256_sub_epi16);

fn update_scalar<T: AccLane>(dst: &mut [T], src: &[T], table: &[T], adds: &[u32], subs: &[u32]) {
    let w = dst.len();
    dst.copy_from_slice(&src[..w]);
    for &f in adds {
        let r = f as usize;
        for (d, s) in dst.iter_mut().zip(&table[r * w..(r + 1) * w]) {
            *d = d.wrapping_add(*s);
        }
    }
    for &f in subs {
        let r = f as usize;
        for (d, s) in dst.iter_mut().zip(&table[r * w..(r + 1) * w]) {
            *d = d.wrapping_sub(*s);
        }
    }
}

fn crelu_scalar(acc: &[i32], out: &mut [f32]) {
    for (o, &a) in out.iter_mut().zip(acc) {
        *o = a.clamp(0, Q) as f32 * INV_Q;
    }
}

/// Outputs in blocks of 8 kept in a local array (registers), inputs in order.
fn affine_scalar(x: &[f32], w: &[f32], b: &[f32], out: &mut [f32], clip: bool) {
    let n = out.len();
    let mut k0 = 0;
    while k0 < n {
        let width = (n - k0).min(8);
        let mut acc = [0.0f32; 8];
        acc[..width].copy_from_slice(&b[k0..k0 + width]);
        for (j, &xj) in x.iter().enumerate() {
            let row = &w[j * n + k0..j * n + k0 + width];
            for (a, &wk) in acc.iter_mut().zip(row) {
                *a += wk * xj;
            }
        }
        for (o, a) in out[k0..k0 + width].iter_mut().zip(acc) {
            *o = if clip { a.clamp(0.0, 1.0) } else { a };
        }
        k0 += width;
    }
}

fn dot_scalar(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            lanes[l] += x[l] * y[l];
        }
    }
    let mut tail = 0.0;
    for (x, y) in ra.iter().zip(rb) {
        tail += x * y;
    }
    ((lanes[0] + lanes[4]) + (lanes[1] + lanes[5])) + ((lanes[2] + lanes[6]) + (lanes[3] + lanes[7])) + tail
}

#[cfg(target_arch = "x86_64")]
const AVX2: Kernels = Kernels {
    name: "avx2+fma",
    update: avx2::update::<i32>,
    crelu: avx2::crelu,
    affine: avx2::affine,
    dot: avx2::dot,
    update16: avx2::update::<i16>,
    crelu8: avx2::crelu8,
    dense8: avx2::dense8,
    dot8: avx2::dot8,
    dot8i8: avx2::dot8i8,
};

#[cfg(target_arch = "x86_64")]
mod avx2 {
    //! AVX2 + FMA versions with intrinsics. The public entry points may only be reached through
    //! `super::AVX2`, which `Kernels::detect` returns only when the CPU has AVX2 and FMA; every
    //! pointer access stays inside slices whose lengths are checked first.

    use std::arch::x86_64::*;

    use super::{requantise, AccLane, INV_Q, Q};

    pub(super) fn update<T: AccLane>(dst: &mut [T], src: &[T], table: &[T], adds: &[u32], subs: &[u32]) {
        assert!(src.len() >= dst.len());
        update_checked(dst.as_mut_ptr(), src.as_ptr(), dst.len(), table, adds, subs);
    }

    /// `w` values at `d` = those at `s` (the same place, or `w` values that do not overlap
    /// them) plus and minus rows `f` of `table`.
    fn update_checked<T: AccLane>(d: *mut T, s: *const T, w: usize, table: &[T], adds: &[u32], subs: &[u32]) {
        for &f in adds.iter().chain(subs) {
            assert!((f as usize + 1) * w <= table.len());
        }
        let aligned = w % T::PER_REGISTER == 0 && [d as *const T, s, table.as_ptr()].iter().all(|p| *p as usize % 32 == 0);
        // SAFETY: AVX2 is present (see the module docs); the callers give `w` values at `d` and
        // `s`, rows checked above; the aligned version only with 32-byte aligned starts and rows
        // of a whole number of registers. Each block of values is read from `s` before it is
        // written to `d`, so `d == s` updates in place.
        unsafe {
            if aligned {
                update_impl::<T, true>(d, s, w, table, adds, subs)
            } else {
                update_impl::<T, false>(d, s, w, table, adds, subs)
            }
        }
    }

    /// A pointer to accumulator values as one to 32-bit lanes (the loads are bit copies).
    #[inline(always)]
    fn i32s<T>(p: *const T) -> *const i32 {
        p as *const i32
    }

    #[inline(always)]
    unsafe fn load_i<const A: bool>(p: *const i32) -> __m256i {
        if A {
            _mm256_load_si256(p as *const __m256i)
        } else {
            _mm256_loadu_si256(p as *const __m256i)
        }
    }

    #[inline(always)]
    unsafe fn store_i<const A: bool>(p: *mut i32, v: __m256i) {
        if A {
            _mm256_store_si256(p as *mut __m256i, v)
        } else {
            _mm256_storeu_si256(p as *mut __m256i, v)
        }
    }

    #[inline(always)]
    unsafe fn load_f<const A: bool>(p: *const f32) -> __m256 {
        if A {
            _mm256_load_ps(p)
        } else {
            _mm256_loadu_ps(p)
        }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn update_impl<T: AccLane, const A: bool>(
        d: *mut T,
        s: *const T,
        w: usize,
        table: &[T],
        adds: &[u32],
        subs: &[u32],
    ) {
        let n = T::PER_REGISTER;
        let t = table.as_ptr();
        let mut k = 0;
        // 8 registers at a time, every row added in registers.
        while k + 8 * n <= w {
            let mut r = [_mm256_setzero_si256(); 8];
            for (i, ri) in r.iter_mut().enumerate() {
                *ri = load_i::<A>(i32s(s.add(k + n * i)));
            }
            for &f in adds {
                let row = t.add(f as usize * w + k);
                for (i, ri) in r.iter_mut().enumerate() {
                    *ri = T::add256(*ri, load_i::<A>(i32s(row.add(n * i))));
                }
            }
            for &f in subs {
                let row = t.add(f as usize * w + k);
                for (i, ri) in r.iter_mut().enumerate() {
                    *ri = T::sub256(*ri, load_i::<A>(i32s(row.add(n * i))));
                }
            }
            for (i, ri) in r.iter().enumerate() {
                store_i::<A>(d.add(k + n * i) as *mut i32, *ri);
            }
            k += 8 * n;
        }
        while k + n <= w {
            let mut r = load_i::<A>(i32s(s.add(k)));
            for &f in adds {
                r = T::add256(r, load_i::<A>(i32s(t.add(f as usize * w + k))));
            }
            for &f in subs {
                r = T::sub256(r, load_i::<A>(i32s(t.add(f as usize * w + k))));
            }
            store_i::<A>(d.add(k) as *mut i32, r);
            k += n;
        }
        while k < w {
            let mut v = *s.add(k);
            for &f in adds {
                v = v.wrapping_add(*t.add(f as usize * w + k));
            }
            for &f in subs {
                v = v.wrapping_sub(*t.add(f as usize * w + k));
            }
            *d.add(k) = v;
            k += 1;
        }
    }

    pub(super) fn crelu(acc: &[i32], out: &mut [f32]) {
        assert!(acc.len() >= out.len());
        // SAFETY: AVX2 is present; lengths checked above.
        unsafe { crelu_impl(acc, out) }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn crelu_impl(acc: &[i32], out: &mut [f32]) {
        let n = out.len();
        let (a, o) = (acc.as_ptr(), out.as_mut_ptr());
        let (zero, q, scale) = (_mm256_setzero_si256(), _mm256_set1_epi32(Q), _mm256_set1_ps(INV_Q));
        let mut k = 0;
        while k + 8 <= n {
            let v = _mm256_min_epi32(_mm256_max_epi32(_mm256_loadu_si256(a.add(k) as *const __m256i), zero), q);
            _mm256_storeu_ps(o.add(k), _mm256_mul_ps(_mm256_cvtepi32_ps(v), scale));
            k += 8;
        }
        while k < n {
            *o.add(k) = (*a.add(k)).clamp(0, Q) as f32 * INV_Q;
            k += 1;
        }
    }

    pub(super) fn affine(x: &[f32], w: &[f32], b: &[f32], out: &mut [f32], clip: bool) {
        assert!(w.len() >= x.len() * out.len() && b.len() >= out.len());
        let aligned = out.len() % 8 == 0 && [w.as_ptr(), b.as_ptr()].iter().all(|p| *p as usize % 32 == 0);
        // SAFETY: AVX2 is present; lengths checked above; the aligned version only with 32-byte
        // aligned starts and rows of a multiple of 8 values.
        unsafe {
            if aligned {
                affine_impl::<true>(x, w, b, out, clip)
            } else {
                affine_impl::<false>(x, w, b, out, clip)
            }
        }
    }

    /// For each 8-bit mask, the positions of its set bits (then zeros), for compacting the
    /// indices of non-zero inputs eight at a time.
    static NONZERO: [[u16; 8]; 256] = {
        let mut t = [[0u16; 8]; 256];
        let mut m = 0;
        while m < 256 {
            let (mut bit, mut n) = (0, 0);
            while bit < 8 {
                if m & (1 << bit) != 0 {
                    t[m][n] = bit as u16;
                    n += 1;
                }
                bit += 1;
            }
            m += 1;
        }
        t
    };

    /// Most inputs the sparse path of `affine_impl` handles.
    const MAX_INPUTS: usize = 4096;

    /// Outputs in blocks of 32 (four registers) or 8, each block summed over the inputs in
    /// registers, with two sets of sums (alternate inputs) to keep both FMA units busy. Inputs
    /// that are exactly 0 (most of them after a clipped ReLU) are skipped: their indices are
    /// compacted first, eight at a time, without branches.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn affine_impl<const A: bool>(x: &[f32], w: &[f32], b: &[f32], out: &mut [f32], clip: bool) {
        let (n, m) = (out.len(), x.len());
        let (wp, xp, bp, op) = (w.as_ptr(), x.as_ptr(), b.as_ptr(), out.as_mut_ptr());
        let (lo, hi) = (_mm256_setzero_ps(), _mm256_set1_ps(1.0));
        let finish = |v: __m256| {
            if clip {
                _mm256_min_ps(_mm256_max_ps(v, lo), hi)
            } else {
                v
            }
        };
        let mut k0 = 0;
        if n % 32 == 0 && m % 8 == 0 && m <= MAX_INPUTS {
            // The indices of the non-zero inputs; 8 spare slots for the last chunk's store.
            let mut idx = std::mem::MaybeUninit::<[u16; MAX_INPUTS + 8]>::uninit();
            let ip = idx.as_mut_ptr() as *mut u16;
            let mut count = 0usize;
            let zero = _mm256_setzero_ps();
            let mut j = 0;
            while j < m {
                let xs = if xp as usize % 32 == 0 { _mm256_load_ps(xp.add(j)) } else { _mm256_loadu_ps(xp.add(j)) };
                let mask = _mm256_movemask_ps(_mm256_cmp_ps(xs, zero, _CMP_NEQ_OQ)) as usize;
                let offsets = _mm_loadu_si128(NONZERO[mask].as_ptr() as *const __m128i);
                let shifted = _mm_add_epi16(offsets, _mm_set1_epi16(j as i16));
                _mm_storeu_si128(ip.add(count) as *mut __m128i, shifted);
                count += mask.count_ones() as usize;
                j += 8;
            }
            while k0 + 32 <= n {
                let mut a = [_mm256_setzero_ps(); 4];
                let mut c = [_mm256_setzero_ps(); 4];
                for (i, ai) in a.iter_mut().enumerate() {
                    *ai = load_f::<A>(bp.add(k0 + 8 * i));
                }
                let mut p = 0;
                while p + 4 <= count {
                    let (j0, j1) = (*ip.add(p) as usize, *ip.add(p + 1) as usize);
                    let (j2, j3) = (*ip.add(p + 2) as usize, *ip.add(p + 3) as usize);
                    let (x0, x1) = (_mm256_set1_ps(*xp.add(j0)), _mm256_set1_ps(*xp.add(j1)));
                    let (x2, x3) = (_mm256_set1_ps(*xp.add(j2)), _mm256_set1_ps(*xp.add(j3)));
                    let (r0, r1) = (wp.add(j0 * n + k0), wp.add(j1 * n + k0));
                    let (r2, r3) = (wp.add(j2 * n + k0), wp.add(j3 * n + k0));
                    for i in 0..4 {
                        a[i] = _mm256_fmadd_ps(x0, load_f::<A>(r0.add(8 * i)), a[i]);
                        c[i] = _mm256_fmadd_ps(x1, load_f::<A>(r1.add(8 * i)), c[i]);
                    }
                    for i in 0..4 {
                        a[i] = _mm256_fmadd_ps(x2, load_f::<A>(r2.add(8 * i)), a[i]);
                        c[i] = _mm256_fmadd_ps(x3, load_f::<A>(r3.add(8 * i)), c[i]);
                    }
                    p += 4;
                }
                while p + 2 <= count {
                    let (j0, j1) = (*ip.add(p) as usize, *ip.add(p + 1) as usize);
                    let (x0, x1) = (_mm256_set1_ps(*xp.add(j0)), _mm256_set1_ps(*xp.add(j1)));
                    let (r0, r1) = (wp.add(j0 * n + k0), wp.add(j1 * n + k0));
                    for i in 0..4 {
                        a[i] = _mm256_fmadd_ps(x0, load_f::<A>(r0.add(8 * i)), a[i]);
                        c[i] = _mm256_fmadd_ps(x1, load_f::<A>(r1.add(8 * i)), c[i]);
                    }
                    p += 2;
                }
                if p < count {
                    let j0 = *ip.add(p) as usize;
                    let x0 = _mm256_set1_ps(*xp.add(j0));
                    let r0 = wp.add(j0 * n + k0);
                    for (i, ai) in a.iter_mut().enumerate() {
                        *ai = _mm256_fmadd_ps(x0, load_f::<A>(r0.add(8 * i)), *ai);
                    }
                }
                for i in 0..4 {
                    _mm256_storeu_ps(op.add(k0 + 8 * i), finish(_mm256_add_ps(a[i], c[i])));
                }
                k0 += 32;
            }
            return;
        }
        while k0 + 8 <= n {
            let (mut a, mut c) = (load_f::<A>(bp.add(k0)), _mm256_setzero_ps());
            let mut j = 0;
            while j + 2 <= m {
                a = _mm256_fmadd_ps(_mm256_set1_ps(*xp.add(j)), load_f::<A>(wp.add(j * n + k0)), a);
                c = _mm256_fmadd_ps(_mm256_set1_ps(*xp.add(j + 1)), load_f::<A>(wp.add((j + 1) * n + k0)), c);
                j += 2;
            }
            if j < m {
                a = _mm256_fmadd_ps(_mm256_set1_ps(*xp.add(j)), load_f::<A>(wp.add(j * n + k0)), a);
            }
            _mm256_storeu_ps(op.add(k0), finish(_mm256_add_ps(a, c)));
            k0 += 8;
        }
        while k0 < n {
            let mut v = *bp.add(k0);
            for j in 0..m {
                v = (*wp.add(j * n + k0)).mul_add(*xp.add(j), v);
            }
            *op.add(k0) = if clip { v.clamp(0.0, 1.0) } else { v };
            k0 += 1;
        }
    }

    #[inline(always)]
    unsafe fn ld16a<const A: bool>(p: *const i16) -> __m256i {
        load_i::<A>(p as *const i32)
    }

    /// (Helpers are `inline(always)` functions, not closures: a closure does not take its
    /// enclosing function's target features, and its intrinsics would become calls.)
    #[inline(always)]
    unsafe fn ld16(p: *const i16) -> __m256i {
        _mm256_loadu_si256(p as *const __m256i)
    }

    /// Clamps 16 accumulator values to `[0, top]`, adds `half` and shifts right by `count`.
    #[inline(always)]
    unsafe fn narrow<const A: bool>(p: *const i16, top: __m256i, half: __m256i, count: __m128i) -> __m256i {
        let v = _mm256_min_epi16(_mm256_max_epi16(ld16a::<A>(p), _mm256_setzero_si256()), top);
        _mm256_sra_epi16(_mm256_add_epi16(v, half), count)
    }

    /// `acc` plus eight sums of four byte products (`p` 32-byte aligned): `maddubs` then
    /// `madd` (`D` = 0), or VNNI's `dpbusd` (1: AVX-VNNI, 2: AVX-512 VNNI).
    #[inline(always)]
    unsafe fn term<const D: u8>(acc: __m256i, xv: __m256i, p: *const i8, ones: __m256i) -> __m256i {
        let w = _mm256_load_si256(p as *const __m256i);
        match D {
            0 => _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(xv, w), ones)),
            1 => _mm256_dpbusd_avx_epi32(acc, xv, w),
            _ => _mm256_dpbusd_epi32(acc, xv, w),
        }
    }

    /// Eight sums times their scales, rounded to even, clamped to 0..=127.
    #[inline(always)]
    unsafe fn finish8(sum: __m256i, scale: *const f32) -> __m256i {
        let y = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(sum), _mm256_loadu_ps(scale)));
        _mm256_min_epi32(_mm256_max_epi32(y, _mm256_setzero_si256()), _mm256_set1_epi32(127))
    }

    /// The sum of eight 32-bit lanes.
    #[inline(always)]
    unsafe fn hsum_epi32(s: __m256i) -> i32 {
        let quad = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        let pair = _mm_add_epi32(quad, _mm_shuffle_epi32(quad, 0b01_00_11_10));
        _mm_cvtsi128_si32(_mm_add_epi32(pair, _mm_shuffle_epi32(pair, 0b10_11_00_01)))
    }

    pub(super) fn dot8(x: &[u8], w: &[i16]) -> i32 {
        assert_eq!(x.len(), w.len());
        // SAFETY: AVX2 is present; equal lengths checked above.
        unsafe { dot8_impl(x, w) }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn dot8_impl(x: &[u8], w: &[i16]) -> i32 {
        let n = x.len();
        let (xp, wp) = (x.as_ptr(), w.as_ptr());
        let mut s = _mm256_setzero_si256();
        let mut k = 0;
        while k + 16 <= n {
            let xs = _mm256_cvtepu8_epi16(_mm_loadu_si128(xp.add(k) as *const __m128i));
            s = _mm256_add_epi32(s, _mm256_madd_epi16(xs, ld16(wp.add(k))));
            k += 16;
        }
        let mut total = hsum_epi32(s);
        while k < n {
            total += *xp.add(k) as i32 * *wp.add(k) as i32;
            k += 1;
        }
        total
    }

    pub(super) fn dot8i8(x: &[u8], w: &[i8]) -> i32 {
        assert_eq!(x.len(), w.len());
        // SAFETY: AVX2 is present; equal lengths checked above.
        unsafe { dot8i8_impl(x, w) }
    }

    /// 32 bytes at a time: `maddubs` (byte products summed in pairs, exact for `x <= 127` and
    /// `|w| <= 127`) then `madd` (pairs summed into 32 bits).
    #[target_feature(enable = "avx2,fma")]
    unsafe fn dot8i8_impl(x: &[u8], w: &[i8]) -> i32 {
        let n = x.len();
        let (xp, wp) = (x.as_ptr(), w.as_ptr());
        let ones = _mm256_set1_epi16(1);
        let mut s = _mm256_setzero_si256();
        let mut k = 0;
        while k + 32 <= n {
            let (xv, wv) = (_mm256_loadu_si256(xp.add(k) as *const __m256i), _mm256_loadu_si256(wp.add(k) as *const __m256i));
            s = _mm256_add_epi32(s, _mm256_madd_epi16(_mm256_maddubs_epi16(xv, wv), ones));
            k += 32;
        }
        let mut total = hsum_epi32(s);
        while k < n {
            total += *xp.add(k) as i32 * *wp.add(k) as i32;
            k += 1;
        }
        total
    }

    pub(super) fn crelu8(acc: &[i16], out: &mut [u8], shift: u32) {
        assert!(acc.len() >= out.len() && shift <= 7);
        // SAFETY: AVX2 is present; lengths checked above; the aligned version only with a
        // 32-byte aligned start (it reads 16 values at a time).
        unsafe {
            if acc.as_ptr() as usize % 32 == 0 {
                crelu8_impl::<true>(acc, out, shift)
            } else {
                crelu8_impl::<false>(acc, out, shift)
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn crelu8_impl<const A: bool>(acc: &[i16], out: &mut [u8], shift: u32) {
        let n = out.len();
        let (a, o) = (acc.as_ptr(), out.as_mut_ptr());
        let top = _mm256_set1_epi16((127i32 << shift) as i16);
        let half = _mm256_set1_epi16(((1i32 << shift) >> 1) as i16);
        let count = _mm_cvtsi32_si128(shift as i32);
        let mut k = 0;
        while k + 32 <= n {
            // packus interleaves the 128-bit halves; the permute puts the bytes back in order.
            let packed = _mm256_packus_epi16(narrow::<A>(a.add(k), top, half, count), narrow::<A>(a.add(k + 16), top, half, count));
            _mm256_storeu_si256(o.add(k) as *mut __m256i, _mm256_permute4x64_epi64(packed, 0b11_01_10_00));
            k += 32;
        }
        let (t, h) = (127i32 << shift, (1i32 << shift) >> 1);
        while k < n {
            *o.add(k) = (((*a.add(k)) as i32).clamp(0, t) + h).wrapping_shr(shift) as u8;
            k += 1;
        }
    }

    /// How a block of four bytes meets 8 rows of weights: `maddubs` then `madd` (AVX2), or one
    /// VNNI `dpbusd` (the same sums: neither saturates with bytes <= 127 and weights >= -127).
    #[derive(Copy, Clone, PartialEq, Eq)]
    enum Dot {
        Avx2,
        AvxVnni,
        Avx512Vnni,
    }

    pub(super) fn dense8(x: &[u8], w: &[i8], b: &[i32], scale: &[f32], out: &mut [u8]) {
        dense8_with(Dot::Avx2, x, w, b, scale, out)
    }

    pub(super) fn dense8_avxvnni(x: &[u8], w: &[i8], b: &[i32], scale: &[f32], out: &mut [u8]) {
        dense8_with(Dot::AvxVnni, x, w, b, scale, out)
    }

    pub(super) fn dense8_avx512vnni(x: &[u8], w: &[i8], b: &[i32], scale: &[f32], out: &mut [u8]) {
        dense8_with(Dot::Avx512Vnni, x, w, b, scale, out)
    }

    /// `dense8` with `dot`, which `Kernels::detect` chose only when the CPU has its features.
    fn dense8_with(dot: Dot, x: &[u8], w: &[i8], b: &[i32], scale: &[f32], out: &mut [u8]) {
        let (n, m) = (out.len(), x.len());
        assert!(n % 8 == 0 && m % 4 == 0 && m <= 4 * MAX_INPUTS && w.len() >= m * n && b.len() >= n && scale.len() >= n);
        if w.as_ptr() as usize % 32 != 0 {
            // Every row of 8 outputs is 32 bytes: aligned when the start is (as the network
            // stores them). Others take the scalar version, which gives the same bytes.
            return super::dense8_scalar(x, w, b, scale, out);
        }
        // SAFETY: AVX2 is present, and the VNNI extension `dot` names (see `Kernels::detect`);
        // lengths checked above; the weights' rows are 32-byte aligned.
        unsafe {
            match dot {
                Dot::Avx2 => dense8_avx2(x, w, b, scale, out),
                Dot::AvxVnni => dense8_vnni(x, w, b, scale, out),
                Dot::Avx512Vnni => dense8_vnni512(x, w, b, scale, out),
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn dense8_avx2(x: &[u8], w: &[i8], b: &[i32], scale: &[f32], out: &mut [u8]) {
        dense8_impl::<0>(x, w, b, scale, out)
    }

    #[target_feature(enable = "avx2,fma,avxvnni")]
    unsafe fn dense8_vnni(x: &[u8], w: &[i8], b: &[i32], scale: &[f32], out: &mut [u8]) {
        dense8_impl::<1>(x, w, b, scale, out)
    }

    #[target_feature(enable = "avx2,fma,avx512vnni,avx512vl")]
    unsafe fn dense8_vnni512(x: &[u8], w: &[i8], b: &[i32], scale: &[f32], out: &mut [u8]) {
        dense8_impl::<2>(x, w, b, scale, out)
    }

    /// The non-zero blocks of four inputs are listed first (eight blocks at a time, without
    /// branches); each adds `maddubs` (byte products summed in pairs) then `madd` (pairs summed)
    /// into 8 outputs per register, 32 outputs at a time.
    #[inline(always)]
    unsafe fn dense8_impl<const D: u8>(x: &[u8], w: &[i8], b: &[i32], scale: &[f32], out: &mut [u8]) {
        let (n, m) = (out.len(), x.len());
        let chunks = m / 4;
        let xp = x.as_ptr() as *const i32;
        let mut idx = std::mem::MaybeUninit::<[u16; MAX_INPUTS + 8]>::uninit();
        let ip = idx.as_mut_ptr() as *mut u16;
        let mut count = 0usize;
        let mut c = 0;
        while c + 8 <= chunks {
            let v = _mm256_loadu_si256(xp.add(c) as *const __m256i);
            let zero = _mm256_cmpeq_epi32(v, _mm256_setzero_si256());
            let mask = (!_mm256_movemask_ps(_mm256_castsi256_ps(zero)) & 0xff) as usize;
            let offsets = _mm_loadu_si128(NONZERO[mask].as_ptr() as *const __m128i);
            _mm_storeu_si128(ip.add(count) as *mut __m128i, _mm_add_epi16(offsets, _mm_set1_epi16(c as i16)));
            count += mask.count_ones() as usize;
            c += 8;
        }
        while c < chunks {
            if std::ptr::read_unaligned(xp.add(c)) != 0 {
                *ip.add(count) = c as u16;
                count += 1;
            }
            c += 1;
        }
        let ones = _mm256_set1_epi16(1);
        let wp = w.as_ptr();
        let (bp, sp, op) = (b.as_ptr(), scale.as_ptr(), out.as_mut_ptr());
        let mut k0 = 0;
        while k0 + 32 <= n {
            let mut s = [_mm256_setzero_si256(); 4];
            for (i, si) in s.iter_mut().enumerate() {
                *si = _mm256_loadu_si256(bp.add(k0 + 8 * i) as *const __m256i);
            }
            // Two blocks at a time into two sets of sums: `dpbusd` has a latency of several
            // cycles, and one chain per register would wait on it.
            let mut t = [_mm256_setzero_si256(); 4];
            let mut p = 0;
            while p + 2 <= count {
                let (c0, c1) = (*ip.add(p) as usize, *ip.add(p + 1) as usize);
                let x0 = _mm256_set1_epi32(std::ptr::read_unaligned(xp.add(c0)));
                let x1 = _mm256_set1_epi32(std::ptr::read_unaligned(xp.add(c1)));
                let (r0, r1) = (wp.add((c0 * n + k0) * 4), wp.add((c1 * n + k0) * 4));
                for i in 0..4 {
                    s[i] = term::<D>(s[i], x0, r0.add(32 * i), ones);
                    t[i] = term::<D>(t[i], x1, r1.add(32 * i), ones);
                }
                p += 2;
            }
            if p < count {
                let c = *ip.add(p) as usize;
                let xv = _mm256_set1_epi32(std::ptr::read_unaligned(xp.add(c)));
                let row = wp.add((c * n + k0) * 4);
                for (i, si) in s.iter_mut().enumerate() {
                    *si = term::<D>(*si, xv, row.add(32 * i), ones);
                }
            }
            for i in 0..4 {
                s[i] = _mm256_add_epi32(s[i], t[i]);
            }
            let y = [finish8(s[0], sp.add(k0)), finish8(s[1], sp.add(k0 + 8)), finish8(s[2], sp.add(k0 + 16)), finish8(s[3], sp.add(k0 + 24))];
            // packs/packus interleave 128-bit halves: bytes come out as y0[0..4] y1[0..4] y2[0..4]
            // y3[0..4] y0[4..8] y1[4..8] y2[4..8] y3[4..8]; the permute restores the order.
            let bytes = _mm256_packus_epi16(_mm256_packs_epi32(y[0], y[1]), _mm256_packs_epi32(y[2], y[3]));
            let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
            _mm256_storeu_si256(op.add(k0) as *mut __m256i, _mm256_permutevar8x32_epi32(bytes, order));
            k0 += 32;
        }
        while k0 + 8 <= n {
            let mut s = _mm256_loadu_si256(bp.add(k0) as *const __m256i);
            for p in 0..count {
                let c = *ip.add(p) as usize;
                let xv = _mm256_set1_epi32(std::ptr::read_unaligned(xp.add(c)));
                s = term::<D>(s, xv, wp.add((c * n + k0) * 4), ones);
            }
            let mut sums = [0i32; 8];
            _mm256_storeu_si256(sums.as_mut_ptr() as *mut __m256i, s);
            for (i, &v) in sums.iter().enumerate() {
                *op.add(k0 + i) = requantise(v, *sp.add(k0 + i));
            }
            k0 += 8;
        }
    }

    pub(super) fn dot(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let aligned = [a.as_ptr(), b.as_ptr()].iter().all(|p| *p as usize % 32 == 0);
        // SAFETY: AVX2 is present; both slices hold `n` values; the aligned version only with
        // 32-byte aligned starts.
        unsafe {
            if aligned {
                dot_impl::<true>(&a[..n], &b[..n])
            } else {
                dot_impl::<false>(&a[..n], &b[..n])
            }
        }
    }

    #[target_feature(enable = "avx2,fma")]
    unsafe fn dot_impl<const A: bool>(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len();
        let (ap, bp) = (a.as_ptr(), b.as_ptr());
        let (mut s0, mut s1) = (_mm256_setzero_ps(), _mm256_setzero_ps());
        let mut k = 0;
        while k + 16 <= n {
            s0 = _mm256_fmadd_ps(load_f::<A>(ap.add(k)), load_f::<A>(bp.add(k)), s0);
            s1 = _mm256_fmadd_ps(load_f::<A>(ap.add(k + 8)), load_f::<A>(bp.add(k + 8)), s1);
            k += 16;
        }
        while k + 8 <= n {
            s0 = _mm256_fmadd_ps(load_f::<A>(ap.add(k)), load_f::<A>(bp.add(k)), s0);
            k += 8;
        }
        let s = _mm256_add_ps(s0, s1);
        let quad = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
        let pair = _mm_add_ps(quad, _mm_movehl_ps(quad, quad));
        let mut total = _mm_cvtss_f32(_mm_add_ss(pair, _mm_shuffle_ps(pair, pair, 1)));
        while k < n {
            total += *ap.add(k) * *bp.add(k);
            k += 1;
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize, seed: u32) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(1664525).wrapping_add(1013904223);
                let v = (s >> 8) as f32 / (1 << 24) as f32 - 0.5;
                // Every fourth value is exactly zero, as after a clipped ReLU.
                if s % 4 == 0 {
                    0.0
                } else {
                    v
                }
            })
            .collect()
    }

    #[test]
    fn detected_kernels_agree_with_the_scalar_ones() {
        let fast = Kernels::detect(Simd::Auto);
        let slow = Kernels::detect(Simd::Scalar);
        println!("kernels: {}", fast.name);
        // (outputs, inputs): odd sizes, and the blocked sparse path (32k outputs, 8k inputs).
        for (n, m) in [(3usize, 8usize), (8, 13), (17, 22), (32, 37), (41, 46), (64, 69), (72, 77), (256, 261), (32, 256), (64, 64), (32, 8)] {
            let (x, w, b) = (data(m, 1), data(m * n, 2), data(n, 3));
            let (mut o1, mut o2) = (vec![0.0; n], vec![0.0; n]);
            // Aligned copies, as the network stores its weights.
            let (w, b) = (Aligned::from_slice(&w), Aligned::from_slice(&b));
            for clip in [false, true] {
                (fast.affine)(&x, &w, &b, &mut o1, clip);
                (slow.affine)(&x, &w, &b, &mut o2, clip);
                for (a, c) in o1.iter().zip(&o2) {
                    assert!((a - c).abs() <= 1e-5, "{a} {c}");
                }
            }
            let k = n.min(m);
            let (d1, d2) = ((fast.dot)(&x[..k], &b[..k]), (slow.dot)(&x[..k], &b[..k]));
            assert!((d1 - d2).abs() <= 1e-5, "{d1} {d2}");
            let table: Vec<i32> = (0..10 * n as i32).map(|i| i * 7919 - 3000).collect();
            let src: Vec<i32> = (0..n as i32).map(|i| i * 3 - 11).collect();
            let (mut a1, mut a2) = (vec![5; n], vec![5; n]);
            (fast.update)(&mut a1, &src, &table, &[1, 7, 7], &[0, 9]);
            (slow.update)(&mut a2, &src, &table, &[1, 7, 7], &[0, 9]);
            assert_eq!(a1, a2);
            let want: Vec<i32> = (0..n).map(|k| src[k] + table[n + k] + 2 * table[7 * n + k] - table[k] - table[9 * n + k]).collect();
            assert_eq!(a1, want);
            let acc: Vec<i32> = (0..n as i32).map(|i| (i - 5) * Q / 4).collect();
            let (mut c1, mut c2) = (vec![0.0; n], vec![0.0; n]);
            (fast.crelu)(&acc, &mut c1);
            (slow.crelu)(&acc, &mut c2);
            assert_eq!(c1, c2);
            assert!(c1.iter().all(|v| (0.0..=1.0).contains(v)));
        }
    }

    /// Seeded bytes in `lo..=hi`, with runs of zeros (as after a clipped ReLU).
    fn bytes(n: usize, seed: u32, lo: i32, hi: i32) -> Vec<i32> {
        let mut s = seed;
        (0..n)
            .map(|i| {
                s = s.wrapping_mul(1664525).wrapping_add(1013904223);
                if (i / 4) % 3 == 0 && s % 2 == 0 {
                    0
                } else {
                    lo + ((s >> 8) % (hi - lo + 1) as u32) as i32
                }
            })
            .collect()
    }

    #[test]
    fn integer_kernels_give_the_same_integers_in_every_version() {
        let slow = Kernels::detect(Simd::Scalar);
        for fast in [Kernels::detect(Simd::Auto), Kernels::detect(Simd::Avx2)] {
            println!("kernels: {}", fast.name);
            // (outputs, inputs): the 32-output blocks, the 8-output blocks, odd block counts.
            for (n, m) in [(32usize, 256usize), (32, 32), (8, 4), (16, 36), (40, 12), (64, 260), (8, 1024)] {
                for seed in 0..4 {
                    let x: Vec<u8> = bytes(m, seed, 0, 127).into_iter().map(|v| v as u8).collect();
                    let w: Vec<i8> = bytes(m * n, seed + 10, -127, 127).into_iter().map(|v| v as i8).collect();
                    let b: Vec<i32> = bytes(n, seed + 20, -20000, 20000);
                    // Scales that map typical sums onto 0..127, so that both clips and the middle are seen.
                    let typical = (m as f32).sqrt() * 4700.0 + 12000.0;
                    let scale: Vec<f32> = bytes(n, seed + 30, 1, 200).into_iter().map(|v| v as f32 / 100.0 * 60.0 / typical).collect();
                    let (w, b, scale) = (Aligned::from_slice(&w), Aligned::from_slice(&b), Aligned::from_slice(&scale));
                    let (mut o1, mut o2) = (vec![0u8; n], vec![0u8; n]);
                    (fast.dense8)(&x, &w, &b, &scale, &mut o1);
                    (slow.dense8)(&x, &w, &b, &scale, &mut o2);
                    assert_eq!(o1, o2, "dense8 {n}x{m} seed {seed}");
                    // The definition, written out.
                    for k in 0..n {
                        let sum: i32 = b[k] + (0..m).map(|j| x[j] as i32 * w[((j / 4) * n + k) * 4 + j % 4] as i32).sum::<i32>();
                        let want = ((sum as f64 * scale[k] as f64).round() as i32).clamp(0, 127) as u8;
                        // Rounding in f32 can differ from f64 by one at a half.
                        assert!((o1[k] as i32 - want as i32).abs() <= 1, "{} {want}", o1[k]);
                    }
                    assert!(o1.iter().any(|&v| v > 0 && v < 127), "the test exercises the unclipped range");
                }
                let xs: Vec<u8> = bytes(m, 7, 0, 127).into_iter().map(|v| v as u8).collect();
                let ws: Vec<i16> = bytes(m, 8, -32767, 32767).into_iter().map(|v| v as i16).collect();
                let want: i32 = xs.iter().zip(&ws).map(|(&x, &w)| x as i32 * w as i32).sum();
                assert_eq!((fast.dot8)(&xs, &ws), want);
                assert_eq!((slow.dot8)(&xs, &ws), want);
                let ws: Vec<i8> = bytes(m, 9, -127, 127).into_iter().map(|v| v as i8).collect();
                let want: i32 = xs.iter().zip(&ws).map(|(&x, &w)| x as i32 * w as i32).sum();
                assert_eq!((fast.dot8i8)(&xs, &ws), want);
                assert_eq!((slow.dot8i8)(&xs, &ws), want);
                // The extremes: no 16-bit pair sum saturates.
                for w in [-127i8, 127] {
                    let want = 127 * w as i32 * m as i32;
                    assert_eq!((fast.dot8i8)(&vec![127; m], &vec![w; m]), want);
                    assert_eq!((slow.dot8i8)(&vec![127; m], &vec![w; m]), want);
                }
                let table: Vec<i16> = bytes(10 * n, 5, -30000, 30000).into_iter().map(|v| v as i16).collect();
                let src: Vec<i16> = bytes(n, 6, -30000, 30000).into_iter().map(|v| v as i16).collect();
                let (mut a1, mut a2) = (vec![5i16; n], vec![5i16; n]);
                (fast.update16)(&mut a1, &src, &table, &[1, 7, 7], &[0, 9]);
                (slow.update16)(&mut a2, &src, &table, &[1, 7, 7], &[0, 9]);
                assert_eq!(a1, a2);
                let want: Vec<i16> = (0..n)
                    .map(|k| {
                        src[k]
                            .wrapping_add(table[n + k])
                            .wrapping_add(table[7 * n + k])
                            .wrapping_add(table[7 * n + k])
                            .wrapping_sub(table[k])
                            .wrapping_sub(table[9 * n + k])
                    })
                    .collect();
                assert_eq!(a1, want);
                // The first 32 values (or fewer) and 16 rows of a narrow table: the block
                // patterns added at evaluation, one row a block.
                let m32 = 32.min(n);
                let narrow: Vec<i16> = bytes(20 * m32, 11, -30000, 30000).into_iter().map(|v| v as i16).collect();
                let rows: Vec<u32> = (0..16).map(|b| (b * 7 + 3) % 20).collect();
                let (mut b1, mut b2) = (vec![0i16; m32], vec![0i16; m32]);
                (fast.update16)(&mut b1, &src[..m32], &narrow, &rows, &[]);
                (slow.update16)(&mut b2, &src[..m32], &narrow, &rows, &[]);
                let want: Vec<i16> =
                    (0..m32).map(|k| rows.iter().fold(src[k], |v, &r| v.wrapping_add(narrow[r as usize * m32 + k]))).collect();
                assert_eq!((&b1, &b2), (&want, &want));
                for shift in 0..=6 {
                    let acc: Vec<i16> = (0..n as i32).map(|i| ((i * 997) % 20000 - 4000) as i16).collect();
                    let (mut c1, mut c2) = (vec![0u8; n], vec![0u8; n]);
                    (fast.crelu8)(&acc, &mut c1, shift);
                    (slow.crelu8)(&acc, &mut c2, shift);
                    assert_eq!(c1, c2, "crelu8 shift {shift}");
                    for (k, &c) in c1.iter().enumerate() {
                        let want = ((acc[k] as f64).clamp(0.0, (127 << shift) as f64) / (1 << shift) as f64 + 1e-9).round();
                        assert_eq!(c as f64, want.min(127.0), "{} << {shift}", acc[k]);
                    }
                }
            }
        }
    }

    #[test]
    fn dense8_by_hand() {
        // Inputs x = [2, 0, 1, 3]; W (4 inputs x 8 outputs): output 0 weights [1, 5, -2, 1],
        // output 1 weights [-1, 0, 0, -1], the rest 0; biases [10, 0, ...]; scales 1/2.
        let k = Kernels::detect(Simd::Scalar);
        let mut w = vec![0i8; 32];
        w[..4].copy_from_slice(&[1, 5, -2, 1]);
        w[4..8].copy_from_slice(&[-1, 0, 0, -1]);
        let mut b = vec![0i32; 8];
        b[0] = 10;
        let mut out = [9u8; 8];
        (k.dense8)(&[2, 0, 1, 3], &w, &b, &[0.5; 8], &mut out);
        // Output 0: (10 + 2 - 2 + 3) / 2 = 6.5 -> 6 (half to even); output 1: -5 / 2 -> 0.
        assert_eq!(out, [6, 0, 0, 0, 0, 0, 0, 0]);
        (Kernels::detect(Simd::Auto).dense8)(&[2, 0, 1, 3], &w, &b, &[0.5; 8], &mut out);
        assert_eq!(out, [6, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn affine_by_hand() {
        // x = [1, 0, 2], W (3 x 2, input-major) = [[1, 2], [5, 5], [-1, 0.5]], b = [0.5, -4].
        let k = Kernels::detect(Simd::Scalar);
        let mut out = [0.0; 2];
        (k.affine)(&[1.0, 0.0, 2.0], &[1.0, 2.0, 5.0, 5.0, -1.0, 0.5], &[0.5, -4.0], &mut out, false);
        assert_eq!(out, [-0.5, -1.0]);
        (k.affine)(&[1.0, 0.0, 2.0], &[1.0, 2.0, 5.0, 5.0, -1.0, 0.5], &[0.5, -4.0], &mut out, true);
        assert_eq!(out, [0.0, 0.0]);
        assert_eq!((k.dot)(&[1.0; 11], &[2.0; 11]), 22.0);
    }
}
