namespace hwbvh { void emu_module_anchor() {} }
