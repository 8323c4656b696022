#pragma once
// Shared by the `hwbvh report` end-to-end tests: run the hwbvh binary (HWBVH_CLI) or another program with its
// output captured, in a scratch directory of the test's own.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "blob/scratch_dir.h"
#include "fixtures/paths.h"

namespace hwbvh::test {

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ReportCliTest : public ::testing::Test {
 protected:
  ReportCliTest()
      : dir_(std::string("e2e-report-") + ::testing::UnitTest::GetInstance()->current_test_info()->name()) {}

  // Runs a shell command line with stdout and stderr captured (their files live outside the scratch directory).
  Outcome run(const std::string& command) {
    const auto out = dir_.path().string() + ".out", err = dir_.path().string() + ".err";
    const int status = std::system((command + " >" + quote(out) + " 2>" + quote(err)).c_str());
    Outcome r{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), slurp(out), slurp(err)};
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return r;
  }
  Outcome hwbvh(const std::string& args) { return run(quote(HWBVH_CLI) + " " + args); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  test::ScratchDir dir_;
};

}  // namespace hwbvh::test
