//! `kubernetes.Quantity`: apimachinery's `resource.Quantity` as a CEL value.
//!
//! Ports `k8s.io/apimachinery/pkg/api/resource` (`quantity.go` `ParseQuantity`,
//! `parseQuantityString`, `Cmp`, `Add`, `Sub`, `AsInt64`, `AsApproximateFloat64`, `Sign`;
//! `amount.go` `int64Amount`; `suffix.go` `interpret`; `math.go`), and the CEL type of
//! `k8s.io/apiserver/pkg/cel/quantity.go` (equality is `Cmp == 0`).
//!
//! A quantity keeps the representation Go gives it, because the results of `isInteger`,
//! `asInteger` and `asApproximateFloat` depend on it: an exact `int64 × 10^scale` when the
//! value fits (`quantity('1.0')` is `10 × 10^-1`, so not an integer), else an arbitrary
//! precision decimal rounded up to nano units (and, with a binary suffix, capped at
//! 2^63-1). Comparisons and equality are exact in both.

use std::cmp::Ordering;

use cel::common::types::Type;
use cel::common::value::{StaticVal, Val};
use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};

use super::golang::pow10;

mod parse;

/// The CEL type of a quantity (`apiservercel.QuantityType`).
pub(crate) static QUANTITY_TYPE: Type = Type::new_unspecified_type("kubernetes.Quantity");

/// A parsed quantity: `resource.Quantity`'s `i` (`int64Amount`) or `d` (`inf.Dec`).
#[derive(Clone, Debug)]
pub(crate) enum Quantity {
    /// `value × 10^scale` (`int64Amount`).
    Int { value: i64, scale: i32 },
    /// `unscaled × 10^-scale` (`inf.Dec`: its scale counts decimal places).
    Dec { unscaled: BigInt, scale: i32 },
}

impl Quantity {
    /// `resource.NewQuantity(value, DecimalExponent)`.
    pub(crate) fn from_int(value: i64) -> Self {
        Quantity::Int { value, scale: 0 }
    }

    /// This quantity as `unscaled × 10^-scale` (`AsDec`).
    fn as_dec(&self) -> (BigInt, i32) {
        match self {
            Quantity::Int { value, scale } => (BigInt::from(*value), -scale),
            Quantity::Dec { unscaled, scale } => (unscaled.clone(), *scale),
        }
    }

    /// `Quantity.Cmp`: exact.
    pub(crate) fn compare(&self, other: &Quantity) -> Ordering {
        let (a, a_scale) = self.as_dec();
        let (b, b_scale) = other.as_dec();
        compare(&a, a_scale, &b, b_scale)
    }

    /// `Quantity.Sign`.
    pub(crate) fn sign(&self) -> i64 {
        match self {
            Quantity::Int { value, .. } => value.signum(),
            Quantity::Dec { unscaled, .. } => match unscaled.sign() {
                num_bigint::Sign::Minus => -1,
                num_bigint::Sign::NoSign => 0,
                num_bigint::Sign::Plus => 1,
            },
        }
    }

    /// `Quantity.AsInt64`: only an `int64Amount` with a scale of 0 or more that fits.
    pub(crate) fn as_int64(&self) -> Option<i64> {
        match self {
            Quantity::Int { value, scale } if *scale >= 0 => value.checked_mul(pow10_i64(*scale)?),
            _ => None,
        }
    }

    /// `Quantity.AsApproximateFloat64`: the mantissa as a float times `math.Pow10(exponent)`.
    pub(crate) fn as_approximate_float64(&self) -> f64 {
        let (base, exponent) = match self {
            Quantity::Int { value, scale } => (*value as f64, *scale),
            Quantity::Dec { unscaled, scale } => (unscaled.to_f64().unwrap_or(f64::NAN), -scale),
        };
        if exponent == 0 {
            base
        } else {
            base * pow10(exponent)
        }
    }

    /// `Quantity.Add`: in `int64` when both are and the sum fits, else exactly in decimal.
    pub(crate) fn plus(&self, other: &Quantity) -> Quantity {
        if let (
            Quantity::Int {
                value: a,
                scale: sa,
            },
            Quantity::Int {
                value: b,
                scale: sb,
            },
        ) = (self, other)
            && let Some((value, scale)) = int64_add(*a, *sa, *b, *sb)
        {
            return Quantity::Int { value, scale };
        }
        let (a, a_scale) = self.as_dec();
        let (b, b_scale) = other.as_dec();
        let scale = a_scale.max(b_scale);
        Quantity::Dec {
            unscaled: rescale(a, a_scale, scale) + rescale(b, b_scale, scale),
            scale,
        }
    }

    /// `Quantity.Sub`: `Add` of the negation (`int64Amount.Sub`), else exact.
    pub(crate) fn minus(&self, other: &Quantity) -> Quantity {
        let negated = match other {
            Quantity::Int { value, scale } => Quantity::Int {
                value: value.wrapping_neg(),
                scale: *scale,
            },
            Quantity::Dec { unscaled, scale } => Quantity::Dec {
                unscaled: -unscaled,
                scale: *scale,
            },
        };
        if let (Quantity::Int { .. }, Quantity::Int { .. }) = (self, other) {
            return self.plus(&negated);
        }
        let (a, a_scale) = self.as_dec();
        let (b, b_scale) = other.as_dec();
        let scale = a_scale.max(b_scale);
        Quantity::Dec {
            unscaled: rescale(a, a_scale, scale) - rescale(b, b_scale, scale),
            scale,
        }
    }
}

/// `int64Amount.Add`: `None` when the sum does not fit (Go's `false`).
fn int64_add(a: i64, a_scale: i32, b: i64, b_scale: i32) -> Option<(i64, i32)> {
    if b == 0 {
        return Some((a, a_scale));
    }
    if a == 0 {
        return Some((b, b_scale));
    }
    match a_scale.cmp(&b_scale) {
        Ordering::Equal => Some((a.checked_add(b)?, a_scale)),
        Ordering::Greater => {
            let a = a.checked_mul(pow10_i64(a_scale - b_scale)?)?;
            Some((a.checked_add(b)?, b_scale))
        }
        Ordering::Less => {
            let b = b.checked_mul(pow10_i64(b_scale - a_scale)?)?;
            Some((a.checked_add(b)?, a_scale))
        }
    }
}

/// `10^n` as an `i64`, `None` when it does not fit.
fn pow10_i64(n: i32) -> Option<i64> {
    10i64.checked_pow(u32::try_from(n).ok()?)
}

/// `x × 10^-x_scale` rescaled to `scale ≥ x_scale` decimal places (exact).
pub(super) fn rescale(x: BigInt, x_scale: i32, scale: i32) -> BigInt {
    x * BigInt::from(10).pow((scale - x_scale) as u32)
}

/// Compares two decimals exactly. Magnitudes are compared first, so `1e2000000000` against
/// `1` does not build a two-billion-digit number.
pub(super) fn compare(a: &BigInt, a_scale: i32, b: &BigInt, b_scale: i32) -> Ordering {
    let by_sign = a.sign().cmp(&b.sign());
    if by_sign != Ordering::Equal || a.is_zero() {
        return by_sign;
    }
    // The decimal exponent of the leading digit, as i64 so that no scale overflows.
    let magnitude = |x: &BigInt, scale: i32| x.abs().to_string().len() as i64 - i64::from(scale);
    let by_magnitude = magnitude(a, a_scale).cmp(&magnitude(b, b_scale));
    if by_magnitude != Ordering::Equal {
        return if a.is_negative() {
            by_magnitude.reverse()
        } else {
            by_magnitude
        };
    }
    let scale = a_scale.max(b_scale);
    rescale(a.clone(), a_scale, scale).cmp(&rescale(b.clone(), b_scale, scale))
}

impl Val for Quantity {
    fn get_type(&self) -> &Type {
        &QUANTITY_TYPE
    }

    fn cel_type() -> &'static Type {
        &QUANTITY_TYPE
    }

    fn equals(&self, other: &dyn Val) -> bool {
        other
            .downcast_ref::<Quantity>()
            .is_some_and(|other| self.compare(other) == Ordering::Equal)
    }

    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

impl StaticVal for Quantity {}

#[cfg(test)]
mod tests;
