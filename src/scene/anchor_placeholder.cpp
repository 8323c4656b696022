namespace hwbvh { void scene_module_anchor() {} }
