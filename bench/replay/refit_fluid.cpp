// refit_fluid: replays a refit plan's flow list with the semantics, platform
// and output of bench/simgrid/refit_sim.cpp, on its own event-driven
// max-min solver instead of SimGrid's. Same command line and JSON line
// (plus "simulator" and "events"):
//
//   refit_fluid --topology GPN,DOMAIN,NIC_GBPS,NVL_GBPS,NIC_LAT_US,NVL_LAT_US
//               [--name NAME] [--copies ignore|nvlink] [--receives-ahead]
//               [--barrier] [--quantum SECONDS] FILE
//
// Why a second replay: SimGrid 3.32's full solve walks every flow in flight
// at each completion, and NeMo RL's DeepSeek-V3 plan keeps up to 66,000
// messages in flight a step (3.5 M in all): three of its 105 steps took
// 7.6 minutes, the whole plan hours. The model replayed here is SimGrid's as
// refit_sim configures it (CM02, latency and bandwidth factors 1, no TCP
// bound), so the two agree wherever both finish (bench/Simulation.md has
// the comparison); this one is only faster:
//   * every route is two links: the sender's NIC up and the receiver's NIC
//     down across domains, the sender's NVLink up and the receiver's NVLink
//     down within one (the fabric and NVSwitch are non-blocking). A message
//     of b bytes starts once both its sender and its receiver have posted it
//     (rendezvous), spends the route's latency (NIC_LAT_US or NVL_LAT_US)
//     without using bandwidth, then shares its two links max-min fairly with
//     every other flow until its bytes are through;
//   * max-min rates by progressive filling with a heap of links keyed on
//     their fair share: O(F log L) for F flows on L links;
//   * the rank semantics of refit_sim: local copies first (a sleep of copy
//     bytes / NVLink bandwidth with --copies nvlink), then the steps in
//     order, all of a step's sends and receives posted together, the next
//     step once they all completed; --receives-ahead posts step s + 1's
//     receives with step s; --barrier makes every rank finish step s before
//     any starts s + 1;
//   * --quantum q (default 0: exact) takes each completion at the next
//     multiple of q: flows ending within q of each other end in one event.
//     A plan whose flows all end at different instants (relay trees spread
//     over every replica: 130,000 completions a step for Kimi-K2) replays
//     up to step time / q events a step instead; each flow ends up to q
//     late, and bench/Simulation.md gives the difference to the exact
//     replay where both run.
#include "flow_list.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <queue>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace replay;

constexpr const char *kTool = "refit_fluid";
// A flow whose remaining bytes take under this long at its rate is done: the
// rounding of remaining -= rate * dt must not make events of its own.
constexpr double kDoneWithinSeconds = 1e-12;
constexpr double kNever = std::numeric_limits<double>::infinity();

struct Message {
  long sender = -1, receiver = -1;
  int senderStep = -1, receiverStep = -1; // positions in the rank's steps
  int64_t bytes = 0;
  bool sendPosted = false, recvPosted = false;
};

/// The flows in their bandwidth phase, each on two links, and their
/// max-min fair rates. Stored by position as arrays (the passes over every
/// flow at each event stream through memory); a link keeps the positions of
/// its flows. Links are numbered 4 r + {0 NIC up, 1 NIC down, 2 NVLink up,
/// 3 NVLink down}: even links are up links.
class FlowSet {
public:
  explicit FlowSet(std::vector<double> linkCapacity)
      : capacity(std::move(linkCapacity)), onLink(capacity.size()),
        residual(capacity.size()), unfrozen(capacity.size()) {}

  size_t size() const { return msg.size(); }

  void add(long message, int upLink, int downLink, double bytes) {
    int i = msg.size();
    msg.push_back(message);
    up.push_back(upLink);
    down.push_back(downLink);
    remaining.push_back(bytes);
    rate.push_back(0);
    posUp.push_back(onLink[upLink].size());
    onLink[upLink].push_back(i);
    posDown.push_back(onLink[downLink].size());
    onLink[downLink].push_back(i);
    frozen.push_back(0);
  }

  /// Seconds until the first flow is through at the current rates.
  double nextCompletion() const {
    double best = kNever;
    for (size_t i = 0; i < rate.size(); ++i)
      if (rate[i] > 0)
        best = std::min(best, remaining[i] / rate[i]);
    return best;
  }

  /// Moves time on by `dt` and removes the flows then through (those with
  /// under kDoneWithinSeconds left), appending their messages to `done`.
  void advance(double dt, std::vector<long> &done) {
    for (size_t i = rate.size(); i-- > 0;) {
      remaining[i] -= rate[i] * dt;
      if (remaining[i] <= rate[i] * kDoneWithinSeconds) {
        done.push_back(msg[i]);
        removeAt(i);
      }
    }
  }

  /// Max-min fair rates by progressive filling: the link with the smallest
  /// fair share (residual capacity / flows not yet fixed) fixes its flows at
  /// that share, which leaves the other link of each with less. A fixed
  /// flow only raises its other link's share, so the heap keeps one key per
  /// link, a lower bound, refreshed when it comes to the top.
  void solve() {
    if (++epoch == 0) {
      std::fill(frozen.begin(), frozen.end(), 0);
      epoch = 1;
    }
    heap.clear();
    for (size_t l = 0; l < onLink.size(); ++l) {
      if (onLink[l].empty())
        continue;
      residual[l] = capacity[l];
      unfrozen[l] = onLink[l].size();
      heap.emplace_back(residual[l] / unfrozen[l], l);
    }
    auto later = [](const std::pair<double, int> &a,
                    const std::pair<double, int> &b) { return a > b; };
    std::make_heap(heap.begin(), heap.end(), later);
    double level = 0;
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), later);
      auto [key, l] = heap.back();
      heap.pop_back();
      if (unfrozen[l] == 0)
        continue;
      double share = residual[l] / unfrozen[l];
      if (share > key) { // raised since pushed: back with its true share
        heap.emplace_back(share, l);
        std::push_heap(heap.begin(), heap.end(), later);
        continue;
      }
      level = std::max(level, share);
      for (int i : onLink[l]) {
        if (frozen[i] == epoch)
          continue;
        frozen[i] = epoch;
        rate[i] = level;
        int other = up[i] == l ? down[i] : up[i];
        residual[other] -= level;
        --unfrozen[other];
      }
      unfrozen[l] = 0;
    }
  }

private:
  /// Moves the last flow into position i, keeping the links' lists right.
  void removeAt(size_t i) {
    unlink(up[i], posUp[i]);
    unlink(down[i], posDown[i]);
    size_t last = msg.size() - 1;
    if (i != last) {
      msg[i] = msg[last];
      up[i] = up[last];
      down[i] = down[last];
      remaining[i] = remaining[last];
      rate[i] = rate[last];
      posUp[i] = posUp[last];
      posDown[i] = posDown[last];
      frozen[i] = frozen[last];
      onLink[up[i]][posUp[i]] = i;
      onLink[down[i]][posDown[i]] = i;
    }
    for (auto *v : {&up, &down, &posUp, &posDown})
      v->pop_back();
    msg.pop_back();
    remaining.pop_back();
    rate.pop_back();
    frozen.pop_back();
  }

  /// Swap-removes entry `pos` of link l's list; the flow moved into it
  /// has l as its up link or its down link, by l's parity.
  void unlink(int l, int pos) {
    std::vector<int> &list = onLink[l];
    int moved = list.back();
    list[pos] = moved;
    list.pop_back();
    if (pos < static_cast<int>(list.size()))
      (l % 2 == 0 ? posUp : posDown)[moved] = pos;
  }

  std::vector<long> msg;
  std::vector<int> up, down, posUp, posDown;
  std::vector<double> remaining, rate;
  std::vector<double> capacity;
  std::vector<std::vector<int>> onLink;
  // solve()'s scratch
  std::vector<double> residual;
  std::vector<long> unfrozen;
  std::vector<uint32_t> frozen;
  uint32_t epoch = 0;
  std::vector<std::pair<double, int>> heap;
};

struct RankState {
  const RankProgram *prog = nullptr;
  size_t cur = 0;               // the step being run
  std::vector<int> outstanding; // per step: messages not yet through
  long barrierWaits = 0;        // barrier rounds still to wait
  bool started = false, finished = false;
};

enum class TimerKind { LatencyEnd, CopiesDone };
struct Timer {
  double at;
  TimerKind kind;
  long id; // message or rank
  bool operator>(const Timer &o) const { return at > o.at; }
};

class Replay {
public:
  Replay(const Options &opts, const std::map<long, RankProgram> &programs,
         const Totals &totals)
      : o(opts), totals(totals), flows(linkCapacities(opts.topo, totals)) {
    messages.resize(totals.messages);
    ranks.resize(totals.numRanks);
    for (auto &[r, prog] : programs) {
      RankState &rs = ranks[r];
      rs.prog = &prog;
      rs.outstanding.resize(prog.steps.size());
      for (size_t i = 0; i < prog.steps.size(); ++i) {
        const Step &s = prog.steps[i];
        rs.outstanding[i] = s.sends.size() + s.recvs.size();
        for (const Msg &m : s.sends) {
          messages[m.id].sender = r;
          messages[m.id].senderStep = i;
          messages[m.id].bytes = m.bytes;
        }
        for (const Msg &m : s.recvs) {
          messages[m.id].receiver = r;
          messages[m.id].receiverStep = i;
        }
      }
      bool copies = o.copies == "nvlink" && prog.copyBytes;
      if (prog.steps.empty() && !copies)
        continue;
      ++actors;
      rs.started = true;
      if (copies)
        timers.push(
            {static_cast<double>(prog.copyBytes) / (o.topo.nvlGBps * 1e9),
             TimerKind::CopiesDone, r});
      else
        starting.push_back(r);
    }
  }

  static std::vector<double> linkCapacities(const Topology &t,
                                            const Totals &totals) {
    std::vector<double> c;
    for (long r = 0; r < totals.numRanks; ++r)
      for (double gbps : {t.nicGBps, t.nicGBps, t.nvlGBps, t.nvlGBps})
        c.push_back(gbps * 1e9);
    return c;
  }

  double run() {
    for (long r : starting)
      actorStart(r);
    for (;;) {
      drainReady();
      if (dirty) {
        flows.solve();
        dirty = false;
      }
      double next = std::min(timers.empty() ? kNever : timers.top().at,
                             onGrid(now + flows.nextCompletion()));
      if (next == kNever)
        break;
      flows.advance(next - now, done);
      now = next;
      ++events;
      while (!timers.empty() && timers.top().at <= now) {
        Timer t = timers.top();
        timers.pop();
        if (t.kind == TimerKind::LatencyEnd)
          startBandwidthPhase(t.id);
        else
          actorStart(t.id);
      }
      dirty |= !done.empty();
      for (long id : done)
        messageDone(id);
      done.clear();
    }
    for (long r = 0; r < static_cast<long>(ranks.size()); ++r)
      if (ranks[r].started && !ranks[r].finished)
        die(kTool, "rank " + std::to_string(r) + " never finished step " +
                       std::to_string(stepIndex(r)) +
                       " (a message it waits for never came)");
    return now;
  }

  long eventCount() const { return events; }

private:
  /// With --quantum q, a completion at t is taken at the next multiple of
  /// q after the current time: flows that would end within one quantum of
  /// each other end together (one re-solve), each up to q late with its
  /// links idle meanwhile. Timers (latencies, copies) stay exact.
  double onGrid(double t) const {
    if (!(o.quantum > 0) || t == kNever)
      return t;
    double g = std::ceil(t / o.quantum) * o.quantum;
    return g > now ? g : now + o.quantum;
  }

  long nicUp(long r) const { return 4 * r; }
  long nicDown(long r) const { return 4 * r + 1; }
  long nvlUp(long r) const { return 4 * r + 2; }
  long nvlDown(long r) const { return 4 * r + 3; }

  long stepIndex(long r) const {
    const RankState &rs = ranks[r];
    return rs.cur < rs.prog->steps.size() ? rs.prog->steps[rs.cur].index
                                          : totals.maxStep + 1;
  }

  // --- ranks -------------------------------------------------------------

  /// An actor begins (at 0 s, or once its local copies are done): with
  /// --barrier, the rounds of the step indices before its first step.
  void actorStart(long r) {
    const RankState &rs = ranks[r];
    long first =
        rs.prog->steps.empty() ? totals.maxStep + 1 : rs.prog->steps[0].index;
    if (o.barrier && first > 0)
      waitBarrier(r, first);
    else
      ready.push_back(r);
  }

  /// Runs every rank that may go on at `now` until it waits for messages,
  /// a timer or the barrier.
  void drainReady() {
    while (!ready.empty()) {
      long r = ready.back();
      ready.pop_back();
      RankState &rs = ranks[r];
      if (rs.cur >= rs.prog->steps.size())
        rs.finished = true;
      else
        beginStep(r);
    }
  }

  /// Posts the step's messages (and, with receives ahead, the next step's
  /// receives); goes on at once where they are all through already.
  void beginStep(long r) {
    RankState &rs = ranks[r];
    const Step &s = rs.prog->steps[rs.cur];
    if (!o.receivesAhead || rs.cur == 0)
      for (const Msg &m : s.recvs)
        postReceive(m.id);
    for (const Msg &m : s.sends)
      postSend(m.id);
    if (o.receivesAhead && rs.cur + 1 < rs.prog->steps.size())
      for (const Msg &m : rs.prog->steps[rs.cur + 1].recvs)
        postReceive(m.id);
    if (rs.outstanding[rs.cur] == 0)
      stepDone(r);
  }

  /// The rank's current step is through: with --barrier, one round per
  /// step index up to the next step's; then the next step.
  void stepDone(long r) {
    RankState &rs = ranks[r];
    long index = rs.prog->steps[rs.cur].index;
    ++rs.cur;
    long next = stepIndex(r);
    if (o.barrier && next > index)
      waitBarrier(r, next - index);
    else
      ready.push_back(r);
  }

  /// The barrier: a round ends when every actor has arrived; an actor with
  /// rounds left arrives again at once.
  void waitBarrier(long r, long rounds) {
    ranks[r].barrierWaits = rounds;
    atBarrier.push_back(r);
    while (actors > 0 && static_cast<long>(atBarrier.size()) == actors) {
      std::vector<long> waiting;
      waiting.swap(atBarrier);
      for (long w : waiting) {
        if (--ranks[w].barrierWaits > 0)
          atBarrier.push_back(w);
        else
          ready.push_back(w);
      }
    }
  }

  // --- messages ----------------------------------------------------------

  void postSend(long id) {
    messages[id].sendPosted = true;
    if (messages[id].recvPosted)
      startMessage(id);
  }
  void postReceive(long id) {
    messages[id].recvPosted = true;
    if (messages[id].sendPosted)
      startMessage(id);
  }

  /// Both sides posted: the route's latency, then the bandwidth phase.
  void startMessage(long id) {
    const Message &m = messages[id];
    double latency =
        (o.topo.sameDomain(m.sender, m.receiver) ? o.topo.nvlLatUs
                                                 : o.topo.nicLatUs) *
        1e-6;
    if (latency > 0)
      timers.push({now + latency, TimerKind::LatencyEnd, id});
    else
      startBandwidthPhase(id);
  }

  void startBandwidthPhase(long id) {
    const Message &m = messages[id];
    if (m.bytes == 0) {
      messageDone(id);
      return;
    }
    bool local = o.topo.sameDomain(m.sender, m.receiver);
    flows.add(id, local ? nvlUp(m.sender) : nicUp(m.sender),
              local ? nvlDown(m.receiver) : nicDown(m.receiver),
              static_cast<double>(m.bytes));
    dirty = true;
  }

  void messageDone(long id) {
    const Message &m = messages[id];
    for (auto [r, step] : {std::pair<long, int>{m.sender, m.senderStep},
                           std::pair<long, int>{m.receiver, m.receiverStep}}) {
      RankState &rs = ranks[r];
      if (--rs.outstanding[step] == 0 && static_cast<size_t>(step) == rs.cur)
        stepDone(r);
    }
  }

  const Options &o;
  const Totals &totals;
  std::vector<Message> messages;
  std::vector<RankState> ranks;
  FlowSet flows;
  std::vector<long> ready, starting, atBarrier, done;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> timers;
  long actors = 0, events = 0;
  double now = 0;
  bool dirty = false;
};

} // namespace

int main(int argc, char **argv) {
  Options opts = parseOptions(kTool, argc, argv, Simulator::Fluid);
  std::map<long, RankProgram> programs = readPrograms(kTool, opts.path);
  Totals totals = totalsOf(programs, opts.topo);
  Replay replay(opts, programs, totals);
  double seconds = replay.run();
  printResult(opts, totals, seconds,
              ", \"simulator\": \"fluid\", \"events\": " +
                  std::to_string(replay.eventCount()));
  return 0;
}
