// The classic refit as a plain MPI program, the baseline that reshard's
// plan is measured against: for each bucket of tensors (a bucket is one
// tensor, or consecutive tensors with the same destination ranks packed up
// to a byte budget, as NeMo RL's packed broadcast does), every distinct
// source shard is sent whole by one of the ranks that hold it to the
// bucket's root (nonblocking point to point, the root's own shards copied
// locally), the root assembles the full tensors, MPI_Bcast sends them to the
// tensors' destination ranks (and the table's extra ranks: with
// gather_table.py --broadcast-all, every inference rank), and each
// destination rank copies its own shard out of the full tensor.
//
//   mpirun -n N ./gather_bcast TABLE --src DIR --dst DIR [--reps R]
//
// TABLE comes from bench/measured/gather_table.py (the layout JSON's
// geometry: nested torch.chunk per dim and blocks, docs/Layout.md); shards are
// files DIR/rank<R>.<tensor>.bin as reshard-run writes and verifies them,
// read and written outside the timed region. Rank 0 also prints the bytes
// delivered between ranks (gather bytes from other ranks plus bucket bytes
// times the number of other ranks in each broadcast).
#include "timing.h"

#include <cstdlib>
#include <fstream>
#include <map>

namespace {

// A rank's shard of one tensor: per dim, its segments (global start,
// length) in local order; the local buffer is dense row-major over the
// summed lengths.
struct Shard {
  int rank = -1;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> segs;
  int64_t elements() const {
    int64_t n = 1;
    for (auto &d : segs) {
      int64_t s = 0;
      for (auto &g : d)
        s += g.second;
      n *= s;
    }
    return n;
  }
};

struct Tensor {
  std::string name;
  int64_t elem = 0;
  std::vector<int64_t> shape;
  std::vector<Shard> src; // one holder per distinct source shard
  std::vector<Shard> dst; // every destination rank
  int64_t bytes() const {
    int64_t n = elem;
    for (int64_t s : shape)
      n *= s;
    return n;
  }
};

struct Bucket {
  int root = 0;
  std::vector<int> tensors;
  std::vector<int> extra;      // ranks that receive the broadcast and drop it
  std::vector<int64_t> offset; // of each tensor in the bucket buffer
  int64_t bytes = 0;
  MPI_Comm comm = MPI_COMM_NULL; // root + destination ranks
  int comm_root = 0;
};

bool read_table(const char *path, std::vector<Tensor> &ts,
                std::vector<Bucket> &bs, int &ranks) {
  std::ifstream in(path);
  std::string word;
  int version = 0;
  if (!(in >> word >> version) || word != "reshard-gather-bcast-table" ||
      version != 1)
    return false;
  auto read_shard = [&](Shard &s, size_t ndim) {
    in >> s.rank;
    s.segs.resize(ndim);
    for (auto &d : s.segs) {
      int k = 0;
      in >> k;
      d.resize(k);
      for (auto &g : d)
        in >> g.first >> g.second;
    }
  };
  int nt = 0, nb = 0;
  in >> word >> ranks >> word >> nt;
  ts.resize(nt);
  for (Tensor &t : ts) {
    int ndim = 0, k = 0;
    in >> word >> t.name >> t.elem >> ndim;
    t.shape.resize(ndim);
    for (auto &s : t.shape)
      in >> s;
    in >> word >> k;
    t.src.resize(k);
    for (auto &s : t.src)
      read_shard(s, ndim);
    in >> word >> k;
    t.dst.resize(k);
    for (auto &s : t.dst)
      read_shard(s, ndim);
  }
  in >> word >> nb;
  bs.resize(nb);
  for (Bucket &b : bs) {
    int k = 0;
    in >> word >> b.root >> k;
    b.tensors.resize(k);
    for (int &t : b.tensors)
      in >> t;
    in >> word >> k;
    b.extra.resize(k);
    for (int &r : b.extra)
      in >> r;
  }
  return static_cast<bool>(in);
}

// Copies every box of `s` between its local buffer and the full tensor
// (row-major `shape`); to_full picks the direction. Inner dims a box covers
// whole in both buffers merge into one memcpy.
void copy_shard(const Tensor &t, const Shard &s, uint8_t *local, uint8_t *full,
                bool to_full) {
  size_t nd = t.shape.size();
  std::vector<int64_t> lext(nd), lstride(nd), gstride(nd);
  for (size_t d = 0; d < nd; ++d)
    for (auto &g : s.segs[d])
      lext[d] += g.second;
  int64_t ls = t.elem, gs = t.elem;
  for (size_t d = nd; d-- > 0;) {
    lstride[d] = ls;
    gstride[d] = gs;
    ls *= lext[d];
    gs *= t.shape[d];
  }
  if (ls == 0)
    return;
  // Every combination of one segment per dim is one box.
  std::vector<size_t> pick(nd, 0);
  while (true) {
    std::vector<int64_t> lo(nd), go(nd), len(nd);
    for (size_t d = 0; d < nd; ++d) {
      int64_t before = 0;
      for (size_t i = 0; i < pick[d]; ++i)
        before += s.segs[d][i].second;
      lo[d] = before;
      go[d] = s.segs[d][pick[d]].first;
      len[d] = s.segs[d][pick[d]].second;
    }
    // Contiguous run: trailing dims covered whole in both buffers.
    int64_t run = t.elem;
    size_t inner = nd;
    while (inner > 0 && len[inner - 1] == lext[inner - 1] &&
           len[inner - 1] == t.shape[inner - 1]) {
      run *= len[inner - 1];
      --inner;
    }
    if (inner > 0) {
      run *= len[inner - 1];
      --inner;
    }
    // Loop over the outer dims [0, inner).
    std::vector<int64_t> idx(inner, 0);
    bool empty = run == 0;
    for (size_t d = 0; d < inner; ++d)
      empty |= len[d] == 0;
    while (!empty) {
      int64_t loff = 0, goff = 0;
      for (size_t d = 0; d < nd; ++d) {
        int64_t i = d < inner ? idx[d] : 0;
        loff += (lo[d] + i) * lstride[d];
        goff += (go[d] + i) * gstride[d];
      }
      if (to_full)
        std::memcpy(full + goff, local + loff, run);
      else
        std::memcpy(local + loff, full + goff, run);
      size_t d = inner;
      while (d > 0 && ++idx[d - 1] == len[d - 1])
        idx[--d] = 0;
      if (d == 0)
        break;
    }
    size_t d = nd;
    while (d > 0 && ++pick[d - 1] == s.segs[d - 1].size())
      pick[--d] = 0;
    if (d == 0)
      break;
  }
}

const int64_t kMaxChunk = int64_t(1) << 30; // MPI counts are ints

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *table = argc > 1 ? argv[1] : "";
  bench::Options opts;
  int bad = !bench::parse_options(argc, argv, 2, opts);
  if (bad && me == 0)
    std::fprintf(stderr,
                 "usage: gather_bcast TABLE --src DIR --dst DIR [--reps R]\n");
  const std::string &src_dir = opts.src_dir, &dst_dir = opts.dst_dir;
  const int reps = opts.reps;
  std::vector<Tensor> ts;
  std::vector<Bucket> bs;
  int ranks = 0;
  if (!bad && !read_table(table, ts, bs, ranks)) {
    std::fprintf(stderr, "gather_bcast: cannot read table %s\n", table);
    bad = 1;
  }
  if (!bad && ranks > size) {
    std::fprintf(stderr, "gather_bcast: the layout needs %d ranks\n", ranks);
    bad = 1;
  }
  // This rank's source shards (as selected holder) and destination shards.
  std::vector<std::vector<uint8_t>> src(ts.size()), dst(ts.size());
  std::vector<const Shard *> my_dst(ts.size(), nullptr);
  for (size_t t = 0; !bad && t < ts.size(); ++t) {
    for (const Shard &s : ts[t].src)
      if (s.rank == me) {
        std::string path = reshard::engine::shard_path(src_dir.c_str(), me,
                                                       ts[t].name.c_str());
        char msg[512];
        if (!reshard::engine::read_exact(
                path, src[t], s.elements() * ts[t].elem, msg, sizeof(msg))) {
          std::fprintf(stderr, "gather_bcast: rank %d: cannot read %s\n", me,
                       path.c_str());
          bad = 1;
        }
      }
    for (const Shard &s : ts[t].dst)
      if (s.rank == me) {
        my_dst[t] = &s;
        dst[t].assign(s.elements() * ts[t].elem, 0);
      }
  }
  int any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any_bad) {
    MPI_Finalize();
    return 1;
  }
  // Setup, untimed: bucket offsets, one communicator per distinct set of
  // root + destination ranks (created collectively, in bucket order).
  MPI_Group world_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  std::map<std::vector<int>, MPI_Comm> comms;
  int64_t max_bucket = 0, delivered = 0;
  for (Bucket &b : bs) {
    std::vector<int> members(1, b.root);
    for (int r : b.extra)
      if (std::find(members.begin(), members.end(), r) == members.end())
        members.push_back(r);
    for (int t : b.tensors) {
      b.offset.push_back(b.bytes);
      b.bytes += ts[t].bytes();
      for (const Shard &s : ts[t].dst)
        if (std::find(members.begin(), members.end(), s.rank) == members.end())
          members.push_back(s.rank);
      for (const Shard &s : ts[t].src)
        if (s.rank != b.root)
          delivered += s.elements() * ts[t].elem;
    }
    max_bucket = std::max(max_bucket, b.bytes);
    std::sort(members.begin(), members.end());
    if (members.size() > 1) {
      delivered += b.bytes * static_cast<int64_t>(members.size() - 1);
      auto it = comms.find(members);
      if (it == comms.end()) {
        MPI_Comm c = MPI_COMM_NULL;
        if (static_cast<int>(members.size()) == size)
          MPI_Comm_dup(MPI_COMM_WORLD, &c);
        else {
          MPI_Group g;
          MPI_Group_incl(world_group, static_cast<int>(members.size()),
                         members.data(), &g);
          MPI_Comm_create(MPI_COMM_WORLD, g, &c);
          MPI_Group_free(&g);
        }
        it = comms.emplace(members, c).first;
      }
      b.comm = it->second;
      b.comm_root = static_cast<int>(
          std::lower_bound(members.begin(), members.end(), b.root) -
          members.begin());
    }
  }
  std::vector<uint8_t> full(max_bucket), staging(max_bucket);
  std::vector<MPI_Request> reqs;
  struct Staged {
    size_t index; // in the bucket
    const Shard *shard;
    int64_t at;
  };
  std::vector<Staged> staged;

  auto refit = [&]() -> int {
    for (const Bucket &b : bs) {
      bool root = me == b.root;
      // Gather to the root.
      reqs.clear();
      staged.clear();
      int64_t at = 0;
      for (size_t i = 0; i < b.tensors.size(); ++i) {
        int t = b.tensors[i];
        int tag = static_cast<int>(i % 32768);
        for (const Shard &s : ts[t].src) {
          int64_t n = s.elements() * ts[t].elem;
          if (n == 0)
            continue;
          if (root && s.rank == me) {
            copy_shard(ts[t], s, src[t].data(), full.data() + b.offset[i],
                       true);
          } else if (root) {
            staged.push_back({i, &s, at});
            for (int64_t o = 0; o < n; o += kMaxChunk) {
              reqs.push_back(MPI_REQUEST_NULL);
              MPI_Irecv(staging.data() + at + o,
                        static_cast<int>(std::min(kMaxChunk, n - o)), MPI_BYTE,
                        s.rank, tag, MPI_COMM_WORLD, &reqs.back());
            }
            at += n;
          } else if (s.rank == me) {
            for (int64_t o = 0; o < n; o += kMaxChunk) {
              reqs.push_back(MPI_REQUEST_NULL);
              MPI_Isend(src[t].data() + o,
                        static_cast<int>(std::min(kMaxChunk, n - o)), MPI_BYTE,
                        b.root, tag, MPI_COMM_WORLD, &reqs.back());
            }
          }
        }
      }
      if (!reqs.empty() &&
          MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(),
                      MPI_STATUSES_IGNORE) != MPI_SUCCESS)
        return 5;
      if (root) {
        for (const Staged &st : staged)
          copy_shard(ts[b.tensors[st.index]], *st.shard, staging.data() + st.at,
                     full.data() + b.offset[st.index], true);
      }
      // Broadcast the full tensors to the destination ranks.
      if (b.comm != MPI_COMM_NULL)
        for (int64_t o = 0; o < b.bytes; o += kMaxChunk)
          if (MPI_Bcast(full.data() + o,
                        static_cast<int>(std::min(kMaxChunk, b.bytes - o)),
                        MPI_BYTE, b.comm_root, b.comm) != MPI_SUCCESS)
            return 5;
      // Each destination rank keeps its own shard.
      for (size_t i = 0; i < b.tensors.size(); ++i) {
        int t = b.tensors[i];
        if (my_dst[t])
          copy_shard(ts[t], *my_dst[t], dst[t].data(),
                     full.data() + b.offset[i], false);
      }
    }
    return 0;
  };

  if (me == 0) {
    int64_t total = 0;
    for (const Tensor &t : ts)
      total += t.bytes();
    std::printf("gather-bcast: %zu tensors, %zu buckets, %lld bytes of full "
                "tensors, %lld bytes delivered between ranks\n",
                ts.size(), bs.size(), static_cast<long long>(total),
                static_cast<long long>(delivered));
  }
  int rc = bench::time_reps(
      "gather-bcast", reps,
      [&] {
        for (auto &d : dst)
          std::memset(d.data(), 0, d.size());
      },
      refit);
  if (rc) {
    MPI_Finalize();
    return 10 + rc;
  }
  int wbad = 0;
  for (size_t t = 0; t < ts.size(); ++t)
    if (my_dst[t] && !reshard::engine::write_all(
                         reshard::engine::shard_path(dst_dir.c_str(), me,
                                                     ts[t].name.c_str()),
                         dst[t]))
      wbad = 1;
  MPI_Finalize();
  return wbad;
}
