// Optimal one-to-one assignment of rows to columns under a cost limit: the matching step of a
// tracker (rows: tracks, columns: detections, cost: 1 - IoU).
//
// Each row and each column may stay unassigned, at a price of `limit / 2` each; so a pair (i, j)
// is worth taking exactly when its cost is below `limit`, and among all partial matchings the
// one with the least total (pair costs plus the price of everything left out) is returned.
// Pairs whose cost is above `limit` (or not finite) are never taken. Solved exactly with the
// Hungarian method (shortest augmenting paths with potentials) on the (rows + cols)-square
// problem that prices the unassigned, one connected group of rows and columns at a time (those
// joined by allowed pairs): O(k^3) for a group of k, so boxes far apart cost little however
// many a frame has. A limit that is not a positive finite number assigns nothing.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace weave::track {

struct Assignment {
  std::vector<int> row_to_col;  // the column of each row, -1 when unassigned
  std::vector<int> col_to_row;  // the row of each column, -1 when unassigned
};

// `cost` holds rows x cols values, row-major. rows * cols must equal cost.size().
[[nodiscard]] Assignment assign(std::span<const double> cost, std::size_t rows, std::size_t cols,
                                double limit);

}  // namespace weave::track
