// bench_load: the OBJ loader's speed, as `hwbvh build` reports it ("load" in its --json run seconds), for one or
// more hwbvh binaries on the same scenes — e.g. a build of main against a branch that changes the parser.
//
//   bench_load [--runs N] [--binary HWBVH]... [SCENE.obj ...]
// Without --binary it times load_obj in this process; without scenes it uses ../shared/scenes/ogre.obj.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_common.h"

namespace {

using namespace hwbvh;

// `hwbvh build SCENE -o OUT --json --quiet --threads 1` of `binary`; returns the load seconds of its report.
double load_seconds_of(const std::string& binary, const std::string& scene, const std::string& out) {
  const std::string command =
      "'" + binary + "' build '" + scene + "' -o '" + out + "' --json --quiet --threads 1 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + binary);
  std::string json;
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) json.append(buffer, n);
  const int status = pclose(pipe);
  const std::size_t key = json.find("\"load\":");
  if (status != 0 || key == std::string::npos) throw std::runtime_error(command + ": failed or printed no load time");
  return std::strtod(json.c_str() + key + 7, nullptr);
}

// The binaries' load times on `scene`, interleaved round by round; each binary's median and its ratio to the first
// binary (the median of the rounds' ratios, steadier under changing load than the ratio of two medians).
void compare_binaries(const std::vector<std::string>& binaries, const std::string& scene, int runs) {
  const std::string out =
      (std::filesystem::temp_directory_path() / ("bench_load-" + std::to_string(getpid()) + ".hwbvh")).string();
  std::vector<std::vector<double>> load(binaries.size());
  std::vector<std::function<void()>> cases;
  for (std::size_t b = 0; b < binaries.size(); ++b) {
    cases.emplace_back([&, b] { load[b].push_back(load_seconds_of(binaries[b], scene, out)); });
  }
  (void)bench::interleaved_runs(runs, cases, CLOCK_PROCESS_CPUTIME_ID);
  std::filesystem::remove(out);
  std::printf("%s: hwbvh build load time, median of %d interleaved runs\n", scene.c_str(), runs);
  for (std::size_t b = 0; b < binaries.size(); ++b) {
    const std::vector<double> runs_of_binary(load[b].begin() + 1, load[b].end());  // without the warm-up run
    std::vector<double> ratios;
    for (std::size_t r = 0; r < runs_of_binary.size(); ++r) ratios.push_back(runs_of_binary[r] / load[0][r + 1]);
    std::printf("  %-40s %8.2f ms  %.3fx of the first\n", binaries[b].c_str(), 1e3 * bench::median(runs_of_binary),
                bench::median(ratios));
  }
}

// load_obj in this process: median wall and thread CPU time.
void time_in_process(const std::string& scene, int runs) {
  const auto times = bench::interleaved_runs(runs, {[&] { (void)load_obj(scene); }}, CLOCK_THREAD_CPUTIME_ID);
  std::printf("%s: load_obj, median of %d runs: %.2f ms wall, %.2f ms CPU\n", scene.c_str(), runs,
              1e3 * bench::median_of(times[0], &bench::Times::wall),
              1e3 * bench::median_of(times[0], &bench::Times::cpu));
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 15;
  std::vector<std::string> binaries, scenes;
  CLI::App app{"The OBJ loader's speed: hwbvh binaries' `build --json` load seconds, or load_obj in this process "
               "(bench/README.md)",
               "bench_load"};
  app.add_option("--runs", runs, "interleaved rounds after a warm-up run each")->check(CLI::Range(1, 1000));
  app.add_option("--binary", binaries, "an hwbvh binary to time (repeatable; ratios are to the first)")
      ->check(CLI::ExistingFile);
  app.add_option("scenes", scenes, "OBJ scenes; default: ../shared/scenes/ogre.obj");
  bench::parse_command_line(app, argc, argv);
  bench::print_header("bench_load", 1);
  if (scenes.empty()) scenes.push_back(std::string(HWBVH_SHARED_DIR) + "/scenes/ogre.obj");
  try {
    for (const std::string& scene : scenes) {
      if (binaries.empty()) {
        time_in_process(scene, runs);
      } else {
        compare_binaries(binaries, scene, runs);
      }
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_load: %s\n", e.what());
    return 1;
  }
  return 0;
}
