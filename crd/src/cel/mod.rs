//! The CEL environment of CRD validation rules (`x-kubernetes-validations`), as
//! kube-apiserver v1.36 builds it.
//!
//! [`env`] composes it as `k8s.io/apiserver/pkg/cel/environment/base.go` does: the CEL
//! standard library with optional types, cel-go's strings (version 2), lists (version 3),
//! sets and two-variable comprehensions extensions, and the Kubernetes libraries of
//! `k8s.io/apiserver/pkg/cel/library` ([`library`]), whose value types are in [`types`].
//! Evaluation errors read as cel-go's ([`error`]). The interpreter is the `cel` crate
//! (cel-rust); what it does not model is listed in [`env`]. [`cost`] estimates a rule's cost
//! as kube-apiserver does when it installs a CRD.

mod check;
pub(crate) mod cost;
mod declarations;
mod env;
pub(crate) mod error;
mod library;
pub(crate) mod types;

pub(crate) use env::{CompileError, ENV, Output, compile, parse_as_cel_go};
