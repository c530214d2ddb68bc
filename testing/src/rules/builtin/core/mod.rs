//! core/v1: Pods and pod templates ([`pod`], [`pod_validation`]), Services ([`service`],
//! [`service_alloc`]), ConfigMaps and Secrets ([`config`]), as `pkg/apis/core/v1` and
//! `pkg/apis/core/validation` define them.

pub(crate) mod config;
pub(crate) mod pod;
pub(crate) mod pod_validation;
pub(crate) mod service;
pub(crate) mod service_alloc;
