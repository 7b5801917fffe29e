// pass@k (report/pass_at_k.h): the stable product against the estimator's definition computed
// directly — C(n−c, k)/C(n, k) with exact integer binomials, and by enumerating every k-subset of
// the n episodes — on small examples; then the table over a run's rows, with interrupted and
// broken episodes left out of n.
#include <gtest/gtest.h>

#include <cstdint>

#include "report/export.h"
#include "report/pass_at_k.h"

namespace nki_agent {
namespace {

uint64_t binomial(int n, int k) {
  if (k < 0 || k > n) return 0;
  uint64_t b = 1;
  for (int i = 1; i <= k; ++i) b = b * static_cast<uint64_t>(n - k + i) / static_cast<uint64_t>(i);
  return b;
}

// The share of k-subsets of n episodes (the first c passing) that hold a passing episode.
double by_enumeration(int n, int c, int k) {
  uint64_t subsets = 0, with_pass = 0;
  for (uint32_t mask = 0; mask < (1u << n); ++mask) {
    if (__builtin_popcount(mask) != k) continue;
    ++subsets;
    if ((mask & ((1u << c) - 1)) != 0) ++with_pass;
  }
  return static_cast<double>(with_pass) / static_cast<double>(subsets);
}

TEST(PassAtK, MatchesTheDirectCombinatorialComputation) {
  // A hand example first: n = 5 episodes, c = 2 pass. pass@1 = 2/5; pass@2 = 1 − C(3,2)/C(5,2) =
  // 1 − 3/10; pass@3 = 1 − 1/10; pass@4 = 1 (only 3 failing episodes).
  EXPECT_NEAR(pass_at_k(5, 2, 1), 0.4, 1e-15);
  EXPECT_NEAR(pass_at_k(5, 2, 2), 0.7, 1e-15);
  EXPECT_NEAR(pass_at_k(5, 2, 3), 0.9, 1e-15);
  EXPECT_EQ(pass_at_k(5, 2, 4), 1.0);
  for (int n = 1; n <= 12; ++n)
    for (int c = 0; c <= n; ++c)
      for (int k = 1; k <= n; ++k) {
        const double direct = 1.0 - static_cast<double>(binomial(n - c, k)) / static_cast<double>(binomial(n, k));
        EXPECT_NEAR(pass_at_k(n, c, k), direct, 1e-12) << "n=" << n << " c=" << c << " k=" << k;
        EXPECT_NEAR(pass_at_k(n, c, k), by_enumeration(n, c, k), 1e-12) << "n=" << n << " c=" << c << " k=" << k;
      }
}

TEST(PassAtK, IsStableWhereBinomialsOverflow) {
  // C(1000, 500) overflows a double; the product does not. With c = 1, pass@k = k/n exactly.
  EXPECT_NEAR(pass_at_k(1000, 1, 500), 0.5, 1e-12);
  EXPECT_NEAR(pass_at_k(1000, 1, 1), 0.001, 1e-15);
  EXPECT_EQ(pass_at_k(1000, 0, 500), 0.0);
  EXPECT_EQ(pass_at_k(1000, 501, 500), 1.0);
  EXPECT_EQ(pass_at_k(3, 1, 4), 0.0);  // k > n: undefined, reported as 0 and left out of the table
  EXPECT_EQ(pass_at_k(3, 1, 0), 0.0);
}

TaskRow episode(const std::string& id, int level, int sample, const std::string& status) {
  TaskRow r;
  r.run_id = "r";
  r.task_id = id;
  r.level = level;
  r.sample = sample;
  r.status = status;
  r.passed = status == "passed";
  return r;
}

TEST(PassAtK, TheTableAveragesOverTasksWithEnoughResults) {
  // a: 3 results, 1 pass; b: 3 results, 3 pass; c (level 2): 2 results (sample 2 interrupted), 0
  // pass, plus a broken sample 3 row. K = 4 (the most samples of any task): no task has 4 results.
  std::vector<TaskRow> rows = {episode("a", 1, 0, "failed"),      episode("a", 1, 1, "passed"),
                               episode("a", 1, 2, "compiled"),    episode("b", 1, 0, "passed"),
                               episode("b", 1, 1, "passed"),      episode("b", 1, 2, "passed"),
                               episode("c", 2, 0, "failed"),      episode("c", 2, 1, "failed"),
                               episode("c", 2, 2, "interrupted"), episode("c", 2, 3, "error")};
  const auto s = samples_by_task(rows);
  EXPECT_EQ(s.at("c").n, 2);
  EXPECT_EQ(max_samples(rows), 4);
  const auto table = pass_at_k_table(rows);
  ASSERT_EQ(table.size(), 12u);  // all, L1, L2 × k = 1..4
  auto at = [&](const std::string& group, int k) {
    for (const auto& p : table)
      if (p.group == group && p.k == k) return p;
    ADD_FAILURE() << group << " " << k;
    return PassAtK{};
  };
  EXPECT_EQ(at("all", 1).tasks, 3);
  EXPECT_NEAR(at("all", 1).value, (1.0 / 3 + 1 + 0) / 3, 1e-12);
  EXPECT_NEAR(at("all", 2).value, ((1 - 1.0 / 3) + 1 + 0) / 3, 1e-12);  // a: 1 − C(2,2)/C(3,2)
  EXPECT_EQ(at("all", 3).tasks, 2);                                     // c has 2 results only
  EXPECT_NEAR(at("all", 3).value, 1.0, 1e-12);
  EXPECT_EQ(at("all", 4).tasks, 0);
  EXPECT_NEAR(at("L1", 1).value, (1.0 / 3 + 1) / 2, 1e-12);
  EXPECT_EQ(at("L2", 2).value, 0.0);
  EXPECT_EQ(at("L2", 2).tasks, 1);
  // The export of the same table.
  const std::string csv = export_pass_at_k(rows);
  EXPECT_EQ(csv.rfind("group,k,tasks,pass_at_k\n", 0), 0u) << csv;
  EXPECT_NE(csv.find("\nall,3,2,1\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nL2,1,1,0\n"), std::string::npos) << csv;
}

}  // namespace
}  // namespace nki_agent
