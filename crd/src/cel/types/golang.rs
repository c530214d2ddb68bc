//! Go standard-library functions whose output reaches users through kube-apiserver's error
//! texts and results: `strconv.Quote` (`%q`) and `math.Pow10`.

/// Go's `strconv.Quote`: a double-quoted string with Go's escapes.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `math.Pow10(n)`: products and quotients of exactly representable powers of ten.
pub(crate) fn pow10(n: i32) -> f64 {
    const TAB: [f64; 32] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31,
    ];
    const POS32: [f64; 10] = [
        1e0, 1e32, 1e64, 1e96, 1e128, 1e160, 1e192, 1e224, 1e256, 1e288,
    ];
    const NEG32: [f64; 11] = [
        1e-0, 1e-32, 1e-64, 1e-96, 1e-128, 1e-160, 1e-192, 1e-224, 1e-256, 1e-288, 1e-320,
    ];
    match n {
        0..=308 => POS32[n as usize / 32] * TAB[n as usize % 32],
        -323..=-1 => {
            let m = (-n) as usize;
            NEG32[m / 32] / TAB[m % 32]
        }
        n if n > 0 => f64::INFINITY,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::{pow10, quote};

    #[test]
    fn quote_escapes_as_go_does() {
        assert_eq!(quote("a\"b\\c\n\u{1}"), r#""a\"b\\c\n\x01""#);
    }

    #[test]
    fn pow10_is_exact_for_small_exponents() {
        assert_eq!(pow10(-1), 0.1);
        assert_eq!(pow10(3), 1000.0);
        assert_eq!(pow10(-9), 1e-9);
        assert_eq!(pow10(400), f64::INFINITY);
    }
}
