// The explicit sharing API (share_params / share_common_params) on hand-made graphs: what is
// shared, and every error: unknown names, non-params, dtype and shape mismatches, stripped
// names; a failed share leaves the graph untouched.
#define BOOST_TEST_MODULE share_params
#include <boost/test/unit_test.hpp>

#include "core/params/share_params.h"

using namespace weave;

namespace {

// A graph with input "x" and the given named params (no nodes: the API only needs the tables).
struct P {
  std::string name;
  DType dtype;
  Shape shape;
  uint8_t fill;
};

Graph graph_with(const std::vector<P>& params) {
  Graph g;
  int32_t x = g.add_value(Value{ValueKind::input, DType::float32, Shape{1}});
  g.inputs = {x};
  g.input_infos = {TensorInfo{"x", DType::float32, Shape{1}, {}}};
  g.names.values[x] = "x";
  for (const P& p : params) {
    AlignedBuffer buf(static_cast<std::size_t>(shape_numel(p.shape)) * dtype_size(p.dtype));
    for (auto& b : buf.span()) b = std::byte{p.fill};
    int32_t v = g.add_param(p.dtype, p.shape, SharedBytes::from(std::move(buf)));
    g.names.values[v] = p.name;
  }
  return g;
}

const SharedBytes& param(const Graph& g, const std::string& name) {
  for (const auto& [v, n] : g.names.values)
    if (n == name) return g.params[g.values[v].param].data;
  BOOST_FAIL("no param " << name);
  return g.params[0].data;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

BOOST_AUTO_TEST_CASE(links_share_bytes_by_name_and_default_to_the_same_name) {
  Graph src = graph_with(
      {{"emb", DType::float32, {4, 2}, 1}, {"w_src", DType::float32, {3}, 2}, {"b", DType::int64, {2}, 3}});
  Graph dst = graph_with(
      {{"emb", DType::float32, {4, 2}, 9}, {"w", DType::float32, {3}, 9}, {"own", DType::float32, {3}, 9}});
  const std::byte* own_before = param(dst, "own").data();
  ParamLink links[] = {{"emb", ""}, {"w", "w_src"}};
  Status st = share_params(dst, src, links);
  BOOST_TEST_REQUIRE(st.ok(), st.message());
  BOOST_TEST(param(dst, "emb").data() == param(src, "emb").data());
  BOOST_TEST(param(dst, "w").data() == param(src, "w_src").data());
  BOOST_TEST(param(dst, "own").data() == own_before);  // not linked: untouched
  BOOST_TEST(static_cast<int>(param(dst, "w").data()[0]) == 2);
  BOOST_TEST(dst.validate().ok());
}

BOOST_AUTO_TEST_CASE(shared_bytes_outlive_the_source_graph) {
  Graph dst = graph_with({{"w", DType::float32, {16}, 0}});
  std::weak_ptr<const void> owner;
  {
    Graph src = graph_with({{"w", DType::float32, {16}, 5}});
    owner = param(src, "w").owner();
    ParamLink links[] = {{"w", ""}};
    BOOST_TEST_REQUIRE(share_params(dst, src, links).ok());
  }
  BOOST_TEST(!owner.expired());
  BOOST_TEST(static_cast<int>(param(dst, "w").data()[63]) == 5);
}

BOOST_AUTO_TEST_CASE(shape_mismatch_names_both_params_and_shapes) {
  Graph src = graph_with({{"head.weight", DType::float32, {256, 128}, 1}});
  Graph dst = graph_with({{"proj", DType::float32, {128, 256}, 2}});
  const std::byte* before = param(dst, "proj").data();
  ParamLink links[] = {{"proj", "head.weight"}};
  Status st = share_params(dst, src, links);
  BOOST_TEST_REQUIRE(!st.ok());
  BOOST_TEST(st.message() ==
             "cannot share param 'proj' (float32 [128x256]) of the target graph with 'head.weight' (float32 "
             "[256x128]) of the source graph: shapes differ");
  BOOST_TEST(param(dst, "proj").data() == before);
}

BOOST_AUTO_TEST_CASE(dtype_mismatch_names_both_params_and_dtypes) {
  Graph src = graph_with({{"ids", DType::int64, {4}, 1}});
  Graph dst = graph_with({{"ids", DType::float32, {4}, 2}, {"k", DType::float32, {2}, 2}});
  ParamLink links[] = {{"ids", ""}};
  Status st = share_params(dst, src, links);
  BOOST_TEST_REQUIRE(!st.ok());
  BOOST_TEST(
      st.message() ==
      "cannot share param 'ids' (float32 [4]) of the target graph with 'ids' (int64 [4]) of the source "
      "graph: dtypes differ");
  Graph src2 = graph_with({{"k", DType::int32, {3}, 1}});
  ParamLink both[] = {{"k", ""}};
  Status st2 = share_params(dst, src2, both);
  BOOST_TEST_REQUIRE(!st2.ok());
  BOOST_TEST(contains(st2.message(), "(float32 [2])"));
  BOOST_TEST(contains(st2.message(), "(int32 [3])"));
  BOOST_TEST(contains(st2.message(), "dtypes and shapes differ"));
}

BOOST_AUTO_TEST_CASE(unknown_names_list_params_that_exist) {
  std::vector<P> many;
  for (int i = 0; i < 12; ++i)
    many.push_back({"layer" + std::to_string(10 + i) + ".w", DType::float32, {1}, 0});
  Graph src = graph_with(many);
  Graph dst = graph_with({{"a", DType::float32, {1}, 0}, {"b", DType::float32, {1}, 0}});
  ParamLink links[] = {{"a", "layer99.w"}};
  Status st = share_params(dst, src, links);
  BOOST_TEST_REQUIRE(!st.ok());
  BOOST_TEST(st.message() ==
             "no param named 'layer99.w' in the source graph; its params include 'layer10.w', 'layer11.w', "
             "'layer12.w', 'layer13.w', 'layer14.w', 'layer15.w', 'layer16.w', 'layer17.w', ... (12 in all)");
  ParamLink mine[] = {{"c", "layer10.w"}};
  Status st2 = share_params(dst, src, mine);
  BOOST_TEST_REQUIRE(!st2.ok());
  BOOST_TEST(st2.message() ==
             "no param named 'c' in the target graph; its params include 'a', 'b' (2 in all)");
}

BOOST_AUTO_TEST_CASE(a_name_that_is_not_a_param_says_what_it_is) {
  Graph src = graph_with({{"w", DType::float32, {1}, 0}});
  Graph dst = graph_with({{"w", DType::float32, {1}, 0}});
  ParamLink links[] = {{"x", "w"}};
  Status st = share_params(dst, src, links);
  BOOST_TEST_REQUIRE(!st.ok());
  BOOST_TEST(st.message() == "'x' in the target graph is input 'x', not a param");
}

BOOST_AUTO_TEST_CASE(every_bad_link_is_reported_and_nothing_is_shared) {
  Graph src = graph_with({{"a", DType::float32, {2}, 1}, {"b", DType::float32, {2}, 1}});
  Graph dst = graph_with({{"a", DType::float32, {2}, 0}, {"b", DType::float32, {3}, 0}});
  const std::byte* a_before = param(dst, "a").data();
  ParamLink links[] = {{"a", ""}, {"b", ""}, {"zz", ""}};
  Status st = share_params(dst, src, links);
  BOOST_TEST_REQUIRE(!st.ok());
  BOOST_TEST(contains(st.message(), "'b' (float32 [3])"));
  BOOST_TEST(contains(st.message(), "no param named 'zz' in the target graph"));
  BOOST_TEST(contains(st.message(), "no param named 'zz' in the source graph"));
  BOOST_TEST(param(dst, "a").data() == a_before);  // the valid link was not applied either
}

BOOST_AUTO_TEST_CASE(stripped_names_are_a_clear_error) {
  Graph src = graph_with({{"w", DType::float32, {1}, 0}});
  Graph dst = graph_with({{"w", DType::float32, {1}, 0}});
  Graph stripped = dst;
  stripped.names = NameMap{};
  ParamLink links[] = {{"w", ""}};
  Status st = share_params(stripped, src, links);
  BOOST_TEST_REQUIRE(!st.ok());
  BOOST_TEST(st.message() ==
             "the target graph has no name map (its names were stripped, e.g. by `weave compile "
             "--strip-names`); params can only be shared by name");
  Graph src_stripped = src;
  src_stripped.names = NameMap{};
  Status st2 = share_params(dst, src_stripped, links);
  BOOST_TEST_REQUIRE(!st2.ok());
  BOOST_TEST(contains(st2.message(), "the source graph has no name map"));
  auto n = share_common_params(dst, src_stripped);
  BOOST_TEST_REQUIRE(!n.ok());
  BOOST_TEST(contains(n.message(), "the source graph has no name map"));
}

BOOST_AUTO_TEST_CASE(common_params_are_shared_by_name) {
  Graph src = graph_with(
      {{"a", DType::float32, {2}, 1}, {"b", DType::float32, {2}, 1}, {"only_src", DType::float32, {2}, 1}});
  Graph dst = graph_with(
      {{"a", DType::float32, {2}, 0}, {"b", DType::float32, {2}, 0}, {"only_dst", DType::float32, {2}, 0}});
  auto n = share_common_params(dst, src);
  BOOST_TEST_REQUIRE(n.ok(), (n.ok() ? "" : n.message()));
  BOOST_TEST(*n == 2);
  BOOST_TEST(param(dst, "a").data() == param(src, "a").data());
  BOOST_TEST(param(dst, "b").data() == param(src, "b").data());
  BOOST_TEST(param(dst, "only_dst").data() != param(src, "only_src").data());
  // A common name with another shape is an error, not a silent skip.
  Graph other = graph_with({{"a", DType::float32, {5}, 1}});
  auto bad = share_common_params(dst, other);
  BOOST_TEST_REQUIRE(!bad.ok());
  BOOST_TEST(contains(bad.message(), "cannot share param 'a' (float32 [2])"));
}

BOOST_AUTO_TEST_CASE(bad_ids_in_an_unvalidated_name_map_are_ignored) {
  Graph src = graph_with({{"w", DType::float32, {1}, 0}});
  Graph dst = graph_with({{"w", DType::float32, {1}, 0}});
  dst.names.values[12345] = "ghost";
  dst.names.values[-3] = "neg";
  ParamLink links[] = {{"ghost", "w"}};
  Status st = share_params(dst, src, links);
  BOOST_TEST_REQUIRE(!st.ok());
  BOOST_TEST(contains(st.message(), "no param named 'ghost' in the target graph"));
}
