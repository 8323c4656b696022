// bench_soak: the large-scene soak of issue 8 (docs/hardening.md). A generated scene of at least 20 million
// triangles — randomly rotated, stretched copies of one procedural mesh, written straight into the Scene's
// reserved arrays — is built through the whole pipeline (pipeline::build_blob: Embree BVH, collapse, OBB,
// RT IP 3.1 encoding), loaded the way `hwbvh stats` loads a blob (emu::load_bvh), and traced with the wavefront
// emulator; Embree (the oracle) traces the same rays for agreement and a rays-per-second ratio. Embree's own
// high-quality commit of the same triangles is timed after the build, as the reference a build's speed is read
// against (issue 32: the default-quality pipeline at most 0.6x of it). Prints the time of every phase and the peak
// resident memory of the process (getrusage) after each, and per triangle; the build's peak is taken before
// Embree's commit.
//
//   bench_soak [--triangles N] [--rays N] [--threads N] [--no-oracle] [--no-embree-build]
//   bench_soak --instances N [--rays N] [--threads N] [--no-oracle]
//
// With --instances, the soak is of the top level instead: N randomly placed, rotated and scaled instances of four
// small rocks (two-level, pipeline::build_instanced_blob), so that the build's time and memory are the top-level
// structure's; the reference is Embree's two-level scene over the same instances, as the oracle commits it.
//
// Defaults: 20,000,000 triangles, 8192 rays, all hardware threads. It takes minutes and several GB: develop
// with --triangles 1000000.
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>

#include <glm/geometric.hpp>

#include "bench_common.h"
#include "embree_commit.h"
#include "hwbvh/core/parallel.h"
#include "hwbvh/emu/loaded_bvh.h"
#include "hwbvh/emu/oracle.h"
#include "hwbvh/emu/wavefront.h"
#include "hwbvh/pipeline/pipeline.h"

namespace {

using namespace hwbvh;
using Clock = std::chrono::steady_clock;

struct Args {
  uint64_t triangles = 20'000'000;
  uint32_t rays = 8192;
  int threads = 0;
  uint32_t instances = 0;  // 0: the one-level triangle soak
  bool oracle = true;
  bool embree_build = true;
};

Args parse_args(int argc, char** argv) {
  Args a;
  CLI::App app{"A large generated scene built, loaded and traced once, with each phase's time and memory "
               "(bench/README.md)",
               "bench_soak"};
  app.add_option("--triangles", a.triangles, "triangles of the generated scene (at least)")
      ->check(CLI::PositiveNumber);
  app.add_option("--instances", a.instances, "soak the top level instead: instances of four small rocks")
      ->check(CLI::Range(1u, 16'000'000u));
  app.add_option("--rays", a.rays, "rays traced")->check(CLI::PositiveNumber);
  app.add_option("--threads", a.threads, "threads; 0 = all hardware threads")->check(CLI::Range(0, 4096));
  app.add_flag("!--no-oracle", a.oracle, "skip the Embree comparison");
  app.add_flag("!--no-embree-build", a.embree_build, "skip timing Embree's high-quality commit of the triangles");
  bench::parse_command_line(app, argc, argv);
  return a;
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

/// Resident set size now (from /proc/self/statm), in bytes; 0 where that file does not exist.
double current_rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  double pages_total = 0.0, pages_resident = 0.0;
  statm >> pages_total >> pages_resident;
  return pages_resident * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

void report_phase(const char* phase, double seconds) {
  std::printf("%-10s %9.2f s   rss now %6.2f GiB   peak so far %6.2f GiB\n", phase, seconds, gib(current_rss_bytes()),
              gib(bench::peak_rss_bytes()));
  std::fflush(stdout);
}

// --- the generated scene ----------------------------------------------------------------------------------

/// A lumpy sphere (a "rock") of `stacks` x `slices` quads around the poles' fans: about one vertex per two
/// triangles, like a typical closed mesh.
struct Mesh {
  std::vector<Vec3> positions;
  std::vector<std::array<uint32_t, 3>> triangles;
};

Mesh rock(uint32_t stacks, uint32_t slices) {
  Mesh m;
  const float pi = 3.14159265358979f;
  m.positions.push_back({0.0f, 1.0f, 0.0f});
  for (uint32_t i = 1; i < stacks; ++i) {
    const float theta = pi * static_cast<float>(i) / static_cast<float>(stacks);
    for (uint32_t j = 0; j < slices; ++j) {
      const float phi = 2.0f * pi * static_cast<float>(j) / static_cast<float>(slices);
      const float r = 1.0f + 0.08f * std::sin(5.0f * phi) * std::sin(3.0f * theta) +
                      0.04f * std::cos(11.0f * phi + 7.0f * theta);
      m.positions.push_back(
          {r * std::sin(theta) * std::cos(phi), r * std::cos(theta), r * std::sin(theta) * std::sin(phi)});
    }
  }
  m.positions.push_back({0.0f, -1.0f, 0.0f});
  const auto ring = [&](uint32_t i, uint32_t j) { return 1 + (i - 1) * slices + j % slices; };
  const auto bottom = static_cast<uint32_t>(m.positions.size() - 1);
  for (uint32_t j = 0; j < slices; ++j) {
    m.triangles.push_back({0, ring(1, j + 1), ring(1, j)});
    m.triangles.push_back({bottom, ring(stacks - 1, j), ring(stacks - 1, j + 1)});
    for (uint32_t i = 1; i + 1 < stacks; ++i) {
      m.triangles.push_back({ring(i, j), ring(i, j + 1), ring(i + 1, j)});
      m.triangles.push_back({ring(i, j + 1), ring(i + 1, j + 1), ring(i + 1, j)});
    }
  }
  return m;
}

/// A uniformly random rotation (Shoemake's quaternion method) as three rows.
std::array<Vec3, 3> random_rotation(std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const float u1 = u(rng), u2 = 6.2831853f * u(rng), u3 = 6.2831853f * u(rng);
  const float a = std::sqrt(1.0f - u1), b = std::sqrt(u1);
  const float x = a * std::sin(u2), y = a * std::cos(u2), z = b * std::sin(u3), w = b * std::cos(u3);
  return {Vec3{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
          Vec3{2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
          Vec3{2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
}

/// At least `triangles` triangles: copies of `mesh`, each stretched up to 4:1, rotated and placed at random in a
/// cube sized for about one copy per 3^3 units; one geometry per copy.
Scene generate(const Mesh& mesh, uint64_t triangles) {
  const uint64_t per_copy = mesh.triangles.size();
  const uint64_t copies = (triangles + per_copy - 1) / per_copy;
  const float side = 3.0f * std::cbrt(static_cast<float>(copies));
  Scene s;
  s.source = "soak-" + std::to_string(copies) + "-rocks";
  s.positions.reserve(copies * mesh.positions.size());
  s.triangles.reserve(copies * per_copy);
  s.geometries.reserve(copies);
  std::mt19937_64 rng(20);
  std::uniform_real_distribution<float> pos(0.0f, side), stretch(1.0f, 4.0f), size(0.4f, 1.2f);
  for (uint64_t c = 0; c < copies; ++c) {
    const auto rot = random_rotation(rng);
    const Vec3 scale = size(rng) * Vec3{stretch(rng), 1.0f, 1.0f};
    const Vec3 at{pos(rng), pos(rng), pos(rng)};
    const auto base = static_cast<uint32_t>(s.positions.size());
    for (const Vec3& p : mesh.positions) {
      const Vec3 q = p * scale;
      s.positions.push_back(at + Vec3{glm::dot(rot[0], q), glm::dot(rot[1], q), glm::dot(rot[2], q)});
    }
    const auto geometry = static_cast<uint32_t>(s.geometries.size());
    s.geometries.push_back({"rock" + std::to_string(c), static_cast<uint32_t>(s.triangles.size()),
                            static_cast<uint32_t>(per_copy)});
    for (uint32_t t = 0; t < per_copy; ++t) {
      Triangle tri;
      for (int k = 0; k < 3; ++k) tri.v[k] = base + mesh.triangles[t][k];
      tri.geometry = geometry;
      tri.primitive = t;
      s.triangles.push_back(tri);
    }
  }
  return s;
}

/// `count` instances of four rocks of 128 to 2048 triangles, each rotated, scaled 0.4..1.2 and placed at random in a
/// cube sized for about one instance per 3^3 units.
InstancedScene generate_instances(uint32_t count) {
  InstancedScene s;
  s.source = "soak-" + std::to_string(count) + "-instances";
  for (uint32_t m = 0; m < 4; ++m) {
    const Mesh mesh = rock(8u << (m / 2), 8u << ((m + 1) / 2));
    Scene blas;
    blas.source = "rock" + std::to_string(m);
    blas.positions = mesh.positions;
    blas.geometries.push_back({"rock", 0, static_cast<uint32_t>(mesh.triangles.size())});
    for (uint32_t t = 0; t < mesh.triangles.size(); ++t) {
      Triangle tri;
      for (int k = 0; k < 3; ++k) tri.v[k] = mesh.triangles[t][k];
      tri.primitive = t;
      blas.triangles.push_back(tri);
    }
    s.meshes.push_back(std::move(blas));
  }
  const float side = 3.0f * std::cbrt(static_cast<float>(count));
  std::mt19937_64 rng(21);
  std::uniform_real_distribution<float> pos(0.0f, side), size(0.4f, 1.2f);
  s.instances.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    const auto rot = random_rotation(rng);
    const double scale = size(rng);
    MeshInstance inst;
    inst.name = "node " + std::to_string(i);
    inst.node = i;
    inst.mesh = i % 4;
    inst.instance_id = i;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) inst.world[c][r] = scale * rot[r][c];  // glm is column-major
    inst.world[3] = glm::dvec4(pos(rng), pos(rng), pos(rng), 1.0);
    s.instances.push_back(std::move(inst));
  }
  return s;
}

/// Half the rays from a camera outside the bounds towards them, half random through the bounds.
std::vector<Ray> make_rays(const Aabb& bounds, uint32_t count) {
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  const Vec3 size = bounds.max - bounds.min, center = 0.5f * (bounds.min + bounds.max);
  const Vec3 eye = center + Vec3{-0.9f, 0.7f, -1.3f} * glm::length(size);
  std::vector<Ray> rays(count);
  for (uint32_t i = 0; i < count; ++i) {
    const Vec3 inside = bounds.min + Vec3{u(rng), u(rng), u(rng)} * size;
    Vec3 dir;
    if (i % 2 == 0) {
      rays[i].origin = eye;
      dir = inside - eye;
    } else {
      rays[i].origin = inside;
      dir = Vec3{u(rng), u(rng), u(rng)} * 2.0f - 1.0f;
    }
    rays[i].direction = glm::length(dir) > 0.0f ? glm::normalize(dir) : Vec3{0.0f, 0.0f, 1.0f};
  }
  return rays;
}

int load_and_trace(const Args& a, pipeline::BuildBlobResult built, const Executor& executor);

int run(const Args& a) {
  const Executor executor(a.threads);
  std::printf("# bench_soak — hwbvh large-scene soak (one run per phase, wall clock)\n");
  std::printf("# threads: %d of %u hardware threads\n", executor.threads(), std::thread::hardware_concurrency());

  auto start = Clock::now();
  const Mesh mesh = rock(64, 64);
  Scene scene = generate(mesh, a.triangles);
  const auto triangles = static_cast<double>(scene.triangles.size());
  std::printf("# scene: %zu triangles, %zu copies of a %zu-triangle rock, %zu positions\n", scene.triangles.size(),
              scene.geometries.size(), mesh.triangles.size(), scene.positions.size());
  report_phase("generate", seconds_since(start));

  pipeline::BuildBlobOptions options;
  options.build.threads = options.encode.threads = a.threads;
  pipeline::BuildBlobResult built = pipeline::build_blob(scene, options);
  const pipeline::PhaseSeconds& s = built.report.run->seconds;
  report_phase("build", s.bvh + s.collapse + s.obb + s.encode);
  std::printf("  bvh %.2f s, collapse %.2f s, obb %.2f s, encode %.2f s; %llu box + %llu primitive nodes, "
              "%.1f node bytes/triangle, OBB on %.1f%% of box nodes\n",
              s.bvh, s.collapse, s.obb, s.encode, static_cast<unsigned long long>(built.report.box_nodes),
              static_cast<unsigned long long>(built.report.primitive_nodes), built.report.bytes_per_triangle,
              100.0 * built.report.obb_box_share);
  const double build_peak = bench::peak_rss_bytes();
  if (a.embree_build) {
    RTCDevice device = rtcNewDevice(("threads=" + std::to_string(executor.threads())).c_str());
    start = Clock::now();
    bench::embree_commit(device, scene, RTC_BUILD_QUALITY_HIGH);
    const double embree_seconds = seconds_since(start);
    rtcReleaseDevice(device);
    report_phase("embree hq", embree_seconds);
    std::printf("  hwbvh build / Embree high-quality commit: %.2fx (bvh + collapse + obb + encode)\n",
                (s.bvh + s.collapse + s.obb + s.encode) / embree_seconds);
  }
  scene = Scene{};  // the blob holds all the emulator and the oracle need
  const int status = load_and_trace(a, std::move(built), executor);
  std::printf("# peak resident memory: %.2f GiB during the build (%.1f bytes/triangle), %.2f GiB overall "
              "(%.1f bytes/triangle)\n",
              gib(build_peak), build_peak / triangles, gib(bench::peak_rss_bytes()),
              bench::peak_rss_bytes() / triangles);
  return status;
}

/// The top-level soak: the build's time and peak memory per instance, against Embree's two-level scene.
int run_instances(const Args& a) {
  const Executor executor(a.threads);
  std::printf("# bench_soak --instances — hwbvh top-level soak (one run per phase, wall clock)\n");
  std::printf("# threads: %d of %u hardware threads\n", executor.threads(), std::thread::hardware_concurrency());
  auto start = Clock::now();
  const InstancedScene scene = generate_instances(a.instances);
  std::printf("# scene: %zu instances of %zu rocks\n", scene.instances.size(), scene.meshes.size());
  report_phase("generate", seconds_since(start));
  const double generated = bench::peak_rss_bytes();

  pipeline::BuildBlobOptions options;
  options.build.threads = options.encode.threads = a.threads;
  start = Clock::now();
  pipeline::BuildBlobResult built = pipeline::build_instanced_blob(scene, options);
  report_phase("build", seconds_since(start));
  const pipeline::LevelsReport& levels = *built.report.levels;
  std::printf("  top level: %llu box nodes, %llu node bytes, %.1f node bytes/instance\n",
              static_cast<unsigned long long>(levels.top_box_nodes), static_cast<unsigned long long>(levels.top_bytes),
              static_cast<double>(levels.top_bytes) / a.instances);
  const double build_peak = bench::peak_rss_bytes();
  const int status = load_and_trace(a, std::move(built), executor);
  std::printf("# peak resident memory: %.2f GiB after generating, %.2f GiB during the build (%.1f bytes/instance), "
              "%.2f GiB overall\n",
              gib(generated), gib(build_peak), build_peak / a.instances, gib(bench::peak_rss_bytes()));
  return status;
}

/// Loads the blob as `hwbvh stats` does and traces rays; with the oracle, Embree builds its own structure of the same
/// geometry (two-level for a two-level blob) and traces the same rays. Returns 1 when a ray faulted.
int load_and_trace(const Args& a, pipeline::BuildBlobResult built, const Executor& executor) {
  auto start = Clock::now();
  const emu::LoadedBvh bvh = emu::load_bvh(built.blob, "soak");
  built = {};
  report_phase("load", seconds_since(start));

  const std::vector<Ray> rays = make_rays(bvh.bounds, a.rays);
  start = Clock::now();
  const emu::TraceOutput out = emu::trace_rays(bvh.memory(), bvh.root, rays, emu::TraceOptions{}, executor);
  const double emu_seconds = seconds_since(start);
  report_phase("trace", emu_seconds);
  const emu::RayCounters total = out.total_counters();
  uint64_t hits = 0, faulted = 0;
  for (const emu::RayResult& r : out.rays) {
    hits += r.hit ? 1 : 0;
    faulted += r.fault != emu::NodeFault::None ? 1 : 0;
  }
  std::printf("  %u rays, %.0f rays/s, %llu hits, %.1f steps/ray, %llu faulted, %llu step-limit hits\n", a.rays,
              a.rays / emu_seconds, static_cast<unsigned long long>(hits),
              static_cast<double>(total.steps) / a.rays, static_cast<unsigned long long>(faulted),
              static_cast<unsigned long long>(total.step_limit_hits));

  if (a.oracle) {
    start = Clock::now();
    const emu::Oracle oracle = emu::Oracle::of(bvh, a.threads);
    report_phase("embree", seconds_since(start));
    std::vector<emu::OracleHit> embree(rays.size());
    start = Clock::now();
    executor.for_each(0, rays.size(), [&](std::size_t i) { embree[i] = oracle.trace_closest(rays[i]); }, 64);
    const double embree_seconds = seconds_since(start);
    emu::AgreementStats agreement;
    for (std::size_t i = 0; i < rays.size(); ++i) {
      const emu::RayResult& r = out.rays[i];
      emu::OracleHit ours{r.hit, r.t, r.geometry_id, r.primitive_id};
      ours.instance = r.instance_index;
      agreement.add(ours, embree[i]);
    }
    std::printf("  rtcIntersect1 %.0f rays/s (emulator / Embree = 1 / %.0f); %llu of %llu rays agree\n",
                a.rays / embree_seconds, emu_seconds / embree_seconds,
                static_cast<unsigned long long>(agreement.agreeing()),
                static_cast<unsigned long long>(agreement.rays()));
  }
  return faulted == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  return args.instances ? run_instances(args) : run(args);
}
