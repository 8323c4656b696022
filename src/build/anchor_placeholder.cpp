namespace hwbvh { void build_module_anchor() {} }
