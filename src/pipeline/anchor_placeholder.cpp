namespace hwbvh { void pipeline_module_anchor() {} }
