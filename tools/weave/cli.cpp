#include "tools/weave/cli.h"

#include <algorithm>
#include <cstdio>

namespace weave::cli {

Expected<Args> Args::parse(int argc, char** argv, const std::vector<std::string>& flags,
                           const std::vector<std::string>& options) {
  Args a;
  auto is = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  for (int i = 0; i < argc; ++i) {
    std::string s = argv[i];
    if (s.rfind("--", 0) != 0 && !(s.size() == 2 && s[0] == '-' && s != "-")) {
      a.positional_.push_back(s);
      continue;
    }
    std::string key = s, value;
    bool has_value = false;
    if (auto eq = s.find('='); eq != std::string::npos) {
      key = s.substr(0, eq);
      value = s.substr(eq + 1);
      has_value = true;
    }
    if (is(flags, key) && !has_value) {
      ++a.flags_[key];
      continue;
    }
    if (!is(options, key)) return make_error("unknown option '", key, "'");
    if (!has_value) {
      if (i + 1 >= argc) return make_error("option '", key, "' needs a value");
      value = argv[++i];
    }
    a.options_.emplace(key, value);
  }
  return a;
}

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = options_.find(name);
  if (it == options_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> Args::all(const std::string& name) const {
  std::vector<std::string> out;
  auto [b, e] = options_.equal_range(name);
  for (auto it = b; it != e; ++it) out.push_back(it->second);
  return out;
}

Expected<std::pair<std::string, Shape>> parse_named_shape(const std::string& text) {
  auto eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0)
    return make_error("expected NAME=DIMS (e.g. x=1x3x224x224), got '", text, "'");
  Shape s;
  if (!parse_shape(text.substr(eq + 1), s))
    return make_error("bad dims in '", text, "' (expected e.g. 1x3x224x224)");
  return std::make_pair(text.substr(0, eq), s);
}

Expected<std::map<std::string, Shape>> named_shapes(const Args& args, const std::string& option) {
  std::map<std::string, Shape> out;
  for (const auto& s : args.all(option)) {
    auto ns = parse_named_shape(s);
    if (!ns) return Error(ns.message()).context(option);
    out[ns->first] = ns->second;
  }
  return out;
}

std::string sanitize(const std::string& name) {
  std::string s = name;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

Tensor synthetic_input(const TensorInfo& info, const Dims& dims, uint32_t seed) {
  Tensor t(info.dtype, dims);
  uint32_t s = seed * 747796405u + 2891336453u;
  auto next = [&] {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
  };
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (info.dtype) {
      case DType::float32:
        t.as<float>()[i] = static_cast<float>(next() >> 8) / float(1 << 23) - 1.f;
        break;
      case DType::float64:
        t.as<double>()[i] = static_cast<double>(next() >> 8) / double(1 << 23) - 1.0;
        break;
      case DType::int64:
        t.as<int64_t>()[i] = next() % 8;
        break;
      case DType::int32:
        t.as<int32_t>()[i] = static_cast<int32_t>(next() % 8);
        break;
      case DType::uint8:
        t.as<uint8_t>()[i] = static_cast<uint8_t>(next());
        break;
      default:
        break;  // zero-filled
    }
  }
  return t;
}

Expected<std::vector<Dims>> input_dims(const Factory& f, const std::map<std::string, Shape>& shapes) {
  for (const auto& [name, shape] : shapes) {
    auto idx = f.input_index(name);
    if (!idx) return Error(idx.message()).context("--shape");
  }
  std::vector<Dims> defaults;
  bool have_defaults = f.default_input_dims(defaults);
  std::vector<Dims> out(f.num_inputs());
  std::string missing;
  for (int i = 0; i < f.num_inputs(); ++i) {
    const TensorInfo& info = f.input_info(i);
    if (auto it = shapes.find(info.name); it != shapes.end()) {
      out[i] = Dims(it->second);
      continue;
    }
    if (have_defaults) {
      out[i] = defaults[i];
      continue;
    }
    Shape s = info.shape;
    if (!s.empty() && s[0] < 0) s[0] = 1;
    if (!shape_is_static(s)) {
      missing += (missing.empty() ? "" : ", ") + info.name + " " + info.str();
      continue;
    }
    out[i] = Dims(s);
  }
  if (!missing.empty()) return make_error("dynamic dims need --shape NAME=DIMS for: ", missing);
  return out;
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (b >= 1024 && u < 3) {
    b /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", b, units[u]);
  return buf;
}

}  // namespace weave::cli
