    api::{{ r.group_module }}::{{ r.version }}::add_to_scheme,
