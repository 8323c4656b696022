// The HTML report generator: well-formed markup, images that are data URIs decoding at their stated size,
// histograms whose bars sum to the ray count, no external references, determinism, escaping and bad input.
#include "hwbvh/stats/report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <variant>

#include "blob/scratch_dir.h"
#include "fixtures/base64.h"
#include "fixtures/html_scan.h"
#include "fixtures/paths.h"
#include "hwbvh/blob/blob.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/machine/config.h"
#include "hwbvh/pipeline/pipeline.h"
#include "hwbvh/render/png.h"

namespace hwbvh {
namespace {

stats::ReportOptions small_options() {
  stats::ReportOptions o;
  o.kinds = {stats::RayKind::Primary, stats::RayKind::AmbientOcclusion, stats::RayKind::Shadow, stats::RayKind::Random};
  o.width = 48;
  o.height = 32;
  o.ao_samples = 1;
  o.random_rays = 512;
  return o;
}

// Primary and shadow rays on a small image, with the cross-target table.
stats::ReportOptions compare_options() {
  stats::ReportOptions o;
  o.kinds = {stats::RayKind::Primary, stats::RayKind::Shadow};
  o.width = 24;
  o.height = 16;
  o.ao_samples = 1;
  o.compare = true;
  return o;
}

// Checks that every element opened is closed in order (void elements and "/>" excepted); returns the problems.
std::string tag_problems(const std::string& html) {
  static const std::set<std::string> kVoid{"meta", "img", "br", "hr", "link", "input"};
  std::vector<std::string> open;
  std::string problems;
  std::size_t pos = 0;
  while ((pos = html.find('<', pos)) != std::string::npos) {
    const std::size_t end = html.find('>', pos);
    if (end == std::string::npos) return problems + "unterminated tag; ";
    const std::string tag = html.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    if (tag.empty() || tag[0] == '!') continue;  // <!DOCTYPE html>
    const bool closing = tag[0] == '/';
    const std::size_t name_begin = closing ? 1 : 0;
    const std::size_t name_end = tag.find_first_of(" \t\n/", name_begin);
    const std::string name =
        tag.substr(name_begin, name_end == std::string::npos ? std::string::npos : name_end - name_begin);
    if (closing) {
      if (open.empty() || open.back() != name) {
        problems += "</" + name + "> closes " + (open.empty() ? "nothing" : "<" + open.back() + ">") + "; ";
        return problems;
      }
      open.pop_back();
    } else if (!kVoid.count(name) && tag.back() != '/') {
      open.push_back(name);
      if (name == "style") {  // raw text up to </style>
        pos = html.find("</style>", pos);
        if (pos == std::string::npos) return problems + "unterminated <style>; ";
      }
    }
  }
  for (const std::string& name : open) problems += "<" + name + "> not closed; ";
  return problems;
}

class Report : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new test::ScratchDir("stats-report");
    const auto cornell = test::project_scene("cornell-box.obj");
    if (!std::filesystem::exists(cornell)) return;
    // A blob of another target, to show blobs of any target are accepted.
    pipeline::BuildBlobOptions b;
    b.target = blob::Target::Rtip20;
    blob_ = (scratch_->path() / "cornell-rtip20.hwbvh").string();
    blob::write_file(blob_, pipeline::build_blob(load_obj(cornell), b).blob);

    stats::ReportOptions o = small_options();
    o.compare = true;
    o.machine = emu::load_machine_preset("rdna4");
    report_ = new stats::Report(stats::make_report({cornell, blob_}, o));
    html_ = new std::string(stats::report_to_html(*report_));
  }
  static void TearDownTestSuite() {
    delete html_;
    delete report_;
    delete scratch_;
    html_ = nullptr;
    report_ = nullptr;
    scratch_ = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(html_, nullptr) << "scenes/cornell-box.obj is missing";
  }

  static inline test::ScratchDir* scratch_ = nullptr;
  static inline std::string blob_;
  static inline stats::Report* report_ = nullptr;
  static inline std::string* html_ = nullptr;
};

TEST_F(Report, CollectsEveryPartPerScene) {
  ASSERT_EQ(report_->scenes.size(), 2u);
  const stats::SceneReport& obj = report_->scenes[0];
  const stats::SceneReport& b = report_->scenes[1];
  EXPECT_TRUE(obj.from_scene);
  EXPECT_FALSE(b.from_scene);
  EXPECT_EQ(obj.build.target, "rtip31");
  EXPECT_EQ(b.build.target, "rtip20");
  EXPECT_FALSE(obj.build.run.has_value());
  ASSERT_EQ(obj.stats.kinds.size(), 4u);
  for (const stats::SceneReport& s : report_->scenes) {
    for (const stats::KindStats& k : s.stats.kinds) {
      EXPECT_TRUE(k.results.empty());  // dropped once the images are drawn
      EXPECT_TRUE(k.machine.has_value());
      EXPECT_EQ(k.agreement.rays(), k.rays);
      EXPECT_GE(static_cast<double>(k.agreement.agreeing()), 0.9999 * static_cast<double>(k.rays));
    }
  }
  // Shaded, steps, box tests, triangle tests, and OBB steps for rtip31 only.
  EXPECT_EQ(obj.images.size(), 5u);
  EXPECT_EQ(b.images.size(), 4u);
  ASSERT_TRUE(obj.compare.has_value());
  std::vector<std::string> variants;
  for (const stats::VariantRow& v : obj.compare->rows) variants.push_back(v.name);
  for (const char* name : {"rtip20 BVH4", "rtip31 BVH4x2", "rtip31 BVH8", "rtip31 BVH8 + OBB"})
    EXPECT_NE(std::find(variants.begin(), variants.end(), name), variants.end()) << name;
  EXPECT_FALSE(b.compare.has_value());  // needs the OBJ scene
}

TEST_F(Report, HtmlIsWellFormed) {
  EXPECT_EQ(html_->rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0), 0u);
  EXPECT_EQ(tag_problems(*html_), "");
  EXPECT_NE(html_->find("<meta charset=\"utf-8\">"), std::string::npos);
  // The checker itself catches what it should.
  EXPECT_NE(tag_problems("<p><b>x</p></b>"), "");
  EXPECT_NE(tag_problems("<div><span>x</span>"), "");
  EXPECT_EQ(tag_problems("<p>a<img src=\"x\"><br><svg><rect/></svg></p>"), "");
}

TEST_F(Report, EveryImageIsADataUriThatDecodesAtItsStatedSize) {
  int images = 0;
  for (std::string_view tag : test::html_tags(*html_, "img")) {
    const std::string src(test::html_attribute(tag, "src").value_or(""));
    const std::string prefix = "data:image/png;base64,";
    ASSERT_EQ(src.rfind(prefix, 0), 0u) << src.substr(0, 40);
    const render::Image decoded = render::decode_png(test::from_base64(src.substr(prefix.size())), "report image");
    EXPECT_EQ(decoded.width(), std::stoul(std::string(test::html_attribute(tag, "width").value_or("0"))));
    EXPECT_EQ(decoded.height(), std::stoul(std::string(test::html_attribute(tag, "height").value_or("0"))));
    EXPECT_EQ(decoded.width(), 48u);   // the primary-ray image width
    EXPECT_GE(decoded.height(), 32u);  // plus a legend strip under heatmaps
    ++images;
  }
  EXPECT_EQ(images, 9);
  // No <img> escaped the scan above.
  std::size_t count = 0;
  for (std::size_t p = 0; (p = html_->find("<img", p)) != std::string::npos; ++p) ++count;
  EXPECT_EQ(count, 9u);
}

TEST_F(Report, HistogramBarsSumToTheRayCount) {
  const std::regex svg(
      R"re(<svg class="histogram" data-ray-type="([a-z]+)" data-rays="(\d+)"[^>]*>([\s\S]*?)</svg>)re");
  const std::regex bar(R"re(data-count="(\d+)")re");
  std::map<std::string, int> seen;
  std::size_t scene = 0;
  for (auto it = std::sregex_iterator(html_->begin(), html_->end(), svg); it != std::sregex_iterator(); ++it) {
    const std::string kind = (*it)[1];
    const uint64_t rays = std::stoull((*it)[2]);
    const std::string body = (*it)[3];
    uint64_t sum = 0;
    int bars = 0;
    for (auto b = std::sregex_iterator(body.begin(), body.end(), bar); b != std::sregex_iterator(); ++b, ++bars)
      sum += std::stoull((*b)[1]);
    EXPECT_EQ(sum, rays) << kind;
    EXPECT_GT(bars, 0) << kind;
    // Histograms appear in scene order, one per ray type.
    if (seen[kind]++ > 0) scene = 1;
    const stats::KindStats* k = nullptr;
    for (const stats::KindStats& ks : report_->scenes[scene].stats.kinds)
      if (ks.kind == stats::parse_ray_kind(kind)) k = &ks;
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(rays, k->rays);
  }
  EXPECT_EQ(seen.size(), 4u);
  for (const auto& [kind, n] : seen) EXPECT_EQ(n, 2) << kind;
}

TEST_F(Report, ReferencesNothingOutsideTheFile) {
  EXPECT_EQ(html_->find("http"), std::string::npos);
  EXPECT_EQ(html_->find("<link"), std::string::npos);
  EXPECT_EQ(html_->find("<script"), std::string::npos);
  EXPECT_EQ(html_->find("url("), std::string::npos);
  for (const char* attribute : {"src", "href"}) {
    for (std::string_view target : test::html_attribute_values(*html_, attribute)) {
      EXPECT_TRUE(target.starts_with("data:image/png;base64,") || target.starts_with('#')) << target.substr(0, 60);
    }
  }
}

TEST_F(Report, HasSummaryAnchorsAndSections) {
  EXPECT_NE(html_->find("<h2 id=\"summary\">Summary</h2>"), std::string::npos);
  for (const char* id : {"scene-1-cornell-box-obj", "scene-2-cornell-rtip20-hwbvh"}) {
    EXPECT_NE(html_->find(std::string("<section id=\"") + id + "\">"), std::string::npos) << id;
    EXPECT_NE(html_->find(std::string("href=\"#") + id + "\""), std::string::npos) << id;
  }
  for (const char* text :
       {"<h3>Build</h3>", "<h3>Traversal</h3>", "<h3>Steps per ray</h3>", "<h3>Images</h3>",
        "<h3>Oracle agreement</h3>", "<h3>Machine model</h3>", "<h3>Comparison across targets</h3>", "rtip20 BVH4",
        "rtip31 BVH4x2", "rtip31 BVH8", "rtip31 BVH8 + OBB", "not hardware measurements"})
    EXPECT_NE(html_->find(text), std::string::npos) << text;
}

TEST_F(Report, IsDeterministicAtAnyThreadCount) {
  stats::ReportOptions o = small_options();
  o.threads = 1;
  const std::string one = stats::report_to_html(stats::make_report({test::project_scene("cornell-box.obj")}, o));
  o.threads = 3;
  const std::string three = stats::report_to_html(stats::make_report({test::project_scene("cornell-box.obj")}, o));
  EXPECT_EQ(one, three);
}

// The <table> that follows `heading` in `html`, as rows of cells (header cells included), by plain scanning.
std::vector<std::vector<std::string>> table_after(const std::string& html, const std::string& heading) {
  std::vector<std::vector<std::string>> rows;
  const std::size_t begin = html.find(heading);
  if (begin == std::string::npos) return rows;
  const std::size_t end = html.find("</table>", begin);
  for (std::size_t tr = html.find("<tr>", begin); tr < end; tr = html.find("<tr>", tr + 1)) {
    const std::size_t tr_end = html.find("</tr>", tr);
    std::vector<std::string> cells;
    for (std::size_t c = html.find("<t", tr + 4); c < tr_end; c = html.find("<t", c + 1)) {
      const std::size_t open_end = html.find('>', c) + 1;
      cells.push_back(html.substr(open_end, html.find("</t", open_end) - open_end));
    }
    rows.push_back(std::move(cells));
  }
  return rows;
}

std::string two_decimals(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

// The page shows the report's figures: counts known from the inputs (scenes/cornell-box.obj has 16 quads, the
// primary image is 48 x 32), and ratios the test works out itself from the report's totals.
TEST_F(Report, TablesShowFiguresWorkedOutFromTheInputsAndTotals) {
  const stats::SceneReport& cornell = report_->scenes[0];
  const auto summary = table_after(*html_, "<h2 id=\"summary\">Summary</h2>");
  ASSERT_GE(summary.size(), 3u);
  ASSERT_GE(summary[1].size(), 7u);
  EXPECT_EQ(summary[1][3], "32");
  EXPECT_EQ(summary[1][5], two_decimals(static_cast<double>(cornell.build.node_bytes) / 32.0));

  const auto traversal = table_after(*html_, "<h3>Traversal</h3>");  // the first scene's
  const auto row = [&](const std::string& label) {
    for (const auto& r : traversal)
      if (!r.empty() && r[0] == label) return r;
    ADD_FAILURE() << "no row " << label;
    return std::vector<std::string>(5);
  };
  ASSERT_EQ(traversal.at(0), (std::vector<std::string>{"per ray", "primary", "ao", "shadow", "random"}));
  EXPECT_EQ(row("rays")[1], "1536");
  EXPECT_EQ(row("rays")[4], "512");
  for (std::size_t k = 0; k < 4; ++k) {
    const stats::KindStats& ks = cornell.stats.kinds[k];
    const double rays = static_cast<double>(ks.rays), hits = static_cast<double>(ks.hits);
    // Cells read "mean / hit mean[ / median / p95 / max]": the mean over all rays, then over the rays that hit.
    const auto means = [&](const std::string& label, uint64_t total, uint64_t hit_total) {
      SCOPED_TRACE(label);
      const std::string cell = row(label)[k + 1];
      const std::string hit_mean = hits > 0 ? two_decimals(static_cast<double>(hit_total) / hits) : "0.00";
      EXPECT_EQ(cell.substr(0, cell.find(" / ")), two_decimals(static_cast<double>(total) / rays));
      const std::size_t second = cell.find(" / ") + 3;
      EXPECT_EQ(cell.substr(second, cell.find(" / ", second) - second), hit_mean);
    };
    means("stack pushes: mean / hit mean", ks.totals.stack_pushes, ks.hit_totals.stack_pushes);
    means("box-node steps: mean / hit mean", ks.totals.box_node_steps, ks.hit_totals.box_node_steps);
    means("steps: mean / hit mean / median / p95 / max", ks.totals.steps, ks.hit_totals.steps);
    EXPECT_EQ(summary[1][6 + k], two_decimals(static_cast<double>(ks.totals.steps) / rays));
  }
}

TEST_F(Report, CompareTableOfASceneWithoutAlphaHasNoAnyHitColumn) {
  ASSERT_FALSE(report_->scenes[0].compare->any_hit_shader);
  const auto rows = table_after(*html_, "<h3>Comparison across targets</h3>");
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(std::count(rows[0].begin(), rows[0].end(), "any-hit invocations"), 0);
  EXPECT_EQ(rows[0].size(), 9u);  // variant ... oracle agreement, machine-model cycles
}

// An alpha-tested scene: the build rows are those of `hwbvh build` / `hwbvh info`, and the compare table has an
// any-hit column (as `hwbvh compare` prints) holding each variant's invocations per ray.
TEST(ReportAlpha, BuildShowsOpacityRowsAndCompareShowsAnyHitColumn) {
  const auto cards = test::project_scene("alpha-cards.obj");
  ASSERT_TRUE(std::filesystem::exists(cards)) << cards;
  const stats::Report report = stats::make_report({cards}, compare_options());
  const stats::SceneReport& s = report.scenes.at(0);
  ASSERT_TRUE(s.build.opacity.has_value());
  ASSERT_TRUE(s.compare.has_value());
  ASSERT_TRUE(s.compare->any_hit_shader);
  const std::string html = stats::report_to_html(report);
  EXPECT_EQ(tag_problems(html), "");

  const auto build = table_after(html, "<h3>Build</h3>");
  for (const auto& [label, value] : pipeline::opacity_rows(*s.build.opacity)) {
    EXPECT_NE(std::find(build.begin(), build.end(), std::vector<std::string>{label, value}), build.end()) << label;
  }

  const auto rows = table_after(html, "<h3>Comparison across targets</h3>");
  ASSERT_EQ(rows.size(), s.compare->rows.size() + 1);
  const std::vector<std::string>& header = rows[0];
  const auto column = std::find(header.begin(), header.end(), "any-hit invocations");
  ASSERT_NE(column, header.end());
  EXPECT_EQ(*(column + 1), "oracle agreement");  // where `hwbvh compare` puts it
  const auto index = static_cast<std::size_t>(column - header.begin());
  for (std::size_t i = 0; i < s.compare->rows.size(); ++i) {
    const stats::VariantRow& v = s.compare->rows[i];
    ASSERT_EQ(rows[i + 1].size(), header.size()) << v.name;
    EXPECT_EQ(rows[i + 1][0], v.name);
    EXPECT_GT(v.any_hit_invocations, 0.0) << v.name;  // nothing baked: every alpha-tested candidate runs the shader
    char cell[32];
    std::snprintf(cell, sizeof cell, "%.2f", v.any_hit_invocations);
    EXPECT_EQ(rows[i + 1][index], cell) << v.name;
  }
  EXPECT_NE(html.find("Alpha-tested scene: any-hit invocations"), std::string::npos);
}

// A two-level blob's traversal table has the per-level rows, worked out from its totals; a one-level one has none.
TEST(ReportTwoLevel, TraversalShowsThePerLevelCounters) {
  const test::ScratchDir dir;
  const InstancedScene scene =
      std::get<InstancedScene>(load_any_scene(test::project_scene("instanced-garden.gltf"), {}));
  blob::write_file(dir / "garden.hwbvh", pipeline::build_instanced_blob(scene, {}).blob);
  stats::ReportOptions o = small_options();
  const stats::Report report = stats::make_report({dir / "garden.hwbvh", test::project_scene("cornell-box.obj")}, o);
  const std::string html = stats::report_to_html(report);
  const auto traversal = table_after(html, "<h3>Traversal</h3>");  // the garden's
  const stats::StatsReport& st = report.scenes.at(0).stats;
  ASSERT_TRUE(st.two_level);
  for (const stats::LevelCounter& c : stats::kLevelCounters) {
    const std::string label = std::string(c.label) + ": mean / hit mean";
    const auto row = std::find_if(traversal.begin(), traversal.end(),
                                  [&](const std::vector<std::string>& r) { return !r.empty() && r[0] == label; });
    ASSERT_NE(row, traversal.end()) << label;
    for (std::size_t k = 0; k < st.kinds.size(); ++k) {
      const stats::KindStats& ks = st.kinds[k];
      EXPECT_EQ(row->at(k + 1), two_decimals(ks.per_ray(ks.totals.*c.member)) + " / " +
                                    two_decimals(ks.per_hit(ks.hit_totals.*c.member))) << label;
    }
  }
  EXPECT_GT(st.kinds[0].totals.instance_transitions, 0u);
  EXPECT_FALSE(report.scenes.at(1).stats.two_level);
  EXPECT_EQ(html.find("TLAS steps"), html.rfind("TLAS steps"));  // one row: the cornell box has none
}

// A glTF input is built in two levels: its traversal and its compare table show the per-level counters, every compare
// row agreeing with Embree; with flatten it is one level, without them.
TEST(ReportTwoLevel, GltfInputIsBuiltAndComparedInTwoLevels) {
  const auto garden = test::project_scene("instanced-garden.gltf");
  stats::ReportOptions o = compare_options();
  const stats::Report report = stats::make_report({garden}, o);
  const stats::SceneReport& s = report.scenes.at(0);
  ASSERT_TRUE(s.build.levels.has_value());
  EXPECT_TRUE(s.stats.two_level);
  ASSERT_TRUE(s.compare.has_value());
  ASSERT_TRUE(s.compare->levels.has_value());
  EXPECT_EQ(s.compare->levels->instances, s.build.levels->instances);
  const std::string html = stats::report_to_html(report);
  EXPECT_EQ(tag_problems(html), "");
  const auto rows = table_after(html, "<h3>Comparison across targets</h3>");
  ASSERT_EQ(rows.size(), s.compare->rows.size() + 1);
  const std::vector<std::string>& header = rows[0];
  const auto column = std::find(header.begin(), header.end(), stats::kLevelCounters[0].label);
  ASSERT_NE(column, header.end());
  const auto index = static_cast<std::size_t>(column - header.begin());
  for (std::size_t i = 0; i < s.compare->rows.size(); ++i) {
    const stats::VariantRow& v = s.compare->rows[i];
    EXPECT_EQ(rows[i + 1][index], two_decimals(v.per_ray(v.totals.tlas_steps))) << v.name;
    EXPECT_EQ(v.agreement.agreeing(), v.agreement.rays()) << v.name;
  }

  o.flatten = true;
  const stats::SceneReport flat = stats::report_scene(garden, o);
  EXPECT_FALSE(flat.build.levels.has_value());
  EXPECT_FALSE(flat.stats.two_level);
  ASSERT_TRUE(flat.compare.has_value());
  EXPECT_FALSE(flat.compare->levels.has_value());
}

TEST(ReportHtml, EscapesNamesFromOutside) {
  stats::Report r;
  stats::SceneReport s;
  s.name = "a<b>&\"c\".obj";
  s.file = "dir/" + s.name;
  r.scenes.push_back(s);
  const std::string html = stats::report_to_html(r);
  EXPECT_EQ(html.find("a<b>"), std::string::npos);
  EXPECT_NE(html.find("a&lt;b&gt;&amp;&quot;c&quot;.obj"), std::string::npos);
  EXPECT_EQ(tag_problems(html), "");
}

TEST(ReportInput, BadInputNamesTheFile) {
  test::ScratchDir dir("stats-report-bad");
  const std::string garbage_blob = (dir.path() / "garbage.hwbvh").string();
  const std::string garbage_obj = (dir.path() / "garbage.obj").string();
  std::ofstream(garbage_blob) << "not a blob";
  std::ofstream(garbage_obj) << "v 1 2\nf 1 2 3 4 5\n";
  for (const std::string& file : {garbage_blob, garbage_obj, (dir.path() / "missing.obj").string()}) {
    try {
      (void)stats::report_scene(file, small_options());
      ADD_FAILURE() << "no error for " << file;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
      EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((void)stats::make_report({}, small_options()), Error);
}

TEST(ReportInput, ParsesRayKindLists) {
  EXPECT_EQ(
      stats::parse_ray_kinds("primary,ao,primary,random"),
      (std::vector<stats::RayKind>{stats::RayKind::Primary, stats::RayKind::AmbientOcclusion, stats::RayKind::Random}));
  EXPECT_THROW((void)stats::parse_ray_kinds(""), Error);
  EXPECT_THROW((void)stats::parse_ray_kinds("primary,sideways"), Error);
}

TEST(ReportWrite, IsAtomic) {
  test::ScratchDir dir("stats-report-write");
  const auto path = dir.path() / "r.html";
  stats::write_report(path, "<p>one</p>");
  stats::write_report(path, "<p>two</p>");
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "<p>two</p>");
  EXPECT_EQ(dir.files(), std::vector<std::string>{"r.html"});
  try {
    stats::write_report(dir.path() / "no-such-dir" / "r.html", "x");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
  }
  EXPECT_EQ(dir.files(), std::vector<std::string>{"r.html"});
}

}  // namespace
}  // namespace hwbvh
