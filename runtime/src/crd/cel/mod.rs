//! CEL for CRD validation rules (`x-kubernetes-validations`), as kube-apiserver runs it.

pub(crate) mod cost;
