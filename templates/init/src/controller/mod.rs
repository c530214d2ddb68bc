{{ p.header_rust }}//! The reconcilers of this project, one module per API group:
//! `controller::<group>::<Kind>Reconciler`. `kbr create api` adds them.

// +kbr:scaffold:groups
