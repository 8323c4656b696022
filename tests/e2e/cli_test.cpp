// End-to-end tests of the hwbvh binary (path in HWBVH_CLI): build, info and dump on the project scenes, exit
// codes, JSON output, determinism across thread counts, and refusal of bad inputs without partial outputs.
#include <sys/wait.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "blob/scratch_dir.h"
#include "fixtures/fifo_reader.h"
#include "fixtures/paths.h"
#include "fixtures/rra_capture.h"
#include "hwbvh/blob/blob.h"

namespace hwbvh {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class Cli : public ::testing::Test {
 protected:
  Cli() : dir_(std::string("e2e-") + ::testing::UnitTest::GetInstance()->current_test_info()->name()) {}

  // Runs `hwbvh ARGS` with stdout and stderr captured in files (stderr is then not a terminal: no progress).
  CliRun hwbvh(const std::string& args) {
    const auto out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string cmd = quote(HWBVH_CLI) + " " + args + " >" + quote(out.string()) + " 2>" + quote(err.string());
    const int status = std::system(cmd.c_str());
    CliRun r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = read_text(out);
    r.err = read_text(err);
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return r;
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string scene(const std::string& name) {
    const auto p = test::project_scene(name);
    if (!std::filesystem::exists(p)) return {};
    return p.string();
  }
  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
  }

  test::ScratchDir dir_;
};

// A bad input: exit 2 (not a crash), one message on stderr naming the file, nothing on stdout, no output file.
void expect_bad_input(const CliRun& r, const std::string& file, const std::string& needle = {}) {
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr(file));
  EXPECT_THAT(r.err, HasSubstr("hwbvh: error: "));
  if (!needle.empty()) {
    EXPECT_THAT(r.err, HasSubstr(needle));
  }
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(Cli, HelpVersionAndUsageErrors) {
  CliRun r = hwbvh("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("build"));
  EXPECT_THAT(r.out, HasSubstr("dump"));
  for (const char* cmd : {"build", "info", "dump"}) {
    r = hwbvh(std::string(cmd) + " --help");
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_THAT(r.out, HasSubstr("Usage")) << cmd;
  }
  r = hwbvh("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("hwbvh 0."));
  EXPECT_EQ(hwbvh("").code, 2);
  EXPECT_EQ(hwbvh("frobnicate").code, 2);
  EXPECT_EQ(hwbvh("build x.obj").code, 2);  // -o missing
  EXPECT_EQ(hwbvh("build x.obj -o y --quality ultra").code, 2);
  EXPECT_EQ(hwbvh("build x.obj -o y --obb maybe").code, 2);
  EXPECT_EQ(hwbvh("build x.obj -o y --obb-ratio 2").code, 2);
  EXPECT_EQ(hwbvh("build x.obj -o y --threads -1").code, 2);
  EXPECT_EQ(hwbvh("build x.obj -o y --bogus").code, 2);
  EXPECT_EQ(hwbvh("dump x --max-nodes -3").code, 2);
  EXPECT_EQ(hwbvh("dump x --node 1 --pointer 2").code, 2);
  EXPECT_TRUE(dir_.files().empty());
}

TEST_F(Cli, BuildInfoDumpOnCornellBox) {
  const std::string obj = scene("cornell-box.obj");
  ASSERT_FALSE(obj.empty()) << "scenes/cornell-box.obj is missing";
  const std::string out = path("cornell.hwbvh");

  CliRun r = hwbvh("build " + quote(obj) + " -o " + quote(out));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  for (const char* field : {"scene", "cornell-box.obj", "triangles", "32 (0 degenerate", "box nodes", "primitive nodes",
                            "node bytes", "bytes per triangle", "triangles per primitive node", "triangle pairs",
                            "box nodes with an OBB", "SAH cost", "spatial-split references", "quality", "medium",
                            "threads", "seconds bvh", "seconds total"})
    EXPECT_THAT(r.out, HasSubstr(field));

  r = hwbvh("info " + quote(out));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* field : {"file size", "format version", "geometries", "8", "box nodes", "SAH cost", "section nodes",
                            "section geometry", "section scene-meta", "section build-meta"})
    EXPECT_THAT(r.out, HasSubstr(field));
  EXPECT_THAT(r.out, Not(HasSubstr("seconds")));  // timings are not stored in the file
  for (const char* opacity : {"alpha-tested", "STOC", "opacity bake"})  // no alpha: no opacity block
    EXPECT_THAT(r.out, Not(HasSubstr(opacity)));

  r = hwbvh("dump " + quote(out));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* field : {"root 0x15", "box node @0x80  pointer 0x15", "origin", "exponents", "obb", "child 0",
                            "range", "flags", "mask", "primitive node @", "pair 0", "tri0  indices", "prim", "geo",
                            "opaque", "stop 1", "nav end-of-range"})
    EXPECT_THAT(r.out, HasSubstr(field));

  r = hwbvh("dump " + quote(out) + " --node 128");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("box node @0x80"));
  EXPECT_THAT(r.out, Not(HasSubstr("primitive node @")));
  r = hwbvh("dump " + quote(out) + " --pointer 0x15 --max-nodes 1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("box node @0x80"));
  r = hwbvh("dump " + quote(out) + " --max-nodes 1");
  EXPECT_THAT(r.out, HasSubstr("more nodes not shown"));
  expect_bad_input(hwbvh("dump " + quote(out) + " --node 100"), out, "--node 100: no node reachable from the root");
  expect_bad_input(hwbvh("dump " + quote(out) + " --pointer 0xFFFFFF05"), out, "past the end");
  expect_bad_input(hwbvh("dump " + quote(out) + " --node twelve"), "--node", "not a decimal");
}

TEST_F(Cli, JsonOutputsParse) {
  const std::string obj = scene("cornell-box.obj");
  ASSERT_FALSE(obj.empty()) << "scenes/cornell-box.obj is missing";
  const std::string out = path("cornell.hwbvh");

  CliRun r = hwbvh("build " + quote(obj) + " -o " + quote(out) + " --json --quiet --quality low --obb off");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto build = nlohmann::json::parse(r.out);
  EXPECT_EQ(build["triangles"], 32);
  EXPECT_EQ(build["options"]["quality"], "low");
  EXPECT_EQ(build["options"]["obb"], false);
  EXPECT_EQ(build["obb_box_share"], 0.0);
  EXPECT_TRUE(build["run"]["seconds"].contains("total"));
  EXPECT_EQ(build["output"], out);

  r = hwbvh("info --json " + quote(out));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto info = nlohmann::json::parse(r.out);
  EXPECT_EQ(info["file_size"], std::filesystem::file_size(out));
  EXPECT_EQ(info["target"], "rtip31");
  EXPECT_EQ(info["sections"].size(), 4u);
  EXPECT_EQ(info["sections"][0]["type"], "nodes");
  EXPECT_EQ(info["sections"][0]["offset"].get<uint64_t>() % 128, 0u);
  EXPECT_EQ(info["report"]["box_nodes"], build["box_nodes"]);
  EXPECT_FALSE(info["report"].contains("run"));
  EXPECT_EQ(info["scene"]["geometries"].size(), 8u);

  r = hwbvh("dump --json --max-nodes 0 " + quote(out));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto dump = nlohmann::json::parse(r.out);
  EXPECT_EQ(dump["nodes"].size(), build["box_nodes"].get<uint64_t>() + build["primitive_nodes"].get<uint64_t>());
  EXPECT_TRUE(dump["problems"].empty());
  EXPECT_EQ(dump["nodes"][0]["pointer"], 0x15);
  EXPECT_EQ(dump["nodes"][0]["kind"], "box");
}

// The opacity block of a build or info text output: its rows, up to a blank line or the end, each ending in a
// newline, with runs of spaces (column alignment) squeezed to one.
std::string opacity_block(const std::string& out) {
  const std::size_t begin = out.find("alpha-tested triangles");
  if (begin == std::string::npos) return {};
  const std::size_t blank = out.find("\n\n", begin);
  const std::size_t end = blank == std::string::npos ? out.size() : blank + 1;
  std::string block;
  for (std::size_t i = begin; i < end; ++i)
    if (out[i] != ' ' || block.empty() || block.back() != ' ') block += out[i];
  return block;
}

// `info` prints the opacity figures of an alpha-tested blob's build report as text, the same values as --json,
// and the same block `build` printed.
TEST_F(Cli, BuildAndInfoShowOpacityOfAlphaTestedBlobs) {
  const std::string obj = scene("alpha-cards.obj");
  ASSERT_FALSE(obj.empty()) << "scenes/alpha-cards.obj is missing";
  for (const std::string target : {"rtip31", "rtip20"}) {
    SCOPED_TRACE(target);
    const std::string out = path(target + ".hwbvh");
    const CliRun built = hwbvh("build " + quote(obj) + " -o " + quote(out) + " --target " + target + " --quiet");
    ASSERT_EQ(built.code, 0) << built.err;
    CliRun r = hwbvh("info --json " + quote(out));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto opacity = nlohmann::json::parse(r.out)["report"]["opacity"];
    ASSERT_TRUE(opacity.is_object());
    r = hwbvh("info " + quote(out));
    ASSERT_EQ(r.code, 0) << r.err;
    const auto n = [&](const char* key) { return std::to_string(opacity[key].get<uint64_t>()); };
    EXPECT_THAT(r.out, ContainsRegex("alpha-tested triangles +" + n("alpha_tested_triangles") + " \\(cutoff 0.5\\)"));
    EXPECT_THAT(r.out, ContainsRegex("STOC +level " + n("stoc_level") + ", bird order, " + n("stoc_bytes") + " bytes"));
    if (target == "rtip31") {
      EXPECT_EQ(opacity["stoc_level"], 3);
      EXPECT_THAT(r.out, ContainsRegex("opacity bake +level " + n("bake_level") + ", " + n("baked_sub_triangles") +
                                       " sub-triangles: [0-9.]+ % opaque, [0-9.]+ % transparent, [0-9.]+ % unknown"));
    } else {
      EXPECT_EQ(opacity["baked_sub_triangles"], 0);  // RT IP 2.0 stores no STOC: nothing is baked
      EXPECT_THAT(r.out, Not(HasSubstr("opacity bake")));
    }
    EXPECT_LT(r.out.find("STOC"), r.out.find("section nodes"));  // one block, before the sections
    EXPECT_NE(opacity_block(r.out), "");
    EXPECT_EQ(opacity_block(built.out), opacity_block(r.out));
    EXPECT_LT(built.out.find("seconds total"), built.out.find("alpha-tested triangles"));  // after the report rows
  }
}

TEST_F(Cli, EveryProjectSceneBuildsAndInspects) {
  int scenes = 0;
  for (const auto& e : std::filesystem::directory_iterator(test::source_dir() / "scenes")) {
    if (e.path().extension() != ".obj") continue;
    ++scenes;
    const std::string out = path(e.path().stem().string() + ".hwbvh");
    CliRun r = hwbvh("build " + quote(e.path().string()) + " -o " + quote(out) + " --quiet");
    ASSERT_EQ(r.code, 0) << e.path() << ": " << r.err;
    EXPECT_EQ(hwbvh("info " + quote(out)).code, 0) << e.path();
    r = hwbvh("dump --json --max-nodes 0 " + quote(out));
    EXPECT_EQ(r.code, 0) << e.path() << ": " << r.err;
    EXPECT_TRUE(nlohmann::json::parse(r.out)["problems"].empty()) << e.path();
  }
  EXPECT_GT(scenes, 0) << "no scenes/*.obj";
}

TEST_F(Cli, BlobsAreByteIdenticalAtAnyThreadCount) {
  for (const char* name : {"cornell-box.obj", "overflow-fan.obj", "alpha-cards.obj"}) {
    const std::string obj = scene(name);
    ASSERT_FALSE(obj.empty()) << name << " is missing";
    for (const char* quality : {"medium", "high"}) {
      const std::string a = path("t1.hwbvh"), b = path("t2.hwbvh");
      const std::string common = " --quality " + std::string(quality) + " --quiet";
      ASSERT_EQ(hwbvh("build " + quote(obj) + " -o " + quote(a) + " --threads 1" + common).code, 0);
      ASSERT_EQ(hwbvh("build " + quote(obj) + " -o " + quote(b) + " --threads 2" + common).code, 0);
      EXPECT_TRUE(read_text(a) == read_text(b)) << name << " " << quality;
    }
  }
}

TEST_F(Cli, BadScenesExitTwoAndLeaveNoOutput) {
  const std::string out = path("out.hwbvh");
  const auto check = [&](const std::string& obj, const std::string& needle) {
    expect_bad_input(hwbvh("build " + quote(obj) + " -o " + quote(out)), obj, needle);
    EXPECT_FALSE(std::filesystem::exists(out)) << obj;
    for (const std::string& f : dir_.files()) EXPECT_THAT(f, Not(HasSubstr(".tmp"))) << obj;
  };
  check(path("missing.obj"), "");
  write("garbage.obj", std::string("\x7f" "ELF\x02\x01\x01\0\0\0\xff\xfe\x00\x13", 15));
  check(path("garbage.obj"), "");
  write("range.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n");
  check(path("range.obj"), "");
  write("nan.obj", "v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n");
  check(path("nan.obj"), "");
  write("empty.obj", "# nothing here\n");
  check(path("empty.obj"), "");
  write("malformed.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 2\nf 1 2 3\n");
  check(path("malformed.obj"), "");
  write("degenerate-only.obj", "v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n");
  check(path("degenerate-only.obj"), "");
}

TEST_F(Cli, WriteFailuresExitOneAndOverwritingTheInputIsRefused) {
  const std::string obj = scene("cornell-box.obj");
  ASSERT_FALSE(obj.empty()) << "scenes/cornell-box.obj is missing";
  CliRun r = hwbvh("build " + quote(obj) + " -o " + quote(path("no-such-dir/out.hwbvh")));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("out.hwbvh"));
  EXPECT_TRUE(dir_.files().empty());

  std::filesystem::copy_file(obj, dir_ / "copy.obj");
  std::filesystem::copy_file(test::project_scene("cornell-box.mtl"), dir_ / "copy.mtl");
  expect_bad_input(hwbvh("build " + quote(path("copy.obj")) + " -o " + quote(path("copy.obj"))), "copy.obj",
                   "overwrite the input");
  EXPECT_EQ(read_text(dir_ / "copy.obj"), read_text(obj));
}

// -o keeps what the path names: a symlink is followed (its target replaced, the link kept), a character device or
// FIFO is written in place (a failed write exits 1 naming it), a directory is refused and left as it was.
TEST_F(Cli, OutputPathsKeepWhatTheyName) {
  const std::string obj = scene("cornell-box.obj");
  ASSERT_FALSE(obj.empty()) << "scenes/cornell-box.obj is missing";
  const std::string blob = path("blob.hwbvh");
  ASSERT_EQ(hwbvh("build " + quote(obj) + " -o " + quote(blob) + " --quiet").code, 0);
  const std::string built = read_text(blob);

  write("target.hwbvh", "old");
  std::filesystem::create_symlink("target.hwbvh", dir_ / "link.hwbvh");
  CliRun r = hwbvh("build " + quote(obj) + " -o " + quote(path("link.hwbvh")) + " --quiet");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ / "link.hwbvh"));
  EXPECT_EQ(read_text(dir_ / "target.hwbvh"), built);

  r = hwbvh("build " + quote(obj) + " -o /dev/null --quiet");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
  r = hwbvh("build " + quote(obj) + " -o /dev/stdout --quiet");  // stdout: a file of the scratch folder
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out == built);

  r = hwbvh("build " + quote(obj) + " -o /dev/full --quiet");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("hwbvh: error: /dev/full: cannot write: No space left on device"));
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/full"));
  // render names its format by the extension (docs/cli.md), so a device has none: the refusal leaves it as it was.
  r = hwbvh("render " + quote(blob) + " -o /dev/full --mode shaded --width 16 --height 16");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("/dev/full: the image is written as PNG or JPEG"));
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/full"));

  const std::filesystem::path fifo = dir_ / "pipe";
  test::FifoReader reader(fifo);
  r = hwbvh("build " + quote(obj) + " -o " + quote(fifo.string()) + " --quiet");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  EXPECT_EQ(reader.finish(), built);

  dir_.write("folder/inside.txt", "kept");
  r = hwbvh("build " + quote(obj) + " -o " + quote(path("folder")));
  expect_bad_input(r, "folder", "the output path is a directory");
  EXPECT_EQ(read_text(dir_ / "folder/inside.txt"), "kept");
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir_.path()))
    EXPECT_THAT(e.path().filename().string(), Not(HasSubstr(".tmp-")));
}

TEST_F(Cli, CorruptedBlobsExitTwoWithAClearMessage) {
  const std::string obj = scene("cornell-box.obj");
  ASSERT_FALSE(obj.empty()) << "scenes/cornell-box.obj is missing";
  const std::string good = path("good.hwbvh");
  ASSERT_EQ(hwbvh("build " + quote(obj) + " -o " + quote(good) + " --quiet").code, 0);
  const std::string bytes = read_text(good);

  for (const std::size_t cut : {std::size_t{0}, std::size_t{5}, std::size_t{20}, std::size_t{100}, bytes.size() / 2,
                                bytes.size() - 1}) {
    write("cut.hwbvh", bytes.substr(0, cut));
    const std::string needle = cut == 0 ? "empty file" : "truncated";
    expect_bad_input(hwbvh("info " + quote(path("cut.hwbvh"))), "cut.hwbvh", needle);
    expect_bad_input(hwbvh("dump " + quote(path("cut.hwbvh"))), "cut.hwbvh", needle);
  }
  for (const std::size_t at : {std::size_t{3}, std::size_t{9}, std::size_t{50}, std::size_t{300}, bytes.size() - 2}) {
    std::string flipped = bytes;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x10);
    write("flip.hwbvh", flipped);
    expect_bad_input(hwbvh("info " + quote(path("flip.hwbvh"))), "flip.hwbvh");
    expect_bad_input(hwbvh("dump " + quote(path("flip.hwbvh"))), "flip.hwbvh");
  }
  expect_bad_input(hwbvh("info " + quote(path("absent.hwbvh"))), "absent.hwbvh", "cannot open");
  expect_bad_input(hwbvh("dump " + quote(obj)), obj, "a scene, not a blob");  // build it first
}

TEST_F(Cli, DumpReportsAHostileNodeSectionWithValidChecksums) {
  const std::string obj = scene("cornell-box.obj");
  ASSERT_FALSE(obj.empty()) << "scenes/cornell-box.obj is missing";
  const std::string good = path("good.hwbvh"), bad = path("hostile.hwbvh");
  ASSERT_EQ(hwbvh("build " + quote(obj) + " -o " + quote(good) + " --quiet").code, 0);
  blob::Blob b = blob::read_file(good);
  for (blob::Section& s : b.sections) {
    if (s.type != blob::SectionType::Nodes) continue;
    s.data[128] = std::byte{0x10};  // the root's internal_base now points at the root itself: a cycle
    s.data[129] = s.data[130] = s.data[131] = std::byte{0};
  }
  blob::write_file(bad, b);  // resealed: every checksum is valid
  ASSERT_EQ(hwbvh("info " + quote(bad)).code, 0);
  const CliRun r = hwbvh("dump " + quote(bad) + " --max-nodes 0");
  expect_bad_input(r, "hostile.hwbvh", "malformed node section");
  EXPECT_THAT(r.out, HasSubstr("problem: child 0 of box node @0x80"));
}


// Loader warnings reach stderr as "hwbvh: warning: ..." lines; --quiet silences them, and they never fail a build.
TEST_F(Cli, LoaderWarningsGoToStderrUnlessQuiet) {
  write("skip.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\ncurv 0 1 1 2\ncurv 0 1 1 2\nf 1 2 3\n");
  const CliRun loud = hwbvh("build " + path("skip.obj") + " -o " + path("skip.hwbvh"));
  EXPECT_EQ(loud.code, 0) << loud.err;
  EXPECT_EQ(loud.err, "hwbvh: warning: " + path("skip.obj") +
                          ": line 4: 'curv' statement skipped: free-form geometry not supported (2 times; the first is "
                          "shown)\n");
  const CliRun quiet = hwbvh("build " + path("skip.obj") + " -o " + path("skip.hwbvh") + " --quiet");
  EXPECT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
  const CliRun compare = hwbvh("compare " + path("skip.obj") + " --quiet");
  EXPECT_EQ(compare.code, 0) << compare.err;
  EXPECT_EQ(compare.err, "");

  // An exporter's own statement and a material library that is not there: warnings, and the scene builds.
  write("vendor.obj", "mtllib vendor.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nshading flat\nf 1 2 3\nshading smooth\n");
  const CliRun vendor = hwbvh("build " + path("vendor.obj") + " -o " + path("vendor.hwbvh"));
  EXPECT_EQ(vendor.code, 0) << vendor.err;
  EXPECT_EQ(vendor.err, "hwbvh: warning: " + path("vendor.obj") + ": line 1: material library 'vendor.mtl' not found (" +
                            path("vendor.mtl") + "): its materials are unknown and faces using them get no material\n"
                            "hwbvh: warning: " + path("vendor.obj") +
                            ": line 5: unknown statement 'shading' skipped (2 times; the first is shown)\n");
}

// Latin-1 names (a group in the OBJ, a material in its MTL that no face uses) build, and `info --json` shows them
// with U+FFFD in place of the bytes that are not UTF-8.
TEST_F(Cli, Latin1NamesBuildAndShowInInfo) {
  write("latin1.obj", "mtllib latin1.mtl\ng caf\xE9\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  write("latin1.mtl", "newmtl cr\xE8me\nKd 1 1 1\n");
  const CliRun build = hwbvh("build " + path("latin1.obj") + " -o " + path("latin1.hwbvh"));
  ASSERT_EQ(build.code, 0) << build.err;
  const CliRun info = hwbvh("info " + path("latin1.hwbvh") + " --json");
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("\"caf\xEF\xBF\xBD\""));
  EXPECT_THAT(info.out, HasSubstr("\"cr\xEF\xBF\xBDme\""));
}

// A file whose own name is not UTF-8 (a Latin-1 name from an older tool): every command that prints the name in
// JSON prints it with U+FFFD, and the blob's metadata holds it the same way.
TEST_F(Cli, Latin1FileNamesInEveryJsonOutput) {
  const std::string obj = path("caf\xE9.obj"), blob = path("caf\xE9.hwbvh");
  write("caf\xE9.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\n");
  const std::string shown = "caf\xEF\xBF\xBD";
  const std::string small = " --rays primary --width 8 --height 8 --json --quiet";
  for (const std::string& command :
       {"build " + quote(obj) + " -o " + quote(blob) + " --json --quiet", "info " + quote(blob) + " --json",
        "stats " + quote(blob) + small + " --machine rdna4", "compare " + quote(obj) + small + " --random-rays 64"}) {
    SCOPED_TRACE(command.substr(0, command.find(' ')));
    const CliRun r = hwbvh(command);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_FALSE(nlohmann::json::parse(r.out, nullptr, false).is_discarded()) << r.out;
    EXPECT_THAT(r.out, HasSubstr(shown));
  }
  const CliRun report = hwbvh("report " + quote(obj) + " -o " + quote(path("r.html")) +
                              " --width 8 --height 8 --ao-samples 1 --quiet");
  EXPECT_EQ(report.code, 0) << report.err;
}

// Coordinates near the float limit: a blob for the targets that can encode them, exit 2 naming the limit for xe3.
TEST_F(Cli, HugeCoordinatesBuildOrAreRefusedCleanly) {
  write("huge.obj", "v 3e38 0 0\nv -3e38 3e38 0\nv 0 0 3e38\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 4 5 6\n");
  for (const std::string target : {"rtip31", "rtip20"}) {
    const CliRun r = hwbvh("build " + path("huge.obj") + " -o " + path("huge.hwbvh") + " --target " + target);
    EXPECT_EQ(r.code, 0) << target << ": " << r.err;
  }
  const CliRun xe3 = hwbvh("build " + path("huge.obj") + " -o " + path("huge-xe3.hwbvh") + " --target xe3");
  expect_bad_input(xe3, path("huge.obj"), "Xe3 8-bit exponent");
}

// Every command runs on a scene at 2e19 (Embree sees it scaled, the cameras and lights are placed in double) and
// refuses, with a message, what a scene near the float limit makes impossible (an automatic camera, a light above it).
TEST_F(Cli, HugeScenesTraceOnEveryCommand) {
  write("huge.obj", "v 2e19 0 0\nv 0 2e19 0\nv 0 0 2e19\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 4 5 6\n");
  const std::string obj = quote(path("huge.obj")), blob = quote(path("huge.hwbvh"));
  const std::string small = " --width 16 --height 16 --quiet";
  ASSERT_EQ(hwbvh("build " + obj + " -o " + blob + " --quiet").code, 0);
  for (const std::string& command :
       {"stats " + blob + small + " --json", "render " + blob + " -o " + quote(path("h.png")) + " --mode steps --width 16 --height 16",
        "compare " + obj + small + " --random-rays 64", "report " + obj + " -o " + quote(path("h.html")) + small}) {
    const CliRun r = hwbvh(command);
    EXPECT_EQ(r.code, 0) << command << ": " << r.err;
  }
  write("limit.obj", "v 3e38 0 0\nv -3e38 3e38 0\nv 0 0 3e38\nf 1 2 3\n");
  ASSERT_EQ(hwbvh("build " + quote(path("limit.obj")) + " -o " + quote(path("limit.hwbvh")) + " --quiet").code, 0);
  const CliRun framed = hwbvh("stats " + quote(path("limit.hwbvh")) + small);
  EXPECT_EQ(framed.code, 2);
  EXPECT_THAT(framed.err, HasSubstr("give one with --camera"));
  const CliRun lit = hwbvh("stats " + quote(path("limit.hwbvh")) + small + " --camera 0,0,-2e38,0,0,0,0,1,0,45");
  EXPECT_EQ(lit.code, 2);
  EXPECT_THAT(lit.err, HasSubstr("shadow rays' light"));
  EXPECT_EQ(hwbvh("stats " + quote(path("limit.hwbvh")) + small + " --camera 0,0,-2e38,0,0,0,0,1,0,45 --rays primary")
                .code,
            0);
}

// hwbvh export, plain and --compress, and a driver-style capture (the HwbvhSections chunk taken out of the chunk
// table): `stats` gives the blob's figures on all three (oracle included: the capture's triangles are decoded from
// its nodes), `info` the blob's report on the exports and the tree's figures on the capture.
// One level (an OBJ scene) and two (a glTF scene: a TLAS chunk and a chunk per BLAS).
TEST_F(Cli, ExportedAndCapturedRraFilesGiveTheBlobsStats) {
  for (const std::string name : {"rotated-objects.obj", "thousand-rocks.gltf"}) {
    SCOPED_TRACE(name);
    const std::string source = scene(name);
    ASSERT_FALSE(source.empty()) << "scenes/" << name << " is missing";
    const std::string blob = path(name + ".hwbvh"), rra = path(name + ".rra"), zstd = path(name + "-zstd.rra");
    const std::string capture = path(name + "-capture.rra");
    ASSERT_EQ(hwbvh("build " + quote(source) + " -o " + quote(blob) + " --quiet").code, 0);
    ASSERT_EQ(hwbvh("export " + quote(blob) + " -o " + quote(rra)).code, 0);
    const CliRun zipped = hwbvh("export " + quote(blob) + " -o " + quote(zstd) + " --compress");
    ASSERT_EQ(zipped.code, 0) << zipped.err;
    EXPECT_LT(std::filesystem::file_size(zstd), std::filesystem::file_size(rra));
    const std::string bytes = read_text(rra);
    std::vector<std::byte> file(bytes.size());
    std::memcpy(file.data(), bytes.data(), bytes.size());
    const std::vector<std::byte> stripped = test::without_hwbvh_sections(std::move(file));
    write(name + "-capture.rra", std::string(reinterpret_cast<const char*>(stripped.data()), stripped.size()));

    const auto stats = [&](const std::string& file) {
      const CliRun r = hwbvh("stats " + quote(file) + " --rays primary,shadow --width 48 --height 32 --json --quiet");
      EXPECT_EQ(r.code, 0) << file << ": " << r.err;
      nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
      j.erase("file");
      for (nlohmann::json& kind : j["ray_types"]) kind.erase("wall_clock");  // timings differ between runs
      return j;
    };
    const nlohmann::json expected = stats(blob);
    ASSERT_TRUE(expected.contains("ray_types")) << expected.dump();
    for (const std::string& file : {rra, zstd, capture}) EXPECT_EQ(stats(file), expected) << file;

    const CliRun report = hwbvh("info " + quote(zstd));
    ASSERT_EQ(report.code, 0) << report.err;
    EXPECT_THAT(report.out, HasSubstr("SAH cost"));
    const CliRun info = hwbvh("info " + quote(capture));
    ASSERT_EQ(info.code, 0) << info.err;
    for (const char* field : {"RRA capture", "box nodes", "primitive nodes", "tree depth", "primitives",
                              "chunk RawAccelStruct"})
      EXPECT_THAT(info.out, HasSubstr(field));
    EXPECT_THAT(info.out, Not(HasSubstr("chunk HwbvhSections")));
    if (name.ends_with(".gltf")) {
      EXPECT_THAT(info.out, HasSubstr("top level, RT IP 3.1"));
      EXPECT_THAT(info.out, HasSubstr("instance nodes"));
    }
  }
}

// hwbvh stats --export-rra: from a rays file of the two rays of tests/rra/golden/one-triangle-history.rra, that
// file's bytes; from camera rays, one dispatch per ray type at the image size, the same bytes at any thread count;
// `info` shows the dispatches; an xe3 blob is refused before any work and no file is written.
TEST_F(Cli, StatsExportsItsRaysAsRraRayHistory) {
  write("one-triangle.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  const std::string blob = path("t.hwbvh"), rra = path("t.rra");
  ASSERT_EQ(hwbvh("build " + quote(path("one-triangle.obj")) + " -o " + quote(blob) + " --quiet").code, 0);
  write("two.rays", "0.25 0.25 -1 0 0 1 0 100\n2 2 -1 0 0 1 0 100\n");
  const CliRun run = hwbvh("stats " + quote(blob) + " --rays-file " + quote(path("two.rays")) + " --rays file" +
                           " --export-rra " + quote(rra) + " --quiet");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(read_text(rra), read_text(test::source_dir() / "tests/rra/golden/one-triangle-history.rra"));
  const CliRun info = hwbvh("info " + quote(rra));
  ASSERT_EQ(info.code, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("ray history dispatch 0"));
  EXPECT_THAT(info.out, HasSubstr("2 x 1, 2 rays, 208 token bytes"));

  for (const char* threads : {"1", "2"}) {  // the same bytes at any thread count
    const std::string out = path(std::string("c") + threads + ".rra");
    const CliRun camera = hwbvh("stats " + quote(blob) + " --rays primary,shadow --width 8 --height 4 --threads " +
                                threads + " --export-rra " + quote(out) + " --quiet");
    ASSERT_EQ(camera.code, 0) << camera.err;
  }
  EXPECT_EQ(read_text(path("c1.rra")), read_text(path("c2.rra")));
  const std::string rra_camera = path("c2.rra");
  const CliRun json = hwbvh("info " + quote(rra_camera) + " --json");
  ASSERT_EQ(json.code, 0) << json.err;
  const nlohmann::json dispatches = nlohmann::json::parse(json.out, nullptr, false)["ray_history"];
  ASSERT_EQ(dispatches.size(), 2u) << json.out;
  EXPECT_EQ(dispatches[0]["width"], 8);
  EXPECT_EQ(dispatches[0]["height"], 4);
  EXPECT_EQ(dispatches[0]["rays"], 32);
  EXPECT_EQ(dispatches[0]["token_bytes"], 32 * 104);

  ASSERT_EQ(
      hwbvh("build " + quote(path("one-triangle.obj")) + " -o " + quote(path("x.hwbvh")) + " --target xe3 --quiet").code,
      0);
  const CliRun xe3 = hwbvh("stats " + quote(path("x.hwbvh")) + " --export-rra " + quote(path("x.rra")) + " --quiet");
  EXPECT_EQ(xe3.code, 2);
  EXPECT_THAT(xe3.err, HasSubstr("needs an rtip31 blob"));
  EXPECT_FALSE(std::filesystem::exists(path("x.rra")));
}

// hwbvh stats streams its rays: the JSON (but for the wall clock), the per-ray files and the .rra ray history are the
// same bytes whatever --batch-rays and --threads.
TEST_F(Cli, StatsGivesTheSameResultsAtAnyBatchSizeAndThreadCount) {
  const std::string scene = quote(test::project_scene("alpha-cards.obj").string());
  const auto outputs = [&](const std::string& options) {
    const std::string tag = std::to_string(std::hash<std::string>{}(options));
    const std::string npy = path(tag + ".npy"), csv = path(tag + ".csv"), rra = path(tag + ".rra");
    const CliRun run = hwbvh("stats " + scene + " --rays primary,ao,shadow,reflection,random --width 37 --height 21 "
                             "--ao-samples 2 --random-rays 999 --json --per-ray " + quote(npy) + " --export-rra " +
                             quote(rra) + " " + options);
    EXPECT_EQ(run.code, 0) << run.err;
    nlohmann::json json = nlohmann::json::parse(run.out, nullptr, false);
    json.erase("threads");
    for (nlohmann::json& kind : json["ray_types"]) kind.erase("wall_clock");
    json.erase("wrote");  // names the files
    EXPECT_EQ(hwbvh("stats " + scene + " --rays primary,ao,shadow,reflection,random --width 37 --height 21 --ao-samples 2 "
                    "--random-rays 999 --quiet --per-ray " + quote(csv) + " " + options).code, 0);
    return std::vector<std::string>{json.dump(), read_text(npy), read_text(csv), read_text(rra)};
  };
  const std::vector<std::string> reference = outputs("--threads 2");
  EXPECT_THAT(reference[0], HasSubstr("\"ray_types\""));
  for (const char* options : {"--threads 1", "--threads 2 --batch-rays 32", "--threads 1 --batch-rays 100"}) {
    SCOPED_TRACE(options);
    const std::vector<std::string> other = outputs(options);
    for (std::size_t i = 0; i < reference.size(); ++i) EXPECT_TRUE(other[i] == reference[i]) << i;
  }
  EXPECT_EQ(hwbvh("stats " + scene + " --batch-rays 0").code, 2);
}

}  // namespace
}  // namespace hwbvh
