/*===- Parts.h - A step's messages cut into transport-sized parts -*- C++
 * -*-===*
 *
 * A message (one peer, one direction, one step) travels as parts. A
 * segment (a piece's bytes in one step) of at least `direct_min` bytes is
 * a part of its own; it moves straight from the source tensor, or into the
 * destination tensor, where its bytes are one contiguous run there, so it
 * is neither packed into the staging area nor unpacked from it (two
 * copies fewer; Open MPI's shared-memory transport then moves it with one
 * copy). Smaller segments, and the whole slice of a transit's stream, are
 * packed as before, and consecutive ones travel as one part. Both ends
 * cut a message at the same places: the rule reads only what both know
 * (the segments' sizes, and whether a stream is a transit's). Whether a
 * part is direct is each end's own business. No part is longer than
 * `max_part` bytes (MPI counts are ints).
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_PARTS_H
#define RESHARD_EXECUTIONENGINE_PARTS_H

#include <cstdint>
#include <vector>

#include "reshard/ExecutionEngine/Boxes.h"

namespace reshard {
namespace engine {

/* One transport message: `bytes` bytes at `at`, in the staging area or in
 * a tensor. */
struct Part {
  uint8_t *at;
  int64_t bytes;
};

/* Where bytes [lo, hi) of box `d` start in its shard when they are one
 * contiguous run there; -1 otherwise. */
inline int64_t contiguous_offset(const int64_t *d, int64_t lo, int64_t hi) {
  int64_t offset = -1, subboxes = 0;
  for_each_subbox(d, lo, hi,
                  [&](int64_t at, int64_t, const int64_t *, int64_t loops) {
                    ++subboxes;
                    offset = loops == 0 ? at : -1;
                  });
  return subboxes == 1 ? offset : -1;
}

/* Cuts one message, front to back, into parts: staged() for bytes that
 * travel packed in the staging area (consecutive ones join), own() for a
 * segment that is a part of its own (at `direct` in a tensor, or at its
 * place in the staging area when `direct` is null). */
class PartCutter {
public:
  PartCutter(uint8_t *staging, int64_t max_part, std::vector<Part> &out)
      : staging(staging), maxPart(max_part), out(out), at(0), from(-1) {}

  void staged(int64_t bytes) {
    if (from < 0)
      from = at;
    at += bytes;
  }
  void own(uint8_t *direct, int64_t bytes) {
    flush();
    emit(direct ? direct : staging + at, bytes);
    at += bytes;
  }
  /* Ends the message. */
  void flush() {
    if (from >= 0)
      emit(staging + from, at - from);
    from = -1;
  }

private:
  void emit(uint8_t *base, int64_t bytes) {
    for (int64_t k = 0; k < bytes; k += maxPart) {
      Part part = {base + k, bytes - k < maxPart ? bytes - k : maxPart};
      out.push_back(part);
    }
  }

  uint8_t *staging;
  int64_t maxPart;
  std::vector<Part> &out;
  int64_t at;   /* bytes of the message so far */
  int64_t from; /* where the pending staged bytes start, or -1 */
};

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_PARTS_H */
