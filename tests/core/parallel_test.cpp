#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "hwbvh/core/parallel.h"

namespace hwbvh {
namespace {

TEST(Executor, CoversEveryIndexOnceAtAnyThreadCount) {
  for (int threads : {1, 2, 4}) {
    const Executor ex(threads);
    EXPECT_EQ(ex.threads(), threads);
    std::vector<std::atomic<int>> hits(10007);
    ex.for_each(0, hits.size(), [&](std::size_t i) { hits[i]++; }, 13);
    for (const auto& h : hits) ASSERT_EQ(h.load(), 1);
  }
}

TEST(Executor, InvokeRunsBoth) {
  const Executor ex(2);
  int a = 0, b = 0;
  ex.invoke2([&] { a = 1; }, [&] { b = 2; });
  EXPECT_EQ(a + b, 3);
  EXPECT_GE(Executor(0).threads(), 1);
}

}  // namespace
}  // namespace hwbvh
