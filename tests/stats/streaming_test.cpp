// run_stats in bounded batches: the statistics, the per-ray files and the kept results are the same at every batch
// size and thread count, the distributions are exact without the per-ray values, and a sink sees every ray once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "blob/scratch_dir.h"
#include "fixtures/paths.h"
#include "hwbvh/core/file_io.h"
#include "hwbvh/emu/machine/config.h"
#include "hwbvh/stats/per_ray.h"
#include "hwbvh/stats/stats_output.h"
#include "stats_fixture.h"

namespace hwbvh::stats {
namespace {

// Every kind, with partial tiles (37 x 23), a random-ray count that is no multiple of a wave, and an alpha-tested
// scene (any-hit invocations); the machine model on top.
StatsOptions every_kind() {
  StatsOptions o = test::small_stats_options();
  o.kinds = {RayKind::Shadow, RayKind::Primary, RayKind::AmbientOcclusion, RayKind::Random, RayKind::File,
             RayKind::Reflection};
  o.width = 37;
  o.height = 23;
  o.random_rays = 1000;
  o.rays_file = (test::source_dir() / "tests" / "fixtures" / "rotated-objects-grazes.rays").string();
  o.machine = emu::load_machine_preset("rdna4");
  return o;
}

struct Outputs {
  std::string json;
  std::string npy, csv;
  StatsReport kept;  ///< with keep_results
};

std::string text(const std::vector<std::byte>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}
std::string file_text(const std::filesystem::path& path) { return text(read_file_bytes(path)); }

// Both per-ray files written while tracing.
class BothFiles : public RaySink {
 public:
  BothFiles(const test::ScratchDir& dir, std::size_t kinds) : npy_(dir / "rays.npy", kinds), csv_(dir / "rays.csv", kinds) {}
  void add(const TracedBatch& batch) override {
    npy_.add(batch);
    csv_.add(batch);
  }
  void finish() {
    (void)npy_.finish();
    (void)csv_.finish();
  }

 private:
  PerRayWriter npy_, csv_;
};

Outputs run(const emu::LoadedBvh& bvh, StatsOptions o, uint32_t batch_rays, int threads) {
  o.batch_rays = batch_rays;
  o.threads = threads;
  const test::ScratchDir dir;
  BothFiles files(dir, o.kinds.size());
  Outputs out;
  StatsReport report = run_stats(bvh, o, &files);
  files.finish();
  out.npy = file_text(dir / "rays.npy");
  out.csv = file_text(dir / "rays.csv");
  report.threads = 0;  // printed, and the only thing that may differ
  for (KindStats& k : report.kinds) k.emulation_seconds = 0.0;  // wall clock
  out.json = stats_to_json(report);
  o.keep_results = true;
  out.kept = run_stats(bvh, o);
  return out;
}

TEST(Streaming, EveryBatchSizeGivesTheSameStatisticsAndFiles) {
  const emu::LoadedBvh bvh = test::load_scene_bvh(test::project_scene("alpha-cards.obj"));
  const StatsOptions o = every_kind();
  const Outputs whole = run(bvh, o, 1u << 20, 2);  // every kind in one batch, as before batches existed
  // The rows of the report that kept every ray: what --per-ray wrote when it was written from the report.
  EXPECT_EQ(whole.npy, text(per_ray_bytes(whole.kept, PerRayFormat::Npy)));
  EXPECT_EQ(whole.csv, text(per_ray_bytes(whole.kept, PerRayFormat::Csv)));
  for (const uint32_t batch : {1u, 96u, 1000u}) {  // one wave, three, 31 and a bit (rounded down to 31)
    SCOPED_TRACE(batch);
    const Outputs part = run(bvh, o, batch, 2);
    EXPECT_EQ(part.json, whole.json);
    EXPECT_EQ(part.npy, whole.npy);
    EXPECT_EQ(part.csv, whole.csv);
    for (std::size_t k = 0; k < o.kinds.size(); ++k) {
      EXPECT_EQ(part.kept.kinds[k].results, whole.kept.kinds[k].results);
      EXPECT_EQ(part.kept.kinds[k].pixel, whole.kept.kinds[k].pixel);
      EXPECT_EQ(part.kept.kinds[k].verdicts, whole.kept.kinds[k].verdicts);
    }
  }
}

TEST(Streaming, PerRayFilesAreTheSameAtOneAndTwoThreads) {
  const emu::LoadedBvh bvh = test::load_scene_bvh(test::project_scene("cornell-box.obj"));
  StatsOptions o = every_kind();
  o.machine.reset();
  const Outputs one = run(bvh, o, 64, 1), two = run(bvh, o, 64, 2);
  EXPECT_EQ(one.npy, two.npy);
  EXPECT_EQ(one.csv, two.csv);
  EXPECT_EQ(one.json, two.json);
}

// Records what a sink is handed.
struct Recorder : RaySink {
  struct Seen {
    std::size_t kind_index;
    uint64_t first_ray, rays;
  };
  std::vector<Seen> batches;
  void add(const TracedBatch& b) override {
    EXPECT_EQ(b.rays.size(), b.results.size());
    EXPECT_TRUE(b.pixel.empty() || b.pixel.size() == b.rays.size());
    batches.push_back({b.kind_index, b.first_ray, b.rays.size()});
  }
};

TEST(Streaming, TheSinkSeesEachKindsRaysOnceInOrderInBoundedBatches) {
  const emu::LoadedBvh bvh = test::load_scene_bvh(test::project_scene("cornell-box.obj"));
  StatsOptions o = every_kind();
  o.machine.reset();
  o.batch_rays = 128;
  Recorder sink;
  const StatsReport report = run_stats(bvh, o, &sink);
  std::vector<uint64_t> next(o.kinds.size(), 0);
  for (const Recorder::Seen& b : sink.batches) {
    EXPECT_EQ(b.first_ray, next[b.kind_index]);
    next[b.kind_index] += b.rays;
    // Primary, random and file batches hold at most batch_rays rays; AO ones their 2 samples of them.
    const uint64_t samples = o.kinds[b.kind_index] == RayKind::AmbientOcclusion ? o.ao_samples : 1;
    EXPECT_LE(b.rays, samples * o.batch_rays);
  }
  for (std::size_t k = 0; k < o.kinds.size(); ++k) EXPECT_EQ(next[k], report.kinds[k].rays) << k;
  EXPECT_GT(sink.batches.size(), 2 * o.kinds.size());
}

// The distribution as summarize computed it from the sorted values before ValueCounts.
Distribution sorted_reference(std::vector<uint64_t> values) {
  Distribution d;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  double sum = 0.0;
  for (uint64_t v : values) sum += static_cast<double>(v);
  d.mean = sum / static_cast<double>(n);
  const auto rank = [&](double p) {
    const auto r = static_cast<std::size_t>(std::ceil(p * static_cast<double>(n)));
    return static_cast<double>(values[std::clamp<std::size_t>(r, 1, n) - 1]);
  };
  d.median = rank(0.5);
  d.p95 = rank(0.95);
  d.max = static_cast<double>(values.back());
  d.bin_width = std::max<uint64_t>(1, (values.back() + 32) / 32);
  d.histogram.assign(values.back() / d.bin_width + 1, 0);
  for (uint64_t v : values) ++d.histogram[v / d.bin_width];
  return d;
}

TEST(Streaming, ValueCountsGiveTheSortedValuesDistribution) {
  std::mt19937_64 random(7);
  for (const uint64_t largest : {uint64_t{1}, uint64_t{40}, uint64_t{5000}, uint64_t{1} << 40}) {
    for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{19}, std::size_t{1000}}) {
      std::vector<uint64_t> values(n);
      for (uint64_t& v : values) v = random() % (largest + 1);
      ValueCounts counts;
      for (uint64_t v : values) counts.add(v);
      EXPECT_EQ(counts.count(), n);
      EXPECT_EQ(counts.summary(), sorted_reference(values)) << largest << " " << n;
    }
  }
  EXPECT_EQ(ValueCounts().summary(), Distribution{});
}

}  // namespace
}  // namespace hwbvh::stats
