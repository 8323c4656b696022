#pragma once
// Traversal statistics of one blob: generate rays of each requested kind, trace them through the encoded bytes
// with the wavefront emulator, check every ray against Embree, and summarise the per-ray counters
// (docs/counters.md) as distributions. This is what `hwbvh stats` prints.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hwbvh/core/progress.h"

#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/machine/machine.h"
#include "hwbvh/emu/oracle.h"
#include "hwbvh/emu/rtip31/traversal.h"
#include "hwbvh/emu/wavefront.h"
#include "hwbvh/scene/camera.h"

namespace hwbvh::stats {

enum class RayKind {
  Primary,           ///< camera rays, 8x4 pixel tiles per wave, closest hit
  AmbientOcclusion,  ///< cosine-weighted hemisphere rays from primary hits, any hit (occlusion)
  Shadow,            ///< from primary hits to a point light, any hit (occlusion)
  Random,            ///< uniform random rays through the scene bounds, closest hit
  File,              ///< the user's rays from --rays-file, closest hit
  Reflection,        ///< one mirror bounce from primary hits, closest hit
};

const char* ray_kind_name(RayKind kind);  ///< "primary", "ao", "shadow", "reflection", "random", "file"
/// Parses a name of ray_kind_name; throws hwbvh::Error(BadInput) naming the valid ones.
RayKind parse_ray_kind(std::string_view name);
/// Parses a comma-separated list of ray_kind_name values, dropping repeats. Throws hwbvh::Error(BadInput)
/// for an unknown name or an empty list.
std::vector<RayKind> parse_ray_kinds(std::string_view list);
/// True for kinds traced in any-hit mode and checked with rtcOccluded1.
bool is_occlusion(RayKind kind);
/// True for kinds spawned from primary hits (ao, shadow, reflection): asking for one traces the primary rays too.
bool from_primary_hits(RayKind kind);

struct StatsOptions {
  std::vector<RayKind> kinds{RayKind::Primary, RayKind::AmbientOcclusion, RayKind::Shadow};
  uint32_t width = 256;                ///< primary-ray image size
  uint32_t height = 256;
  std::optional<Camera> camera;        ///< default: auto_frame(the scene bounds (LoadedBvh::bounds), width / height)
  uint32_t ao_samples = 4;             ///< AO rays per primary hit
  std::optional<float> ao_distance;    ///< AO tmax; default 0.1 x the scene-bounds diagonal
  uint32_t random_rays = 16384;
  uint64_t seed = 1;
  std::string rays_file;               ///< required for RayKind::File
  /// Stack size, sort options, step limit, stoc; any_hit is set per kind, any_hit_shader from the blob
  /// (emu::AnyHitShader::of: its alpha test, when it has an AlphaTest section).
  emu::TraceOptions trace;
  int threads = 0;                     ///< 0 = all hardware threads; counters are identical at any count
  bool oracle = true;                  ///< check every ray with Embree
  /// Keep every ray and its result in the report (KindStats::results ...): memory grows with the rays. Writers use
  /// a RaySink instead, which sees each batch once.
  bool keep_results = false;
  /// Rays are generated, traced, checked and reduced in batches of about this many (a whole number of 32-ray waves;
  /// camera-derived kinds: the rays of batch_rays / 32 primary tiles and their secondary rays). Memory is bounded
  /// by the batch, not the image; results are identical at any batch size.
  uint32_t batch_rays = 65536;
  /// Also run the machine model (docs/machine-model.md) on each ray type's recorded node sequences.
  std::optional<emu::MachineConfig> machine;
};

/// Distribution of one per-ray counter.
struct Distribution {
  double mean = 0.0;
  double median = 0.0;
  double p95 = 0.0;
  double max = 0.0;
  uint64_t bin_width = 1;         ///< histogram bin width (bin i counts values in [i*w, (i+1)*w))
  std::vector<uint64_t> histogram;
  friend bool operator==(const Distribution&, const Distribution&) = default;
};

/// The values of one per-ray counter as value -> number of rays: exact percentiles and histograms in memory that
/// grows with the distinct values, not with the rays.
class ValueCounts {
 public:
  void add(uint64_t value);
  [[nodiscard]] uint64_t count() const { return count_; }
  /// Nearest-rank median and 95th percentile, exact mean (the sum of all values, divided once), 32-bin histogram.
  [[nodiscard]] Distribution summary() const;

 private:
  static constexpr uint64_t kDenseValues = 4096;  ///< counts of smaller values in a vector, larger ones in a map
  std::vector<uint64_t> dense_;
  std::map<uint64_t, uint64_t> sparse_;
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
};

struct KindStats {
  RayKind kind = RayKind::Primary;
  uint64_t rays = 0;
  uint64_t hits = 0;                 ///< rays that hit (closest hit) or are occluded (any hit)
  Distribution steps;
  Distribution box_tests;
  Distribution triangle_tests;
  Distribution any_hit_invocations;  ///< per ray (all zero without an any-hit shader)
  emu::RayCounters totals;           ///< sums over rays (max_stack_depth: maximum)
  emu::RayCounters hit_totals;       ///< the same over the rays that hit (or are occluded) only
  uint64_t faulted_rays = 0;         ///< rays stopped by a malformed node
  emu::NodeFault first_fault = emu::NodeFault::None;  ///< the fault of the first faulted ray, in ray order
  uint32_t first_fault_node = 0xFFFFFFFFu;            ///< the node pointer it faulted on
  emu::WaveStats waves;              ///< summed over waves
  emu::AgreementStats agreement;     ///< empty when the oracle is off
  double emulation_seconds = 0.0;    ///< wall time of the emulation alone (not the oracle); not deterministic
  std::optional<emu::MachineResult> machine;  ///< machine-model outputs, with StatsOptions::machine
  std::vector<emu::RayResult> results;  ///< per ray, only with StatsOptions::keep_results
  std::vector<Ray> rays_traced;          ///< the rays of `results`, only with StatsOptions::keep_results
  std::vector<uint32_t> pixel;           ///< per ray its pixel (y * width + x), when the kind has an image
  /// Per ray the oracle's verdict, only with StatsOptions::keep_results and the oracle on (else empty).
  std::vector<emu::Disagreement> verdicts;

  [[nodiscard]] double per_ray(uint64_t total) const { return rays ? static_cast<double>(total) / static_cast<double>(rays) : 0.0; }
  /// Mean over the rays that hit, of a counter summed in hit_totals; 0 when no ray hit.
  [[nodiscard]] double per_hit(uint64_t hit_total) const { return hits ? static_cast<double>(hit_total) / static_cast<double>(hits) : 0.0; }
  [[nodiscard]] double rays_per_second() const { return emulation_seconds > 0 ? static_cast<double>(rays) / emulation_seconds : 0.0; }
};

/// The per-level counters (docs/counters.md) that stats, compare and report show for two-level BVHs only: JSON key
/// and row label.
struct LevelCounter {
  const char* key;
  const char* label;
  uint64_t emu::RayCounters::*member;
};
inline constexpr LevelCounter kLevelCounters[] = {
    {"tlas_steps", "TLAS steps", &emu::RayCounters::tlas_steps},
    {"blas_steps", "BLAS steps", &emu::RayCounters::blas_steps},
    {"instance_node_steps", "instance-node steps", &emu::RayCounters::instance_node_steps},
    {"instance_transitions", "instance transitions", &emu::RayCounters::instance_transitions},
};

struct StatsReport {
  std::string file;
  std::string target;  ///< blob::target_name of the traced BVH
  uint32_t width = 0;
  uint32_t height = 0;
  Camera camera;
  uint32_t stack_size = 0;  ///< entries of the stack traced with: the LDS ring, or Xe3's short stack
  bool short_stack = false;  ///< xe3: stack_size is its fixed short stack (emu::kXe3ShortStackEntries)
  int threads = 0;
  bool any_hit_shader = false;  ///< the blob has alpha-test data: non-opaque candidates ran the any-hit model
  bool stoc = true;             ///< TraceOptions::stoc
  bool two_level = false;       ///< the blob has a top level and BLASes: the per-level counters are shown
  std::vector<KindStats> kinds;
  std::optional<emu::MachineConfig> machine;  ///< the machine model's configuration, when it ran

  /// "stack 16 entries", or "short stack 4 entries" for xe3.
  [[nodiscard]] std::string stack_text() const;
};

/// One batch of traced rays of one kind, as run_stats hands it to a RaySink: valid during the call only.
struct TracedBatch {
  std::size_t kind_index = 0;  ///< the kind's place in StatsReport::kinds (= StatsOptions::kinds)
  RayKind kind = RayKind::Primary;
  uint64_t first_ray = 0;      ///< index of rays[0] among all rays of its kind
  std::span<const Ray> rays;
  std::span<const uint32_t> pixel;              ///< per ray its pixel (y * width + x), when the kind has an image
  std::span<const emu::RayResult> results;
  std::span<const emu::Disagreement> verdicts;  ///< per ray the oracle's verdict; empty when the oracle is off
};

/// Receives every traced ray, batch by batch, as run_stats goes: per-ray files, .rra ray history, images. Each
/// kind's batches arrive in ray order; batches of different kinds interleave (camera-derived kinds batch by batch
/// of the image), in an order that depends only on the options, never on the thread count.
class RaySink {
 public:
  virtual ~RaySink() = default;
  virtual void add(const TracedBatch& batch) = 0;
};

/// Runs the emulator (and the oracle) over every requested ray kind, in bounded batches (StatsOptions::batch_rays):
/// each batch's rays are generated, traced, checked, counted and handed to `sink`, then dropped. `progress` hears
/// of the oracle's scene and of every batch. Throws hwbvh::Error(BadInput) for invalid options or an unreadable rays
/// file. Memory: the batch, the distributions, and with StatsOptions::machine the node sequences the machine model
/// runs on (every traced ray's, held to the end) or with keep_results every ray.
StatsReport run_stats(const emu::LoadedBvh& bvh, const StatsOptions& options, RaySink* sink = nullptr,
                      const ProgressCallback& progress = {});

/// Traces the caller's `rays` as one batch (waves of 32 consecutive rays), as run_stats traces a rays file, in
/// closest-hit mode or, with `any_hit`, occlusion mode (checked with rtcOccluded1). The report has one kind, File;
/// options.kinds and the ray-generation options are not used. Throws hwbvh::Error(BadInput) naming the first ray
/// that breaks a rays file's rules (docs/rays.md).
StatsReport run_stats_on_rays(const emu::LoadedBvh& bvh, std::vector<Ray> rays, bool any_hit,
                              const StatsOptions& options);

/// Distribution of `values` (ValueCounts::summary).
Distribution summarize(const std::vector<uint64_t>& values);

}  // namespace hwbvh::stats
