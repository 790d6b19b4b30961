//! Dirichlet and Gumbel samples from a seeded generator (no extra crate: Marsaglia-Tsang gamma,
//! Box-Muller normal, inverse-CDF Gumbel).

use rand::Rng;

/// A uniform sample in the open interval (0, 1).
fn open01<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    loop {
        let u: f64 = rng.gen();
        if u > 0.0 {
            return u;
        }
    }
}

fn standard_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let (u, v) = (open01(rng), open01(rng));
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// Gamma(shape, 1) by Marsaglia and Tsang (2000); shapes below 1 use the boost
/// `Gamma(a) = Gamma(a + 1) * U^(1/a)`.
pub(crate) fn gamma<R: Rng + ?Sized>(rng: &mut R, shape: f64) -> f64 {
    if shape < 1.0 {
        return gamma(rng, shape + 1.0) * open01(rng).powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = standard_normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = open01(rng);
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

/// A sample of the symmetric Dirichlet(alpha) distribution over `n` outcomes.
pub(crate) fn dirichlet<R: Rng + ?Sized>(rng: &mut R, alpha: f64, n: usize) -> Vec<f32> {
    let g: Vec<f64> = (0..n).map(|_| gamma(rng, alpha)).collect();
    let total: f64 = g.iter().sum();
    if total > 0.0 && total.is_finite() {
        g.iter().map(|x| (x / total) as f32).collect()
    } else {
        // Every gamma sample underflowed (tiny alpha): the limit is a point mass.
        let mut out = vec![0.0; n];
        if n > 0 {
            out[rng.gen_range(0..n)] = 1.0;
        }
        out
    }
}

/// A standard Gumbel sample: `-ln(-ln U)`.
pub(crate) fn gumbel<R: Rng + ?Sized>(rng: &mut R) -> f32 {
    (-(-open01(rng).ln()).ln()) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn gamma_and_dirichlet_moments() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for shape in [0.3, 1.0, 2.5] {
            let n = 20_000;
            let xs: Vec<f64> = (0..n).map(|_| gamma(&mut rng, shape)).collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
            assert!((mean - shape).abs() < 0.05 * shape.max(1.0), "shape {shape} mean {mean}");
            assert!((var - shape).abs() < 0.1 * shape.max(1.0), "shape {shape} var {var}");
        }
        let d = dirichlet(&mut rng, 0.3, 10);
        assert!((d.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(d.iter().all(|&x| x >= 0.0));
    }

    #[test]
    fn gumbel_mean_is_euler_gamma() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let n = 20_000;
        let mean = (0..n).map(|_| gumbel(&mut rng) as f64).sum::<f64>() / n as f64;
        assert!((mean - 0.5772).abs() < 0.03, "{mean}");
    }
}
