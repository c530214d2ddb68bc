//! The functions kube-apiserver adds to CEL for CRD rules: the Kubernetes libraries of
//! `k8s.io/apiserver/pkg/cel/library` (lists, regex, urls, quantity, ip, cidr, format,
//! semver), and the cel-go functions cel-rust lacks (sets, two-variable comprehensions,
//! version 2 of the optional library).
//! Each file cites the Go file it mirrors.

mod cidr;
mod comprehensions;
mod format;
mod ip;
mod lists;
mod optional;
mod quantity;
mod regex;
mod semver;
mod sets;
mod urls;

use cel::{DeclarationError, Env};

pub(super) use comprehensions::as_cel_go;

/// Registers every library on `env`, in `base.go`'s order.
pub(super) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    urls::register(env)?;
    regex::register(env)?;
    lists::register(env)?;
    quantity::register(env)?;
    sets::register(env)?;
    ip::register(env)?;
    cidr::register(env)?;
    format::register(env)?;
    comprehensions::register(env)?;
    semver::register(env)?;
    optional::register(env)?;
    Ok(())
}
