namespace hwbvh { void stats_module_anchor() {} }
