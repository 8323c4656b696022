// The hwbvh binary (HWBVH_CLI) on hostile blobs: `info`, `dump` and `stats` exit 2 with one message naming the
// file, or — for `stats` on a blob whose nodes are bad but whose container is valid — exit 0 with a warning that
// counts the stopped rays. Never a crash (signal), an internal error (exit 1) or a hang (each run is under
// `timeout`).
#include <sys/wait.h>

#include <fstream>
#include <functional>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../fuzz/reseal.h"
#include "blob/scratch_dir.h"
#include "hostile/hostile_blobs.h"

namespace hwbvh {
namespace {

using ::testing::HasSubstr;

struct CliRun {
  int code = -1;
  std::string out, err;
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class HostileCli : public ::testing::Test {
 protected:
  HostileCli() : dir_(std::string("hostile-") + ::testing::UnitTest::GetInstance()->current_test_info()->name()) {}

  void SetUp() override {
    ASSERT_FALSE(std::string(HWBVH_CLI).empty()) << "the hwbvh CLI is not built";
  }

  std::string write(const std::string& name, const std::vector<std::byte>& bytes) {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return path.string();
  }

  // `hwbvh ARGS` with a 120-second limit (exit 124 when it runs longer).
  CliRun hwbvh(const std::string& args) {
    const auto out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string cmd = "timeout 120 " + quote(HWBVH_CLI) + " " + args + " >" + quote(out.string()) + " 2>" +
                            quote(err.string());
    const int status = std::system(cmd.c_str());
    CliRun r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  // The three reading commands; `stats` with few rays, one thread and a step limit that keeps cycles short.
  CliRun info(const std::string& f) { return hwbvh("info " + quote(f)); }
  CliRun dump(const std::string& f) { return hwbvh("dump " + quote(f) + " --max-nodes 0"); }
  CliRun stats(const std::string& f) {
    return hwbvh("stats " + quote(f) +
                 " --rays primary,ao,shadow,random --width 16 --height 16 --ao-samples 1 --random-rays 64"
                 " --step-limit 3000 --threads 1 --quiet");
  }

  test::ScratchDir dir_;
};

void expect_refused(const CliRun& r, const std::string& file, const std::string& needle) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("hwbvh: error: "));
  EXPECT_THAT(r.err, HasSubstr(file));
  EXPECT_THAT(r.err, HasSubstr(needle));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(HostileCli, BrokenContainersExitTwoWithAMessage) {
  struct Case {
    std::string name, needle;
    std::function<void(std::vector<std::byte>&)> edit;
  };
  const std::vector<Case> cases = {
      {"offset-past-end.hwbvh", "runs past the end of the file",
       [](auto& b) { test::put64(b, blob::kFileHeaderBytes + 8, b.size() + 128); }},
      {"size-wraps.hwbvh", "runs past the end of the file",
       [](auto& b) { test::put64(b, blob::kFileHeaderBytes + 32 + 16, ~uint64_t{0} - 15); }},
      {"huge-count.hwbvh", "exceeds the limit", [](auto& b) { test::put32(b, 16, 0xFFFFFFFFu); }},
      {"overlap.hwbvh", "overlap",
       [](auto& b) {
         test::put64(b, blob::kFileHeaderBytes + 32 + 8, blob::load_le64(b, blob::kFileHeaderBytes + 8));
       }},
  };
  for (const Case& c : cases) {
    std::vector<std::byte> bytes = test::sample_bytes();
    c.edit(bytes);
    const std::string f = write(c.name, fuzz::reseal(bytes));
    SCOPED_TRACE(c.name);
    expect_refused(info(f), c.name, c.needle);
    expect_refused(dump(f), c.name, c.needle);
    expect_refused(stats(f), c.name, c.needle);
  }
}

TEST_F(HostileCli, HugeGeometryCountsExitTwo) {
  blob::Blob b = test::sample_build().blob;
  for (blob::Section& s : b.sections) {
    if (s.type != blob::SectionType::Geometry) continue;
    s.data.assign(8, std::byte{0xFF});
  }
  const std::string f = write("huge-geometry.hwbvh", blob::serialize(b));
  expect_refused(stats(f), "huge-geometry.hwbvh", "geometry section: 8 bytes, but 4294967295 positions");
}

TEST_F(HostileCli, BadNodesExitTwoInDumpAndWarnInStats) {
  const test::SampleTree tree = test::sample_tree();
  struct Case {
    std::string name;
    bool faults;  ///< rays stop on a bad node (otherwise they loop until the step limit)
    std::function<void(std::vector<uint32_t>&)> edit;
  };
  const std::vector<Case> cases = {
      {"cycle.hwbvh", false, [](auto& n) { test::node_at(n, rdna4::kRootPointer)[0] = rdna4::kRootPointer & ~0xFu; }},
      {"misaligned.hwbvh", true, [](auto& n) { test::node_at(n, rdna4::kRootPointer)[0] |= 0x8u; }},
      {"past-end.hwbvh", true, [](auto& n) { test::node_at(n, rdna4::kRootPointer)[0] = 0x0FFFFFF0u; }},
      {"parent-self.hwbvh", false,
       [&](auto& n) {
         for (uint32_t box : tree.boxes) test::node_at(n, box)[2] = box;
         test::node_at(n, rdna4::kRootPointer)[0] = rdna4::kRootPointer & ~0xFu;  // and a cycle, so a ray loops
       }},
      {"node-type-7.hwbvh", true,
       [](auto& n) {
         uint32_t* root = test::node_at(n, rdna4::kRootPointer);
         for (uint32_t k = 0; k < 8; ++k) root[10 + 3 * k] |= 7u << 24;
       }},
      {"primitive-overflow.hwbvh", true,
       [&](auto& n) {
         for (uint32_t p : tree.primitives) {
           test::node_at(n, p)[0] = 0xFFFFFFFFu & ~(1u << 31);
           test::node_at(n, p)[1] = 0xFFFFFFFFu;
         }
       }},
  };
  for (const Case& c : cases) {
    std::vector<uint32_t> nodes = test::sample_nodes();
    c.edit(nodes);
    const std::string f = write(c.name, test::with_nodes(nodes));
    SCOPED_TRACE(c.name);
    EXPECT_EQ(info(f).code, 0);  // info reads the metadata sections only
    const CliRun d = dump(f);
    expect_refused(d, c.name, "malformed node section");
    EXPECT_NE(d.out.find("problem: "), std::string::npos) << "no problem listed by dump";
    const CliRun s = stats(f);
    EXPECT_EQ(s.code, 0) << s.err;
    EXPECT_NE(s.out.find("WARNING: "), std::string::npos) << s.out;
    if (c.faults) {
      EXPECT_NE(s.out.find("(the first: "), std::string::npos) << s.out;  // names the bad node
    }
  }
}

}  // namespace
}  // namespace hwbvh
