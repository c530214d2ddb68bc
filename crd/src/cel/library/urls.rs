//! The Kubernetes URL library: `url`, `isURL` and the getters of `kubernetes.URL`.
//!
//! Mirrors `k8s.io/apiserver/pkg/cel/library/urls.go` (`urlLibraryDecls`): `url(s)` and
//! `isURL(s)` accept what Go's `url.ParseRequestURI` accepts (an absolute URI or an
//! absolute path); `url(s)` then keeps `url.Parse(s)`, and a string that is not a URL fails
//! with `URL parse error during conversion from string: <Go's error>`.

use std::collections::HashMap;

use cel::common::types::{CelBool, CelList, CelMap, CelMapKey, CelString};
use cel::common::value::Val;
use cel::{DeclarationError, Env, ExecutionError};

use crate::cel::types::url::Url;

/// Registers the library's overloads on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_overload!(env, fn url: (CelString) -> Result<Url>, id = "string_to_url")?;
    cel::add_member_overload!(env, fn get_scheme: (Url) -> CelString, id = "url_get_scheme")?;
    cel::add_member_overload!(env, fn get_host: (Url) -> CelString, id = "url_get_host")?;
    cel::add_member_overload!(env, fn get_hostname: (Url) -> CelString, id = "url_get_hostname")?;
    cel::add_member_overload!(env, fn get_port: (Url) -> CelString, id = "url_get_port")?;
    cel::add_member_overload!(env, fn get_escaped_path: (Url) -> CelString,
        id = "url_get_escaped_path")?;
    cel::add_member_overload!(env, fn get_query: (Url) -> CelMap, id = "url_get_query")?;
    cel::add_overload!(env, fn is_url: (CelString) -> CelBool, name = "isURL", id = "is_url_string")?;
    Ok(())
}

fn url(text: &CelString<'_>) -> Result<Url, ExecutionError> {
    let error = |e: String| {
        ExecutionError::function_error(
            "url",
            format!("URL parse error during conversion from string: {e}"),
        )
    };
    Url::parse_request_uri(text.inner()).map_err(error)?;
    Url::parse(text.inner()).map_err(error)
}

fn is_url(text: &CelString<'_>) -> CelBool {
    Url::parse_request_uri(text.inner()).is_ok().into()
}

fn get_scheme(url: &Url) -> CelString<'static> {
    url.scheme().to_owned().into()
}

fn get_host(url: &Url) -> CelString<'static> {
    url.host().to_owned().into()
}

fn get_hostname(url: &Url) -> CelString<'static> {
    url.hostname().to_owned().into()
}

fn get_port(url: &Url) -> CelString<'static> {
    url.port().to_owned().into()
}

fn get_escaped_path(url: &Url) -> CelString<'static> {
    url.escaped_path().into()
}

/// `map(string, list(string))` of the query's decoded keys and values.
fn get_query(url: &Url) -> CelMap<'static> {
    let entries: HashMap<CelMapKey<'static>, Box<dyn Val>> = url
        .query()
        .into_iter()
        .map(|(key, values)| {
            let values: Vec<Box<dyn Val>> = values
                .into_iter()
                .map(|v| Box::new(CelString::from(v)) as Box<dyn Val>)
                .collect();
            (
                CelMapKey::from(key),
                Box::new(CelList::from(values)) as Box<dyn Val>,
            )
        })
        .collect();
    CelMap::from(entries)
}
