// hwbvh export BLOB -o FILE.rra: the blob's BVH as a Radeon Raytracing Analyzer file (docs/rra.md).
#include <fmt/format.h>

#include <memory>

#include "commands.h"
#include "hwbvh/blob/blob.h"
#include "hwbvh/rra/rra.h"
#include "inputs.h"

namespace hwbvh::cli {
namespace {

struct ExportArgs {
  std::string file;
  std::string output;
  std::string format = "rra";
  rra::WriteOptions options;
};

int run_export(const ExportArgs& a) {
  refuse_scene_input(a.file, "export");
  rra::write_file(a.output, blob::read_file(a.file), a.file, a.options);
  fmt::print("wrote {}\n", a.output);
  return 0;
}

}  // namespace

Command add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* sub = app.add_subcommand("export", "Write an rtip31 blob's BVH in another tool's format (rra: Radeon Raytracing Analyzer)");
  sub->add_option("file", args->file, "blob file (.hwbvh), target rtip31")->required();
  sub->add_option("-o,--output", args->output, "output file (.rra)")->required();
  sub->add_option("--format", args->format, "output format")->check(CLI::IsMember({"rra"}))->capture_default_str();
  sub->add_flag("--compress", args->options.compress,
                "zstd-compress the acceleration-structure and hwbvh chunks (RDF compression, read by RRA)");
  return {sub, [args] { return run_export(*args); }};
}

}  // namespace hwbvh::cli
