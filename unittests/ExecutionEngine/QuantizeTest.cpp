//===- QuantizeTest.cpp - FP8 kernels against the naive reference --------===//
//
// The engine's bit-level e4m3 rounding and shard quantizer
// (ExecutionEngine/Quantize.h) against lib/Reference/QuantReference.cpp,
// which shares no code with it: every e4m3 midpoint and its neighbours,
// every bf16 and fp16 value, and random tensors with ties, zero blocks,
// subnormals, saturation, infinities and NaN, quantized as local shards cut
// into aligned segments in a shuffled order (as blocks and chunks make
// them) and compared element by element and scale by scale.
//
//===----------------------------------------------------------------------===//
#include "reshard/ExecutionEngine/Quantize.h"
#include "reshard/ExecutionEngine/QuantizeKernels.h"
#include "reshard/Reference/QuantReference.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace reshard;
using namespace reshard::engine;

namespace {

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(QuantizeTest, DecodesEveryCodeAsTheReference) {
  for (int c = 0; c < 256; ++c) {
    double want = referenceE4M3Value(c);
    float got = e4m3_to_float(c);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << c;
      continue;
    }
    EXPECT_EQ(double(got), want) << c;
    EXPECT_EQ(std::signbit(got), std::signbit(want)) << c;
  }
}

TEST(QuantizeTest, RoundsMidpointsAndNeighboursToNearestEven) {
  std::vector<float> values = {0.0f,
                               -0.0f,
                               448.0f,
                               -448.0f,
                               464.0f,
                               1e30f,
                               INFINITY,
                               -INFINITY,
                               NAN,
                               fromBits(1),
                               fromBits(0x80000001u),
                               fromBits(0x007fffffu)};
  for (int c = 0; c < 0x7e; ++c) {
    double lo = referenceE4M3Value(c), hi = referenceE4M3Value(c + 1);
    float mid = static_cast<float>((lo + hi) / 2); // exact in fp32
    ASSERT_EQ(double(mid), (lo + hi) / 2);
    for (float v : {mid, std::nextafter(mid, 0.0f),
                    std::nextafter(mid, 1000.0f), float(lo), float(hi)}) {
      values.push_back(v);
      values.push_back(-v);
    }
  }
  for (float v : values) {
    uint8_t want = referenceE4M3(std::max(-448.0f, std::min(448.0f, v)));
    if (std::isnan(v))
      want = referenceE4M3(v);
    EXPECT_EQ(int(e4m3_from_float(v)), int(want)) << v;
  }
}

TEST(QuantizeTest, ConvertsEverySixteenBitInputExactly) {
  for (uint32_t h = 0; h < 65536; ++h) {
    double want = referenceHalfValue(h);
    float got = f16_to_float(h);
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(got)) << h;
    else
      EXPECT_EQ(double(got), want) << h;
    float b = bf16_to_float(h);
    // Every bf16 value through both roundings, with a block scale of 1.
    if (!std::isnan(b)) {
      float c = std::max(-448.0f, std::min(448.0f, b));
      EXPECT_EQ(int(e4m3_from_float(b)), int(referenceE4M3(c))) << h;
    }
  }
}

/// A random value of an interesting kind for one block whose magnitude is
/// around 2^`scale`.
float drawValue(std::mt19937_64 &rng, int scale) {
  std::uniform_int_distribution<int> kind(0, 19);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  switch (kind(rng)) {
  case 0:
    return 0.0f;
  case 1:
    return -0.0f;
  case 2:
    return fromBits(rng() % 0x800000u) * (rng() % 2 ? 1 : -1); // subnormal
  case 3:
    return INFINITY * (rng() % 2 ? 1 : -1);
  case 4: // either sign: the result keeps it
    return std::copysign(NAN, rng() % 2 ? 1.0f : -1.0f);
  case 5: // an exact e4m3 midpoint times a power of two
    return float((referenceE4M3Value(rng() % 0x7e) +
                  referenceE4M3Value(rng() % 0x7e + 1)) /
                 2) *
           std::ldexp(1.0f, scale - 8);
  default:
    return unit(rng) * std::ldexp(1.0f, scale);
  }
}

/// A group by its two halves (what a thread with several groups in flight
/// does).
template <int Input, int Kind, int W>
void fetchThenPut(const QuantGroups &p, const void *in, const void *scales,
                  uint32_t e, bool wide, uint8_t *out) {
  float v[W];
  QuantGroup a = quant_group_fetch<Input, W>(p, Kind, in, e, wide, v);
  if (a.n > 0)
    quant_group_put<Kind, W>(p, scales, a, v, out);
}

using GroupWork = void (*)(const QuantGroups &, const void *, const void *,
                           uint32_t, bool, uint8_t *);
using LaneWork = void (*)(const QuantGroups &, const void *, const void *,
                          uint32_t, uint32_t, bool, uint8_t *);

/// A thread's work for a source type and kind (rows) and width: whole, or
/// by its two halves.
template <int W> struct GroupWorks {
  static GroupWork whole(int input, int kind) {
    static const GroupWork works[3][2] = {
        {quant_group<kQuantF32, kQuantBlock, W>,
         quant_group<kQuantF32, kQuantMx, W>},
        {quant_group<kQuantBF16, kQuantBlock, W>,
         quant_group<kQuantBF16, kQuantMx, W>},
        {quant_group<kQuantF16, kQuantBlock, W>,
         quant_group<kQuantF16, kQuantMx, W>}};
    return works[input][kind == kQuantMx];
  }
  static LaneWork lane(int input, int kind) {
    static const LaneWork works[3][2] = {
        {quant_lane<kQuantF32, kQuantBlock, W>,
         quant_lane<kQuantF32, kQuantMx, W>},
        {quant_lane<kQuantBF16, kQuantBlock, W>,
         quant_lane<kQuantBF16, kQuantMx, W>},
        {quant_lane<kQuantF16, kQuantBlock, W>,
         quant_lane<kQuantF16, kQuantMx, W>}};
    return works[input][kind == kQuantMx];
  }
  static GroupWork halves(int input, int kind) {
    static const GroupWork works[3][2] = {
        {fetchThenPut<kQuantF32, kQuantBlock, W>,
         fetchThenPut<kQuantF32, kQuantMx, W>},
        {fetchThenPut<kQuantBF16, kQuantBlock, W>,
         fetchThenPut<kQuantBF16, kQuantMx, W>},
        {fetchThenPut<kQuantF16, kQuantBlock, W>,
         fetchThenPut<kQuantF16, kQuantMx, W>}};
    return works[input][kind == kQuantMx];
  }
};

/// How a width's groups went: whole groups of one block without a NaN
/// (converted two at a time) and the others.
struct GroupPaths {
  int64_t paired = 0, single = 0;
};

/// The group kernel of width W on the host, when quant_groups_of takes
/// `box`: every group as a thread takes it (every third by its two
/// halves), into `got`, each byte written once, each row's first block as
/// quant_row_first_block finds it (false when the kernel does not take
/// the box).
template <int W>
bool emulateWidth(const QuantLaunch &launch, const QuantCopyBox &box,
                  const std::vector<uint8_t> &in, const void *scales,
                  std::vector<uint8_t> &got, GroupPaths *paths) {
  QuantGroups p;
  if (!quant_groups_of(launch, box, W, &p))
    return false;
  GroupWork whole = GroupWorks<W>::whole(launch.input, launch.kind);
  GroupWork halves = GroupWorks<W>::halves(launch.input, launch.kind);
  int64_t w = launch.shape[launch.ndim - 1];
  int64_t blockW = launch.block[launch.ndim - 1];
  std::vector<int> written(got.size(), 0);
  for (int32_t e = 0; e < p.groups; ++e) {
    QuantGroup a = quant_group_at<W>(p, launch.kind, e);
    EXPECT_LE(a.n, W);
    if (a.n == 0)
      continue;
    EXPECT_TRUE(a.n < W || a.lo % W == 0) << "a whole group off W elements";
    EXPECT_EQ(int64_t(a.x), a.lo % w);
    EXPECT_EQ(a.first, quant_row_first_block(launch, a.lo / w));
    (e % 3 ? whole : halves)(p, in.data(), scales, e, e % 2 == 0, got.data());
    bool nan = false;
    for (int k = 0; k < a.n; ++k) {
      ++written[a.to + k];
      nan |= std::isnan(load_input(in.data(), a.lo + k, launch.input));
    }
    bool oneBlock = a.x / blockW == (a.x + a.n - 1) / blockW;
    ++(a.n == W && oneBlock && !nan ? paths->paired : paths->single);
  }
  for (size_t i = 0; i < written.size(); ++i)
    EXPECT_EQ(written[i], 1) << "byte " << i << " of the box";
  // As the kernel runs them: warps of lanes, each lane every 32nd group of
  // its warp's span, a row's walk once per row it meets.
  LaneWork lane = GroupWorks<W>::lane(launch.input, launch.kind);
  for (uint32_t warps : {1u, 3u, 40u}) {
    std::vector<uint8_t> lanes(got.size(), 0x55);
    for (uint32_t warp = 0; warp < warps; ++warp) {
      uint32_t begin, end;
      quant_warp_span(uint32_t(p.groups), warp, warps, &begin, &end);
      for (uint32_t l = 0; l < kQuantWarp; ++l)
        lane(p, in.data(), scales, begin + l, end, warp % 2 == 0, lanes.data());
    }
    EXPECT_EQ(lanes, got) << "the kernel's lanes differ, " << warps << " warps";
  }
  return true;
}

/// The group kernel on the host at both widths (4 and 8), which must
/// agree: `got` holds the result (false when the kernel does not take the
/// box).
bool emulateGroups(const QuantLaunch &launch, const QuantCopyBox &box,
                   const std::vector<uint8_t> &in, const void *scales,
                   std::vector<uint8_t> &got, GroupPaths *paths = nullptr) {
  GroupPaths ignored;
  std::vector<uint8_t> eight(got);
  if (!emulateWidth<4>(launch, box, in, scales, got, &ignored))
    return false;
  if (emulateWidth<8>(launch, box, in, scales, eight,
                      paths ? paths : &ignored)) {
    EXPECT_EQ(eight, got) << "groups of 8 differ from groups of 4";
  }
  return true;
}

/// The amax kernel on the host: a segment at a time, MX scales written,
/// fp32 ones as amax bits by max, then converted (empty when the fast
/// path does not take the shard).
std::vector<uint8_t> emulateAmax(const QuantLaunch &launch,
                                 const std::vector<uint8_t> &in) {
  QuantRows r;
  if (!quant_whole_rows(launch, &r))
    return {};
  int64_t blocks = quant_launch_blocks(launch);
  bool mx = launch.kind == kQuantMx;
  std::vector<uint8_t> scales(blocks * (mx ? 1 : 4), 0);
  std::vector<uint32_t> amax(blocks, 0);
  int64_t cols = launch.nblocks[launch.ndim - 1];
  for (int64_t s = 0, n = quant_segment_count(launch); s < n; ++s) {
    int64_t block = 0;
    uint32_t m =
        quant_segment_amax(launch, in.data(), s / cols, s % cols, &block);
    if (mx)
      scales[block] = uint8_t(mx_exponent(bits_float(m)) + 127);
    else
      amax[block] = std::max(amax[block], m);
  }
  if (!mx)
    for (int64_t b = 0; b < blocks; ++b) {
      float scale = quant_block_scale(launch.kind, bits_float(amax[b]));
      std::memcpy(&scales[4 * b], &scale, 4);
    }
  return scales;
}

/// The fused pack against the shard quantized whole (`out`): the host's
/// element loop over the whole shard, and the device's spans (emulated on
/// the host) over a random sub-box packed row-major, whose bytes must be
/// the sub-box's bytes of `out`; with the scales computed alone.
void checkFusedPack(std::mt19937_64 &rng, int kind, int input,
                    const ShardBlocks &sb, const QuantLaunch &launch,
                    const std::vector<uint8_t> &in,
                    const std::vector<uint8_t> &scales,
                    const std::vector<uint8_t> &out) {
  std::vector<uint8_t> alone(scales.size(), 0x55);
  quantize_shard_host(kind, input, sb, in.data(), nullptr, alone.data());
  ASSERT_EQ(alone, scales) << "the scales computed alone differ";
  QuantSource src = {kind, input, sb, in.data(), scales.data()};
  std::vector<uint8_t> host(out.size(), 0x55);
  quantize_elements(src, 0, int64_t(out.size()), host.data());
  ASSERT_EQ(host, out) << "the fused pack's element loop differs";
  int64_t nd = sb.ndim;
  if (nd == 0 || out.empty())
    return;
  // A random sub-box [lo, hi) of the shard, as a box of nd - 1 loops.
  std::vector<int64_t> lo(nd), hi(nd), stride(nd, 1);
  for (int64_t d = nd - 1; d >= 0; --d) {
    lo[d] = rng() % sb.shape[d];
    hi[d] = lo[d] + 1 + rng() % (sb.shape[d] - lo[d]);
    if (d > 0)
      stride[d - 1] = stride[d] * sb.shape[d];
  }
  QuantCopyBox box;
  box.run = hi[nd - 1] - lo[nd - 1];
  box.n = nd - 1;
  box.from = lo[nd - 1];
  box.to = 0;
  int64_t packed = box.run;
  for (int64_t d = nd - 2; d >= 0; --d) {
    box.from += lo[d] * stride[d];
    box.loops[3 * d] = hi[d] - lo[d];
    box.loops[3 * d + 1] = stride[d];
    box.loops[3 * d + 2] = packed;
    packed *= hi[d] - lo[d];
  }
  ASSERT_EQ(quant_copy_count(box), packed);
  std::vector<uint8_t> want;
  std::vector<int64_t> at(lo);
  for (int64_t e = 0; e < packed; ++e) {
    int64_t lin = 0;
    for (int64_t d = 0; d < nd; ++d)
      lin += at[d] * stride[d];
    want.push_back(out[lin]);
    for (int64_t d = nd - 1; d >= 0 && ++at[d] == hi[d]; --d)
      at[d] = lo[d];
  }
  std::vector<uint8_t> got(packed, 0x55);
  for (int64_t span = 0, n = quant_span_count(box); span < n; ++span)
    quant_span(launch, in.data(), scales.data(), box, span, got.data());
  ASSERT_EQ(got, want) << "the device's fused pack differs";
  std::vector<uint8_t> groups(packed, 0x55);
  if (emulateGroups(launch, box, in, scales.data(), groups)) {
    ASSERT_EQ(groups, want) << "the device's group kernel differs";
  }
  // Whole trailing rows as one run over them (how plans state such boxes).
  if (nd >= 2 && lo[nd - 1] == 0 && hi[nd - 1] == sb.shape[nd - 1]) {
    QuantCopyBox merged = box;
    merged.run *= box.loops[3 * (nd - 2)];
    merged.n = nd - 2;
    std::vector<uint8_t> whole(packed, 0x55);
    if (emulateGroups(launch, merged, in, scales.data(), whole)) {
      ASSERT_EQ(whole, want) << "the group kernel differs on merged rows";
    }
  }
}

/// One random case: a tensor, a quantization, and a local shard made of
/// aligned segments per dim in a shuffled order.
void checkRandomCase(std::mt19937_64 &rng, int input) {
  std::uniform_int_distribution<int> small(1, 3);
  size_t rank = rng() % 4; // 0-D to 3-D
  QuantSpec q;
  bool mx = rank > 0 && rng() % 3 == 0;
  q.kind = mx ? QuantSpec::Mx : QuantSpec::Block;
  q.mx = mx ? kMxBlock : 0;
  q.ue8m0 = !mx && rng() % 2;
  const int kind = mx ? kQuantMx : q.ue8m0 ? kQuantBlockUe8m0 : kQuantBlock;
  std::vector<int64_t> shape(rank), block(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    if (!mx)
      q.block.push_back(small(rng) * (rng() % 2 ? 1 : 2));
    block[d] = mx ? (d + 1 == rank ? kMxBlock : 1) : q.block[d];
    shape[d] = rng() % (3 * block[d] + 2); // uneven, sometimes empty
  }
  int64_t elems = 1;
  for (int64_t n : shape)
    elems *= n;
  // Values in the source's type, and their exact fp32 values.
  std::vector<float> values(elems);
  std::vector<uint8_t> raw(elems * quant_input_bytes(input));
  int scale = int(rng() % 200) - 140; // from deep subnormal to huge
  if (input != kQuantF32)
    scale = std::max(-20, std::min(scale, input == kQuantF16 ? 14 : 120));
  for (int64_t i = 0; i < elems; ++i) {
    float v = rng() % 50 == 0 ? 0.0f : drawValue(rng, scale);
    if (input == kQuantF32) {
      std::memcpy(&raw[4 * i], &v, 4);
      values[i] = v;
      continue;
    }
    uint16_t h;
    if (input == kQuantBF16) {
      uint32_t u;
      std::memcpy(&u, &v, 4);
      h = static_cast<uint16_t>(u >> 16);
      values[i] = fromBits(uint32_t(h) << 16);
    } else {
      h = static_cast<uint16_t>(rng());
      values[i] = static_cast<float>(referenceHalfValue(h));
    }
    std::memcpy(&raw[2 * i], &h, 2);
  }
  ReferenceQuantized want = referenceQuantize(shape, values, q);

  // Per dim: segments [begin, end) of whole blocks, shuffled into a local
  // order; a random subset of them forms the shard.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> segs(rank);
  for (size_t d = 0; d < rank; ++d) {
    for (int64_t b = 0; b < shape[d];) {
      int64_t len = block[d] * small(rng);
      segs[d].push_back({b, std::min(shape[d], b + len)});
      b += len;
    }
    std::shuffle(segs[d].begin(), segs[d].end(), rng);
    if (segs[d].size() > 1 && rng() % 2)
      segs[d].pop_back();
  }
  std::vector<std::vector<int64_t>> global(rank), cuts(rank);
  std::vector<std::vector<int64_t>> scaleIndex(rank);
  std::vector<int64_t> local(rank), nblocks(rank);
  for (size_t d = 0; d < rank; ++d) {
    cuts[d].push_back(0);
    for (auto [b, e] : segs[d]) {
      for (int64_t i = b; i < e; ++i)
        global[d].push_back(i);
      for (int64_t i = b; i < e; i += block[d]) {
        scaleIndex[d].push_back(i / block[d]);
        cuts[d].push_back(global[d].size() - (e - i) +
                          std::min(block[d], e - i));
      }
    }
    local[d] = global[d].size();
    nblocks[d] = cuts[d].size() - 1;
  }
  int64_t localElems = 1, localScales = 1;
  for (size_t d = 0; d < rank; ++d) {
    localElems *= local[d];
    localScales *= nblocks[d];
  }
  size_t eb = quant_input_bytes(input);
  std::vector<uint8_t> in(localElems * eb), out(localElems, 0xAA);
  std::vector<uint8_t> scales(localScales * (mx ? 1 : 4), 0xAA);
  auto globalLinear = [&](int64_t l, const std::vector<int64_t> &ext,
                          const std::vector<std::vector<int64_t>> &map,
                          const std::vector<int64_t> &gext) {
    int64_t g = 0, stride = 1;
    for (size_t d = rank; d-- > 0;) {
      g += map[d][l % ext[d]] * stride;
      l /= ext[d];
      stride *= gext[d];
    }
    return g;
  };
  for (int64_t l = 0; l < localElems; ++l)
    std::memcpy(&in[l * eb], &raw[globalLinear(l, local, global, shape) * eb],
                eb);
  std::vector<const int64_t *> cutPtrs;
  for (auto &c : cuts)
    cutPtrs.push_back(c.data());
  ShardBlocks sb = {int64_t(rank), local.data(), nblocks.data(),
                    cutPtrs.data()};
  quantize_shard_host(kind, input, sb, in.data(), out.data(), scales.data());
  // The GPU quantizer's per-block code, on the host: 1, 3 or 128
  // "threads" each take their share, the reduction emulated.
  std::vector<int64_t> runs;
  for (size_t d = 0; d < rank; ++d) {
    runs.push_back(segs[d].size());
    for (auto [b, e] : segs[d])
      runs.push_back(e - b);
  }
  QuantLaunch launch;
  ASSERT_TRUE(make_quant_launch(kind, input, rank, local.data(), block.data(),
                                runs.data(), &launch));
  ASSERT_EQ(quant_launch_blocks(launch), localScales);
  int threads = std::vector<int>{1, 3, 128}[rng() % 3];
  std::vector<uint8_t> kout(localElems, 0x55),
      kscales(localScales * (mx ? 1 : 4), 0x55);
  for (int64_t b = 0; b < localScales; ++b) {
    uint32_t amax = 0;
    for (int t = 0; t < threads; ++t)
      amax =
          std::max(amax, quant_partial_amax(launch, in.data(), b, t, threads));
    for (int t = 0; t < threads; ++t)
      quant_block_write(launch, in.data(), kout.data(), kscales.data(), b, t,
                        threads, amax);
  }
  ASSERT_EQ(kout, out) << "the kernel's code differs from the host loops";
  ASSERT_EQ(kscales, scales) << "the kernel's scales differ";
  if (rank > 0 && localElems > 0) {
    std::vector<uint8_t> amax = emulateAmax(launch, in);
    if (!amax.empty()) {
      ASSERT_EQ(amax, scales) << "the amax kernel's scales differ";
    }
    QuantCopyBox whole;
    whole.from = whole.to = 0;
    whole.run = local[rank - 1];
    whole.n = 1;
    whole.loops[0] = localElems / local[rank - 1];
    whole.loops[1] = whole.loops[2] = local[rank - 1];
    std::vector<uint8_t> rows(localElems, 0x55);
    if (emulateGroups(launch, whole, in, scales.data(), rows)) {
      ASSERT_EQ(rows, out) << "the group kernel differs on the whole shard";
    }
  }
  checkFusedPack(rng, kind, input, sb, launch, in, scales, out);
  for (int64_t l = 0; l < localElems; ++l) {
    int64_t g = globalLinear(l, local, global, shape);
    ASSERT_EQ(int(out[l]), int(want.payload[g]))
        << "element " << g << " value " << values[g] << " input " << input;
  }
  for (int64_t l = 0; l < localScales; ++l) {
    int64_t g = globalLinear(l, nblocks, scaleIndex, want.scaleShape);
    if (mx) {
      ASSERT_EQ(int(scales[l]), int(want.e8m0[g])) << "scale " << g;
    } else {
      float s;
      std::memcpy(&s, &scales[4 * l], 4);
      ASSERT_EQ(s, want.scales[g]) << "scale " << g;
    }
  }
}

/// A shard of `shape` whose blocks start at each of its runs per dim
/// (`dimRuns`), random values of type `input`, and what the host loops make
/// of it: its payload and scales (which the amax kernel must match).
struct HostQuantized {
  QuantLaunch launch;
  std::vector<uint8_t> in, out, scales;
};

void quantizeOnHost(std::mt19937_64 &rng, int kind, int input,
                    const std::vector<int64_t> &shape,
                    const std::vector<int64_t> &block,
                    const std::vector<std::vector<int64_t>> &dimRuns,
                    HostQuantized *h) {
  size_t nd = shape.size();
  std::vector<int64_t> runs, nblocks;
  std::vector<std::vector<int64_t>> cuts(nd);
  std::vector<const int64_t *> cutPtrs;
  for (size_t d = 0; d < nd; ++d) {
    runs.push_back(int64_t(dimRuns[d].size()));
    int64_t start = 0;
    for (int64_t len : dimRuns[d]) {
      runs.push_back(len);
      for (int64_t c = 0; c < len; c += block[d])
        cuts[d].push_back(start + c);
      start += len;
    }
    cuts[d].push_back(shape[d]);
    nblocks.push_back(int64_t(cuts[d].size()) - 1);
    cutPtrs.push_back(cuts[d].data());
  }
  int64_t n = 1, eb = quant_input_bytes(input);
  for (int64_t e : shape)
    n *= e;
  h->in.assign(eb * n, 0);
  for (int64_t i = 0; i < n; ++i) {
    uint32_t u = float_bits(drawValue(rng, int(rng() % 20) - 10));
    if (eb == 4) {
      std::memcpy(&h->in[4 * i], &u, 4);
    } else {
      uint16_t half = static_cast<uint16_t>(u >> 16);
      std::memcpy(&h->in[2 * i], &half, 2);
    }
  }
  ASSERT_TRUE(make_quant_launch(kind, input, int64_t(nd), shape.data(),
                                block.data(), runs.data(), &h->launch));
  ShardBlocks sb = {int64_t(nd), shape.data(), nblocks.data(), cutPtrs.data()};
  h->out.assign(n, 0);
  h->scales.assign(quant_launch_blocks(h->launch) * (kind == kQuantMx ? 1 : 4),
                   0);
  quantize_shard_host(kind, input, sb, h->in.data(), h->out.data(),
                      h->scales.data());
  ASSERT_EQ(emulateAmax(h->launch, h->in), h->scales);
}

/// Long rows, rows that start and end inside a group, and short rows: the
/// group kernel against the host loops, for block scaling and MX, its
/// groups of eight both converted two at a time and one at a time.
TEST(QuantizeTest, GroupKernelPacksLongRowsAndPartialGroups) {
  std::mt19937_64 rng(23);
  for (int kind : {int(kQuantBlock), int(kQuantMx)}) {
    std::vector<int64_t> shape = {5, 40000};
    std::vector<int64_t> block = {kind == kQuantMx ? 1 : 2,
                                  kind == kQuantMx ? 32 : 128};
    int64_t n = shape[0] * shape[1];
    HostQuantized h;
    ASSERT_NO_FATAL_FAILURE(quantizeOnHost(rng, kind, kQuantBF16, shape, block,
                                           {{shape[0]}, {shape[1]}}, &h));
    // Whole rows as one run (a loop added over them); 39,893 columns from
    // column 101 (rows that start and end inside a group); and 7-column
    // pieces.
    struct Box {
      int64_t from, run, rows;
    };
    for (Box c : {Box{0, n, 1}, Box{101, 39893, 5}, Box{39990, 7, 5}}) {
      QuantCopyBox box;
      box.from = c.from;
      box.to = 0;
      box.run = c.run;
      box.n = c.rows > 1 ? 1 : 0;
      box.loops[0] = c.rows;
      box.loops[1] = shape[1];
      box.loops[2] = c.run;
      std::vector<uint8_t> want;
      for (int64_t i = 0; i < c.rows; ++i)
        for (int64_t p = 0; p < c.run; ++p)
          want.push_back(h.out[c.from + i * shape[1] + p]);
      std::vector<uint8_t> got(c.run * c.rows, 0x55);
      GroupPaths paths;
      ASSERT_TRUE(
          emulateGroups(h.launch, box, h.in, h.scales.data(), got, &paths));
      ASSERT_EQ(got, want) << "box from " << c.from << " run " << c.run;
      if (c.run > 8) {
        EXPECT_GT(paths.paired, 0) << "no group took the paired conversions";
        EXPECT_GT(paths.single, 0) << "every group took them";
      }
    }
  }
}

/// A 3-D shard with several runs on both leading dims (vLLM's merged
/// weights cut dim 0 so), an odd row width (rows start at every alignment)
/// and a box of two loops from inside the shard: the group kernel's run
/// tables and loop walk against the host loops, for each source type and
/// kind.
TEST(QuantizeTest, GroupKernelWalksRunsAndLoops) {
  std::mt19937_64 rng(29);
  std::vector<int64_t> shape = {3, 300, 1001};
  std::vector<std::vector<int64_t>> dimRuns = {{2, 1}, {128, 100, 72}, {1001}};
  for (int input : {int(kQuantF32), int(kQuantBF16), int(kQuantF16)})
    for (int kind : {int(kQuantBlock), int(kQuantMx)}) {
      std::vector<int64_t> block = {1, kind == kQuantMx ? 1 : 64,
                                    kind == kQuantMx ? 32 : 128};
      HostQuantized h;
      ASSERT_NO_FATAL_FAILURE(
          quantizeOnHost(rng, kind, input, shape, block, dimRuns, &h));
      // Rows 37..286 of dim-0 slices 1 and 2, columns 13..912, packed.
      QuantCopyBox box;
      box.from = (1 * shape[1] + 37) * shape[2] + 13;
      box.to = 0;
      box.run = 900;
      box.n = 2;
      int64_t box0[3] = {2, shape[1] * shape[2], 250 * 900};
      int64_t box1[3] = {250, shape[2], 900};
      std::copy(box0, box0 + 3, box.loops);
      std::copy(box1, box1 + 3, box.loops + 3);
      std::vector<uint8_t> want;
      for (int64_t a = 1; a < 3; ++a)
        for (int64_t r = 37; r < 287; ++r)
          for (int64_t c = 13; c < 913; ++c)
            want.push_back(h.out[(a * shape[1] + r) * shape[2] + c]);
      std::vector<uint8_t> got(want.size(), 0x55);
      ASSERT_TRUE(emulateGroups(h.launch, box, h.in, h.scales.data(), got));
      ASSERT_EQ(got, want) << "input " << input << " kind " << kind;
    }
}

/// The group kernel divides its indices by magic numbers, exact below
/// 2^31: a box of 2^31 groups or more goes to the span kernel (64-bit
/// indices), and so does a width other than 4 or 8.
TEST(QuantizeTest, GroupKernelTakesIndicesBelow2To31Only) {
  std::vector<int64_t> shape = {int64_t(1) << 16, int64_t(1) << 17};
  std::vector<int64_t> block = {128, 128}, runs = {1, shape[0], 1, shape[1]};
  QuantLaunch launch;
  ASSERT_TRUE(make_quant_launch(kQuantBlock, kQuantBF16, 2, shape.data(),
                                block.data(), runs.data(), &launch));
  QuantCopyBox box;
  box.from = box.to = 0;
  box.run = shape[1];
  box.n = 1;
  box.loops[0] = shape[0];
  box.loops[1] = box.loops[2] = shape[1];
  QuantGroups p;
  // 2^33 elements: over 2^31 groups of 4, and 2^30 + 2^16 groups of 8 (a
  // row meets one more group than it fills, from an unaligned start).
  EXPECT_FALSE(quant_groups_of(launch, box, 4, &p));
  ASSERT_TRUE(quant_groups_of(launch, box, 8, &p));
  EXPECT_EQ(p.groups, (int64_t(1) << 30) + (int64_t(1) << 16));
  box.loops[0] = shape[0] / 4 - 1;
  ASSERT_TRUE(quant_groups_of(launch, box, 4, &p));
  EXPECT_LT(p.groups, int64_t(1) << 31);
  EXPECT_FALSE(quant_groups_of(launch, box, 6, &p));
  box.loops[0] = 0; // an empty box: no groups, and no division by zero
  ASSERT_TRUE(quant_groups_of(launch, box, 8, &p));
  EXPECT_EQ(p.groups, 0);
}

/// A block past its dim's end (legal: one short block) describes the
/// shard as a block of the dim does, so no kernel adds 2^63 - 1 to an
/// index.
TEST(QuantizeTest, BlocksPastTheDimAreTheDim) {
  std::vector<int64_t> shape = {256, 512}, runs = {2, 100, 156, 1, 512};
  std::vector<int64_t> huge = {INT64_MAX, 128}, dim = {256, 128};
  QuantLaunch a, b;
  ASSERT_TRUE(make_quant_launch(kQuantBlock, kQuantBF16, 2, shape.data(),
                                huge.data(), runs.data(), &a));
  ASSERT_TRUE(make_quant_launch(kQuantBlock, kQuantBF16, 2, shape.data(),
                                dim.data(), runs.data(), &b));
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(a.block[d], b.block[d]);
    EXPECT_EQ(a.nblocks[d], b.nblocks[d]);
  }
  EXPECT_EQ(a.nblocks[0], 2); // a block from each run's start
}

/// The warps' spans of the group kernel: whole strides of 32 groups, in
/// order, covering every group once, for any number of warps.
TEST(QuantizeTest, WarpSpansCoverTheGroupsOnce) {
  const uint32_t big = (uint32_t(1) << 31) - 1;
  for (uint32_t groups : {0u, 1u, 31u, 32u, 33u, 1000u, 65536u + 7, big})
    for (uint32_t warps : {1u, 2u, 7u, 64u, 8448u, 100000u}) {
      uint32_t next = 0;
      for (uint32_t warp = 0; warp < warps; ++warp) {
        uint32_t begin, end;
        quant_warp_span(groups, warp, warps, &begin, &end);
        if (begin == end)
          continue;
        ASSERT_EQ(begin, next) << groups << " groups, warp " << warp;
        ASSERT_EQ(begin % kQuantWarp, 0u);
        ASSERT_LT(begin, end);
        next = end;
      }
      EXPECT_EQ(next, groups) << groups << " groups, " << warps << " warps";
    }
}

TEST(QuantizeTest, MagicDivisionIsExact) {
  std::mt19937_64 rng(5);
  std::vector<int64_t> divisors = {1, 3, 7, 1000, (int64_t(1) << 31) - 1};
  for (int k = 1; k < 31; ++k) // either side of each power of two
    for (int64_t d :
         {(int64_t(1) << k) - 1, int64_t(1) << k, (int64_t(1) << k) + 1})
      divisors.push_back(d);
  for (int i = 0; i < 200; ++i)
    divisors.push_back(1 + int64_t(rng() % ((uint64_t(1) << 31) - 1)));
  for (int64_t d : divisors) {
    std::vector<int64_t> xs = {0, 1, d - 1, d, d + 1, (int64_t(1) << 31) - 1};
    for (int k = 0; k < 200; ++k) {
      int64_t x = int64_t(rng() % (uint64_t(1) << 31));
      xs.push_back(x);
      xs.push_back(x / d * d); // a multiple of d, and the element before it
      xs.push_back(x / d * d - 1);
    }
    QuantMagic32 magic32 = quant_magic32(d);
    for (int64_t x : xs)
      if (x >= 0 && x < (int64_t(1) << 31)) {
        ASSERT_EQ(int64_t(quant_div32(uint32_t(x), magic32)), x / d)
            << x << " / " << d;
      }
  }
}

TEST(QuantizeTest, RandomShardsMatchTheReference) {
  std::mt19937_64 rng(17);
  for (int i = 0; i < 3000; ++i)
    checkRandomCase(rng, i % 3);
}

#if defined(__SSE2__)
/// The host loop runs in the caller's process: flushing subnormals
/// (FTZ/DAZ, as torch.set_flush_denormal sets them) or another rounding
/// mode there must not change a scale or a byte, and the caller's
/// environment comes back afterwards.
TEST(QuantizeTest, HostLoopIgnoresTheCallersFloatEnvironment) {
  // fp32 blocks of 8 and MX blocks of 32: subnormal blocks whose block
  // scale is a subnormal (amax from 225 * 2^-149) or rounds to zero, a
  // block whose scale is subnormal from a normal amax (1e-37), and
  // blocks whose scales round differently upwards.
  std::mt19937_64 rng(5);
  std::vector<float> values;
  for (int i = 0; i < 8; ++i)
    values.push_back(fromBits(225 + uint32_t(rng() % 5000)) *
                     (i % 2 ? -1.0f : 1.0f));
  for (int i = 0; i < 8; ++i)
    values.push_back(fromBits(1 + uint32_t(rng() % 224)));
  for (int i = 0; i < 8; ++i)
    values.push_back(i ? 1e-37f / float(i + 1) : 1e-37f);
  for (int i = 0; i < 104; ++i)
    values.push_back(fromBits(0x3f800000u + uint32_t(rng() % 0x7fffff)) *
                     std::ldexp(1.0f, int(rng() % 40) - 20));
  std::vector<int64_t> shape = {int64_t(values.size())};
  std::vector<uint8_t> raw(values.size() * 4);
  std::memcpy(raw.data(), values.data(), raw.size());

  for (int kind : {int(kQuantBlock), int(kQuantBlockUe8m0), int(kQuantMx)}) {
    bool mx = kind == kQuantMx;
    QuantSpec q;
    q.kind = mx ? QuantSpec::Mx : QuantSpec::Block;
    q.ue8m0 = kind == kQuantBlockUe8m0;
    if (mx)
      q.mx = kMxBlock;
    else
      q.block = {8};
    int64_t block = mx ? kMxBlock : 8, nblocks = shape[0] / block;
    std::vector<int64_t> cuts;
    for (int64_t b = 0; b <= nblocks; ++b)
      cuts.push_back(b * block);
    const int64_t *cutPtr = cuts.data();
    ShardBlocks sb = {1, shape.data(), &nblocks, &cutPtr};
    ReferenceQuantized want = referenceQuantize(shape, values, q);
    // MXCSR: FTZ | DAZ, each rounding mode (bits 13-14), and every
    // exception unmasked (bits 7-12 clear: a trap would kill the test).
    for (unsigned env : {0x8040u, 0x2000u, 0x4000u, 0x6000u, 0xe040u, 0u}) {
      std::vector<uint8_t> out(values.size()), scales(nblocks * (mx ? 1 : 4));
      unsigned saved = _mm_getcsr();
      unsigned set = env ? saved | env : saved & ~0x1f80u;
      _mm_setcsr(set);
      quantize_shard_host(kind, kQuantF32, sb, raw.data(), out.data(),
                          scales.data());
      unsigned after = _mm_getcsr();
      _mm_setcsr(saved);
      EXPECT_EQ(after & ~0x3fu, set & ~0x3fu)
          << "the caller's environment is lost";
      EXPECT_EQ(out, want.payload) << "MXCSR " << std::hex << env;
      for (int64_t b = 0; b < nblocks; ++b) {
        if (mx) {
          EXPECT_EQ(int(scales[b]), int(want.e8m0[b])) << "block " << b;
          continue;
        }
        float s;
        std::memcpy(&s, &scales[4 * b], 4);
        EXPECT_EQ(s, want.scales[b]) << "block " << b << ", MXCSR " << env;
      }
    }
  }
}
#endif

/// ue8m0 block scales: the smallest power of two at or above amax / 448
/// (1 for a zero block), at least 2^-127, on the bits.
TEST(QuantizeTest, Ue8m0ScalesArePowersOfTwoAtOrAboveTheBlockScale) {
  auto scale = [](float amax) {
    return quant_block_scale(kQuantBlockUe8m0, amax);
  };
  EXPECT_EQ(scale(0.0f), 1.0f);
  EXPECT_EQ(scale(448.0f), 1.0f);                                 // exact: kept
  EXPECT_EQ(scale(std::nextafter(448.0f, 0.0f)), 1.0f);           // up to 1
  EXPECT_EQ(scale(std::nextafter(448.0f, 1e9f)), 2.0f);           // up to 2
  EXPECT_EQ(scale(1344.0f), 4.0f);                                // 3 -> 4
  EXPECT_EQ(scale(fromBits(0x7f7fffffu)), std::ldexp(1.0f, 120)); // FLT_MAX
  EXPECT_EQ(scale(std::ldexp(448.0f, -126)), std::ldexp(1.0f, -126));
  EXPECT_EQ(scale(std::ldexp(449.0f, -127)), std::ldexp(1.0f, -126));
  EXPECT_EQ(scale(std::ldexp(448.0f, -127)), std::ldexp(1.0f, -127));
  EXPECT_EQ(scale(std::ldexp(448.0f, -140)), std::ldexp(1.0f, -127));
  EXPECT_EQ(scale(fromBits(1)), 1.0f); // the quotient rounds to zero: 1
  // amax / 448 rounds down onto 2^-127: the quotient is just above 448,
  // and the clamp takes it to 448 (0x7E).
  float past = fromBits(0x04600001u);
  EXPECT_EQ(scale(past), std::ldexp(1.0f, -127));
  EXPECT_GT(double(past) / std::ldexp(1.0, -127), 448.0);
  EXPECT_EQ(int(quantize_scaled(past, scale(past))), 0x7E);
  EXPECT_EQ(int(quantize_scaled(-past, scale(past))), 0xFE);
  EXPECT_EQ(quant_block_scale(kQuantBlock, 1344.0f), 3.0f);
  // Every result is a power of two at or above the block scale and below
  // twice it, for amax over every fp32 exponent.
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200000; ++i) {
    float amax = fromBits(uint32_t(rng()) & 0x7f7fffffu);
    float s = block_scale(amax), u = scale(amax);
    int k;
    ASSERT_EQ(std::frexp(u, &k), 0.5f) << amax;
    ASSERT_GE(u, s) << amax;
    if (u > std::ldexp(1.0f, -127)) {
      ASSERT_LT(u, 2 * double(s)) << amax;
    }
  }
}

TEST(QuantizeTest, MxExponentIsExactForSubnormalsAndZero) {
  EXPECT_EQ(mx_exponent(0.0f), -127);
  EXPECT_EQ(mx_exponent(fromBits(1)), -127);              // 2^-149: clamped
  EXPECT_EQ(mx_exponent(1.0f), -8);                       // 2^0
  EXPECT_EQ(mx_exponent(std::nextafter(2.0f, 0.0f)), -8); // not rounded up
  EXPECT_EQ(mx_exponent(448.0f), 0);
  EXPECT_EQ(mx_exponent(fromBits(0x7f7fffffu)), 119); // FLT_MAX
  EXPECT_EQ(mx_exponent(std::ldexp(1.0f, -118)), -126);
}

} // namespace
