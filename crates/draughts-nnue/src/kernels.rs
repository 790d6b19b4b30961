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

/// A buffer of `f32` or `i32` whose start is aligned to 32 bytes, so that rows of a multiple of
/// 8 values can be read with aligned 256-bit loads. (With the x86-64-v2 baseline's tuning the
/// compiler splits every unaligned 256-bit load in two, which measured as the bottleneck of the
/// dense layers.)
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Aligned<T: Lane> {
    blocks: Vec<Block<T>>,
    len: usize,
}

/// The element types an [`Aligned`] buffer holds.
pub trait Lane: Copy + Default + PartialEq + std::fmt::Debug + sealed::Sealed {}
impl Lane for f32 {}
impl Lane for i32 {}
mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for i32 {}
}

#[derive(Copy, Clone, Default, PartialEq, Eq)]
#[repr(C, align(32))]
struct Block<T>([T; 8]);

impl<T: Lane> Aligned<T> {
    /// `len` default values.
    pub fn zeros(len: usize) -> Aligned<T> {
        Aligned { blocks: vec![Block([T::default(); 8]); len.div_ceil(8)], len }
    }

    /// A copy of `values`.
    pub fn from_slice(values: &[T]) -> Aligned<T> {
        let mut a = Aligned::zeros(values.len());
        a.copy_from_slice(values);
        a
    }

    /// Changes the length; new values are the default.
    pub fn resize(&mut self, len: usize) {
        self.blocks.resize(len.div_ceil(8), Block([T::default(); 8]));
        self.len = len;
    }
}

impl<T: Lane> std::ops::Deref for Aligned<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `Block<T>` is `repr(C)` around `[T; 8]` with T of 4 bytes: 32 bytes, no
        // padding, so the blocks are `8 * blocks.len() >= len` contiguous initialised `T`s.
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
    /// The fastest the CPU supports (AVX2+FMA when present).
    #[default]
    Auto,
    /// The scalar reference.
    Scalar,
}

/// `update(dst, src, table, adds, subs)`.
type UpdateFn = fn(&mut [i32], &[i32], &[i32], &[u16], &[u16]);
/// `affine(x, w, b, out, clip)`.
type AffineFn = fn(&[f32], &[f32], &[f32], &mut [f32], bool);

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
        if choice == Simd::Auto && std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            return AVX2;
        }
        let _ = choice;
        SCALAR
    }
}

const SCALAR: Kernels =
    Kernels { name: "scalar", update: update_scalar, crelu: crelu_scalar, affine: affine_scalar, dot: dot_scalar };

fn update_scalar(dst: &mut [i32], src: &[i32], table: &[i32], adds: &[u16], subs: &[u16]) {
    let w = dst.len();
    dst.copy_from_slice(&src[..w]);
    for &f in adds {
        for (d, s) in dst.iter_mut().zip(&table[f as usize * w..(f as usize + 1) * w]) {
            *d = d.wrapping_add(*s);
        }
    }
    for &f in subs {
        for (d, s) in dst.iter_mut().zip(&table[f as usize * w..(f as usize + 1) * w]) {
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
const AVX2: Kernels =
    Kernels { name: "avx2+fma", update: avx2::update, crelu: avx2::crelu, affine: avx2::affine, dot: avx2::dot };

#[cfg(target_arch = "x86_64")]
mod avx2 {
    //! AVX2 + FMA versions with intrinsics. The public entry points may only be reached through
    //! `super::AVX2`, which `Kernels::detect` returns only when the CPU has AVX2 and FMA; every
    //! pointer access stays inside slices whose lengths are checked first.

    use std::arch::x86_64::*;

    use super::{INV_Q, Q};

    pub(super) fn update(dst: &mut [i32], src: &[i32], table: &[i32], adds: &[u16], subs: &[u16]) {
        let w = dst.len();
        assert!(src.len() >= w);
        for &f in adds.iter().chain(subs) {
            assert!((f as usize + 1) * w <= table.len());
        }
        let aligned = w % 8 == 0 && [dst.as_ptr(), src.as_ptr(), table.as_ptr()].iter().all(|p| *p as usize % 32 == 0);
        // SAFETY: AVX2 is present (see the module docs); lengths checked above; the aligned
        // version only with 32-byte aligned starts and rows of a multiple of 8 values.
        unsafe {
            if aligned {
                update_impl::<true>(dst, src, table, adds, subs)
            } else {
                update_impl::<false>(dst, src, table, adds, subs)
            }
        }
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
    unsafe fn update_impl<const A: bool>(dst: &mut [i32], src: &[i32], table: &[i32], adds: &[u16], subs: &[u16]) {
        let w = dst.len();
        let (d, s, t) = (dst.as_mut_ptr(), src.as_ptr(), table.as_ptr());
        let mut k = 0;
        // 64 values (8 registers) at a time, every row added in registers.
        while k + 64 <= w {
            let mut r = [_mm256_setzero_si256(); 8];
            for (i, ri) in r.iter_mut().enumerate() {
                *ri = load_i::<A>(s.add(k + 8 * i));
            }
            for &f in adds {
                let row = t.add(f as usize * w + k);
                for (i, ri) in r.iter_mut().enumerate() {
                    *ri = _mm256_add_epi32(*ri, load_i::<A>(row.add(8 * i)));
                }
            }
            for &f in subs {
                let row = t.add(f as usize * w + k);
                for (i, ri) in r.iter_mut().enumerate() {
                    *ri = _mm256_sub_epi32(*ri, load_i::<A>(row.add(8 * i)));
                }
            }
            for (i, ri) in r.iter().enumerate() {
                store_i::<A>(d.add(k + 8 * i), *ri);
            }
            k += 64;
        }
        while k + 8 <= w {
            let mut r = load_i::<A>(s.add(k));
            for &f in adds {
                r = _mm256_add_epi32(r, load_i::<A>(t.add(f as usize * w + k)));
            }
            for &f in subs {
                r = _mm256_sub_epi32(r, load_i::<A>(t.add(f as usize * w + k)));
            }
            store_i::<A>(d.add(k), r);
            k += 8;
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
        let finish = |v: __m256| if clip { _mm256_min_ps(_mm256_max_ps(v, lo), hi) } else { v };
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
