//===- PlanRows.cpp - Route and stream rows to and from integers ----------===//
#include "reshard/Layout/PlanRows.h"

using namespace reshard;

std::vector<RouteRow> RouteRow::fromRows(llvm::ArrayRef<int64_t> rows) {
  std::vector<RouteRow> out;
  for (size_t i = 0; i + kWidth <= rows.size(); i += kWidth)
    out.push_back({rows[i], static_cast<RouteKind>(rows[i + 1]), rows[i + 2],
                   rows[i + 3], rows[i + 4], rows[i + 5]});
  return out;
}

std::vector<int64_t> RouteRow::toRows(llvm::ArrayRef<RouteRow> routes) {
  std::vector<int64_t> out;
  out.reserve(routes.size() * kWidth);
  for (const RouteRow &r : routes)
    out.insert(out.end(), {r.piece, static_cast<int64_t>(r.kind), r.key,
                           r.holderBase, r.entryBase, r.feeder});
  return out;
}

std::vector<PlanStream> PlanStream::fromRows(llvm::ArrayRef<int64_t> rows) {
  std::vector<PlanStream> out;
  for (size_t i = 0; i + kWidth <= rows.size(); i += kWidth)
    out.push_back(
        {rows[i], rows[i + 1], rows[i + 2], rows[i + 3], rows[i + 4]});
  return out;
}

std::vector<int64_t> PlanStream::toRows(llvm::ArrayRef<PlanStream> streams) {
  std::vector<int64_t> out;
  out.reserve(streams.size() * kWidth);
  for (const PlanStream &s : streams)
    out.insert(out.end(), {s.sender, s.receiver, s.phase, s.start, s.quota});
  return out;
}

std::vector<PlanTransit> PlanTransit::fromRows(llvm::ArrayRef<int64_t> rows) {
  std::vector<PlanTransit> out;
  for (size_t i = 0; i + kWidth <= rows.size(); i += kWidth)
    out.push_back({rows[i], rows[i + 1], rows[i + 2]});
  return out;
}

std::vector<int64_t> PlanTransit::toRows(llvm::ArrayRef<PlanTransit> transits) {
  std::vector<int64_t> out;
  out.reserve(transits.size() * kWidth);
  for (const PlanTransit &t : transits)
    out.insert(out.end(), {t.sender, t.receiver, t.via});
  return out;
}
