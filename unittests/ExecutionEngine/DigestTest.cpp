//===- DigestTest.cpp - verify=True's digest, cut and changed -------------===//
//
// What python/reshard/verify.py relies on: a stream's digest does not
// depend on how the stream is cut into runs (sender and receiver walk
// different descriptors), and any one changed byte changes it.
//
//===----------------------------------------------------------------------===//
#include "reshard/ExecutionEngine/Digests.h"

#include "gtest/gtest.h"

#include <random>

using namespace reshard::engine;

namespace {

std::vector<uint8_t> randomBytes(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t &b : v)
    b = static_cast<uint8_t>(gen());
  return v;
}

uint64_t digestInRuns(const std::vector<uint8_t> &bytes, unsigned seed) {
  std::mt19937 gen(seed);
  Digest d;
  size_t at = 0;
  while (at < bytes.size()) {
    size_t run = std::min<size_t>(bytes.size() - at, 1 + gen() % 23);
    d.feed(bytes.data() + at, run);
    at += run;
  }
  return d.value();
}

TEST(Digest, DoesNotDependOnHowTheStreamIsCut) {
  for (size_t n : {0, 1, 7, 8, 9, 64, 1001}) {
    std::vector<uint8_t> bytes = randomBytes(n, 7);
    Digest whole;
    whole.feed(bytes.data(), n);
    for (unsigned seed = 0; seed < 5; ++seed)
      EXPECT_EQ(digestInRuns(bytes, seed), whole.value()) << n;
    EXPECT_EQ(whole.size(), static_cast<int64_t>(n));
  }
}

TEST(Digest, EveryChangedByteChangesIt) {
  std::vector<uint8_t> bytes = randomBytes(203, 3);
  uint64_t clean = digestInRuns(bytes, 1);
  for (size_t i = 0; i < bytes.size(); ++i)
    for (uint8_t bit : {0x01, 0x10, 0x80}) {
      bytes[i] ^= bit;
      EXPECT_NE(digestInRuns(bytes, 2), clean) << i;
      bytes[i] ^= bit;
    }
}

TEST(Digest, LengthMatters) {
  // Trailing zero bytes are bytes too.
  std::vector<uint8_t> a(16, 0), b(17, 0);
  Digest da, db;
  da.feed(a.data(), a.size());
  db.feed(b.data(), b.size());
  EXPECT_NE(da.value(), db.value());
}

} // namespace
