    ShardingOptions::kind::<{{ r.lib_module_path }}::{{ r.kind }}>,
