// The assignment solver (core/track/assignment.h) against brute force: every partial matching of
// small random cost matrices is enumerated and the least total (pairs plus limit/2 for each row
// and column left out) must equal the solver's.
#define BOOST_TEST_MODULE track_assignment
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/track/assignment.h"

using weave::track::assign;
using weave::track::Assignment;

namespace {

double total(const std::vector<double>& cost, std::size_t rows, std::size_t cols, double limit,
             const std::vector<int>& row_to_col) {
  double sum = 0.0;
  std::size_t paired = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    if (row_to_col[i] < 0) continue;
    sum += cost[i * cols + static_cast<std::size_t>(row_to_col[i])];
    ++paired;
  }
  return sum + static_cast<double>(rows + cols - 2 * paired) * limit / 2;
}

// The least total over every partial matching that takes no pair above the limit.
double brute_force(const std::vector<double>& cost, std::size_t rows, std::size_t cols, double limit) {
  double best = std::numeric_limits<double>::infinity();
  std::vector<int> row_to_col(rows, -1);
  std::vector<char> used(cols, 0);
  auto go = [&](auto&& self, std::size_t i) -> void {
    if (i == rows) {
      best = std::min(best, total(cost, rows, cols, limit, row_to_col));
      return;
    }
    row_to_col[i] = -1;
    self(self, i + 1);
    for (std::size_t j = 0; j < cols; ++j) {
      const double c = cost[i * cols + j];
      if (used[j] || !std::isfinite(c) || c > limit) continue;
      used[j] = 1;
      row_to_col[i] = static_cast<int>(j);
      self(self, i + 1);
      used[j] = 0;
      row_to_col[i] = -1;
    }
  };
  go(go, 0);
  return best;
}

void check_consistent(const Assignment& a, const std::vector<double>& cost, std::size_t cols, double limit) {
  for (std::size_t i = 0; i < a.row_to_col.size(); ++i) {
    const int j = a.row_to_col[i];
    if (j < 0) continue;
    BOOST_TEST(a.col_to_row[static_cast<std::size_t>(j)] == static_cast<int>(i));
    BOOST_TEST(cost[i * cols + static_cast<std::size_t>(j)] <= limit);
  }
  for (std::size_t j = 0; j < a.col_to_row.size(); ++j)
    if (a.col_to_row[j] >= 0)
      BOOST_TEST(a.row_to_col[static_cast<std::size_t>(a.col_to_row[j])] == static_cast<int>(j));
}

}  // namespace

BOOST_AUTO_TEST_CASE(solver_equals_brute_force_on_small_random_matrices) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double inf = std::numeric_limits<double>::infinity();
  int cases = 0;
  for (std::size_t rows = 1; rows <= 5; ++rows)
    for (std::size_t cols = 1; cols <= 5; ++cols)
      for (int k = 0; k < 60; ++k, ++cases) {
        std::vector<double> cost(rows * cols);
        for (double& c : cost) c = u(rng) < 0.2 ? inf : u(rng);  // some pairs forbidden outright
        const double limit = 0.3 + 0.7 * u(rng);
        const Assignment a = assign(cost, rows, cols, limit);
        check_consistent(a, cost, cols, limit);
        BOOST_TEST(total(cost, rows, cols, limit, a.row_to_col) == brute_force(cost, rows, cols, limit),
                   boost::test_tools::tolerance(1e-9));
      }
  BOOST_TEST(cases == 1500);
}

// The greedy choice is not the optimum: row 0 takes column 0 (0.1) greedily, leaving row 1 with
// nothing under the limit; the optimum gives both rows a column.
BOOST_AUTO_TEST_CASE(solver_is_not_greedy) {
  const std::vector<double> cost = {0.1, 0.2,  //
                                    0.15, 0.9};
  const Assignment a = assign(cost, 2, 2, 0.8);
  BOOST_TEST(a.row_to_col[0] == 1);
  BOOST_TEST(a.row_to_col[1] == 0);
}

BOOST_AUTO_TEST_CASE(nothing_above_the_limit_is_taken_and_empty_inputs_give_empty_results) {
  const std::vector<double> cost = {0.95, 0.99};
  const Assignment a = assign(cost, 1, 2, 0.8);
  BOOST_TEST(a.row_to_col[0] == -1);
  BOOST_TEST(a.col_to_row[0] == -1);
  BOOST_TEST(a.col_to_row[1] == -1);
  const Assignment none = assign({}, 0, 3, 0.8);
  BOOST_TEST(none.row_to_col.empty());
  BOOST_TEST(none.col_to_row.size() == 3u);
  // A cost array of the wrong size is refused (nothing assigned), not read out of bounds.
  const Assignment bad = assign(cost, 2, 2, 0.8);
  BOOST_TEST(bad.row_to_col == std::vector<int>({-1, -1}));
}

// A frame of a few hundred boxes solves (the size the header promises); every row has its own
// column at cost 0 and the solver must find that matching.
BOOST_AUTO_TEST_CASE(a_few_hundred_boxes_are_matched_one_to_one) {
  const std::size_t n = 300;
  std::vector<double> cost(n * n, 0.9);
  for (std::size_t i = 0; i < n; ++i) cost[i * n + (i * 7) % n] = 0.0;  // 7 is coprime with 300
  const Assignment a = assign(cost, n, n, 0.5);
  for (std::size_t i = 0; i < n; ++i) BOOST_TEST(a.row_to_col[i] == static_cast<int>((i * 7) % n));
}
