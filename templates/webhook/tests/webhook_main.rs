{{ p.header_rust }}//! The webhook test suite: one module per kind with webhooks, calling its defaulter, validator
//! and conversion directly and through an API server with the webhooks registered (the
//! in-process fake API server, or envtest when `KUBEBUILDER_ASSETS` is set).
//!
//! All kinds share this one test binary, like the webhook suite of a Kubebuilder project.
//! `kbr create webhook` adds a module here.

// +kbr:scaffold:tests
