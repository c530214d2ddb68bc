{{ p.header_rust }}//! The API group `{{ r.qualified_group }}`, one module per version.

// +kbr:scaffold:versions
