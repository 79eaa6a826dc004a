//! Confidence intervals of a mean over repetitions (seeds): Student's t.
//!
//! For `n` independent repetitions with sample mean `x̄` and sample standard deviation `s` (divisor `n − 1`),
//! the two-sided 95 % confidence interval of the mean is `x̄ ± t(0.975, n − 1) · s / √n`, where `t(p, ν)` is
//! the `p`-quantile of Student's t distribution with `ν` degrees of freedom (W. S. Gosset ("Student"), "The
//! probable error of a mean", Biometrika 6(1), 1908). With five seeds, `t(0.975, 4) = 2.776`: the interval is
//! 1.24 sample standard deviations wide on each side.
//!
//! The quantile is computed, not tabulated: the t distribution function is
//! `F(t) = 1 − ½ · I_{ν/(ν+t²)}(ν/2, ½)` for `t ≥ 0`, with `I` the regularised incomplete beta function
//! (evaluated by its continued fraction, modified Lentz's method), and the quantile is found by bisection to
//! a relative precision of 1e-12. The accuracy is checked against printed table values in the tests.

/// `ln Γ(x)` for `x > 0` (Lanczos approximation, g = 7, nine coefficients; relative error below 1e-14).
fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C0: f64 = 0.999_999_999_999_809_9;
    const C: [f64; 8] = [
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = C0;
    for (i, c) in C.iter().enumerate() {
        #[allow(clippy::cast_precision_loss)]
        let k = (i + 1) as f64;
        sum += c / (x + k);
    }
    let t = x + G + 0.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The continued fraction of the incomplete beta function (modified Lentz's method).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300_u32 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// The regularised incomplete beta function `I_x(a, b)` for `a, b > 0` and `x` in `[0, 1]`.
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The fraction converges fast for x < (a + 1) / (a + b + 2); otherwise use I_x(a, b) = 1 − I_{1−x}(b, a).
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The distribution function of Student's t with `df` degrees of freedom at `t`.
pub fn student_t_cdf(t: f64, df: f64) -> f64 {
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    if t >= 0.0 { 1.0 - tail } else { tail }
}

/// The `p`-quantile of Student's t with `df` degrees of freedom: `t(0.975, 4) = 2.776…`. `None` unless
/// `0 < p < 1` and `df > 0` (both finite).
pub fn student_t_quantile(p: f64, df: f64) -> Option<f64> {
    if !(p > 0.0 && p < 1.0 && df > 0.0 && df.is_finite()) {
        return None;
    }
    if p < 0.5 {
        return student_t_quantile(1.0 - p, df).map(|t| -t);
    }
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    // The quantile grows without bound as p → 1 (df = 1, p = 1 − 1e-15 is ≈ 3 · 10^14): double until above.
    while student_t_cdf(hi, df) < p {
        hi *= 2.0;
        if hi > 1e300 {
            return None;
        }
    }
    for _ in 0..2_000 {
        let mid = 0.5 * (lo + hi);
        if student_t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    Some(0.5 * (lo + hi))
}

/// Half-width of the two-sided 95 % confidence interval of the mean of `values` (Student's t with
/// `n − 1` degrees of freedom): `t(0.975, n − 1) · s / √n`. `None` for fewer than two values.
pub fn ci95_half_width(values: &[f64]) -> Option<f64> {
    let sd = super::std_dev(values)?;
    #[allow(clippy::cast_precision_loss)]
    let n = values.len() as f64;
    let t = student_t_quantile(0.975, n - 1.0)?;
    Some(t * sd / n.sqrt())
}

/// A 95 % confidence interval of a mean: `mean ± half_width`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// The sample mean.
    pub mean: f64,
    /// Half-width (0 for a single value, where no interval can be computed).
    pub half_width: f64,
    /// Number of values.
    pub n: usize,
}

impl Interval {
    /// The mean and 95 % interval of `values`; `None` for no values. A single value gets a zero half-width.
    pub fn of(values: &[f64]) -> Option<Interval> {
        let mean = super::mean(values)?;
        Some(Interval {
            mean,
            half_width: ci95_half_width(values).unwrap_or(0.0),
            n: values.len(),
        })
    }

    /// Lower end.
    pub fn low(&self) -> f64 {
        self.mean - self.half_width
    }

    /// Upper end.
    pub fn high(&self) -> f64 {
        self.mean + self.half_width
    }

    /// Whether the two intervals do not overlap and this one lies above.
    pub fn above(&self, other: &Interval) -> bool {
        self.low() > other.high()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Values from the usual printed table of two-sided critical values (three decimals), e.g. Table A.2 of
    /// any statistics textbook: t(0.975, ν) and t(0.95, ν).
    #[test]
    fn quantiles_match_the_printed_table() {
        let table = [
            (0.975, 1.0, 12.706),
            (0.975, 2.0, 4.303),
            (0.975, 3.0, 3.182),
            (0.975, 4.0, 2.776),
            (0.975, 5.0, 2.571),
            (0.975, 9.0, 2.262),
            (0.975, 19.0, 2.093),
            (0.975, 29.0, 2.045),
            (0.975, 120.0, 1.980),
            (0.95, 4.0, 2.132),
            (0.95, 10.0, 1.812),
            (0.995, 4.0, 4.604),
        ];
        for (p, df, want) in table {
            let t = student_t_quantile(p, df).unwrap();
            assert!((t - want).abs() < 5e-4, "t({p}, {df}) = {t}, table {want}");
        }
        // df = 1 is the Cauchy distribution: t(p, 1) = tan(π (p − ½)) exactly.
        let exact = (std::f64::consts::PI * (0.975 - 0.5)).tan();
        assert!((student_t_quantile(0.975, 1.0).unwrap() - exact).abs() < 1e-9);
        // df = 2 has a closed form: t = (2p − 1) √(2 / (1 − (2p − 1)²)); at p = 0.975 that is 4.302653.
        let a: f64 = 2.0 * 0.975 - 1.0;
        let exact = a * (2.0 / (1.0 - a * a)).sqrt();
        assert!((student_t_quantile(0.975, 2.0).unwrap() - exact).abs() < 1e-9);
        // Large ν tends to the normal quantile 1.959964.
        assert!((student_t_quantile(0.975, 1e7).unwrap() - 1.959_964).abs() < 1e-5);
        // Symmetry and the median.
        assert!((student_t_quantile(0.025, 4.0).unwrap() + 2.776).abs() < 5e-4);
        assert!(student_t_quantile(0.5, 4.0).unwrap().abs() < 1e-9);
    }

    #[test]
    fn quantile_rejects_what_has_none() {
        for (p, df) in [
            (0.0, 4.0),
            (1.0, 4.0),
            (0.975, 0.0),
            (f64::NAN, 4.0),
            (0.975, f64::INFINITY),
        ] {
            assert_eq!(student_t_quantile(p, df), None, "{p} {df}");
        }
    }

    #[test]
    fn interval_of_five_values_by_hand() {
        // 10, 12, 14, 16, 18: mean 14, s = √(40 / 4) = √10 = 3.1623; half-width 2.776 · 3.1623 / √5 = 3.926.
        let i = Interval::of(&[10.0, 12.0, 14.0, 16.0, 18.0]).unwrap();
        assert!((i.mean - 14.0).abs() < 1e-12);
        assert!((i.half_width - 3.926).abs() < 1e-3, "{}", i.half_width);
        assert_eq!(i.n, 5);
        let one = Interval::of(&[3.0]).unwrap();
        assert_eq!((one.mean, one.half_width), (3.0, 0.0));
        assert!(Interval::of(&[]).is_none());
        assert_eq!(ci95_half_width(&[1.0]), None);
        let lower = Interval::of(&[1.0, 2.0, 3.0]).unwrap();
        assert!(i.above(&lower) && !lower.above(&i));
    }
}
