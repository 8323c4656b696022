#pragma once
// One table across hardware targets for one scene (`hwbvh compare`): the same scene built for each variant, the
// same rays traced through each variant's encoded bytes, every ray checked against Embree, and optionally the
// machine model's cycles. Variants: rtip20 BVH4 (RDNA 2/3), rtip31 BVH4x2 (RDNA 4 dual intersect on the 4-wide
// tree), rtip31 BVH8 without and with OBBs (RDNA 4), xe3 QBVH6 (Intel Xe3, QuadLeafs without STOC bits).
// Each variant is the blob `hwbvh build` writes for its target (one level, or two for an instanced scene) without an
// opacity bake, loaded as `hwbvh stats` loads a blob and traced the same way. Two-level scenes: every row traces its target's TLAS and
// BLASes, the oracle is Embree with the same instances, and the rows add the per-level counters.
// Alpha-tested scenes: each variant is traced with its blob's any-hit shader (emu::AnyHitShader), and the oracle's
// Embree filter runs the same alpha test, as `hwbvh stats` does. Nothing is baked (no xe3 STOC bits, no rtip31 Stoc
// sideband), so on every row each candidate hit on an alpha-tested triangle runs the shader.
#include <optional>
#include <string>
#include <vector>

#include "hwbvh/bvh_build/builder.h"
#include "hwbvh/emu/machine/machine.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/scene/scene.h"
#include "hwbvh/stats/machine_output.h"
#include "hwbvh/stats/traversal_stats.h"

namespace hwbvh::stats {

struct CompareOptions {
  std::vector<RayKind> kinds{RayKind::Primary, RayKind::Random};  ///< primary, ao, shadow, random
  uint32_t width = 256;
  uint32_t height = 256;
  std::optional<Camera> camera;
  uint32_t ao_samples = 4;           ///< AO rays per primary hit, as StatsOptions
  std::optional<float> ao_distance;  ///< AO tmax; default 0.1 x the scene-bounds diagonal, as StatsOptions
  uint32_t random_rays = 16384;
  uint64_t seed = 1;
  emu::TraceOptions trace;
  bvh_build::BuildQuality quality = bvh_build::BuildQuality::Medium;
  std::optional<emu::MachineConfig> machine;
  int threads = 0;
};

/// One variant's figures, per ray summed over all requested ray kinds.
struct VariantRow {
  std::string name;                 ///< e.g. "rtip31 BVH8 + OBB"
  uint64_t bytes = 0;               ///< node bytes (every level of a two-level BVH)
  double bytes_per_triangle = 0.0;  ///< per triangle in the BVH (in the BLASes of a two-level one)
  uint64_t rays = 0;
  double steps = 0.0;               ///< per ray
  double box_tests = 0.0;
  double triangle_tests = 0.0;
  double stack_ops = 0.0;           ///< pushes + pops
  double any_hit_invocations = 0.0;  ///< any-hit shader (alpha test) runs; 0 without alpha-tested triangles
  emu::RayCounters totals;           ///< every counter summed over all rays (e.g. the per-level ones)
  emu::AgreementStats agreement;
  /// The machine model's run per ray kind (in the order of CompareReport::kinds), when a preset was given.
  std::vector<std::pair<RayKind, emu::MachineResult>> machine;
  /// emu::hypothetical_note of the preset and the hardware this variant needs: "" when the preset's hardware runs it
  /// (or without a preset). BVH4x2 needs RT IP 3.1's dual intersect, the BVH8 rows rtip31 nodes, xe3 an Intel GPU.
  std::string hypothetical;

  /// The variant's name, with " (hypothetical)" when its machine-model runs are.
  [[nodiscard]] std::string label() const;

  /// Cycles summed over the ray kinds, or nullopt if a run did not complete (deadlock, cycle limit): such a run's
  /// cycles are not a cost and are never summed.
  [[nodiscard]] std::optional<uint64_t> machine_cycles() const;
  /// The table cell: the summed cycles, or the first unfinished run's status and ray type ("deadlocked (ao)"), each
  /// followed by " (hypothetical)" when the preset's hardware does not run this variant.
  [[nodiscard]] std::string machine_cell() const;
  /// A counter of `totals` per ray; 0 without rays.
  [[nodiscard]] double per_ray(uint64_t total) const;
};

struct CompareReport {
  std::string scene;
  uint64_t triangles = 0;  ///< in the scene (in its BLASes, each once, for a two-level one)
  /// Two-level scenes: their levels (instances, BLASes; the BVH8 + OBB build's top-level figures). Its rows then
  /// show the per-level counters (kLevelCounters).
  std::optional<pipeline::LevelsReport> levels;
  std::vector<RayKind> kinds;
  std::optional<emu::MachineConfig> machine;  ///< the machine model's preset, when it ran
  bool any_hit_shader = false;  ///< the scene has alpha-tested triangles: variants and oracle ran its alpha test
  std::vector<VariantRow> rows;
};

/// One machine-model run of compare: a variant's rays of one type, as machine_figures' Throughput set.
struct MachineRun {
  std::string variant;  ///< VariantRow::label()
  RayKind kind = RayKind::Primary;
  std::vector<MachineFigure> figures;
};
/// Every run, variant by variant in the order of CompareReport::rows; empty without a machine preset.
std::vector<MachineRun> machine_runs(const CompareReport& report);

/// Builds every variant of `scene` (in two levels for an InstancedScene) and traces the same rays through each.
/// `progress` hears each build's phases (pipeline::build_any_blob's, prefixed "building TARGET: "), "oracle scene"
/// and "tracing" (rays traced and checked, over all variants). Throws hwbvh::Error on bad input.
CompareReport compare_targets(const AnyScene& scene, const CompareOptions& options,
                              const ProgressCallback& progress = {});

/// One line per variant whose machine-model runs are hypothetical: "<variant>: <its hypothetical_note>".
std::vector<std::string> hypothetical_notes(const CompareReport& report);

std::string compare_to_text(const CompareReport& report);
std::string compare_to_json(const CompareReport& report);

}  // namespace hwbvh::stats
