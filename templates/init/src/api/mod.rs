{{ p.header_rust }}//! The API types of this project, one module per group and version:
//! `api::<group>::<version>::<Kind>`. `kbr create api` adds them; each kind's CRD is derived
//! from its Rust type by `#[derive(CustomResource)]`.

// +kbr:scaffold:groups
