//! Size and cost ranges, and their saturating arithmetic: cel-go's `checker/cost.go`
//! (`SizeEstimate`, `CostEstimate`, `addUint64NoOverflow`, `multiplyUint64NoOverflow`,
//! `multiplyByCostFactor`). Every operation saturates at `u64::MAX`, which the API server
//! reads as "unbounded".

/// A `[min, max]` range: a size (characters of a string, bytes, items of a list, entries of a
/// map; cel-go's `SizeEstimate`) or a cost in CEL cost units (cel-go's `CostEstimate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Range {
    pub(crate) min: u64,
    pub(crate) max: u64,
}

/// A size range (cel-go's `SizeEstimate`).
pub(crate) type Size = Range;
/// A cost range in CEL cost units (cel-go's `CostEstimate`).
pub(crate) type Cost = Range;

/// `UnknownSizeEstimate`: anything from 0 to `u64::MAX`.
pub(crate) const UNKNOWN: Range = Range {
    min: 0,
    max: u64::MAX,
};

/// `StringTraversalCostFactor`, `RegexStringLengthCostFactor`, `ListCreateBaseCost` (cel-go
/// `common/cost.go`): the cost of traversing one character, of matching a regex of one
/// character against one character, of creating a list.
pub(crate) const STRING_TRAVERSAL_COST_FACTOR: f64 = 0.1;
pub(crate) const REGEX_STRING_LENGTH_COST_FACTOR: f64 = 0.25;
pub(crate) const LIST_CREATE_BASE_COST: u64 = 10;

/// A call's estimate: its cost and, for strings, bytes, lists and maps, its result's size
/// (cel-go's `CallEstimate`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct CallEstimate {
    pub(crate) cost: Cost,
    pub(crate) result_size: Option<Size>,
}

impl CallEstimate {
    /// A cost, no result size.
    pub(crate) fn cost(cost: Cost) -> Self {
        Self {
            cost,
            result_size: None,
        }
    }

    /// A cost and the result's size.
    pub(crate) fn sized(cost: Cost, size: Size) -> Self {
        Self {
            cost,
            result_size: Some(size),
        }
    }
}

/// 2^64 as a float: a rounded-up product at least this large saturates.
const TWO_TO_64: f64 = 18_446_744_073_709_551_616.0;

impl Range {
    /// `FixedSizeEstimate` / `FixedCostEstimate`.
    pub(crate) const fn fixed(value: u64) -> Self {
        Self {
            min: value,
            max: value,
        }
    }

    /// The sum, saturating (`Add`).
    pub(crate) fn add(self, other: Self) -> Self {
        Self {
            min: self.min.saturating_add(other.min),
            max: self.max.saturating_add(other.max),
        }
    }

    /// The product, saturating (`Multiply`, `MultiplyByCost`).
    pub(crate) fn multiply(self, other: Self) -> Self {
        Self {
            min: self.min.saturating_mul(other.min),
            max: self.max.saturating_mul(other.max),
        }
    }

    /// Both bounds times a cost factor, rounded up (`MultiplyByCostFactor`).
    pub(crate) fn by_factor(self, factor: f64) -> Self {
        Self {
            min: multiply_by_factor(self.min, factor),
            max: multiply_by_factor(self.max, factor),
        }
    }

    /// The range covering both (`Union`).
    pub(crate) fn union(self, other: Self) -> Self {
        Self {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }
}

/// `multiplyByCostFactor`: `x * factor` rounded up, `u64::MAX` when it does not fit. The
/// conversions to and from `f64` are the point: cel-go computes in float64.
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]
fn multiply_by_factor(x: u64, factor: f64) -> u64 {
    let x = x as f64;
    if x > 0.0 && factor > 0.0 && x > u64::MAX as f64 / factor {
        return u64::MAX;
    }
    let product = (x * factor).ceil();
    if product >= TWO_TO_64 {
        u64::MAX
    } else {
        product as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        let big = Range::fixed(u64::MAX - 1);
        assert_eq!(big.add(Range::fixed(5)), Range::fixed(u64::MAX));
        assert_eq!(big.multiply(Range::fixed(2)), Range::fixed(u64::MAX));
        assert_eq!(UNKNOWN.by_factor(0.1).max, 1_844_674_407_370_955_264);
        assert_eq!(UNKNOWN.by_factor(2.0).max, u64::MAX);
    }

    #[test]
    fn factors_round_up() {
        assert_eq!(
            Range::fixed(3_145_726).by_factor(0.1),
            Range::fixed(314_573)
        );
        assert_eq!(Range::fixed(1).by_factor(0.1), Range::fixed(1));
        assert_eq!(Range::fixed(0).by_factor(0.1), Range::fixed(0));
        assert_eq!(
            Range { min: 2, max: 7 }.union(Range { min: 1, max: 5 }),
            Range { min: 1, max: 7 }
        );
    }
}
