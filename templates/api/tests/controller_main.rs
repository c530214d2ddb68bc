{{ p.header_rust }}//! The controller test suite: one module per kind, each testing its reconciler against the
//! in-process fake API server, or against a real API server (envtest) when `KUBEBUILDER_ASSETS`
//! is set.
//!
//! All kinds share this one test binary, like the controller suite of a Kubebuilder project:
//! each file directly under `tests/` would be a binary of its own, linked and stored
//! separately. `kbr create api` adds a module here.

// +kbr:scaffold:tests
