#include "hwbvh/bvh_build/binned_builder.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "hwbvh/core/parallel.h"

namespace hwbvh::bvh_build {
namespace {

// Nodes of at most this many references are split by the exact sweep (ExactSweep): every cut of the references
// sorted along each axis, where the binned SAH would have only a handful of bins.
constexpr uint32_t kSweepMax = 8;
// Larger nodes are binned into min(kMaxBins, 4 + n / 20) bins per axis (as Embree's binned SAH).
constexpr uint32_t kMaxBins = 32;
// Nodes of at least this many references are binned and bounded in parallel, in fixed blocks of kBlockRefs (the
// blocks' results are min/max and integer counts, so the result does not depend on which thread did which).
constexpr std::size_t kParallelRefs = std::size_t{1} << 16;
constexpr std::size_t kBlockRefs = std::size_t{1} << 14;
// Subtrees of at least this many references become tasks of their own.
constexpr uint32_t kTaskRefs = 4096;
// Progress is reported in references, added in chunks of about this many.
constexpr uint64_t kProgressChunk = uint64_t{1} << 14;

// x, y, z and a fourth lane (0) at once, with GCC/Clang vector extensions: every lane is the plain IEEE operation
// scalar code would do.
using F4 = float __attribute__((vector_size(16)));
using I4 = int32_t __attribute__((vector_size(16)));

static_assert(sizeof(BinnedRef) == 32 && offsetof(BinnedRef, max) == 16, "a reference is two 16-byte rows");
// A reference's min or max corner, with 0 in the fourth lane: the word stored there (an id, or padding) would be a
// subnormal float, and arithmetic on subnormals takes a slow path on x86 (several times the build's time).
F4 row4(const BinnedRef& ref, std::size_t offset) {
  I4 out;
  std::memcpy(&out, reinterpret_cast<const std::byte*>(&ref) + offset, sizeof out);
  return reinterpret_cast<F4>(out & I4{-1, -1, -1, 0});
}
F4 lo4(const BinnedRef& ref) { return row4(ref, offsetof(BinnedRef, min)); }
F4 hi4(const BinnedRef& ref) { return row4(ref, offsetof(BinnedRef, max)); }
F4 min4(F4 a, F4 b) { return a < b ? a : b; }
F4 max4(F4 a, F4 b) { return a > b ? a : b; }
Vec3 vec3(F4 v) { return {v[0], v[1], v[2]}; }

constexpr float kInf = std::numeric_limits<float>::infinity();

// A box in vector lanes; the default is empty.
struct Box4 {
  F4 lo{kInf, kInf, kInf, kInf};
  F4 hi{-kInf, -kInf, -kInf, -kInf};
  void grow(F4 l, F4 h) {
    lo = min4(lo, l);
    hi = max4(hi, h);
  }
  void grow(F4 p) { grow(p, p); }
  void grow(const Box4& b) { grow(b.lo, b.hi); }
  [[nodiscard]] Aabb aabb() const { return {vec3(lo), vec3(hi)}; }
};

Box4 box_of(const BinnedRef& ref) { return {lo4(ref), hi4(ref)}; }

// A quarter of (min + max): the centroid's position, scaled so that neither it nor the difference of two of them
// can overflow for boxes up to the float limit (scaling by a power of two keeps their order).
F4 centroid(F4 lo, F4 hi) { return lo * 0.25f + hi * 0.25f; }

// A quarter of the surface area (of half the extents, which cannot overflow), the products in double, which
// cannot overflow either: proportional to the SAH's half area, so costs compare as with it.
double area_term(const Box4& box) {
  const F4 e = box.hi * 0.5f - box.lo * 0.5f;
  const double x = e[0], y = e[1], z = e[2];
  return x * y + y * z + z * x;
}

// A node to split: the references refs[begin, begin + count), their bounds and their centroids' bounds.
struct Task {
  uint32_t node = 0;
  uint32_t begin = 0;
  uint32_t count = 0;
  Box4 box;
  Box4 centroids;
};

// The bounds and centroid bounds of some references.
struct Bounds {
  Box4 box, centroids;
  void add(const Bounds& other) {
    box.grow(other.box);
    centroids.grow(other.centroids);
  }
};

// body(b, e) over [begin, end): in one call, or for a large range in parallel over fixed blocks whose results are
// combined in block order with result.add(part).
template <typename Result, typename Body>
Result reduce_blocks(std::size_t begin, std::size_t end, bool parallel, const Body& body) {
  if (!parallel || end - begin < kParallelRefs) return body(begin, end);
  const std::size_t blocks = (end - begin + kBlockRefs - 1) / kBlockRefs;
  std::vector<Result> parts(blocks);
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    parts[b] = body(begin + b * kBlockRefs, std::min(end, begin + (b + 1) * kBlockRefs));
  });
  Result all = std::move(parts[0]);
  for (std::size_t b = 1; b < blocks; ++b) all.add(parts[b]);
  return all;
}

// Where a centroid falls among a node's bins along each axis (as Embree's BinMapping: 0.99 * bins / extent, so
// that the largest centroid lands in the last bin). An axis without extent maps everything to bin 0.
struct BinMapping {
  uint32_t bins;
  F4 offset;
  F4 scale{0.0f, 0.0f, 0.0f, 0.0f};
  F4 last;  // bins - 1 in every lane
  BinMapping(const Box4& centroids, uint32_t count)
      : bins(std::min(kMaxBins, 4 + count / 20)), offset(centroids.lo), last(F4{} + static_cast<float>(bins - 1)) {
    const F4 extent = centroids.hi - centroids.lo;
    for (int a = 0; a < 3; ++a) {
      // A tiny extent gives an infinite quotient: the largest float keeps (c - offset) * scale free of 0 * inf.
      scale[a] = extent[a] > 0.0f ? std::min(0.99f * static_cast<float>(bins) / extent[a],
                                             std::numeric_limits<float>::max())
                                  : 0.0f;
    }
  }
  /// The bin along each axis of centroid `c` (>= offset in every lane).
  [[nodiscard]] I4 bins_of(F4 c) const { return __builtin_convertvector(min4((c - offset) * scale, last), I4); }
};

// Per axis and bin: the bounds and the number of the references whose centroids fall there. Only the bins in use
// are set (a node of a few dozen references uses a few of the 32).
struct Bins {
  uint32_t used = 0;
  std::array<std::array<F4, kMaxBins>, 3> lo, hi;
  std::array<std::array<uint32_t, kMaxBins>, 3> counts;
  Bins() = default;
  explicit Bins(uint32_t bins) : used(bins) {
    const Box4 empty;
    for (int a = 0; a < 3; ++a) {
      std::fill_n(lo[a].begin(), bins, empty.lo);
      std::fill_n(hi[a].begin(), bins, empty.hi);
      std::fill_n(counts[a].begin(), bins, 0u);
    }
  }
  void add(int axis, uint32_t bin, F4 l, F4 h) {
    lo[axis][bin] = min4(lo[axis][bin], l);
    hi[axis][bin] = max4(hi[axis][bin], h);
    ++counts[axis][bin];
  }
  void add(const Bins& other) {
    for (int a = 0; a < 3; ++a) {
      for (uint32_t b = 0; b < used; ++b) {
        lo[a][b] = min4(lo[a][b], other.lo[a][b]);
        hi[a][b] = max4(hi[a][b], other.hi[a][b]);
        counts[a][b] += other.counts[a][b];
      }
    }
  }
  [[nodiscard]] Box4 box(int axis, uint32_t bin) const { return {lo[axis][bin], hi[axis][bin]}; }
};

// A split of a node: references whose bin along `axis` is below `bin` go to the lower side. bin == 0: no split.
struct Split {
  int axis = 0;
  uint32_t bin = 0;
  uint32_t lower_count = 0;
  Box4 lower_box, upper_box;
};

// The SAH's best bin boundary over all axes (ties keep the first axis and the first boundary).
Split best_binned_split(const Bins& bins) {
  Split best;
  double best_cost = std::numeric_limits<double>::infinity();
  const uint32_t n = bins.used;
  std::array<Box4, kMaxBins> upper_box;  // [b]: bins b and above
  std::array<uint32_t, kMaxBins> upper_count{};
  for (int a = 0; a < 3; ++a) {
    upper_box[n - 1] = bins.box(a, n - 1);
    upper_count[n - 1] = bins.counts[a][n - 1];
    for (uint32_t b = n - 1; b-- > 1;) {
      upper_box[b] = upper_box[b + 1];
      upper_box[b].grow(bins.box(a, b));
      upper_count[b] = upper_count[b + 1] + bins.counts[a][b];
    }
    Box4 lower;
    uint32_t lower_count = 0;
    for (uint32_t b = 1; b < n; ++b) {
      lower.grow(bins.box(a, b - 1));
      lower_count += bins.counts[a][b - 1];
      if (lower_count == 0 || upper_count[b] == 0) continue;
      const double cost = area_term(lower) * lower_count + area_term(upper_box[b]) * upper_count[b];
      if (cost < best_cost) {
        best_cost = cost;
        best = {a, b, lower_count, lower, upper_box[b]};
      }
    }
  }
  return best;
}

// A node of 2 to kSweepMax references split down to one reference per leaf: at every node the exact SAH split
// (each cut of the references sorted along each axis, costed as area(left) * count(left) + area(right) *
// count(right); ties keep the first axis and the first cut). References are sorted by centroid along each axis
// once, ties by id so that the tree depends on the set alone; a split keeps each axis's order by partitioning it.
class ExactSweep {
 public:
  ExactSweep(const BinnedRef* refs, uint32_t count) : count_(count) {
    std::array<F4, kSweepMax> centre;  // only the order matters
    for (uint32_t i = 0; i < count; ++i) {
      boxes_[i] = box_of(refs[i]);
      ids_[i] = refs[i].id;
      centre[i] = centroid(boxes_[i].lo, boxes_[i].hi);
    }
    for (int axis = 0; axis < 3; ++axis) {
      const auto before = [&](uint8_t a, uint8_t b) {
        return centre[a][axis] < centre[b][axis] || (centre[a][axis] == centre[b][axis] && ids_[a] < ids_[b]);
      };
      std::array<uint8_t, kSweepMax>& order = orders_[axis];
      for (uint32_t i = 0; i < count; ++i) {  // insertion sort: a handful of references
        uint32_t j = i;
        for (; j > 0 && before(static_cast<uint8_t>(i), order[j - 1]); --j) order[j] = order[j - 1];
        order[j] = static_cast<uint8_t>(i);
      }
    }
  }

  /// Writes the subtree from node `node` and reference `first_ref` on; `box` bounds all the references.
  void write(BinaryBvh& out, uint32_t node, uint32_t first_ref, const Box4& box) const {
    split(out, node, first_ref, orders_, count_, box);
  }

 private:
  using Orders = std::array<std::array<uint8_t, kSweepMax>, 3>;  // reference indices, sorted per axis

  void leaf(BinaryBvh& out, uint32_t node, uint32_t first_ref, uint8_t ref) const {
    out.nodes[node] = {boxes_[ref].aabb(), kNoIndex, first_ref, 1};
    out.refs[first_ref] = {ids_[ref]};
  }

  void split(BinaryBvh& out, uint32_t node, uint32_t first_ref, const Orders& orders, uint32_t n,
             const Box4& box) const {
    if (n == 1) {
      leaf(out, node, first_ref, orders[0][0]);
      return;
    }
    out.nodes[node] = {box.aabb(), kNoIndex, first_ref, n};
    if (n == 2) {  // every axis has the same one cut, so the first axis's order wins the tie
      out.nodes[node].right = node + 2;
      leaf(out, node + 1, first_ref, orders[0][0]);
      leaf(out, node + 2, first_ref + 1, orders[0][1]);
      return;
    }
    double best_cost = std::numeric_limits<double>::infinity();
    int best_axis = 0;
    uint32_t best_left = n / 2;
    Box4 best_left_box, best_right_box;
    std::array<Box4, kSweepMax> right_box;  // [i]: the references from the i-th on
    std::array<double, kSweepMax> right_area{};
    for (int axis = 0; axis < 3; ++axis) {
      const std::array<uint8_t, kSweepMax>& order = orders[axis];
      right_box[n - 1] = boxes_[order[n - 1]];
      right_area[n - 1] = area_term(right_box[n - 1]);
      for (uint32_t i = n - 1; i-- > 1;) {
        right_box[i] = right_box[i + 1];
        right_box[i].grow(boxes_[order[i]]);
        right_area[i] = area_term(right_box[i]);
      }
      Box4 left;
      for (uint32_t i = 1; i < n; ++i) {
        left.grow(boxes_[order[i - 1]]);
        const double cost = area_term(left) * i + right_area[i] * (n - i);
        if (cost < best_cost) {
          best_cost = cost;
          best_axis = axis;
          best_left = i;
          best_left_box = left;
          best_right_box = right_box[i];
        }
      }
    }
    uint32_t goes_left = 0;  // bit i: reference i
    for (uint32_t i = 0; i < best_left; ++i) goes_left |= 1u << orders[best_axis][i];
    Orders left{}, right{};
    for (int axis = 0; axis < 3; ++axis) {
      uint32_t l = 0, r = 0;
      for (uint32_t i = 0; i < n; ++i) {
        const uint8_t ref = orders[axis][i];
        if ((goes_left >> ref) & 1u) {
          left[axis][l++] = ref;
        } else {
          right[axis][r++] = ref;
        }
      }
    }
    const uint32_t right_node = node + 2 * best_left;
    out.nodes[node].right = right_node;
    split(out, node + 1, first_ref, left, best_left, best_left_box);
    split(out, right_node, first_ref + best_left, right, n - best_left, best_right_box);
  }

  uint32_t count_;
  std::array<Box4, kSweepMax> boxes_;
  std::array<uint32_t, kSweepMax> ids_{};
  Orders orders_{};
};
static_assert(kSweepMax <= 32, "ExactSweep marks the references going left in a 32-bit mask");

class Builder {
 public:
  Builder(std::vector<BinnedRef>& refs, BinaryBvh& out, ProgressCounter& progress, tbb::task_group* group)
      : refs_(refs), out_(out), progress_(progress), group_(group) {}

  /// The task of the whole tree.
  [[nodiscard]] Task root() const {
    const Bounds all = bounds(0, refs_.size());
    return {0, 0, static_cast<uint32_t>(refs_.size()), all.box, all.centroids};
  }

  /// Builds the subtree of `root`; with a task group, hands large child subtrees to it.
  void subtree(const Task& root) {
    uint64_t done = 0;  // references placed in leaves, not yet added to progress_
    std::vector<Task> stack{root};
    while (!stack.empty()) {
      const Task task = stack.back();
      stack.pop_back();
      if (task.count <= kSweepMax) {
        if (task.count == 1) {
          out_.nodes[task.node] = {task.box.aabb(), kNoIndex, task.begin, 1};
          out_.refs[task.begin] = {refs_[task.begin].id};
        } else {
          ExactSweep(&refs_[task.begin], task.count).write(out_, task.node, task.begin, task.box);
        }
        done += task.count;
        if (done >= kProgressChunk) progress_.add(std::exchange(done, 0));
        continue;
      }
      Task left, right;
      split(task, left, right);
      out_.nodes[task.node] = {task.box.aabb(), right.node, task.begin, task.count};
      for (const Task& child : {right, left}) {
        if (group_ && child.count >= kTaskRefs) {
          group_->run([this, child] { subtree(child); });
        } else {
          stack.push_back(child);
        }
      }
    }
    progress_.add(done);
  }

 private:
  [[nodiscard]] bool parallel() const { return group_ != nullptr; }

  // Splits `task` by the binned SAH, or at its middle where no bin boundary separates its centroids.
  void split(const Task& task, Task& left, Task& right) {
    const BinMapping mapping(task.centroids, task.count);
    const Bins bins = reduce_blocks<Bins>(task.begin, task.begin + task.count, parallel(), [&](size_t b, size_t e) {
      Bins part(mapping.bins);
      for (size_t i = b; i < e; ++i) {
        const F4 lo = lo4(refs_[i]), hi = hi4(refs_[i]);
        const I4 bin = mapping.bins_of(centroid(lo, hi));
        for (int a = 0; a < 3; ++a) part.add(a, static_cast<uint32_t>(bin[a]), lo, hi);
      }
      return part;
    });
    const Split best = best_binned_split(bins);
    uint32_t left_count = 0;
    if (best.bin != 0) {
      // The side with more references becomes the left child (the lower side on a tie), as Embree's builder orders
      // children: the leaf order this gives is the one the collapse's pairing and the steps per ray were tuned on.
      const bool lower_first = 2 * best.lower_count >= task.count;
      left_count = partition(task, mapping, best, lower_first, left.centroids, right.centroids);
      left.box = lower_first ? best.lower_box : best.upper_box;
      right.box = lower_first ? best.upper_box : best.lower_box;
    } else {
      left_count = task.count - task.count / 2;  // the larger half first, as above
      const Bounds l = bounds(task.begin, task.begin + left_count);
      const Bounds r = bounds(task.begin + left_count, task.begin + task.count);
      left.box = l.box;
      left.centroids = l.centroids;
      right.box = r.box;
      right.centroids = r.centroids;
    }
    left.node = task.node + 1;
    left.begin = task.begin;
    left.count = left_count;
    right.node = task.node + 2 * left_count;
    right.begin = task.begin + left_count;
    right.count = task.count - left_count;
  }

  // Moves the references of `task` on one side of the split's boundary (below it if `lower_first`, else above) to
  // its front, in a fixed order (one thread), and returns how many there are; the centroid bounds of both parts are
  // gathered on the way.
  uint32_t partition(const Task& task, const BinMapping& mapping, const Split& split, bool lower_first,
                     Box4& left_centroids, Box4& right_centroids) {
    BinnedRef* i = refs_.data() + task.begin;
    BinnedRef* j = i + task.count;
    const auto goes_left = [&](const BinnedRef& ref, F4& c) {
      c = centroid(lo4(ref), hi4(ref));
      return (static_cast<uint32_t>(mapping.bins_of(c)[split.axis]) < split.bin) == lower_first;
    };
    F4 c{};
    while (true) {
      while (i < j && goes_left(*i, c)) {
        left_centroids.grow(c);
        ++i;
      }
      while (i < j && !goes_left(*(j - 1), c)) {
        right_centroids.grow(c);
        --j;
      }
      if (i == j) break;
      // *i belongs right and *(j - 1) left (its centroid is c): swapped, each is on its side.
      std::swap(*i, *(j - 1));
      left_centroids.grow(c);
      right_centroids.grow(centroid(lo4(*(j - 1)), hi4(*(j - 1))));
      ++i;
      --j;
    }
    return static_cast<uint32_t>(i - (refs_.data() + task.begin));
  }

  [[nodiscard]] Bounds bounds(size_t begin, size_t end) const {
    return reduce_blocks<Bounds>(begin, end, parallel(), [&](size_t b, size_t e) {
      Bounds part;
      for (size_t i = b; i < e; ++i) {
        const F4 lo = lo4(refs_[i]), hi = hi4(refs_[i]);
        part.box.grow(lo, hi);
        part.centroids.grow(centroid(lo, hi));
      }
      return part;
    });
  }

  std::vector<BinnedRef>& refs_;
  BinaryBvh& out_;
  ProgressCounter& progress_;
  tbb::task_group* group_;
};

}  // namespace

BinaryBvh build_binned_bvh(std::vector<BinnedRef> refs, int threads, const ProgressCallback& progress) {
  const auto count = static_cast<uint32_t>(refs.size());
  BinaryBvh out;
  out.nodes.resize(2 * std::size_t{count} - 1);
  out.refs.resize(count);
  ProgressCounter counter(progress, "binary BVH", count);
  const int thread_count = Executor(threads).threads();
  if (thread_count == 1) {
    Builder builder(refs, out, counter, nullptr);
    builder.subtree(builder.root());
  } else {
    tbb::task_arena(thread_count).execute([&] {
      tbb::task_group group;
      Builder builder(refs, out, counter, &group);
      builder.subtree(builder.root());
      group.wait();
    });
  }
  counter.finish();
  return out;
}

}  // namespace hwbvh::bvh_build
