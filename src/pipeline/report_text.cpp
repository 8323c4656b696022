// Text rows of the build report's opacity part, shared by the commands that print a report.
#include <cstdio>

#include "hwbvh/pipeline/pipeline.h"

namespace hwbvh::pipeline {
namespace {

// printf-style formatting into a string; the pipeline module does not link fmt.
template <class... Args>
std::string format(const char* pattern, Args... args) {
  const int n = std::snprintf(nullptr, 0, pattern, args...);
  std::string out(static_cast<std::size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), pattern, args...);
  out.pop_back();  // the terminating zero snprintf wrote
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> opacity_rows(const OpacityReport& o) {
  std::vector<std::pair<std::string, std::string>> rows;
  rows.emplace_back("alpha-tested triangles",
                    format("%llu (cutoff %g)", static_cast<unsigned long long>(o.alpha_tested_triangles), o.cutoff));
  rows.emplace_back("STOC", format("level %u, %s order, %llu bytes", o.stoc_level, o.order.c_str(),
                                   static_cast<unsigned long long>(o.stoc_bytes)));
  if (o.baked_sub_triangles == 0) return rows;
  rows.emplace_back("opacity bake",
                    format("level %u, %llu sub-triangles: %.1f %% opaque, %.1f %% transparent, %.1f %% unknown",
                           o.bake_level, static_cast<unsigned long long>(o.baked_sub_triangles), 100.0 * o.opaque_share,
                           100.0 * o.transparent_share, 100.0 * o.unknown_share));
  return rows;
}

}  // namespace hwbvh::pipeline
