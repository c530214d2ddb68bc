    controller::{{ r.group_module }}::{{ r.reconciler }}::setup_with_multicluster_manager,
