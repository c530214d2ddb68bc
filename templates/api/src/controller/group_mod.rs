{{ p.header_rust }}//! The reconcilers of {{ r.group_title }}.

// +kbr:scaffold:controllers
