#include "target_options.h"

#include <algorithm>

#include <fmt/format.h>

#include "hwbvh/core/error.h"

namespace hwbvh::cli {

void refuse_unless(const CLI::Option* option, std::initializer_list<blob::Target> applies_to, blob::Target target,
                   const std::string& subject) {
  if (option == nullptr || option->count() == 0) return;
  if (std::find(applies_to.begin(), applies_to.end(), target) != applies_to.end()) return;
  std::string targets;
  for (const blob::Target t : applies_to) {
    targets += (targets.empty() ? "" : " and ") + std::string(blob::target_name(t));
  }
  throw Error(ErrorKind::BadInput, "",
              fmt::format("{} applies to target{} {} only ({} targets {})", option->get_name(),
                          applies_to.size() > 1 ? "s" : "", targets, subject, blob::target_name(target)));
}

CLI::Option* add_instance_mask_option(CLI::App& sub, uint32_t& mask) {
  return sub.add_option("--instance-mask", mask,
                        "the rays' 8-bit instance mask: instances whose mask shares no bit with it are skipped")
      ->check(CLI::Range(0u, 255u))
      ->capture_default_str();
}

void refuse_instance_mask(const CLI::Option* option, const std::string& subject) {
  if (option == nullptr || option->count() == 0) return;
  throw Error(ErrorKind::BadInput, "",
              fmt::format("--instance-mask applies to two-level blobs only ({} has no instances)", subject));
}

void TargetTraceOptions::refuse_unused(const emu::LoadedBvh& bvh) const {
  using blob::Target;
  refuse_unless(stack_size, {Target::Rtip31, Target::Rtip20}, bvh.target, bvh.file);
  refuse_unless(heuristic, {Target::Rtip31, Target::Rtip20}, bvh.target, bvh.file);
  refuse_unless(stoc, {Target::Rtip31, Target::Xe3}, bvh.target, bvh.file);
  if (!bvh.two_level()) refuse_instance_mask(instance_mask, bvh.file);
}

}  // namespace hwbvh::cli
