// The AlphaTest and Stoc sections (docs/blob-format.md §10, §11).
#include "hwbvh/blob/opacity_sections.h"

#include <cmath>

#include "hwbvh/blob/bytes.h"
#include "hwbvh/core/bits.h"
#include "hwbvh/core/error.h"
#include "hwbvh/formats/xe3/bake.h"
#include "message.h"

namespace hwbvh::blob {
namespace {

constexpr uint64_t kAlphaHeaderBytes = 16;  // f32 cutoff, u32 texture count, u32 triangle count, u32 tested count
constexpr uint64_t kAlphaTriBytes = 32;     // u32 triangle, u32 texture, 6 x f32 uv
constexpr uint64_t kStocHeaderBytes = 16;   // u32 level, u32 order, u32 triangle count, u32 listed count

uint64_t pad4(uint64_t n) { return (n + 3) / 4 * 4; }
uint64_t words_at(uint32_t level) { return (xe3::sub_triangle_count(level) + 63) / 64; }

// A bounds-checked little-endian reader over a section.
class Reader {
 public:
  Reader(std::span<const std::byte> bytes, std::string file, std::string section)
      : bytes_(bytes), file_(std::move(file)), section_(std::move(section)) {}
  [[noreturn]] void fail(const std::string& problem) const { throw_bad_input(file_, section_ + ": " + problem); }
  void need(uint64_t n, const char* what) const {
    if (n > bytes_.size() - at_) fail(detail::cat(bytes_.size(), " bytes, truncated in ", what));
  }
  uint32_t u32(const char* what) {
    need(4, what);
    const uint32_t v = load_le32(bytes_, at_);
    at_ += 4;
    return v;
  }
  uint64_t u64(const char* what) {
    need(8, what);
    const uint64_t v = load_le64(bytes_, at_);
    at_ += 8;
    return v;
  }
  float f32(const char* what) { return bits_float(u32(what)); }
  std::span<const std::byte> take(uint64_t n, const char* what) {
    need(n, what);
    const auto out = bytes_.subspan(at_, n);
    at_ += n;
    return out;
  }
  void finish() const {
    if (at_ != bytes_.size()) fail(detail::cat(bytes_.size(), " bytes, but the content ends at ", at_));
  }

 private:
  std::span<const std::byte> bytes_;
  std::string file_;
  std::string section_;
  std::size_t at_ = 0;
};

}  // namespace

std::vector<std::byte> encode_alpha_test(const AlphaTest& alpha) {
  std::vector<std::byte> out;
  append_le32(out, float_bits(alpha.cutoff));
  append_le32(out, static_cast<uint32_t>(alpha.textures.size()));
  append_le32(out, static_cast<uint32_t>(alpha.triangles.size()));
  append_le32(out, alpha.tested_count());
  for (const AlphaTexture& tex : alpha.textures) {
    append_le32(out, tex.width);
    append_le32(out, tex.height);
    for (uint8_t a : tex.alpha) out.push_back(static_cast<std::byte>(a));
    out.resize(pad4(out.size()), std::byte{0});
  }
  for (uint32_t i = 0; i < alpha.triangles.size(); ++i) {
    const AlphaTest::Tri& t = alpha.triangles[i];
    if (t.texture == kNoIndex) continue;
    append_le32(out, i);
    append_le32(out, t.texture);
    for (const Vec2& uv : t.uv) {
      append_le32(out, float_bits(uv.x));
      append_le32(out, float_bits(uv.y));
    }
  }
  return out;
}

AlphaTest decode_alpha_test(std::span<const std::byte> bytes, const std::string& file, uint32_t triangle_count) {
  Reader r(bytes, file, "alpha-test section");
  AlphaTest out;
  out.cutoff = r.f32("the header");
  const uint32_t texture_count = r.u32("the header");
  const uint32_t count = r.u32("the header");
  const uint32_t tested = r.u32("the header");
  if (!(out.cutoff >= 0.0f && out.cutoff <= 1.0f)) r.fail(detail::cat("cutoff ", out.cutoff, " is outside [0, 1]"));
  if (count != triangle_count)
    r.fail(detail::cat(count, " triangles, but the geometry section has ", triangle_count));
  if (tested > count) r.fail(detail::cat(tested, " alpha-tested triangles of ", count));
  // Each texture needs at least 12 bytes: a corrupt count cannot make us allocate more than the bytes allow.
  if (texture_count > bytes.size() / 12) r.fail(detail::cat(texture_count, " textures cannot fit"));
  out.textures.resize(texture_count);
  for (uint32_t i = 0; i < texture_count; ++i) {
    AlphaTexture& tex = out.textures[i];
    tex.width = r.u32("a texture header");
    tex.height = r.u32("a texture header");
    const uint64_t texels = uint64_t{tex.width} * tex.height;
    if (texels == 0) r.fail(detail::cat("texture ", i, " is empty (", tex.width, " x ", tex.height, ")"));
    const auto data = r.take(pad4(texels), "texture data");
    tex.alpha.resize(texels);
    for (uint64_t k = 0; k < texels; ++k) tex.alpha[k] = std::to_integer<uint8_t>(data[k]);
  }
  r.need(kAlphaTriBytes * tested, "the triangle records");
  out.triangles.resize(count);
  uint64_t next = 0;  // triangle records are strictly ascending
  for (uint32_t k = 0; k < tested; ++k) {
    const uint32_t i = r.u32("a triangle record");
    if (i < next || i >= count)
      r.fail(detail::cat("triangle record ", k, " names triangle ", i, " (out of range or not ascending)"));
    next = uint64_t{i} + 1;
    AlphaTest::Tri& t = out.triangles[i];
    t.texture = r.u32("a triangle record");
    if (t.texture >= texture_count)
      r.fail(detail::cat("triangle ", i, " texture ", t.texture, " is out of range (", texture_count, " textures)"));
    for (Vec2& uv : t.uv) {
      uv.x = r.f32("a triangle record");
      uv.y = r.f32("a triangle record");
      if (!std::isfinite(uv.x) || !std::isfinite(uv.y))
        r.fail(detail::cat("triangle ", i, " has a non-finite texture coordinate"));
    }
  }
  r.finish();
  return out;
}

uint32_t StocSideband::words_per_triangle() const { return static_cast<uint32_t>(words_at(level)); }

uint32_t StocSideband::listed_count() const {
  const uint32_t w = words_per_triangle();
  return w == 0 ? 0 : static_cast<uint32_t>(opaque.size() / w);
}

xe3::SubTriangleState StocSideband::state_at(uint32_t tri, uint32_t k) const {
  if (tri >= slot.size() || slot[tri] == kNoIndex) return xe3::SubTriangleState::Opaque;
  const std::size_t word = std::size_t{slot[tri]} * words_per_triangle() + k / 64;
  return xe3::state_of(opaque[word], transparent[word], k % 64);
}

xe3::SubTriangleState StocSideband::state(uint32_t tri, Vec2 bary) const {
  if (tri >= slot.size() || slot[tri] == kNoIndex) return xe3::SubTriangleState::Opaque;
  return state_at(tri, xe3::sub_triangle_index(bary, level, order));
}

StocSideband make_stoc_sideband(std::span<const std::vector<xe3::SubTriangleState>> states, uint32_t level,
                                xe3::SubTriangleOrder order) {
  if (level < 1 || level > xe3::kMaxStocLevel)
    throw Error(ErrorKind::BadInput, "", detail::cat("STOC sideband level ", level, " is outside 1..12"));
  StocSideband out;
  out.level = level;
  out.order = order;
  out.slot.assign(states.size(), kNoIndex);
  const uint32_t words = out.words_per_triangle();
  for (std::size_t i = 0; i < states.size(); ++i) {
    if (states[i].empty()) continue;
    out.slot[i] = out.listed_count();
    out.opaque.resize(out.opaque.size() + words, 0);
    out.transparent.resize(out.transparent.size() + words, 0);
    uint64_t* o = &out.opaque[out.opaque.size() - words];
    uint64_t* t = &out.transparent[out.transparent.size() - words];
    const std::vector<xe3::SubTriangleState> bird = xe3::restate(states[i], level);
    for (uint32_t b = 0; b < bird.size(); ++b) {
      const uint32_t k = order == xe3::SubTriangleOrder::Bird
                             ? b
                             : xe3::row_index(xe3::bird_micro_triangle(b, level), level);
      if (bird[b] == xe3::SubTriangleState::Opaque) o[k / 64] |= uint64_t{1} << (k % 64);
      if (bird[b] == xe3::SubTriangleState::Transparent) t[k / 64] |= uint64_t{1} << (k % 64);
    }
  }
  return out;
}

std::vector<std::byte> encode_stoc_sideband(const StocSideband& stoc) {
  std::vector<std::byte> out;
  const uint32_t listed = stoc.listed_count();
  append_le32(out, stoc.level);
  append_le32(out, static_cast<uint32_t>(stoc.order));
  append_le32(out, static_cast<uint32_t>(stoc.slot.size()));
  append_le32(out, listed);
  for (uint32_t i = 0; i < stoc.slot.size(); ++i)
    if (stoc.slot[i] != kNoIndex) append_le32(out, i);
  if (listed % 2 != 0) append_le32(out, 0);  // the masks start 8-byte aligned
  const uint32_t words = stoc.words_per_triangle();
  for (uint32_t s = 0; s < listed; ++s) {
    for (uint32_t w = 0; w < words; ++w) append_le64(out, stoc.opaque[std::size_t{s} * words + w]);
    for (uint32_t w = 0; w < words; ++w) append_le64(out, stoc.transparent[std::size_t{s} * words + w]);
  }
  return out;
}

StocSideband decode_stoc_sideband(std::span<const std::byte> bytes, const std::string& file,
                                  uint32_t triangle_count) {
  Reader r(bytes, file, "stoc section");
  StocSideband out;
  out.level = r.u32("the header");
  const uint32_t order = r.u32("the header");
  const uint32_t count = r.u32("the header");
  const uint32_t listed = r.u32("the header");
  if (out.level < 1 || out.level > xe3::kMaxStocLevel) r.fail(detail::cat("level ", out.level, " is outside 1..12"));
  if (order > 1) r.fail(detail::cat("unknown sub-triangle order ", order));
  out.order = static_cast<xe3::SubTriangleOrder>(order);
  if (count != triangle_count)
    r.fail(detail::cat(count, " triangles, but the geometry section has ", triangle_count));
  if (listed > count) r.fail(detail::cat(listed, " listed triangles of ", count));
  const uint64_t words = words_at(out.level);
  // Exact size first, so that a corrupt count never makes us allocate more than the bytes hold.
  const uint64_t expected = kStocHeaderBytes + 4 * (uint64_t{listed} + listed % 2) + 16 * words * listed;
  if (bytes.size() != expected)
    r.fail(detail::cat(bytes.size(), " bytes, but ", listed, " triangles at level ", out.level, " need ", expected));
  out.slot.assign(count, kNoIndex);
  uint64_t next = 0;
  for (uint32_t s = 0; s < listed; ++s) {
    const uint32_t i = r.u32("the triangle list");
    if (i < next || i >= count)
      r.fail(detail::cat("listed triangle ", s, " is ", i, " (out of range or not ascending)"));
    next = uint64_t{i} + 1;
    out.slot[i] = s;
  }
  if (listed % 2 != 0) (void)r.u32("padding");
  out.opaque.resize(words * listed);
  out.transparent.resize(words * listed);
  // Bits past 4^level in the last word are unused and must be zero.
  const uint64_t bits = xe3::sub_triangle_count(out.level);
  const uint64_t used = bits % 64 == 0 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  for (uint32_t s = 0; s < listed; ++s) {
    for (auto* mask : {&out.opaque, &out.transparent}) {
      for (uint64_t w = 0; w < words; ++w) (*mask)[s * words + w] = r.u64("the masks");
      if (((*mask)[s * words + words - 1] & ~used) != 0)
        r.fail(detail::cat("listed triangle ", s, " has mask bits past sub-triangle ", bits));
    }
    for (uint64_t w = 0; w < words; ++w) {
      if ((out.opaque[s * words + w] & out.transparent[s * words + w]) != 0)
        r.fail(detail::cat("listed triangle ", s, " marks a sub-triangle both opaque and transparent"));
    }
  }
  r.finish();
  return out;
}

}  // namespace hwbvh::blob
