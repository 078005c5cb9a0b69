#define BOOST_TEST_MODULE kernel_text
#include <boost/test/unit_test.hpp>

#include "tests/kernels/kernel_test_util.h"

using namespace weave;
using namespace weave::test;

namespace {

// Pool: unigrams 2 3 5 4 (outputs 0-3), bigrams (5,6) (7,8) (6,7) (outputs 4-6).
KernelCase tfidf(int64_t min_n, int64_t max_n, int64_t skip) {
  KernelCase c;
  c.op = "TfIdfVectorizer";
  c.opset = 9;
  c.attrs.set("mode", std::string("TF"));
  c.attrs.set("min_gram_length", min_n);
  c.attrs.set("max_gram_length", max_n);
  c.attrs.set("max_skip_count", skip);
  c.attrs.set("ngram_counts", std::vector<int64_t>{0, 4});
  c.attrs.set("ngram_indexes", std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6});
  c.attrs.set("pool_int64s", std::vector<int64_t>{2, 3, 5, 4, 5, 6, 7, 8, 6, 7});
  c.inputs = ins(make<int32_t>({12}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8}));
  return c;
}

}  // namespace

BOOST_AUTO_TEST_CASE(tfidf_counts_bigrams_over_every_skip) {
  // Adjacent only: (5,6) once, (7,8) once, (6,7) once.
  check_close(run1(tfidf(2, 2, 0)), {0, 0, 0, 0, 1, 1, 1});
  // Skips up to 5 also pair 7 and 8 at distances 3 and 6.
  check_close(run1(tfidf(2, 2, 5)), {0, 0, 0, 0, 1, 3, 1});
  // Unigrams are counted once whatever the skip: 3 three times, 5 once.
  check_close(run1(tfidf(1, 2, 5)), {0, 3, 1, 0, 1, 3, 1});
}

BOOST_AUTO_TEST_CASE(tfidf_rows_and_bad_pools) {
  KernelCase c = tfidf(2, 2, 0);
  c.inputs = ins(make<int64_t>({2, 3}, {5, 6, 7, 7, 8, 2}));
  auto r = run1(c);
  BOOST_CHECK(r.dims() == (Dims{2, 7}));
  check_close(r, {0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1, 0});
  c.attrs.set("ngram_counts", std::vector<int64_t>{0, 3});  // 7 items left do not make bigrams
  BOOST_CHECK(run_error(c).find("whole n-grams") != std::string::npos);
}
