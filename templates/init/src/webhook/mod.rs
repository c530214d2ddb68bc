{{ p.header_rust }}//! The webhooks of this project, one module per group and version:
//! `webhook::<group>::<version>::<kind>`. `kbr create webhook` adds them; `src/lib.rs` registers
//! them and `make manifests` writes the webhook configurations they imply.

// +kbr:scaffold:groups
