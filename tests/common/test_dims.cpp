// Size arithmetic on shapes (core/common/dims.h): what every byte count of a plan, an initializer
// or an artifact entry goes through, so hostile dims must give -1, never a wrapped product.
#define BOOST_TEST_MODULE dims
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <vector>

#include "core/common/dims.h"

using weave::checked_bytes;

BOOST_AUTO_TEST_CASE(checked_bytes_multiplies_dims_and_element_size) {
  BOOST_TEST(checked_bytes(std::vector<int64_t>{1, 3, 224, 224}, 4) == 602112);
  BOOST_TEST(checked_bytes(std::vector<int64_t>{}, 8) == 8);  // a scalar
}

BOOST_AUTO_TEST_CASE(checked_bytes_refuses_negative_and_overflowing_dims) {
  BOOST_TEST(checked_bytes(std::vector<int64_t>{2, -1}, 4) == -1);
  BOOST_TEST(checked_bytes(std::vector<int64_t>{int64_t{1} << 62}, 4) == -1);
  BOOST_TEST(checked_bytes(std::vector<int64_t>{int64_t{1} << 31, int64_t{1} << 31, 4}, 1) == -1);
}

// An empty tensor with a huge other dim has 0 bytes: the order of the dims must not matter
// (fuzz_onnx: the artifact reader refused a 7277816997830721538x0 initializer the writer took).
BOOST_AUTO_TEST_CASE(checked_bytes_of_an_empty_tensor_is_zero_whatever_the_other_dims) {
  BOOST_TEST(checked_bytes(std::vector<int64_t>{7277816997830721538, 0}, 4) == 0);
  BOOST_TEST(checked_bytes(std::vector<int64_t>{0, 7277816997830721538}, 4) == 0);
  BOOST_TEST(checked_bytes(std::vector<int64_t>{0, -1}, 4) == -1);  // still not a shape
}

// An untyped value (element size 0) of a shape whose element count overflows has no size either:
// the plan would otherwise take it and every numel() of it after would overflow (fuzz_onnx).
BOOST_AUTO_TEST_CASE(checked_bytes_refuses_an_overflowing_count_of_zero_size_elements) {
  BOOST_TEST(checked_bytes(std::vector<int64_t>{1, 2, 4, 2147483647, 2147483647}, 0) == -1);
  BOOST_TEST(checked_bytes(std::vector<int64_t>{2, 3}, 0) == 0);
}

// shape_numel follows the same rules: a zero anywhere gives 0, an overflow gives -1 (fuzz_onnx:
// constant folding counted an unused ConstantOfShape of [3.7e18, 6.5e17, 0] dim by dim).
BOOST_AUTO_TEST_CASE(shape_numel_of_hostile_dims_is_zero_or_minus_one_never_wrapped) {
  using weave::shape_numel;
  BOOST_TEST(shape_numel(std::vector<int64_t>{2, 3, 4}) == 24);
  BOOST_TEST(shape_numel(std::vector<int64_t>{}) == 1);
  BOOST_TEST(shape_numel(std::vector<int64_t>{3746994889972252674, 648518346341351424, 0}) == 0);
  BOOST_TEST(shape_numel(std::vector<int64_t>{3746994889972252674, 648518346341351424}) == -1);
  BOOST_TEST(shape_numel(std::vector<int64_t>{4, -1}) == -1);
}

// The plan's bound on dims: with zeros counted as ones the dims multiply to at most
// kMaxPlannedBytes, so a kernel may multiply any of an empty tensor's dims (fuzz_onnx: a Softmax of
// a folded 1x3.7e18x6.5e17x0 constant multiplied its inner dims before any size check).
BOOST_AUTO_TEST_CASE(dims_within_plan_bounds_the_product_of_the_nonzero_dims) {
  using weave::dims_within_plan;
  using weave::kMaxPlannedBytes;
  BOOST_TEST(dims_within_plan(std::vector<int64_t>{1, 3, 224, 224}));
  BOOST_TEST(dims_within_plan(std::vector<int64_t>{}));
  BOOST_TEST(dims_within_plan(std::vector<int64_t>{kMaxPlannedBytes, 0, 1}));
  BOOST_TEST(!dims_within_plan(std::vector<int64_t>{kMaxPlannedBytes, 0, 2}));
  BOOST_TEST(!dims_within_plan(std::vector<int64_t>{int64_t{1} << 40, int64_t{1} << 40, 0}));
  BOOST_TEST(!dims_within_plan(std::vector<int64_t>{1, 3746994889972252674, 648518346341351424, 0}));
  BOOST_TEST(!dims_within_plan(std::vector<int64_t>{0, -1}));
}
