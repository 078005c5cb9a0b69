// Small helpers shared by the benchmark programs in bench/: process memory from
// /proc/self/status, a millisecond clock, medians, "name=1x3x224x224" shapes and deterministic
// inputs. Benchmarks only use the public API (load_factory, Factory, Executor, read/write_artifact).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/common/tensor.h"
#include "core/runtime/factory.h"

namespace weave::bench {

// Kilobytes as the kernel reports them (VmHWM = peak resident set, VmRSS = resident now,
// RssAnon/RssFile = its anonymous and file-backed parts).
struct ProcMemory {
  int64_t vm_hwm_kb = 0, vm_rss_kb = 0, rss_anon_kb = 0, rss_file_kb = 0;
};

inline ProcMemory read_proc_memory() {
  ProcMemory m;
  std::ifstream in("/proc/self/status");
  std::string key;
  int64_t value = 0;
  std::string unit;
  while (in >> key) {
    if (key == "VmHWM:" || key == "VmRSS:" || key == "RssAnon:" || key == "RssFile:") {
      in >> value >> unit;
      if (key == "VmHWM:") m.vm_hwm_kb = value;
      if (key == "VmRSS:") m.vm_rss_kb = value;
      if (key == "RssAnon:") m.rss_anon_kb = value;
      if (key == "RssFile:") m.rss_file_kb = value;
    }
    in.ignore(1 << 20, '\n');
  }
  return m;
}

inline nlohmann::json memory_json(const ProcMemory& m) {
  return {{"vm_hwm_kb", m.vm_hwm_kb},
          {"vm_rss_kb", m.vm_rss_kb},
          {"rss_anon_kb", m.rss_anon_kb},
          {"rss_file_kb", m.rss_file_kb}};
}

using Clock = std::chrono::steady_clock;
inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// "x=1x3x48x320" -> ("x", {1,3,48,320}); an error quotes the text.
inline Expected<std::pair<std::string, Shape>> parse_shape_arg(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return make_error("bad shape '", text, "': expected NAME=DxDxD");
  Shape s;
  std::string rest = text.substr(eq + 1);
  std::size_t pos = 0;
  while (pos <= rest.size()) {
    const auto x = rest.find('x', pos);
    const std::string part = rest.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    char* end = nullptr;
    const long long d = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || d <= 0) return make_error("bad shape '", text, "': dim '", part, "'");
    s.push_back(d);
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  return std::make_pair(text.substr(0, eq), s);
}

// Input dims for every input of `f` (its default dims, which include FactoryOptions::plan_shapes).
inline Expected<std::vector<Dims>> default_dims(const Factory& f) {
  std::vector<Dims> dims;
  if (!f.default_input_dims(dims)) return make_error("some input dims are unknown: pass --shape NAME=DIMS");
  return dims;
}

// Deterministic inputs: floats in [-1, 1), integers in [0, 8).
inline std::vector<Tensor> make_inputs(const Factory& f, const std::vector<Dims>& dims) {
  std::vector<Tensor> out;
  uint32_t x = 17;
  for (int i = 0; i < f.num_inputs(); ++i) {
    Tensor t(f.input_info(i).dtype, dims[i]);
    if (t.dtype() == DType::float32) {
      for (int64_t k = 0; k < t.numel(); ++k)
        t.as<float>()[k] = static_cast<float>((x = x * 1664525u + 1013904223u) >> 8) / 8388608.0f - 1.0f;
    } else if (t.dtype() == DType::int64) {
      for (int64_t k = 0; k < t.numel(); ++k) t.as<int64_t>()[k] = (x = x * 1664525u + 1013904223u) >> 29;
    }
    out.push_back(std::move(t));
  }
  return out;
}

[[noreturn]] inline void die(const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  std::exit(1);
}

}  // namespace weave::bench
