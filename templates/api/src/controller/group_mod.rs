{{ p.header_rust }}//! The reconcilers of the API group `{{ r.qualified_group }}`.

// +kbr:scaffold:controllers
