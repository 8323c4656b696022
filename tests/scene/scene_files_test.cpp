// The project's own scenes (scenes/, made by scripts/generate_scenes.py) and the third-party meshes in
// ../shared/scenes load with the expected contents.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <glm/geometric.hpp>

#include "fixtures/paths.h"
#include "hwbvh/scene/scene.h"

namespace hwbvh {
namespace {

std::vector<std::string> geometry_names(const Scene& scene) {
  std::vector<std::string> names;
  for (const Geometry& g : scene.geometries) names.push_back(g.name);
  return names;
}

uint32_t count_alpha_tested(const Scene& scene) {
  uint32_t count = 0;
  for (uint32_t t = 0; t < scene.triangles.size(); ++t) count += scene.is_alpha_tested(t) ? 1u : 0u;
  return count;
}

const Material* find_material(const Scene& scene, const std::string& name) {
  for (const Material& m : scene.materials) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

// Distance along the ray to the triangle (Moller-Trumbore, double precision), if the ray hits it.
std::optional<double> hit_distance(const Scene& scene, uint32_t tri, glm::dvec3 origin, glm::dvec3 direction) {
  const glm::dvec3 a(scene.vertex(tri, 0));
  const glm::dvec3 e1 = glm::dvec3(scene.vertex(tri, 1)) - a;
  const glm::dvec3 e2 = glm::dvec3(scene.vertex(tri, 2)) - a;
  const glm::dvec3 p = glm::cross(direction, e2);
  const double det = glm::dot(e1, p);
  if (det == 0.0) return std::nullopt;
  const glm::dvec3 s = origin - a;
  const double u = glm::dot(s, p) / det;
  const glm::dvec3 q = glm::cross(s, e1);
  const double v = glm::dot(direction, q) / det;
  if (u < 0.0 || v < 0.0 || u + v > 1.0) return std::nullopt;
  return glm::dot(e2, q) / det;
}

TEST(ProjectScenes, CornellBox) {
  const Scene scene = load_obj(test::project_scene("cornell-box.obj"));
  EXPECT_EQ(scene.triangles.size(), 32u);
  EXPECT_EQ(geometry_names(scene), (std::vector<std::string>{"floor", "ceiling", "back_wall", "red_wall",
                                                             "green_wall", "short_block", "tall_block", "light"}));
  ASSERT_EQ(scene.materials.size(), 4u);
  EXPECT_EQ(scene.degenerate_count(), 0u);
  EXPECT_EQ(count_alpha_tested(scene), 0u);
  EXPECT_TRUE(scene.alpha_textures.empty());
  const Geometry& red_wall = scene.geometries[3];
  EXPECT_EQ(scene.materials[scene.triangles[red_wall.first_triangle].material].name, "red");
  EXPECT_GT(scene.materials[scene.triangles[red_wall.first_triangle].material].diffuse.x, 0.5f);
  EXPECT_EQ(scene.bounds(), (Aabb{Vec3(0.0f), Vec3(555.0f)}));
}

TEST(ProjectScenes, RotatedObjects) {
  const Scene scene = load_obj(test::project_scene("rotated-objects.obj"));
  EXPECT_EQ(scene.triangles.size(), 12824u);
  EXPECT_EQ(scene.geometries.size(), 400u);
  EXPECT_TRUE(scene.materials.empty());
  EXPECT_EQ(scene.degenerate_count(), 0u);
  for (const Geometry& g : scene.geometries) {
    // A box has 12 triangles; a cylinder with n = 8..16 segments has 2n on the side and n - 2 per cap.
    if (g.name.starts_with("box_")) {
      EXPECT_EQ(g.triangle_count, 12u) << g.name;
    } else {
      EXPECT_TRUE(g.name.starts_with("cylinder_")) << g.name;
      EXPECT_EQ(g.triangle_count % 4, 0u) << g.name;
      EXPECT_GE(g.triangle_count, 28u) << g.name;
      EXPECT_LE(g.triangle_count, 60u) << g.name;
    }
  }
}

TEST(ProjectScenes, AlphaCards) {
  const Scene scene = load_obj(test::project_scene("alpha-cards.obj"));
  EXPECT_EQ(scene.triangles.size(), 290u);
  EXPECT_EQ(geometry_names(scene), (std::vector<std::string>{"cards", "ground"}));
  ASSERT_EQ(scene.materials.size(), 2u);
  ASSERT_EQ(scene.alpha_textures.size(), 1u);
  const AlphaTexture& mask = scene.alpha_textures[0];
  EXPECT_TRUE(mask.path.ends_with("alpha-cards-mask.png")) << mask.path;
  EXPECT_EQ(mask.width, 128u);
  EXPECT_EQ(mask.height, 128u);
  const auto opaque = std::count(mask.alpha.begin(), mask.alpha.end(), uint8_t{255});
  const auto clear = std::count(mask.alpha.begin(), mask.alpha.end(), uint8_t{0});
  EXPECT_GT(opaque, 128 * 128 / 5);
  EXPECT_GT(clear, 128 * 128 / 5);

  ASSERT_NE(find_material(scene, "leaf"), nullptr);
  EXPECT_TRUE(find_material(scene, "leaf")->alpha_tested());
  EXPECT_FALSE(find_material(scene, "ground")->alpha_tested());
  EXPECT_EQ(count_alpha_tested(scene), 288u);  // every card, not the ground
  const Geometry& cards = scene.geometries[0];
  for (uint32_t t = cards.first_triangle; t < cards.first_triangle + cards.triangle_count; ++t) {
    EXPECT_NE(scene.triangles[t].uv[0], kNoIndex);
  }
  EXPECT_EQ(scene.triangles[scene.geometries[1].first_triangle].uv[0], kNoIndex);
}

TEST(ProjectScenes, OverflowFan) {
  const Scene scene = load_obj(test::project_scene("overflow-fan.obj"));
  EXPECT_EQ(scene.triangles.size(), 322u);
  ASSERT_EQ(geometry_names(scene), (std::vector<std::string>{"fan", "backstop"}));
  EXPECT_EQ(scene.degenerate_count(), 0u);
  // The property the emulator tests rely on: the axis ray enters every sliver's box (so every box node on the
  // way holds it) but hits no sliver; its closest hit is the backstop at z = 12.
  const glm::dvec3 origin(0.0, 0.0, -1.0);
  const glm::dvec3 direction(0.0, 0.0, 1.0);
  const Geometry& fan = scene.geometries[0];
  for (uint32_t t = fan.first_triangle; t < fan.first_triangle + fan.triangle_count; ++t) {
    const Aabb box = triangle_bounds(scene.vertex(t, 0), scene.vertex(t, 1), scene.vertex(t, 2));
    EXPECT_TRUE(box.min.x < 0.0f && box.max.x > 0.0f && box.min.y < 0.0f && box.max.y > 0.0f) << t;
    EXPECT_FALSE(hit_distance(scene, t, origin, direction).has_value()) << t;
  }
  const Geometry& backstop = scene.geometries[1];
  bool hit = false;
  for (uint32_t t = backstop.first_triangle; t < backstop.first_triangle + backstop.triangle_count; ++t) {
    if (const auto d = hit_distance(scene, t, origin, direction)) {
      EXPECT_DOUBLE_EQ(*d, 13.0);
      hit = true;
    }
  }
  EXPECT_TRUE(hit);
}

struct SharedScene {
  const char* file;
  uint32_t triangles;  // after fan triangulation
};

// A smoke test: every shared mesh loads, with the expected number of triangles and one geometry.
TEST(SharedScenes, AllMeshesLoad) {
  const SharedScene scenes[] = {{"stanford-bunny.obj", 69451}, {"ogre.obj", 124008}, {"nefertiti.obj", 99938},
                                {"beast.obj", 64618},          {"spot.obj", 5856},    {"teapot.obj", 6320},
                                {"rocker-arm.obj", 20088},     {"fandisk.obj", 12946}};
  if (test::shared_scene(scenes[0].file).empty()) GTEST_SKIP() << "../shared/scenes is absent";
  for (const SharedScene& s : scenes) {
    SCOPED_TRACE(s.file);
    const auto path = test::shared_scene(s.file);
    ASSERT_FALSE(path.empty());
    const Scene scene = load_obj(path);
    EXPECT_EQ(scene.triangles.size(), s.triangles);
    EXPECT_EQ(geometry_names(scene), std::vector<std::string>{"default"});
    EXPECT_FALSE(scene.bounds().empty());
    EXPECT_LT(scene.degenerate_count(), scene.triangles.size() / 100 + 1);
  }
}

TEST(SharedScenes, SmallPineAlphaTestedBranches) {
  const auto path = test::shared_scene("smallpine/smallpine.obj");
  if (path.empty()) GTEST_SKIP() << "../shared/scenes is absent";
  const Scene scene = load_obj(path);
  EXPECT_EQ(scene.triangles.size(), 1650u);
  EXPECT_EQ(geometry_names(scene), (std::vector<std::string>{"Trunk_Trunk_0", "Branches_M_TreeAtlas_0"}));
  ASSERT_EQ(scene.alpha_textures.size(), 1u);
  EXPECT_EQ(scene.alpha_textures[0].width, 2048u);
  EXPECT_TRUE(scene.alpha_textures[0].path.ends_with("M_TreeAtlas_baseColor.png"));
  ASSERT_NE(find_material(scene, "M_TreeAtlas"), nullptr);
  EXPECT_TRUE(find_material(scene, "M_TreeAtlas")->alpha_tested());
  EXPECT_FALSE(find_material(scene, "Trunk")->alpha_tested());  // map_Kd alone does not make it alpha-tested
  const Geometry& branches = scene.geometries[1];
  EXPECT_TRUE(scene.is_alpha_tested(branches.first_triangle));
  EXPECT_FALSE(scene.is_alpha_tested(0));
  // The atlas has transparent and opaque texels.
  const auto& alpha = scene.alpha_textures[0].alpha;
  EXPECT_NE(std::find(alpha.begin(), alpha.end(), uint8_t{0}), alpha.end());
  EXPECT_NE(std::find(alpha.begin(), alpha.end(), uint8_t{255}), alpha.end());
}

}  // namespace
}  // namespace hwbvh
