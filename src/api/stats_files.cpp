#include "hwbvh/api/stats_files.h"

#include <optional>
#include <vector>

#include "hwbvh/rra/rra.h"
#include "hwbvh/stats/per_ray.h"

namespace hwbvh::api {
namespace {

// Every batch to each file being written.
class FileSink : public stats::RaySink {
 public:
  FileSink(const blob::Blob& blob, const std::string& blob_name, const stats::StatsOptions& options,
           const StatsFiles& files) {
    if (!files.export_rra.empty()) {
      // One dispatch per ray type: camera-derived rays at their pixel of the image, others in a row.
      std::vector<rra::HistoryFileWriter::Dispatch> dispatches;
      for (const stats::RayKind kind : options.kinds) {
        const bool image = kind != stats::RayKind::Random && kind != stats::RayKind::File;
        dispatches.push_back({.width = image ? options.width : 0u,
                              .height = image ? options.height : 0u,
                              .any_hit = stats::is_occlusion(kind)});
      }
      history_.emplace(files.export_rra, blob, blob_name, std::move(dispatches), options.trace.instance_mask);
    }
    if (!files.per_ray.empty()) per_ray_.emplace(files.per_ray, options.kinds.size());
  }

  void add(const stats::TracedBatch& batch) override {
    if (per_ray_) per_ray_->add(batch);
    if (history_) history_->add(batch.kind_index, batch.pixel, batch.rays, batch.results);
  }

  void finish() {
    if (per_ray_) (void)per_ray_->finish();
    if (history_) history_->finish();
  }

 private:
  std::optional<rra::HistoryFileWriter> history_;
  std::optional<stats::PerRayWriter> per_ray_;
};

}  // namespace

stats::StatsReport run_stats_with_files(const emu::LoadedBvh& bvh, const blob::Blob& blob, const std::string& blob_name,
                                        const stats::StatsOptions& options, const StatsFiles& files,
                                        const ProgressCallback& progress) {
  FileSink sink(blob, blob_name, options, files);
  stats::StatsReport report = stats::run_stats(bvh, options, &sink, progress);
  sink.finish();
  return report;
}

}  // namespace hwbvh::api
