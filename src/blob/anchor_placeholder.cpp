namespace hwbvh { void blob_module_anchor() {} }
