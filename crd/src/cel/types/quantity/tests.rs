use std::cmp::Ordering;

use super::Quantity;
use super::parse::{ERR_FORMAT_WRONG, ERR_NUMERIC, ERR_SUFFIX};

fn q(text: &str) -> Quantity {
    Quantity::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn parse_errors_are_apimachinerys() {
    for (text, error) in [
        ("", ERR_FORMAT_WRONG),
        ("x", ERR_FORMAT_WRONG),
        ("1.5.5", ERR_FORMAT_WRONG),
        ("1,3G", ERR_FORMAT_WRONG),
        ("200K", ERR_SUFFIX),
        ("1e", ERR_SUFFIX),
        ("5i", ERR_SUFFIX),
        ("1ee3", ERR_SUFFIX),
        ("+-1", ERR_SUFFIX),
        ("Ei", ERR_NUMERIC),
    ] {
        assert_eq!(Quantity::parse(text).err(), Some(error), "{text:?}");
    }
}

#[test]
fn values_compare_exactly() {
    assert_eq!(q("1Gi").compare(&q("1073741824")), Ordering::Equal);
    assert_eq!(q("0.1m").compare(&q("100u")), Ordering::Equal);
    assert_eq!(
        q("1n").compare(&q("0.1n")),
        Ordering::Equal,
        "rounded up to nano"
    );
    assert_eq!(
        q("-0.1n").compare(&q("-1n")),
        Ordering::Equal,
        "away from zero"
    );
    assert_eq!(q("1e3").compare(&q("1k")), Ordering::Equal);
    assert_eq!(q("1E").compare(&q("1e18")), Ordering::Equal);
    assert_eq!(q("1e100").compare(&q("1Ei")), Ordering::Greater);
    assert_eq!(q("-2").compare(&q("1")), Ordering::Less);
    assert_eq!(
        q("Mi").compare(&q("0")),
        Ordering::Equal,
        "a bare suffix is zero"
    );
    assert_eq!(
        q("16Ei").compare(&q("9223372036854775807")),
        Ordering::Equal,
        "capped"
    );
}

#[test]
fn integers_depend_on_the_representation() {
    assert_eq!(q("50k").as_int64(), Some(50_000));
    assert_eq!(q("50000000G").as_int64(), Some(50_000_000_000_000_000));
    assert_eq!(
        q("1.0").as_int64(),
        None,
        "an int64Amount with a negative scale"
    );
    assert_eq!(q("1000m").as_int64(), None);
    assert_eq!(q("1e100").as_int64(), None);
    assert_eq!(q("1Ki").as_int64(), Some(1024));
    assert_eq!(q("1.5").as_approximate_float64(), 1.5);
    assert_eq!(q("1e-20").as_approximate_float64(), 1e-9);
}

#[test]
fn arithmetic_keeps_int64_when_it_fits() {
    assert_eq!(
        q("50k").plus(&Quantity::from_int(20)).as_int64(),
        Some(50_020)
    );
    assert_eq!(q("1").minus(&q("1.5")).compare(&q("-0.5")), Ordering::Equal);
    let big = q("9223372036854775807").plus(&q("1"));
    assert_eq!(big.compare(&q("9223372036854775808")), Ordering::Equal);
    assert_eq!(big.as_int64(), None, "overflowed into a decimal");
    assert_eq!(q("1").sign(), 1);
    assert_eq!(q("0").sign(), 0);
}
