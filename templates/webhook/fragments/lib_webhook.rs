    webhook::{{ r.group_module }}::{{ r.version }}::{{ r.kind_module }}::setup_webhook,
