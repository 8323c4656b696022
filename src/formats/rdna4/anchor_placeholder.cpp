namespace hwbvh { void rdna4_module_anchor() {} }
