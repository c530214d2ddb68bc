//! `resource.ParseQuantity`: `k8s.io/apimachinery/pkg/api/resource/quantity.go`
//! (`parseQuantityString`, `ParseQuantity`) and `suffix.go` (`suffixHandler.interpret`).

use std::cmp::Ordering;

use num_bigint::BigInt;
use num_traits::{Signed, Zero};

use super::{Quantity, compare, rescale};

/// `resource.ErrFormatWrong`.
pub(crate) const ERR_FORMAT_WRONG: &str = "quantities must match the regular expression \
                                           '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// `resource.ErrNumeric`.
pub(crate) const ERR_NUMERIC: &str = "unable to parse numeric part of quantity";
/// `resource.ErrSuffix`.
pub(crate) const ERR_SUFFIX: &str = "unable to parse quantity's suffix";

/// The most digits an `int64Amount` may hold when parsed (`maxInt64Factors`).
const MAX_INT64_FACTORS: i32 = 18;
/// Nano, the finest scale a parsed quantity keeps (`resource.Nano`).
const NANO: i32 = -9;

/// The value of a [`Quantity`] and why a string is not a quantity.
type ParseResult = Result<Quantity, &'static str>;

impl Quantity {
    /// `resource.ParseQuantity`: the quantity `text` spells, or Go's error text.
    pub(crate) fn parse(text: &str) -> ParseResult {
        if text.is_empty() {
            return Err(ERR_FORMAT_WRONG);
        }
        if text == "0" {
            return Ok(Quantity::Int { value: 0, scale: 0 });
        }
        let parts = split(text)?;
        let (base, exponent, binary) = interpret(parts.suffix).ok_or(ERR_SUFFIX)?;
        let (num, denom) = (parts.num, parts.denom);
        let digits = (num.len() + denom.len()) as i32;
        let (mut scale, precision, mantissa) = if binary {
            if denom.is_empty() && exponent >= 0 {
                let precision = 15 - num.len() as i32 - exponent * 3 / 10 - 1;
                (0, precision, 1i64 << exponent)
            } else {
                (0, -1, 1)
            }
        } else {
            (exponent, MAX_INT64_FACTORS - digits, 1)
        };
        if precision >= 0 {
            scale -= denom.len() as i32;
            if scale >= NANO {
                let shifted: i64 = format!("{num}{denom}").parse().map_err(|_| ERR_NUMERIC)?;
                if let Some(value) = shifted.checked_mul(mantissa) {
                    let value = if parts.positive { value } else { -value };
                    return Ok(Quantity::Int { value, scale });
                }
            }
        }
        let (mut unscaled, mut scale) = parse_decimal(parts.value).ok_or(ERR_NUMERIC)?;
        if base == 10 {
            scale -= exponent;
        } else {
            unscaled <<= exponent as usize;
        }
        let negative = unscaled.is_negative();
        unscaled = unscaled.abs();
        if !unscaled.is_zero() {
            // `amount.Round(amount, Nano.infScale(), inf.RoundUp)`, on the magnitude.
            (unscaled, scale) = round_up(unscaled, scale, -NANO);
        }
        if binary && compare(&unscaled, scale, &BigInt::from(i64::MAX), 0) == Ordering::Greater {
            (unscaled, scale) = (BigInt::from(i64::MAX), 0);
        }
        if negative {
            unscaled = -unscaled;
        }
        Ok(Quantity::Dec { unscaled, scale })
    }
}

/// A non-negative `unscaled × 10^-scale` rounded up (away from zero) to `to` decimal places;
/// `inf.Dec.Round` sets the scale to `to` whichever way it goes.
fn round_up(unscaled: BigInt, scale: i32, to: i32) -> (BigInt, i32) {
    if scale <= to {
        return (rescale(unscaled, scale, to), to);
    }
    let divisor = BigInt::from(10).pow((scale - to) as u32);
    let quotient = &unscaled / &divisor;
    let rounded = if (&quotient * &divisor) == unscaled {
        quotient
    } else {
        quotient + 1
    };
    (rounded, to)
}

/// `inf.Dec.SetString` on the sign-and-digits prefix of a quantity: an optional sign, digits
/// and at most one `.`, with at least one digit. The scale is the count of digits after `.`.
fn parse_decimal(text: &str) -> Option<(BigInt, i32)> {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let all = format!("{int}{frac}");
    if all.is_empty() || !all.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let unscaled: BigInt = all.parse().ok()?;
    Some((
        if negative { -unscaled } else { unscaled },
        frac.len() as i32,
    ))
}

/// What `parseQuantityString` splits a quantity into.
struct Parts<'a> {
    positive: bool,
    /// The sign and number, as written (`str[0:pos]`).
    value: &'a str,
    /// The integer digits without leading zeros (`"0"` when none are left).
    num: &'a str,
    /// The fraction digits.
    denom: &'a str,
    suffix: &'a str,
}

/// `parseQuantityString`.
fn split(text: &str) -> Result<Parts<'_>, &'static str> {
    let bytes = text.as_bytes();
    let end = bytes.len();
    let mut pos = 0;
    let mut positive = true;
    match bytes.first() {
        Some(b'-') => {
            positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    while pos < end && bytes[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Ok(Parts {
            positive,
            value: "0",
            num: "0",
            denom: "",
            suffix: "",
        });
    }
    let num_start = pos;
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    let num = if pos == num_start {
        "0"
    } else {
        &text[num_start..pos]
    };
    if pos >= end {
        return Ok(Parts {
            positive,
            value: text,
            num,
            denom: "",
            suffix: "",
        });
    }
    let mut denom = "";
    if bytes[pos] == b'.' {
        pos += 1;
        let denom_start = pos;
        while pos < end && bytes[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &text[denom_start..pos];
        if pos >= end {
            return Ok(Parts {
                positive,
                value: text,
                num,
                denom,
                suffix: "",
            });
        }
    }
    let value = &text[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&bytes[pos]) {
        pos += 1;
    }
    if pos < end && matches!(bytes[pos], b'-' | b'+') {
        pos += 1;
    }
    while pos < end && bytes[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(ERR_FORMAT_WRONG);
    }
    Ok(Parts {
        positive,
        value,
        num,
        denom,
        suffix: &text[suffix_start..],
    })
}

/// `suffixHandler.interpret`: `(base, exponent, binary)`, `None` for an unknown suffix.
fn interpret(suffix: &str) -> Option<(i32, i32, bool)> {
    let decimal = match suffix {
        "n" => Some(-9),
        "u" => Some(-6),
        "m" => Some(-3),
        "" => Some(0),
        "k" => Some(3),
        "M" => Some(6),
        "G" => Some(9),
        "T" => Some(12),
        "P" => Some(15),
        "E" => Some(18),
        _ => None,
    };
    if let Some(exponent) = decimal {
        return Some((10, exponent, false));
    }
    let binary = match suffix {
        "Ki" => Some(10),
        "Mi" => Some(20),
        "Gi" => Some(30),
        "Ti" => Some(40),
        "Pi" => Some(50),
        "Ei" => Some(60),
        _ => None,
    };
    if let Some(exponent) = binary {
        return Some((2, exponent, true));
    }
    let rest = suffix.strip_prefix(['e', 'E']).filter(|r| !r.is_empty())?;
    // `strconv.ParseInt(s, 10, 64)`, then truncated to `int32` as Go does.
    let parsed: i64 = go_parse_int(rest)?;
    Some((10, parsed as i32, false))
}

/// `strconv.ParseInt(s, 10, 64)`: an optional sign and decimal digits.
fn go_parse_int(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}
