//! Percent-encoding as Go's `net/url` does it (`shouldEscape`, `unescape`, `escape`,
//! `validEncoded` in `src/net/url/url.go`), per part of a URL.

use crate::cel::types::golang::quote;

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    QueryComponent,
    Fragment,
}

/// `shouldEscape`.
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone) && b"!$&'()*+,;=:[]<>\"".contains(&c) {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => return false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => return c == b'?',
            Mode::UserPassword => return matches!(c, b'@' | b'/' | b'?' | b':'),
            Mode::QueryComponent => return true,
            Mode::Fragment => return false,
            Mode::Host | Mode::Zone => {}
        },
        _ => {}
    }
    !(mode == Mode::Fragment && matches!(c, b'!' | b'(' | b')' | b'*'))
}

fn unhex(c: u8) -> u8 {
    (c as char).to_digit(16).unwrap_or(0) as u8
}

/// `unescape`: `%XX` decoded (and `+` as space in a query component), or Go's error text.
pub(super) fn unescape(s: &str, mode: Mode) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                if i + 2 >= bytes.len()
                    || !bytes[i + 1].is_ascii_hexdigit()
                    || !bytes[i + 2].is_ascii_hexdigit()
                {
                    let end = (i + 3).min(bytes.len());
                    return Err(escape_error(&bytes[i..end]));
                }
                let escaped = &s[i..i + 3];
                if mode == Mode::Host && unhex(bytes[i + 1]) < 8 && escaped != "%25" {
                    return Err(escape_error(escaped.as_bytes()));
                }
                if mode == Mode::Zone {
                    let v = unhex(bytes[i + 1]) << 4 | unhex(bytes[i + 2]);
                    if escaped != "%25" && v != b' ' && should_escape(v, Mode::Host) {
                        return Err(escape_error(escaped.as_bytes()));
                    }
                }
                i += 3;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && should_escape(c, mode) {
                    return Err(format!(
                        "invalid character {} in host name",
                        quote(&(c as char).to_string())
                    ));
                }
                i += 1;
            }
        }
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                out.push(unhex(bytes[i + 1]) << 4 | unhex(bytes[i + 2]));
                i += 2;
            }
            b'+' if mode == Mode::QueryComponent => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// `EscapeError.Error()`.
fn escape_error(escape: &[u8]) -> String {
    format!(
        "invalid URL escape {}",
        quote(&String::from_utf8_lossy(escape))
    )
}

/// `escape`.
pub(super) fn escape(s: &str, mode: Mode) -> String {
    let mut out = String::with_capacity(s.len());
    for &c in s.as_bytes() {
        if c == b' ' && mode == Mode::QueryComponent {
            out.push('+');
        } else if should_escape(c, mode) {
            out.push_str(&format!("%{c:02X}"));
        } else {
            out.push(c as char);
        }
    }
    out
}

/// `validEncoded`: no byte that `escape` would escape, but sub-delimiters, `:`, `@`,
/// brackets and `%`.
pub(super) fn valid_encoded(s: &str, mode: Mode) -> bool {
    s.bytes()
        .all(|c| b"!$&'()*+,;=:@[]%".contains(&c) || !should_escape(c, mode))
}
