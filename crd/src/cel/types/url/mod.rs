//! `kubernetes.URL`: Go's `net/url.URL` as a CEL value.
//!
//! Ports Go's `src/net/url/url.go` (`Parse`, `ParseRequestURI`, `parse`, `getScheme`,
//! `parseAuthority`, `parseHost` with its IP-literal check, `unescape`, `shouldEscape`,
//! `setPath`, `EscapedPath`, `Hostname`, `Port`, `ParseQuery`, `String`) with its error texts:
//! kube-apiserver's `url()` and `isURL()` (`k8s.io/apiserver/pkg/cel/library/urls.go`) accept
//! what `url.ParseRequestURI` accepts and report its error. The `url` crate implements the
//! WHATWG URL standard instead, which accepts and normalises differently (it lower-cases
//! hosts, resolves `..`, accepts spaces), so it cannot stand in. The CEL type is
//! `k8s.io/apiserver/pkg/cel/url.go` (equal when `String()` is).

use std::collections::BTreeMap;

use cel::common::types::Type;
use cel::common::value::{StaticVal, Val};

use super::golang::quote;
use super::ip::Addr;

mod escape;

use escape::{Mode, escape, unescape, valid_encoded};

/// The CEL type of a URL (`apiservercel.URLType`).
pub(crate) static URL_TYPE: Type = Type::new_unspecified_type("kubernetes.URL");

/// A parsed URL: `[scheme:][//[userinfo@]host][/]path[?query][#fragment]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Url {
    scheme: String,
    opaque: String,
    /// `username[:password]`, decoded, and whether it was there at all.
    user: Option<(String, Option<String>)>,
    host: String,
    path: String,
    raw_path: String,
    force_query: bool,
    raw_query: String,
    fragment: String,
    raw_fragment: String,
}

/// `getScheme`: `(scheme, rest)`.
fn get_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            c if c.is_ascii_alphabetic() => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i == 0 => return Ok(("", raw)),
            b'0'..=b'9' | b'+' | b'-' | b'.' => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// `validOptionalPort`: empty, or `:` and digits.
fn valid_optional_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

/// `parseHost`, for `scheme`.
fn parse_host(scheme: &str, host: &str) -> Result<String, String> {
    match host.rfind('[') {
        Some(open) if open > 0 => return Err("invalid IP-literal".into()),
        Some(_) => {
            let Some(close) = host.rfind(']') else {
                return Err("missing ']' in host".into());
            };
            let colon_port = &host[close + 1..];
            if !valid_optional_port(colon_port) {
                return Err(format!("invalid port {} after host", quote(colon_port)));
            }
            let colon_port = unescape(colon_port, Mode::Host)?;
            let hostname = &host[1..close];
            let hostname = match hostname.find("%25") {
                Some(zone) => {
                    unescape(&hostname[..zone], Mode::Host)?
                        + &unescape(&hostname[zone..], Mode::Zone)?
                }
                None => unescape(hostname, Mode::Host)?,
            };
            let addr = Addr::parse(&hostname).map_err(|e| format!("invalid host: {e}"))?;
            if addr.is4() {
                return Err("invalid IP-literal".into());
            }
            return Ok(format!("[{hostname}]{colon_port}"));
        }
        None => {}
    }
    if let Some(first) = host.find(':') {
        let last = host.rfind(':').unwrap_or(first);
        // Strict colons for http and https only (go.dev/issue/75223, 78077).
        let at = if last != first && scheme != "http" && scheme != "https" {
            last
        } else {
            first
        };
        let colon_port = &host[at..];
        if !valid_optional_port(colon_port) {
            return Err(format!("invalid port {} after host", quote(colon_port)));
        }
    }
    unescape(host, Mode::Host)
}

/// `validUserinfo`.
fn valid_userinfo(s: &str) -> bool {
    s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c))
}

impl Url {
    /// `url.ParseRequestURI`: an absolute URI or an absolute path, no fragment.
    pub(crate) fn parse_request_uri(raw: &str) -> Result<Url, String> {
        parse(raw, true).map_err(|e| format!("parse {}: {e}", quote(raw)))
    }

    /// `url.Parse`: any URI reference, with a fragment after `#`.
    pub(crate) fn parse(raw: &str) -> Result<Url, String> {
        let (u, frag) = raw.split_once('#').unwrap_or((raw, ""));
        let mut url = parse(u, false).map_err(|e| format!("parse {}: {e}", quote(u)))?;
        if !frag.is_empty() {
            url.fragment =
                unescape(frag, Mode::Fragment).map_err(|e| format!("parse {}: {e}", quote(raw)))?;
            url.raw_fragment = if escape(&url.fragment, Mode::Fragment) == frag {
                String::new()
            } else {
                frag.to_owned()
            };
        }
        Ok(url)
    }

    /// `Scheme`, lower-cased.
    pub(crate) fn scheme(&self) -> &str {
        &self.scheme
    }

    /// `Host`: `host[:port]`, IPv6 in brackets.
    pub(crate) fn host(&self) -> &str {
        &self.host
    }

    /// `Hostname`: the host without a valid port and without brackets.
    pub(crate) fn hostname(&self) -> &str {
        split_host_port(&self.host).0
    }

    /// `Port`: the port without `:`, `""` when there is none.
    pub(crate) fn port(&self) -> &str {
        split_host_port(&self.host).1
    }

    /// `EscapedPath`: `RawPath` when it is a valid escaping of `Path`, else `Path` escaped.
    pub(crate) fn escaped_path(&self) -> String {
        if !self.raw_path.is_empty()
            && valid_encoded(&self.raw_path, Mode::Path)
            && unescape(&self.raw_path, Mode::Path).is_ok_and(|p| p == self.path)
        {
            return self.raw_path.clone();
        }
        if self.path == "*" {
            return "*".into();
        }
        escape(&self.path, Mode::Path)
    }

    /// `Query()`: `ParseQuery(RawQuery)` keeping the pairs that decode.
    pub(crate) fn query(&self) -> BTreeMap<String, Vec<String>> {
        let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for pair in self.raw_query.split('&') {
            if pair.contains(';') || pair.is_empty() {
                continue;
            }
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            if let (Ok(key), Ok(value)) = (
                unescape(key, Mode::QueryComponent),
                unescape(value, Mode::QueryComponent),
            ) {
                values.entry(key).or_default().push(value);
            }
        }
        values
    }
}

/// `parse`.
fn parse(raw: &str, via_request: bool) -> Result<Url, String> {
    if raw.bytes().any(|b| b < b' ' || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".into());
    }
    let mut url = Url::default();
    if raw == "*" {
        url.path = "*".into();
        return Ok(url);
    }
    let (scheme, mut rest) = get_scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        url.force_query = true;
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_owned();
        rest = before;
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_owned();
            return Ok(url);
        }
        if via_request {
            return Err("invalid URI for request".into());
        }
        if rest
            .split('/')
            .next()
            .is_some_and(|segment| segment.contains(':'))
        {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!url.scheme.is_empty() || !via_request && !rest.starts_with("///"))
        && rest.starts_with("//")
    {
        let authority_and_path = &rest[2..];
        let (authority, path) = match authority_and_path.find('/') {
            Some(i) => authority_and_path.split_at(i),
            None => (authority_and_path, ""),
        };
        rest = path;
        let (userinfo, host) = match authority.rfind('@') {
            Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
            None => (None, authority),
        };
        url.host = parse_host(&url.scheme, host)?;
        if let Some(userinfo) = userinfo {
            if !valid_userinfo(userinfo) {
                return Err("net/url: invalid userinfo".into());
            }
            url.user = Some(match userinfo.split_once(':') {
                None => (unescape(userinfo, Mode::UserPassword)?, None),
                Some((user, password)) => (
                    unescape(user, Mode::UserPassword)?,
                    Some(unescape(password, Mode::UserPassword)?),
                ),
            });
        }
    }
    url.path = unescape(rest, Mode::Path)?;
    url.raw_path = if escape(&url.path, Mode::Path) == rest {
        String::new()
    } else {
        rest.to_owned()
    };
    Ok(url)
}

/// `splitHostPort`: a valid `:port` off the end, then the brackets.
fn split_host_port(host_port: &str) -> (&str, &str) {
    let (mut host, mut port) = (host_port, "");
    if let Some(colon) = host.rfind(':')
        && valid_optional_port(&host[colon..])
    {
        (host, port) = (&host_port[..colon], &host_port[colon + 1..]);
    }
    if host.len() >= 2 && host.starts_with('[') && host.ends_with(']') {
        host = &host[1..host.len() - 1];
    }
    (host, port)
}

impl std::fmt::Display for Url {
    /// `URL.String`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut out = String::new();
        if !self.scheme.is_empty() {
            out.push_str(&self.scheme);
            out.push(':');
        }
        if !self.opaque.is_empty() {
            out.push_str(&self.opaque);
        } else {
            if !self.scheme.is_empty() || !self.host.is_empty() || self.user.is_some() {
                if !self.host.is_empty() || !self.path.is_empty() || self.user.is_some() {
                    out.push_str("//");
                }
                if let Some((user, password)) = &self.user {
                    out.push_str(&escape(user, Mode::UserPassword));
                    if let Some(password) = password {
                        out.push(':');
                        out.push_str(&escape(password, Mode::UserPassword));
                    }
                    out.push('@');
                }
                out.push_str(&escape(&self.host, Mode::Host));
            }
            let path = self.escaped_path();
            if !path.is_empty() && !path.starts_with('/') && !self.host.is_empty() {
                out.push('/');
            }
            if out.is_empty() && path.split('/').next().is_some_and(|s| s.contains(':')) {
                out.push_str("./");
            }
            out.push_str(&path);
        }
        if self.force_query || !self.raw_query.is_empty() {
            out.push('?');
            out.push_str(&self.raw_query);
        }
        if !self.fragment.is_empty() {
            out.push('#');
            let raw_ok = !self.raw_fragment.is_empty()
                && valid_encoded(&self.raw_fragment, Mode::Fragment)
                && unescape(&self.raw_fragment, Mode::Fragment).is_ok_and(|f| f == self.fragment);
            if raw_ok {
                out.push_str(&self.raw_fragment);
            } else {
                out.push_str(&escape(&self.fragment, Mode::Fragment));
            }
        }
        f.write_str(&out)
    }
}

impl Val for Url {
    fn get_type(&self) -> &Type {
        &URL_TYPE
    }

    fn cel_type() -> &'static Type {
        &URL_TYPE
    }

    fn equals(&self, other: &dyn Val) -> bool {
        other
            .downcast_ref::<Url>()
            .is_some_and(|o| o.to_string() == self.to_string())
    }

    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

impl StaticVal for Url {}

#[cfg(test)]
mod tests;
