    <controller::{{ r.group_module }}::{{ r.reconciler }} as rbac::Rbac>::rbac_rules,
