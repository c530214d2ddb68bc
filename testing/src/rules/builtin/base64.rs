//! Where Go's `encoding/base64` (`StdEncoding`, what `encoding/json` decodes a `[]byte` field
//! with) finds a body's base64 invalid: the offset of its `CorruptInputError`, which
//! kube-apiserver reports as `illegal base64 data at input byte N` when a Secret's `data` or a
//! ConfigMap's `binaryData` does not decode.

/// Whether `b` is a character of the standard alphabet.
fn in_alphabet(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/'
}

/// The offset at which Go's standard decoder fails on `text`, or `None` when it decodes.
/// Line breaks (`\r`, `\n`) are skipped, as Go skips them.
pub(crate) fn corrupt_at(text: &str) -> Option<usize> {
    let src = text.as_bytes();
    let mut si = 0;
    loop {
        // One quantum of up to four characters.
        let mut j = 0;
        while j < 4 {
            if si == src.len() {
                return match j {
                    0 => None,
                    _ => Some(si - j),
                };
            }
            let c = src[si];
            si += 1;
            if in_alphabet(c) {
                j += 1;
                continue;
            }
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if c != b'=' {
                return Some(si - 1);
            }
            // Padding: only after two or three characters of the quantum.
            match j {
                0 | 1 => return Some(si - 1),
                2 => {
                    while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                        si += 1;
                    }
                    if si == src.len() {
                        return Some(src.len());
                    }
                    if src[si] != b'=' {
                        return Some(si - 1);
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                si += 1;
            }
            return (si < src.len()).then_some(si);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::corrupt_at;

    #[test]
    fn offsets_as_go_reports_them() {
        assert_eq!(corrupt_at("eA=="), None);
        assert_eq!(corrupt_at("aGVsbG8="), None);
        assert_eq!(corrupt_at(""), None);
        assert_eq!(corrupt_at("not base64!"), Some(3));
        assert_eq!(corrupt_at("eA="), Some(3));
        assert_eq!(corrupt_at("eA"), Some(0));
        assert_eq!(corrupt_at("eA==x"), Some(4));
        assert_eq!(corrupt_at("e==="), Some(1));
        assert_eq!(corrupt_at("eA\n=="), None);
    }
}
