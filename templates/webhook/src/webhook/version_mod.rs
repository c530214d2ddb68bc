{{ p.header_rust }}//! The webhooks of {% if r.builtin %}{{ r.api_version }}{% else %}{{ r.qualified_group }}/{{ r.version }}{% endif %}, one module per kind.

// +kbr:scaffold:kinds
