#include "core/params/share_params.h"

#include <map>
#include <vector>

namespace weave {
namespace {

constexpr std::size_t kListedNames = 8;

// Param names of one side of a share, with what an error message needs.
class ParamNames {
 public:
  ParamNames(const Graph& g, const char* role) : g_(g), role_(role) {
    // Bounds-checked: the graph may not have been validated yet.
    for (const auto& [value, name] : g.names.values) {
      if (value < 0 || static_cast<std::size_t>(value) >= g.values.size()) continue;
      const Value& v = g.values[value];
      if (v.kind == ValueKind::param && v.param >= 0 && static_cast<std::size_t>(v.param) < g.params.size() &&
          g.params[v.param].value == value)
        params_.emplace(name, v.param);
    }
  }

  [[nodiscard]] Status require_names() const {
    if (!g_.names.values.empty()) return {};
    return make_error("the ", role_,
                      " graph has no name map (its names were stripped, e.g. by `weave compile "
                      "--strip-names`); params can only be shared by name");
  }

  // The param id named `name`, or an error saying what the name is instead.
  [[nodiscard]] Expected<int32_t> find(const std::string& name) const {
    if (auto it = params_.find(name); it != params_.end()) return it->second;
    for (const auto& [value, n] : g_.names.values)
      if (n == name && value >= 0 && static_cast<std::size_t>(value) < g_.values.size())
        return make_error("'", name, "' in the ", role_, " graph is ", g_.value_label(value),
                          ", not a param");
    std::string some;
    std::size_t listed = 0;
    for (const auto& [n, id] : params_) {
      if (listed++ == kListedNames) break;
      some += (some.empty() ? "'" : ", '") + n + "'";
    }
    if (params_.empty())
      return make_error("no param named '", name, "' in the ", role_, " graph, which has no named params");
    return make_error("no param named '", name, "' in the ", role_, " graph; its params include ", some,
                      params_.size() > kListedNames ? ", ..." : "", " (", params_.size(), " in all)");
  }

  [[nodiscard]] const std::map<std::string, int32_t>& params() const { return params_; }
  [[nodiscard]] const Value& value_of(int32_t param) const { return g_.values[g_.params[param].value]; }

 private:
  const Graph& g_;
  const char* role_;
  std::map<std::string, int32_t> params_;
};

std::string describe(const Value& v) {
  return std::string(dtype_name(v.dtype)) + " [" + shape_str(v.shape) + "]";
}

// Checks every link, collecting all errors; on success returns (param of g, param of from) pairs.
Expected<std::vector<std::pair<int32_t, int32_t>>> resolve(const ParamNames& to, const ParamNames& from,
                                                           std::span<const ParamLink> links) {
  WEAVE_TRY(to.require_names());
  WEAVE_TRY(from.require_names());
  std::string errors;
  auto fail = [&](const std::string& m) { errors += (errors.empty() ? "" : "\n") + m; };
  std::vector<std::pair<int32_t, int32_t>> pairs;
  for (const ParamLink& link : links) {
    const std::string& src = link.from.empty() ? link.name : link.from;
    auto a = to.find(link.name);
    auto b = from.find(src);
    if (!a) fail(a.message());
    if (!b) fail(b.message());
    if (!a || !b) continue;
    const Value& va = to.value_of(*a);
    const Value& vb = from.value_of(*b);
    const bool dtype_ok = va.dtype == vb.dtype, shape_ok = va.shape == vb.shape;
    if (!dtype_ok || !shape_ok) {
      fail(make_error("cannot share param '", link.name, "' (", describe(va), ") of the target graph with '",
                      src, "' (", describe(vb), ") of the source graph: ",
                      !dtype_ok && !shape_ok ? "dtypes and shapes differ"
                      : !dtype_ok            ? "dtypes differ"
                                             : "shapes differ")
               .message());
      continue;
    }
    pairs.emplace_back(*a, *b);
  }
  if (!errors.empty()) return Error(errors);
  return pairs;
}

}  // namespace

Status share_params(Graph& g, const Graph& from, std::span<const ParamLink> links) {
  auto pairs = resolve(ParamNames(g, "target"), ParamNames(from, "source"), links);
  if (!pairs) return pairs.error();
  for (const auto& [to, src] : *pairs) {
    if (from.params[src].data.size() == 0 && g.params[to].data.size() != 0)
      return make_error("share_params: source param ", from.value_label(from.params[src].value),
                        " holds no bytes: its factory packed it and dropped them (create it with "
                        "FactoryOptions::keep_packed_params to share from it)");
    g.params[to].data = from.params[src].data;
  }
  return {};
}

Expected<int> share_common_params(Graph& g, const Graph& from) {
  ParamNames to(g, "target"), src(from, "source");
  WEAVE_TRY(to.require_names());
  WEAVE_TRY(src.require_names());
  std::vector<ParamLink> links;
  for (const auto& [name, id] : to.params())
    if (src.params().count(name)) links.push_back(ParamLink{name, {}});
  WEAVE_TRY(share_params(g, from, links));
  return static_cast<int>(links.size());
}

}  // namespace weave
