{{ p.header_rust }}//! The webhooks of {{ r.qualified_group }}/{{ r.version }}, one module per kind.

// +kbr:scaffold:kinds
