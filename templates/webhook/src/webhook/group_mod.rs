{{ p.header_rust }}//! The webhooks of API group `{{ r.qualified_group }}`, one module per version.

// +kbr:scaffold:versions
