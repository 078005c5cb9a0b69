// Embedding Weave's core in an application: one shared Factory, one Executor per thread,
// stateful and stateless runs, outputs by name.
//
//   embed MODEL [INPUT_NAME=DIMS]
//
// Build: part of the Meson build (build/docs/examples/embed). In your own project, link the
// weave-core and weave-import libraries (weave-core alone is enough for .weave artifacts).
#include <cstdio>
#include <thread>
#include <vector>

#include "core/loader/model_loader.h"
#include "core/runtime/executor.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: embed MODEL [INPUT_NAME=DIMS]\n");
    return 2;
  }
  // 1. The factory: parsed graph, params, kernels, plan. Built once, shared by everyone; a second
  //    load_factory() of the same file returns the same object from the process-wide cache.
  auto factory = weave::load_factory(argv[1]);
  if (!factory) {
    std::fprintf(stderr, "%s\n", factory.message().c_str());
    return 1;
  }
  const weave::Factory& f = **factory;
  std::printf("%d input(s), %d output(s), %d params (%lld bytes)\n", f.num_inputs(), f.num_outputs(),
              f.num_params(), static_cast<long long>(f.param_bytes()));

  // 2. Input dims: the model's static shape, batch 1 for a dynamic batch, or from the command line.
  const weave::TensorInfo& in = f.input_info(0);
  weave::Shape shape = in.shape;
  if (argc > 2) {
    std::string arg = argv[2];
    if (!weave::parse_shape(arg.substr(arg.find('=') + 1), shape)) return 2;
  }
  for (auto& d : shape)
    if (d < 0) d = 1;
  weave::Tensor x(in.dtype, weave::Dims(shape));  // zeros; a real app fills it from its frames

  // 3. Stateful API on one executor: set_input / run / output by name.
  auto ex = weave::Executor::create(*factory);
  if (!ex) return 1;
  if (auto st = ex->set_input(in.name, x.view()); !st) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  if (auto st = ex->run(); !st) {
    std::fprintf(stderr, "%s\n", st.message().c_str());
    return 1;
  }
  const std::string out_name = f.output_info(0).name;
  auto y = ex->output(out_name);
  std::printf("stateful: %s -> %s\n", out_name.c_str(), weave::shape_str(y->dims.span()).c_str());

  // 4. Stateless API from several threads, each with its own cheap executor of the same factory.
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      auto mine = weave::Executor::create(*factory);
      std::vector<weave::ConstTensorView> inputs{x.view()};
      auto outs = mine->run(inputs);
      std::printf("thread %d: %zu output(s), first has %lld elements\n", t, outs ? outs->size() : 0,
                  outs ? static_cast<long long>((*outs)[0].numel()) : 0LL);
    });
  for (auto& th : threads) th.join();
  return 0;
}
