// Replays saved inputs through a fuzz target without libFuzzer: every file under the directories
// given after `--` must run through LLVMFuzzerTestOneInput without a crash, a sanitizer report
// or a broken invariant. tests/fuzz registers one such test per target over the inputs the
// fuzzers once crashed on (the regression corpus), so a fixed bug stays fixed in every build,
// sanitized (scripts/asan.sh) or not.
#define BOOST_TEST_MODULE fuzz_replay
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

// Custom mutators call libFuzzer's mutator; replays never mutate.
extern "C" size_t LLVMFuzzerMutate(uint8_t*, size_t size, size_t) {
  return size;
}

BOOST_AUTO_TEST_CASE(replay_saved_inputs) {
  auto& suite = boost::unit_test::framework::master_test_suite();
  int argc = suite.argc;
  char** argv = suite.argv;
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  BOOST_TEST_REQUIRE(suite.argc >= 2, "usage: replay DIR...");
  int replayed = 0;
  for (int a = 1; a < suite.argc; ++a) {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(suite.argv[a]))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      BOOST_TEST_CONTEXT(f.string()) {
        BOOST_TEST(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()) == 0);
      }
      ++replayed;
    }
  }
  BOOST_TEST_MESSAGE("replayed " << replayed << " inputs");
  BOOST_TEST(replayed > 0);
}
