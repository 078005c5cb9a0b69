// Shared pieces of the `weave` command-line tool: argument parsing, input generation and
// output naming. Exit codes: 0 success, 1 the model or data was bad (message on stderr),
// 2 the command line was wrong.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/common/tensor.h"
#include "core/runtime/factory.h"

namespace weave::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;

// Minimal parser: positional arguments, `--flag`, `--key value` and `--key=value`; keys listed
// in `repeatable` may appear more than once.
class Args {
 public:
  [[nodiscard]] static Expected<Args> parse(int argc, char** argv, const std::vector<std::string>& flags,
                                            const std::vector<std::string>& options);
  [[nodiscard]] bool flag(const std::string& name) const { return flags_.count(name) > 0; }
  [[nodiscard]] std::optional<std::string> get(const std::string& name) const;
  [[nodiscard]] std::vector<std::string> all(const std::string& name) const;
  [[nodiscard]] const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::vector<std::string> positional_;
  std::map<std::string, int> flags_;
  std::multimap<std::string, std::string> options_;
};

// "NAME=1x3x224x224" -> (NAME, shape); errors quote the argument.
[[nodiscard]] Expected<std::pair<std::string, Shape>> parse_named_shape(const std::string& text);
// Every NAME=DIMS value of a repeatable option, by name; errors name the option.
[[nodiscard]] Expected<std::map<std::string, Shape>> named_shapes(const Args& args,
                                                                  const std::string& option);
// Non-alphanumerics become '_' (the file names `weave run` writes).
[[nodiscard]] std::string sanitize(const std::string& name);
// A deterministic input for benchmarking: floats in [-1, 1), integers in [0, 8), bools false.
[[nodiscard]] Tensor synthetic_input(const TensorInfo& info, const Dims& dims, uint32_t seed);
// Dims for every input: from --shape options, else the factory's default dims; an error lists
// the inputs whose dims are still unknown.
[[nodiscard]] Expected<std::vector<Dims>> input_dims(const Factory& f,
                                                     const std::map<std::string, Shape>& shapes);
[[nodiscard]] std::string human_bytes(double bytes);

int cmd_compile(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_bench(int argc, char** argv);

}  // namespace weave::cli
