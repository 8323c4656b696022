#include "target_options.h"

#include "hwbvh/api/api.h"

namespace hwbvh::cli {
namespace {
bool given(const CLI::Option* option) { return option != nullptr && option->count() > 0; }
}  // namespace

void refuse_unless(const CLI::Option* option, std::initializer_list<blob::Target> applies_to, blob::Target target,
                   const std::string& subject) {
  if (given(option)) api::refuse_unless(true, option->get_name(), applies_to, target, subject);
}

CLI::Option* add_instance_mask_option(CLI::App& sub, uint32_t& mask) {
  return sub.add_option("--instance-mask", mask,
                        "the rays' 8-bit instance mask: instances whose mask shares no bit with it are skipped")
      ->check(CLI::Range(0u, 255u))
      ->capture_default_str();
}

void refuse_instance_mask(const CLI::Option* option, const std::string& subject) {
  api::refuse_instance_mask(given(option), subject);
}

void TargetTraceOptions::refuse_unused(const emu::LoadedBvh& bvh) const {
  api::refuse_unused({.stack_size = given(stack_size),
                      .heuristic = given(heuristic),
                      .stoc = given(stoc),
                      .instance_mask = given(instance_mask)},
                     bvh);
}

}  // namespace hwbvh::cli
