// Builds an RT IP 3.1 blob of one OBJ scene in memory through the installed library and checks it decodes.
#include <cstdio>

#include "hwbvh/formats/rdna4/tree_check.h"
#include "hwbvh/pipeline/pipeline.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const hwbvh::Scene scene = hwbvh::load_obj(argv[1]);
  const auto built = hwbvh::pipeline::build_blob(scene, {});
  const auto* nodes = built.blob.find(hwbvh::blob::SectionType::Nodes);
  std::printf("consumer: %llu box nodes, %llu primitive nodes, %zu node bytes\n",
              static_cast<unsigned long long>(built.report.box_nodes),
              static_cast<unsigned long long>(built.report.primitive_nodes), nodes ? nodes->data.size() : 0);
  return nodes && built.report.box_nodes > 0 ? 0 : 1;
}
