{{ p.header_rust }}//! The webhooks of {% if r.builtin %}{{ r.group_title }}{% else %}API group `{{ r.qualified_group }}`{% endif %}, one module per version.

// +kbr:scaffold:versions
