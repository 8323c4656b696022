#pragma once
// Options that do nothing for some targets are refused when given on the command line, never silently ignored;
// an option left at its default is never refused. docs/cli.md "Options by target" has the table.
#include <initializer_list>
#include <string>

#include <CLI/CLI.hpp>

#include "hwbvh/blob/blob.h"
#include "hwbvh/emu/loaded_bvh.h"

namespace hwbvh::cli {

/// Throws hwbvh::Error(BadInput) "OPTION applies to target rtip31 only (SUBJECT targets xe3)" when `option` was
/// given on the command line and `target` is not one of `applies_to`.
void refuse_unless(const CLI::Option* option, std::initializer_list<blob::Target> applies_to, blob::Target target,
                   const std::string& subject);

/// --instance-mask N (0..255): the rays' instance mask, TraceOptions::instance_mask. Out of range: exit 2.
CLI::Option* add_instance_mask_option(CLI::App& sub, uint32_t& mask);
/// Throws hwbvh::Error(BadInput) when `option` (--instance-mask) was given for `subject`, a one-level BVH: it has no
/// instances, and the targets disagree on what a mask means without them (RT IP 2.0 box nodes carry none).
void refuse_instance_mask(const CLI::Option* option, const std::string& subject);

/// The tracing options of stats, render and report that not every target's emulator has; null where the command
/// has no such option.
struct TargetTraceOptions {
  CLI::Option* stack_size = nullptr;  ///< rtip31, rtip20: Xe3's short stack has a fixed size
  CLI::Option* heuristic = nullptr;   ///< rtip31, rtip20: Xe3's unit always takes the nearest child first
  CLI::Option* stoc = nullptr;        ///< rtip31, xe3: RT IP 2.0 blobs hold no STOC states
  CLI::Option* instance_mask = nullptr;  ///< two-level blobs only (refuse_instance_mask)

  /// Refuses those given on the command line that `bvh`'s target (or level count) has no use for, naming its file.
  void refuse_unused(const emu::LoadedBvh& bvh) const;
};

}  // namespace hwbvh::cli
