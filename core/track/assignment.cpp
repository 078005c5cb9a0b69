#include "core/track/assignment.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace weave::track {

namespace {

// Minimum-cost perfect matching of an n x n matrix (1-based arrays inside, as the method is
// usually stated): rows are added one at a time and each is placed by a shortest augmenting
// path over reduced costs u[i] + v[j] <= a(i, j). Returns the column of each row.
std::vector<int> hungarian(const std::vector<double>& a, std::size_t n) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> u(n + 1, 0.0), v(n + 1, 0.0), minv(n + 1);
  std::vector<std::size_t> p(n + 1, 0), way(n + 1, 0);
  std::vector<char> used(n + 1);
  for (std::size_t i = 1; i <= n; ++i) {
    p[0] = i;
    std::size_t j0 = 0;
    std::fill(minv.begin(), minv.end(), inf);
    std::fill(used.begin(), used.end(), 0);
    do {
      used[j0] = 1;
      const std::size_t i0 = p[j0];
      double delta = inf;
      std::size_t j1 = 0;
      for (std::size_t j = 1; j <= n; ++j) {
        if (used[j]) continue;
        const double cur = a[(i0 - 1) * n + (j - 1)] - u[i0] - v[j];
        if (cur < minv[j]) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j] < delta) {
          delta = minv[j];
          j1 = j;
        }
      }
      for (std::size_t j = 0; j <= n; ++j) {
        if (used[j]) {
          u[p[j]] += delta;
          v[j] -= delta;
        } else {
          minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (p[j0] != 0);
    do {
      const std::size_t j1 = way[j0];
      p[j0] = p[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  std::vector<int> row_col(n, -1);
  for (std::size_t j = 1; j <= n; ++j)
    if (p[j] != 0) row_col[p[j] - 1] = static_cast<int>(j - 1);
  return row_col;
}

}  // namespace

Assignment assign(std::span<const double> cost, std::size_t rows, std::size_t cols, double limit) {
  Assignment out{std::vector<int>(rows, -1), std::vector<int>(cols, -1)};
  if (rows == 0 || cols == 0 || cost.size() != rows * cols || !(limit > 0.0)) return out;
  // Forbidden cells cost more than leaving everything unassigned could, so the solver takes one
  // only when no other perfect matching exists -- and one always does (every row may pair with
  // its own "unassigned" column), so none is ever taken.
  const double forbidden = limit * static_cast<double>(rows + cols + 1) + 1.0;
  const std::size_t n = rows + cols;
  std::vector<double> a(n * n, forbidden);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      const double c = cost[i * cols + j];
      if (std::isfinite(c) && c <= limit) a[i * n + j] = c;
    }
  for (std::size_t i = 0; i < rows; ++i) a[i * n + cols + i] = limit / 2;    // row i unassigned
  for (std::size_t j = 0; j < cols; ++j) a[(rows + j) * n + j] = limit / 2;  // column j unassigned
  for (std::size_t i = rows; i < n; ++i)
    for (std::size_t j = cols; j < n; ++j) a[i * n + j] = 0.0;  // dummies pair for free
  const std::vector<int> row_col = hungarian(a, n);
  for (std::size_t i = 0; i < rows; ++i) {
    const int j = row_col[i];
    if (j >= 0 && static_cast<std::size_t>(j) < cols && a[i * n + static_cast<std::size_t>(j)] < forbidden) {
      out.row_to_col[i] = j;
      out.col_to_row[static_cast<std::size_t>(j)] = static_cast<int>(i);
    }
  }
  return out;
}

}  // namespace weave::track
