#include "core/track/assignment.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

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

namespace {

// Solves the rows x cols problem of `rs` and `cs` (indices into the whole cost matrix) and
// writes its pairs into `out`.
void solve(std::span<const double> cost, std::size_t cols, const std::vector<std::size_t>& rs,
           const std::vector<std::size_t>& cs, double limit, Assignment& out) {
  const std::size_t r = rs.size(), c = cs.size(), n = r + c;
  // Forbidden cells cost more than leaving everything unassigned could, so the solver takes one
  // only when no other perfect matching exists -- and one always does (every row may pair with
  // its own "unassigned" column), so none is ever taken.
  const double forbidden = limit * static_cast<double>(n + 1) + 1.0;
  std::vector<double> a(n * n, forbidden);
  for (std::size_t i = 0; i < r; ++i)
    for (std::size_t j = 0; j < c; ++j) {
      const double v = cost[rs[i] * cols + cs[j]];
      if (std::isfinite(v) && v <= limit) a[i * n + j] = v;
    }
  for (std::size_t i = 0; i < r; ++i) a[i * n + c + i] = limit / 2;    // row i unassigned
  for (std::size_t j = 0; j < c; ++j) a[(r + j) * n + j] = limit / 2;  // column j unassigned
  for (std::size_t i = r; i < n; ++i)
    for (std::size_t j = c; j < n; ++j) a[i * n + j] = 0.0;  // dummies pair for free
  const std::vector<int> row_col = hungarian(a, n);
  for (std::size_t i = 0; i < r; ++i) {
    const int j = row_col[i];
    if (j < 0 || static_cast<std::size_t>(j) >= c || !(a[i * n + static_cast<std::size_t>(j)] < forbidden))
      continue;
    out.row_to_col[rs[i]] = static_cast<int>(cs[static_cast<std::size_t>(j)]);
    out.col_to_row[cs[static_cast<std::size_t>(j)]] = static_cast<int>(rs[i]);
  }
}

std::size_t find(std::vector<std::size_t>& parent, std::size_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

Assignment assign(std::span<const double> cost, std::size_t rows, std::size_t cols, double limit) {
  Assignment out{std::vector<int>(rows, -1), std::vector<int>(cols, -1)};
  if (rows == 0 || cols == 0 || cost.size() != rows * cols || !(limit > 0.0) || !std::isfinite(limit))
    return out;
  // Rows and columns joined by an allowed pair form components that do not interact: each is
  // solved on its own, so a frame of many boxes far apart costs little more than its pairs.
  std::vector<std::size_t> parent(rows + cols);
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      const double v = cost[i * cols + j];
      if (std::isfinite(v) && v <= limit) parent[find(parent, i)] = find(parent, rows + j);
    }
  std::vector<std::vector<std::size_t>> comp_rows(rows + cols), comp_cols(rows + cols);
  for (std::size_t i = 0; i < rows; ++i) comp_rows[find(parent, i)].push_back(i);
  for (std::size_t j = 0; j < cols; ++j) comp_cols[find(parent, rows + j)].push_back(j);
  for (std::size_t k = 0; k < rows + cols; ++k)
    if (!comp_rows[k].empty() && !comp_cols[k].empty())
      solve(cost, cols, comp_rows[k], comp_cols[k], limit, out);
  return out;
}

}  // namespace weave::track
