//===- ShardBuffers.h - Every rank's shard on the host ----------*- C++ -*-===//
#ifndef RESHARD_REFERENCE_SHARDBUFFERS_H
#define RESHARD_REFERENCE_SHARDBUFFERS_H

#include <cstdint>
#include <map>
#include <vector>

namespace reshard {

/// One tensor's local shards, by global rank (dense row-major bytes).
using ShardBuffers = std::map<int64_t, std::vector<uint8_t>>;

} // namespace reshard

#endif // RESHARD_REFERENCE_SHARDBUFFERS_H
