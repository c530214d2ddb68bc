{{ p.header_rust }}//! {{ r.qualified_group }}/{{ r.version }}: the API types of group `{{ r.group }}`, version `{{ r.version }}`.

// +kbr:scaffold:kinds

/// Adds every kind of {{ r.qualified_group }}/{{ r.version }} to `scheme`.
pub fn add_to_scheme(scheme: &mut kbr_runtime::Scheme) {
    // +kbr:scaffold:scheme
}
