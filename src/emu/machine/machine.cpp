// The machine model's event loop (docs/machine-model.md). Events are processed in (cycle, creation order), so a run
// is deterministic. Shared units are servers that take requests in arrival order: each SIMD's issue port, the ray
// accelerator, the LDS and each memory level's port keep the cycle at which they are next free. Waves run either
// the ray-tracing kernel (phases and the traversal loop over recorded node fetches) or a wave program (program.h);
// both use the same event queue, issue ports, memory hierarchy, return order, LDS and VGPR allocation.
#include "hwbvh/core/json_text.h"
#include "hwbvh/emu/machine/machine.h"

#include <algorithm>
#include <array>
#include <bit>
#include <deque>
#include <limits>
#include <optional>
#include <queue>
#include <string>

#include <nlohmann/json.hpp>

#include "emu/machine/memory.h"
#include "emu/wave_loop.h"
#include "hwbvh/core/error.h"
#include "hwbvh/emu/machine/program.h"
#include "hwbvh/emu/machine/vgpr.h"
#include "hwbvh/emu/wavefront.h"

namespace hwbvh::emu {
namespace {

// A wave program's wait counters: split (RDNA 4) loadcnt, samplecnt, dscnt, kmcnt; combined (RDNA 3) vmcnt (loads,
// samples), lgkmcnt (LDS, scalar loads).
constexpr size_t kCounters = 4;
size_t counter_of(RequestKind kind, WaitCounters counters) {
  if (counters == WaitCounters::Split) return static_cast<size_t>(kind);
  return kind == RequestKind::Lds || kind == RequestKind::Scalar ? 1 : 0;
}

enum class EventKind : uint8_t {
  Resume,      // the wave's current operation is over: continue its program
  RaArrival,   // node data of some lanes of one intersect instruction reaches the ray accelerator
  BvhReturn,   // an intersect instruction's results are back in the wave's VGPRs (bvhcnt decrements)
  CounterReturn,  // a wave program's request is back: its counter (Event::instr) decrements
};

struct Event {
  uint64_t time = 0;
  uint64_t seq = 0;
  EventKind kind = EventKind::Resume;
  bool spin = false;   // part of a blocked wave's busy-wait: not progress
  uint32_t wave = 0;
  uint64_t instr = 0;  // RaArrival: the wave's instruction number; CounterReturn: the counter
  uint32_t ra_cycles = 0;       // RaArrival: the batch's cycles in the ray accelerator
  uint32_t box_tests = 0;       // RaArrival: boxes the batch tests
  uint32_t triangle_tests = 0;  // RaArrival: triangles it tests
};

struct Later {
  bool operator()(const Event& a, const Event& b) const {
    return a.time != b.time ? a.time > b.time : a.seq > b.seq;
  }
};

// Where a wave is in its program; advance() runs stages until the wave has to wait for an event.
enum class Stage {
  PhaseStart,       // allocate for the phase (dynamic mode) or go straight to its body
  AllocIssue,       // issue S_ALLOC_VGPR
  AllocAttempt,     // it executes: success, or failure and a retry later
  PhaseBody,        // the phase's barrier, if any
  PhaseRun,         // the traversal loop or the ALU work
  Alu,              // issuing alu_left instructions in bursts, then after_alu
  PhaseWait,        // the phase's latency
  PhaseEnd,
  LoopStart,        // one traversal-loop iteration: which ray slots still have active lanes
  IssueIntersect,   // one IMAGE_BVH8_INTERSECT_RAY per active ray slot, within the bvhcnt limit
  IntersectIssued,
  WaitBvh,          // s_wait_bvhcnt wait_target, then after_wait
  StackIssue,       // one DS_BVH_STACK op per active ray slot
  StackEnter,
  LoopAlu,
  LoopNext,
  Program,          // a wave program: run_program() executes it
  Done,
};

struct Instruction {
  uint32_t batches_left = 0;  // RaArrival batches not yet tested
  uint32_t lanes = 0;         // active lanes: results to write back
  uint64_t finish = 0;        // cycle its last tested batch leaves the ray accelerator
  bool return_scheduled = false;
};

struct Wave {
  uint32_t first_group = 0;  // first recorded wave ("group") of rays of this machine wave
  uint32_t groups = 0;       // ray slots per lane (rays_per_lane, fewer for the last wave)
  uint32_t rays = 0;
  uint32_t workgroup = 0;
  uint32_t cu = 0;    // index among the simulated CUs
  uint32_t simd = 0;  // within its CU
  uint32_t slot = 0;  // dynamic mode: slot in its SIMD's register file
  Stage stage = Stage::PhaseStart;
  size_t phase = 0;
  uint32_t alu_left = 0;
  Stage after_alu = Stage::Done;
  // Traversal loop.
  uint32_t iteration = 0;
  std::vector<uint32_t> active;  // groups with an active lane this iteration
  size_t issue_next = 0;
  std::deque<Instruction> outstanding;  // issued intersects not yet returned, oldest first
  uint64_t returned = 0;                // intersects returned so far (the number of outstanding.front())
  uint64_t last_return = 0;             // BVH results return in order within a wave (ISA)
  size_t wait_target = 0;
  Stage after_wait = Stage::Done;
  bool waiting_bvh = false;
  // Allocation and barriers.
  bool waiting_alloc = false;
  bool ever_waited = false;
  uint64_t wait_start = 0;
  uint64_t failed_version = 0;  // the register file's version at the last failed request
  bool at_barrier = false;
  // Wave programs.
  const WaveDefinition* program = nullptr;
  uint32_t copy = 0;
  size_t pc = 0;
  bool issued = false;  // the instruction at pc has been issued: its effect comes next
  std::vector<uint32_t> loops;
  std::vector<uint64_t> stream_next;   // per stream: the next load's offset (stride) or slot (chase)
  std::vector<uint64_t> stream_ready;  // per stream: the cycle its latest load's data are back
  std::vector<uint32_t> flag_seen;     // per LDS flag: the value the wave's latest read saw
  std::array<uint32_t, kCounters> pending{};       // outstanding requests per counter
  std::array<uint64_t, kCounters> counter_last{};  // the latest return per counter (counters decrement in order)
  int waiting_counter = -1;  // blocked in a wait on this counter (kCounters: the program's end, on all)
  uint32_t waiting_count = 0;
  bool polling = false;  // looping on nothing but an LDS flag read
  uint32_t polled_flag = 0;
  uint64_t start_cycle = 0, end_cycle = 0;
  uint64_t instructions = 0, loads = 0, lds_ops = 0;
  std::vector<uint64_t> loads_by_level;
};

struct Simd {
  uint32_t resident = 0;
  uint64_t issue_free = 0;  // next cycle the issue port is free
  std::optional<DynamicVgprFile> file;
  uint64_t last_change = 0;  // for the time integral of resident waves
  double wave_cycles = 0.0;
};

// One compute unit: its SIMDs and the units its waves share (docs/machine-model.md, "A whole GPU").
struct ComputeUnit {
  std::vector<Simd> simds;
  std::vector<uint32_t> workgroups;  // dealt to it, in launch order
  size_t next_workgroup = 0;
  uint64_t ra_free = 0;         // next cycle the ray accelerator is free
  uint64_t ta_free = 0;         // next cycle the texture-addressing unit takes a lane
  uint64_t writeback_free = 0;  // next cycle the accelerator's write-back path is free
  uint32_t ra_queue = 0;        // intersect instructions issued and not yet written back
  std::deque<uint32_t> ra_queue_waiting;  // waves waiting for a place in the queue, in arrival order
  uint64_t lds_free = 0;
  uint64_t last_return = 0;     // RDNA 3: the latest return of the in-order vector memory queue
};

struct Workgroup {
  uint32_t first_wave = 0;
  uint32_t waves = 0;
  uint32_t live = 0;     // launched and not ended
  uint32_t arrived = 0;  // at the current barrier
  std::vector<uint32_t> waiting;
  std::vector<uint32_t> flags;  // wave programs: the workgroup's LDS flags
};

class Model {
 public:
  // The ray-tracing kernel over recorded node fetches.
  Model(const MachineConfig& config, std::span<const std::vector<NodeFetch>> sequences,
        std::span<const uint32_t> wave_begin, std::span<const uint32_t> workgroup_slot)
      : Model(config, config.gpu, wave_limit(config, config.kernel.peak_vgprs()), config.max_cycles) {
    seqs_ = sequences;
    group_begin_.assign(wave_begin.begin(), wave_begin.end());
    // Steps per ray: one fetch each, except BVH4x2 dual steps, whose rays get an index of where each step begins.
    step_begin_.resize(seqs_.size());
    for (size_t r = 0; r < seqs_.size(); ++r) {
      const std::vector<NodeFetch>& seq = seqs_[r];
      if (std::none_of(seq.begin(), seq.end(), [](const NodeFetch& f) { return f.same_step; })) continue;
      for (uint32_t i = 0; i < seq.size(); ++i)
        if (!seq[i].same_step) step_begin_[r].push_back(i);
    }
    const auto groups = static_cast<uint32_t>(group_begin_.size());
    group_iterations_.resize(groups);
    for (uint32_t g = 0; g < groups; ++g) {
      for (size_t r = group_begin_[g]; r < group_end(g); ++r) {
        group_iterations_[g] = std::max(group_iterations_[g], steps_of(r));
      }
    }
    const uint32_t per_wave = config.kernel.rays_per_lane;
    for (uint32_t g = 0; g < groups; g += per_wave) {
      Wave w;
      w.first_group = g;
      w.groups = std::min(per_wave, groups - g);
      w.rays = static_cast<uint32_t>(group_end(g + w.groups - 1) - group_begin_[g]);
      waves_.push_back(std::move(w));
    }
    form_workgroups(config.kernel.workgroup_waves, 0);
    // Workgroup i goes to dispatch slot i mod CUs unless the caller says (docs "Dispatch"); only the simulated
    // slots' workgroups run.
    for (uint32_t g = 0; g < workgroups_.size(); ++g) {
      const uint32_t slot = workgroup_slot.empty() ? g % config.gpu.compute_units() : workgroup_slot[g];
      if (const std::optional<uint32_t> cu = machine::simulated_cu_of_slot(config.gpu, slot)) deal(g, *cu);
    }
  }

  // A wave program: `workgroups` copies of its workgroup.
  Model(const MachineConfig& config, const WaveProgram& program)
      : Model(config, one_compute_unit(), program_wave_limit(config, program),
              std::min(config.max_cycles, program.max_cycles)) {
    for (uint32_t g = 0; g < program.workgroups; ++g) {
      for (const WaveDefinition& d : program.waves) {
        for (uint32_t copy = 0; copy < d.count; ++copy) {
          Wave w;
          w.program = &d;
          w.copy = copy;
          w.stage = Stage::Program;
          w.loops.resize(d.loops);
          w.stream_next.resize(d.streams.size());
          w.stream_ready.resize(d.streams.size());
          w.flag_seen.resize(program.flags.size());
          w.loads_by_level.resize(config.memory.levels.size());
          waves_.push_back(std::move(w));
        }
      }
    }
    form_workgroups(program.workgroup_waves(), program.flags.size());
    for (uint32_t g = 0; g < workgroups_.size(); ++g) deal(g, 0);
  }

  // `progress` hears the waves completed, about 256 times a run: the loop's only cost is one compare per event.
  MachineResult run(const ProgressCallback& progress = {}) {
    ProgressCounter waves(progress, "machine model", simulated_waves_);
    constexpr uint64_t kReports = 256;
    const uint64_t report_step = std::max<uint64_t>(1, simulated_waves_ / kReports);
    uint64_t next_report = waves.active() ? report_step : std::numeric_limits<uint64_t>::max();
    if (seqs_.size() > 0 && cfg_.kernel.warm_caches) warm_caches();
    for (uint32_t cu = 0; cu < cus_.size(); ++cu) launch_ready(cu);
    bool cycle_limit = false;
    while (!queue_.empty() && !deadlock_) {
      if (waves_completed_ >= next_report) {
        waves.reach(waves_completed_);
        next_report = waves_completed_ + report_step;
      }
      const Event e = queue_.top();
      if (e.time > max_cycles_) {
        cycle_limit = true;
        now_ = max_cycles_;
        break;
      }
      queue_.pop();
      now_ = e.time;
      if (!e.spin) --pending_work_;
      switch (e.kind) {
        case EventKind::Resume: advance(e.wave); break;
        case EventKind::RaArrival: ray_accelerator(e); break;
        case EventKind::BvhReturn: bvh_return(e.wave); break;
        case EventKind::CounterReturn: counter_return(e.wave, e.instr); break;
      }
    }
    // An empty queue with waves left means they all wait on one another (a barrier nobody else can reach).
    if (!cycle_limit && waves_completed_ < simulated_waves_) deadlock_ = true;
    waves.finish();
    return result(cycle_limit);
  }

  // Per wave program wave, after run().
  std::vector<WaveRunResult> wave_results() const {
    std::vector<WaveRunResult> out;
    for (const Wave& w : waves_) {
      WaveRunResult r;
      r.name = w.program->name;
      r.copy = w.copy;
      r.workgroup = w.workgroup;
      r.simd = w.simd;
      r.completed = w.stage == Stage::Done;
      r.start_cycle = w.start_cycle;
      r.end_cycle = r.completed ? w.end_cycle : now_;
      r.instructions = w.instructions;
      r.loads = w.loads;
      r.lds_ops = w.lds_ops;
      r.loads_by_level = w.loads_by_level;
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
  // A wave program runs on one CU of an otherwise idle GPU: every level it reaches is its alone.
  static GpuConfig one_compute_unit() {
    GpuConfig g;
    g.shader_engines = g.shader_arrays_per_engine = g.cus_per_shader_array = g.simulated_shader_arrays = 1;
    return g;
  }

  Model(const MachineConfig& config, const GpuConfig& gpu, uint32_t wave_limit, uint64_t max_cycles)
      : cfg_(config),
        dynamic_(config.vgpr.mode == VgprAllocation::Dynamic),
        memory_(config.memory, gpu),
        wave_limit_(wave_limit),
        max_cycles_(max_cycles) {
    cus_.resize(gpu.simulated_cus());
    for (ComputeUnit& cu : cus_) {
      cu.simds.resize(config.compute_unit.simds);
      if (dynamic_) {
        const DynamicVgprParams p{config.compute_unit.vgprs_per_lane, config.vgpr.block_vgprs, config.vgpr.max_blocks,
                                  config.vgpr.dynamic_wave_limit, config.vgpr.deadlock_avoidance};
        for (Simd& s : cu.simds) s.file.emplace(p);
      }
    }
  }

  void deal(uint32_t workgroup, uint32_t cu) {
    cus_[cu].workgroups.push_back(workgroup);
    const Workgroup& g = workgroups_[workgroup];
    simulated_waves_ += g.waves;
    for (uint32_t i = 0; i < g.waves; ++i) {
      waves_[g.first_wave + i].cu = cu;
      simulated_rays_ += waves_[g.first_wave + i].rays;
    }
  }

  // The untimed warm-up (docs "Warm caches"): the CUs take turns wave by wave, each touching every line its wave's
  // rays fetch, in step order.
  void warm_caches() {
    const uint64_t line_bytes = cfg_.memory.levels[0].line_bytes;
    for (size_t round = 0;; ++round) {
      bool any = false;
      for (uint32_t c = 0; c < cus_.size(); ++c) {
        const ComputeUnit& cu = cus_[c];
        const uint32_t per_workgroup = cfg_.kernel.workgroup_waves;
        if (round >= cu.workgroups.size() * per_workgroup) continue;
        const Workgroup& g = workgroups_[cu.workgroups[round / per_workgroup]];
        if (round % per_workgroup >= g.waves) continue;
        any = true;
        const Wave& w = waves_[g.first_wave + round % per_workgroup];
        for (uint32_t group = w.first_group; group < w.first_group + w.groups; ++group) {
          for (uint32_t step = 0; step < group_iterations_[group]; ++step) {
            for (size_t r = group_begin_[group]; r < group_end(group); ++r) {
              if (step >= steps_of(r)) continue;
              for (const NodeFetch& f : step_fetches(r, step)) {
                memory_.touch(c, f.byte_offset() / line_bytes * line_bytes, static_cast<uint32_t>(f.bytes()));
              }
            }
          }
        }
      }
      if (!any) break;
    }
    memory_.reset_counts();
  }

  // Waves per SIMD when each holds `vgprs` for its whole life (static), or the dynamic mode's wave limit.
  static uint32_t wave_limit(const MachineConfig& c, uint32_t vgprs) {
    return c.vgpr.mode == VgprAllocation::Dynamic
               ? c.vgpr.dynamic_wave_limit
               : static_waves_per_simd(vgprs, c.vgpr.static_granule, c.compute_unit.vgprs_per_lane,
                                       c.compute_unit.wave_slots);
  }

  // Every wave of a dispatch holds the same static allocation, the program's `vgprs`.
  static uint32_t program_wave_limit(const MachineConfig& c, const WaveProgram& p) {
    const uint32_t limit = wave_limit(c, p.vgprs);
    if (uint64_t{limit} * c.compute_unit.simds < p.workgroup_waves()) {
      throw_bad_input(p.name, "wave program's workgroup of " + std::to_string(p.workgroup_waves()) +
                                  " waves does not fit the compute unit of '" + c.name + "' (" +
                                  std::to_string(c.compute_unit.simds) + " SIMDs x " + std::to_string(limit) +
                                  " waves at " + std::to_string(p.vgprs) + " VGPRs)");
    }
    return limit;
  }

  void form_workgroups(uint32_t size, size_t flags) {
    const auto wave_count = static_cast<uint32_t>(waves_.size());
    for (uint32_t first = 0; first < wave_count; first += size) {
      Workgroup g;
      g.first_wave = first;
      g.waves = std::min(size, wave_count - first);
      g.flags.resize(flags);
      for (uint32_t i = 0; i < g.waves; ++i) waves_[first + i].workgroup = static_cast<uint32_t>(workgroups_.size());
      workgroups_.push_back(std::move(g));
    }
  }

  static uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

  uint32_t steps_of(size_t ray) const {
    return static_cast<uint32_t>(step_begin_[ray].empty() ? seqs_[ray].size() : step_begin_[ray].size());
  }

  // The fetches of a ray's step: one node, or a dual step's two.
  std::span<const NodeFetch> step_fetches(size_t ray, uint32_t step) const {
    const std::vector<NodeFetch>& seq = seqs_[ray];
    const std::vector<uint32_t>& begin = step_begin_[ray];
    if (begin.empty()) return {&seq[step], 1};
    const size_t end = step + 1 < begin.size() ? begin[step + 1] : seq.size();
    return {&seq[begin[step]], end - begin[step]};
  }

  // Cycles the ray accelerator spends on one node: its boxes and triangles at the preset's rates per clock, and
  // on an instance node the transform of the ray into its BLAS.
  uint32_t ra_cycles(const NodeFetch& f) const {
    const RayAcceleratorConfig& ra = cfg_.ray_accelerator;
    return ceil_div(f.box_tests, ra.box_tests_per_clock) + ceil_div(f.triangle_tests, ra.triangle_tests_per_clock) +
           (f.instance ? ra.instance_transform_clocks : 0);
  }

  // RDNA 3: vector memory data leave the CU's one return queue in request order.
  uint64_t in_order(ComputeUnit& cu, uint64_t ready) const {
    if (!cfg_.memory.in_order_returns) return ready;
    cu.last_return = std::max(ready, cu.last_return);
    return cu.last_return;
  }

  Simd& simd_of(const Wave& w) { return cus_[w.cu].simds[w.simd]; }

  [[nodiscard]] size_t group_end(uint32_t g) const {
    return g + 1 < group_begin_.size() ? group_begin_[g + 1] : seqs_.size();
  }

  void schedule(Event e) {
    e.seq = next_seq_++;
    if (!e.spin) ++pending_work_;
    queue_.push(e);
  }
  // A wave that busy-waits (retrying S_ALLOC_VGPR, polling a flag) makes no progress: its events are not work.
  static bool spinning(const Wave& w) { return w.waiting_alloc || w.polling; }

  void resume_at(uint32_t wi, uint64_t time) {
    Event e;
    e.time = time;
    e.wave = wi;
    e.spin = spinning(waves_[wi]);
    schedule(e);
  }

  // The SIMD's issue port takes `n` instructions of this wave back-to-back; returns the cycle they are issued.
  uint64_t issue(const Wave& w, uint32_t n) {
    Simd& s = simd_of(w);
    s.issue_free = std::max(now_, s.issue_free) + n;
    return s.issue_free;
  }

  void count_residency(Simd& s) {
    s.wave_cycles += static_cast<double>(s.resident) * static_cast<double>(now_ - s.last_change);
    s.last_change = now_;
  }

  [[nodiscard]] uint32_t free_slots(const Simd& s) const {
    return dynamic_ ? s.file->free_slots() : wave_limit_ - s.resident;
  }

  // Launches the CU's queued workgroups in order while all of the next one's waves find a slot.
  void launch_ready(uint32_t c) {
    ComputeUnit& cu = cus_[c];
    std::vector<Simd>& simds = cu.simds;
    while (cu.next_workgroup < cu.workgroups.size()) {
      Workgroup& g = workgroups_[cu.workgroups[cu.next_workgroup]];
      uint32_t free_total = 0;
      for (const Simd& s : simds) free_total += free_slots(s);
      if (free_total < g.waves) return;
      for (uint32_t i = 0; i < g.waves; ++i) {
        const uint32_t wi = g.first_wave + i;
        uint32_t best = 0;  // the SIMD with the most free slots; the lowest index on ties
        for (uint32_t s = 1; s < simds.size(); ++s) {
          if (free_slots(simds[s]) > free_slots(simds[best])) best = s;
        }
        Simd& s = simds[best];
        count_residency(s);
        ++s.resident;
        peak_resident_ = std::max(peak_resident_, s.resident);
        Wave& w = waves_[wi];
        w.simd = best;
        w.start_cycle = now_;
        if (dynamic_) w.slot = *s.file->launch();
        resident_.push_back(wi);
        resume_at(wi, now_);
      }
      g.live = g.waves;
      ++cu.next_workgroup;
    }
  }

  void start_alu(Wave& w, uint32_t cycles, Stage then) {
    w.alu_left = cycles;
    w.after_alu = then;
    w.stage = Stage::Alu;
  }
  void wait_bvh(Wave& w, size_t target, Stage then) {
    w.wait_target = target;
    w.after_wait = then;
    w.stage = Stage::WaitBvh;
  }

  void advance(uint32_t wi) {
    Wave& w = waves_[wi];
    for (;;) {
      const PhaseConfig* phase = w.phase < cfg_.kernel.phases.size() ? &cfg_.kernel.phases[w.phase] : nullptr;
      switch (w.stage) {
        case Stage::PhaseStart:
          if (phase == nullptr) {
            finish(wi);
            return;
          }
          w.stage = Stage::PhaseBody;
          if (dynamic_) {
            const DynamicVgprFile& file = *simd_of(w).file;
            if (file.blocks_for(phase->vgprs) != file.held_blocks(w.slot)) w.stage = Stage::AllocIssue;
          }
          break;
        case Stage::AllocIssue:
          w.stage = Stage::AllocAttempt;
          resume_at(wi, issue(w, 1));
          return;
        case Stage::AllocAttempt:
          if (!try_alloc(wi, phase->vgprs)) return;
          w.stage = Stage::PhaseBody;
          if (cfg_.vgpr.alloc_cycles > 0) {
            resume_at(wi, now_ + cfg_.vgpr.alloc_cycles);
            return;
          }
          break;
        case Stage::PhaseBody:
          w.stage = Stage::PhaseRun;
          if (phase->barrier && !pass_barrier(wi)) return;
          break;
        case Stage::PhaseRun:
          if (phase->traversal) {
            w.iteration = 0;
            w.stage = Stage::LoopStart;
          } else {
            start_alu(w, phase->alu_cycles, Stage::PhaseWait);
          }
          break;
        case Stage::Alu: {
          if (w.alu_left == 0) {
            w.stage = w.after_alu;
            break;
          }
          const uint32_t n = std::min(w.alu_left, cfg_.compute_unit.issue_burst);
          w.alu_left -= n;
          resume_at(wi, issue(w, n));
          return;
        }
        case Stage::PhaseWait:
          w.stage = Stage::PhaseEnd;
          if (phase->wait_cycles > 0) {
            resume_at(wi, now_ + phase->wait_cycles);
            return;
          }
          break;
        case Stage::PhaseEnd:
          ++w.phase;
          w.stage = Stage::PhaseStart;
          break;
        case Stage::LoopStart:
          w.active.clear();
          for (uint32_t g = w.first_group; g < w.first_group + w.groups; ++g) {
            if (w.iteration < group_iterations_[g]) w.active.push_back(g);
          }
          w.issue_next = 0;
          w.stage = w.active.empty() ? Stage::PhaseEnd : Stage::IssueIntersect;
          break;
        case Stage::IssueIntersect:
          if (w.issue_next == w.active.size()) {
            wait_bvh(w, 0, Stage::StackIssue);
          } else if (w.outstanding.size() >= cfg_.ray_accelerator.bvhcnt_limit) {
            wait_bvh(w, cfg_.ray_accelerator.bvhcnt_limit - 1, Stage::IssueIntersect);
          } else if (cus_[w.cu].ra_queue >= cfg_.ray_accelerator.queue_depth) {
            cus_[w.cu].ra_queue_waiting.push_back(wi);  // bvh_return() resumes it when an instruction leaves
            return;
          } else {
            ++cus_[w.cu].ra_queue;
            w.stage = Stage::IntersectIssued;
            resume_at(wi, issue(w, 1));
            return;
          }
          break;
        case Stage::IntersectIssued:
          send_intersect(wi, w.active[w.issue_next++]);
          w.stage = Stage::IssueIntersect;
          break;
        case Stage::WaitBvh:
          w.waiting_bvh = w.outstanding.size() > w.wait_target;
          if (w.waiting_bvh) return;  // bvh_return() resumes it
          w.stage = w.after_wait;
          break;
        case Stage::StackIssue:
          w.stage = Stage::StackEnter;
          resume_at(wi, issue(w, static_cast<uint32_t>(w.active.size())));
          return;
        case Stage::StackEnter: {
          uint64_t done = now_;
          uint64_t& lds_free = cus_[w.cu].lds_free;
          for (size_t i = 0; i < w.active.size(); ++i) {
            const uint64_t start = std::max(now_, lds_free);
            lds_free = start + cfg_.lds.busy_cycles;
            done = std::max(done, start + cfg_.lds.latency);
          }
          w.stage = Stage::LoopAlu;
          resume_at(wi, done);
          return;
        }
        case Stage::LoopAlu:
          start_alu(w, cfg_.kernel.loop_alu_cycles, Stage::LoopNext);
          break;
        case Stage::LoopNext:
          ++w.iteration;
          w.stage = Stage::LoopStart;
          break;
        case Stage::Program:
          run_program(wi);
          return;
        case Stage::Done:
          return;
      }
    }
  }

  // S_ALLOC_VGPR executes. On failure the wave busy-waits: it retries after retry_cycles.
  bool try_alloc(uint32_t wi, uint32_t vgprs) {
    Wave& w = waves_[wi];
    DynamicVgprFile& file = *simd_of(w).file;
    if (file.s_alloc_vgpr(w.slot, vgprs)) {
      if (w.waiting_alloc) vgpr_wait_cycles_ += now_ - w.wait_start;
      w.waiting_alloc = false;
      return true;
    }
    ++failed_allocations_;
    if (!w.waiting_alloc) {
      w.waiting_alloc = true;
      w.wait_start = now_;
      if (!w.ever_waited) ++waves_waited_;
      w.ever_waited = true;
    }
    w.failed_version = file.version();
    if (w.program == nullptr) w.stage = Stage::AllocIssue;
    resume_at(wi, now_ + cfg_.vgpr.retry_cycles);
    check_deadlock();
    return false;
  }

  // Deadlock: nothing but busy-waits is pending, and every resident wave either waits at a barrier, has already
  // failed against its register file's current state, or polls a flag that is still 0. No request can then
  // succeed, no flag can change and no wave can end.
  void check_deadlock() {
    if (pending_work_ > 0) return;
    for (const uint32_t wi : resident_) {
      const Wave& w = waves_[wi];
      const bool stuck = w.at_barrier || (w.waiting_alloc && w.failed_version == simd_of(w).file->version()) ||
                         (w.polling && workgroups_[w.workgroup].flags[w.polled_flag] == 0);
      if (!stuck) return;
    }
    deadlock_ = true;
  }

  bool pass_barrier(uint32_t wi) {
    Workgroup& g = workgroups_[waves_[wi].workgroup];
    ++g.arrived;
    if (g.arrived < g.live) {
      waves_[wi].at_barrier = true;
      g.waiting.push_back(wi);
      return false;
    }
    release_barrier(g);
    return true;
  }

  void release_barrier(Workgroup& g) {
    g.arrived = 0;
    for (const uint32_t wi : g.waiting) {
      waves_[wi].at_barrier = false;
      resume_at(wi, now_);
    }
    g.waiting.clear();
  }

  // IMAGE_BVH8_INTERSECT_RAY of one ray slot. The texture-addressing unit takes the active lanes
  // address_lanes_per_clock a cycle, in lane order; lanes that ask for the same nearest-level line merge into one
  // request, made when the first of them is addressed (it reads the span of the line they ask for together). A lane's
  // data reach the ray accelerator when all its lines are back; lanes whose data return in the same cycle form one
  // batch.
  void send_intersect(uint32_t wi, uint32_t group) {
    Wave& w = waves_[wi];
    struct LineRequest {
      uint64_t line, begin, end, time;
      uint64_t ready = 0;
      uint32_t level = 0;
    };
    std::vector<LineRequest> requests;  // distinct lines in the order they are asked for
    struct LaneFetch {
      const NodeFetch* fetch;
      size_t first_request, requests;  // its lines' requests (consecutive lines: one entry each, in `lines`)
    };
    std::vector<size_t> lines;  // per lane fetch and line: the index of its request
    std::vector<LaneFetch> fetches;
    std::vector<size_t> lane_fetch_begin;  // per active lane: its first entry in `fetches`
    const uint64_t line_bytes = cfg_.memory.levels[0].line_bytes;
    const uint32_t lanes_per_clock = cfg_.memory.address_lanes_per_clock;
    ComputeUnit& cu = cus_[w.cu];
    const uint64_t ta_start = std::max(now_, cu.ta_free);
    uint32_t lane = 0;
    for (size_t r = group_begin_[group]; r < group_end(group); ++r) {
      if (w.iteration >= steps_of(r)) continue;
      const uint64_t time = ta_start + lane / lanes_per_clock;
      lane_fetch_begin.push_back(fetches.size());
      for (const NodeFetch& f : step_fetches(r, w.iteration)) {
        fetches.push_back(LaneFetch{&f, lines.size(), 0});
        const uint64_t begin = f.byte_offset(), end = begin + f.bytes();
        for (uint64_t line = begin / line_bytes; line <= (end - 1) / line_bytes; ++line) {
          const uint64_t lo = std::max(begin, line * line_bytes) - line * line_bytes;
          const uint64_t hi = std::min(end, (line + 1) * line_bytes) - line * line_bytes;
          auto it = std::find_if(requests.begin(), requests.end(), [&](const LineRequest& q) { return q.line == line; });
          if (it == requests.end()) {
            it = requests.insert(requests.end(), LineRequest{line, lo, hi, time});
          } else {
            ++merged_lane_lines_;
          }
          it->begin = std::min(it->begin, lo);
          it->end = std::max(it->end, hi);
          lines.push_back(static_cast<size_t>(it - requests.begin()));
          ++fetches.back().requests;
          ++lane_line_requests_;
        }
      }
      ++lane;
    }
    cu.ta_free = ta_start + ceil_div(lane, lanes_per_clock);
    for (LineRequest& q : requests) {
      const machine::MemoryHierarchy::Read read =
          memory_.read(w.cu, q.line * line_bytes + q.begin, static_cast<uint32_t>(q.end - q.begin), q.time);
      q.ready = in_order(cu, read.ready);
      q.level = read.level;
    }

    struct Batch {
      uint64_t time;
      uint32_t ra_cycles, box_tests, triangle_tests;
    };
    std::vector<Batch> batches;
    lane_fetch_begin.push_back(fetches.size());
    for (size_t l = 0; l + 1 < lane_fetch_begin.size(); ++l) {
      uint64_t ready = now_;
      uint32_t cycles = 0, boxes = 0, triangles = 0;
      for (size_t i = lane_fetch_begin[l]; i < lane_fetch_begin[l + 1]; ++i) {
        const LaneFetch& lf = fetches[i];
        uint64_t fetch_ready = now_;
        uint32_t farthest = 0;
        for (size_t k = lf.first_request; k < lf.first_request + lf.requests; ++k) {
          fetch_ready = std::max(fetch_ready, requests[lines[k]].ready);
          farthest = std::max(farthest, requests[lines[k]].level);
        }
        ++node_fetches_;
        fetch_hits_ += farthest == 0 ? 1 : 0;
        fetch_latency_ += fetch_ready - now_;
        ready = std::max(ready, fetch_ready);
        cycles += ra_cycles(*lf.fetch);
        boxes += lf.fetch->box_tests;
        triangles += lf.fetch->triangle_tests;
      }
      auto b = std::find_if(batches.begin(), batches.end(), [&](const Batch& x) { return x.time == ready; });
      if (b == batches.end()) b = batches.insert(batches.end(), Batch{ready, 0, 0, 0});
      b->ra_cycles += cycles;
      b->box_tests += boxes;
      b->triangle_tests += triangles;
    }
    std::sort(batches.begin(), batches.end(), [](const Batch& a, const Batch& b) { return a.time < b.time; });
    Instruction ins;
    ins.batches_left = static_cast<uint32_t>(batches.size());
    ins.lanes = lane;
    w.outstanding.push_back(ins);
    const uint64_t number = w.returned + w.outstanding.size() - 1;
    for (const Batch& b : batches) {
      Event e;
      e.time = b.time;
      e.kind = EventKind::RaArrival;
      e.wave = wi;
      e.instr = number;
      e.ra_cycles = b.ra_cycles;
      e.box_tests = b.box_tests;
      e.triangle_tests = b.triangle_tests;
      schedule(e);
    }
  }

  void ray_accelerator(const Event& e) {
    Wave& w = waves_[e.wave];
    ComputeUnit& cu = cus_[w.cu];
    cu.ra_free = std::max(now_, cu.ra_free) + e.ra_cycles;
    ra_busy_ += e.ra_cycles;
    box_tests_ += e.box_tests;
    triangle_tests_ += e.triangle_tests;
    Instruction& ins = w.outstanding[e.instr - w.returned];
    ins.finish = std::max(ins.finish, cu.ra_free);
    --ins.batches_left;
    // Results go back in issue order: schedule every finished instruction whose predecessors are scheduled.
    for (Instruction& i : w.outstanding) {
      if (i.return_scheduled) continue;
      if (i.batches_left > 0) break;
      // The results leave the accelerator's pipeline, then the CU's write-back path returns them lane by lane.
      const uint64_t written = std::max(i.finish + cfg_.ray_accelerator.pipeline_latency, cu.writeback_free);
      cu.writeback_free = written + ceil_div(i.lanes, cfg_.ray_accelerator.result_lanes_per_clock);
      w.last_return = std::max(cu.writeback_free, w.last_return);
      i.return_scheduled = true;
      Event r;
      r.time = w.last_return;
      r.kind = EventKind::BvhReturn;
      r.wave = e.wave;
      schedule(r);
    }
  }

  // One step of a wave program: issue the instruction at pc (one cycle on the SIMD's port, an ALU block in bursts),
  // then, when issued, its effect. Returns whenever the wave has to wait for an event.
  void run_program(uint32_t wi) {
    Wave& w = waves_[wi];
    const std::vector<WaveInstruction>& code = w.program->code;
    for (;;) {
      if (w.pc == code.size()) {  // s_endpgm once every request is back
        if (blocked_on(w, kCounters, 0)) return;
        finish(wi);
        return;
      }
      const WaveInstruction& in = code[w.pc];
      if (!w.issued) {
        // A load whose address is an earlier load's data issues once those data are back.
        if (in.op == WaveInstruction::Op::Load && in.depends >= 0 && w.stream_ready[in.depends] > now_) {
          resume_at(wi, w.stream_ready[in.depends]);
          return;
        }
        // A request whose counter is full waits until one of the counter's requests returns.
        const bool request = in.op == WaveInstruction::Op::Load || in.op == WaveInstruction::Op::LdsRead ||
                             in.op == WaveInstruction::Op::LdsWrite;
        if (request) {
          const RequestKind kind = in.op == WaveInstruction::Op::Load ? in.kind : RequestKind::Lds;
          const size_t counter = counter_of(kind, cfg_.memory.wait_counters);
          if (blocked_on(w, counter, counter_limit(counter) - 1)) return;
        }
        if (in.op == WaveInstruction::Op::Alu && w.alu_left == 0) w.alu_left = in.count;
        const uint32_t n = in.op == WaveInstruction::Op::Alu ? std::min(w.alu_left, cfg_.compute_unit.issue_burst) : 1;
        w.instructions += n;
        w.issued = true;
        resume_at(wi, issue(w, n));
        return;
      }
      switch (in.op) {
        case WaveInstruction::Op::Load: program_load(wi, in); break;
        case WaveInstruction::Op::Wait:
          if (blocked_on(w, counter_of(in.kind, cfg_.memory.wait_counters), in.count)) return;
          break;
        case WaveInstruction::Op::Alu:
          w.alu_left -= std::min(w.alu_left, cfg_.compute_unit.issue_burst);
          if (w.alu_left > 0) {
            w.issued = false;
            continue;
          }
          break;
        case WaveInstruction::Op::LdsRead:
        case WaveInstruction::Op::LdsWrite: program_lds(wi, in); break;
        case WaveInstruction::Op::AllocVgpr:
          if (dynamic_) {
            if (!try_alloc(wi, in.count)) {
              w.issued = false;  // the retry issues again
              return;
            }
            w.issued = false;
            ++w.pc;
            resume_at(wi, now_ + cfg_.vgpr.alloc_cycles);
            return;
          }
          break;  // ignored by statically allocated waves (ISA S_ALLOC_VGPR)
        case WaveInstruction::Op::Sleep:
          w.issued = false;
          ++w.pc;
          resume_at(wi, now_ + uint64_t{64} * in.count);
          return;
        case WaveInstruction::Op::RepeatInit: w.loops[in.loop] = in.count; break;
        case WaveInstruction::Op::RepeatBranch:
          if (--w.loops[in.loop] > 0) {
            w.issued = false;
            w.pc = in.target;
            continue;
          }
          break;
        case WaveInstruction::Op::FlagBranch:
          w.polling = in.poll && w.flag_seen[in.flag] == 0;
          w.polled_flag = in.flag;
          if (w.flag_seen[in.flag] == 0) {
            w.issued = false;
            w.pc = in.target;
            if (w.polling) check_deadlock();
            if (deadlock_) return;
            continue;
          }
          break;
      }
      w.issued = false;
      ++w.pc;
    }
  }

  // The most requests `counter` can count. Combined counters take the limits of their first kinds: vmcnt the loads',
  // lgkmcnt the LDS ops'.
  uint32_t counter_limit(size_t counter) const {
    if (cfg_.memory.wait_counters == WaitCounters::Split) return cfg_.memory.counter_limits[counter];
    return cfg_.memory.counter_limits[counter == 0 ? static_cast<size_t>(RequestKind::Load)
                                                   : static_cast<size_t>(RequestKind::Lds)];
  }

  // True if the wave must wait for `counter` (kCounters: every counter) to drop to `count`; counter_return()
  // resumes it.
  bool blocked_on(Wave& w, size_t counter, uint32_t count) {
    const bool blocked = counter == kCounters ? std::any_of(w.pending.begin(), w.pending.end(), [](uint32_t n) {
      return n > 0;
    })
                                              : w.pending[counter] > count;
    w.waiting_counter = blocked ? static_cast<int>(counter) : -1;
    w.waiting_count = count;
    return blocked;
  }

  // A request of the wave is back at `ready` in `counter`, which decrements in request order; a scalar load whose
  // returns are out of order (RDNA 4's kmcnt) decrements it when its own data are back.
  void count_request(uint32_t wi, RequestKind kind, uint64_t ready) {
    Wave& w = waves_[wi];
    const size_t c = counter_of(kind, cfg_.memory.wait_counters);
    const bool in_order = kind != RequestKind::Scalar || cfg_.memory.scalar_returns_in_order;
    if (in_order) w.counter_last[c] = std::max(w.counter_last[c], ready);
    ++w.pending[c];
    Event e;
    e.time = in_order ? w.counter_last[c] : ready;
    e.kind = EventKind::CounterReturn;
    e.wave = wi;
    e.instr = c;
    e.spin = spinning(w);
    schedule(e);
  }

  void counter_return(uint32_t wi, uint64_t counter) {
    Wave& w = waves_[wi];
    --w.pending[counter];
    if (w.waiting_counter < 0) return;
    const auto waited = static_cast<size_t>(w.waiting_counter);
    if (waited == counter || waited == kCounters) {
      if (!blocked_on(w, waited, w.waiting_count)) advance(wi);
    }
  }

  // The stream's next address: fixed, strided (`next` is the offset), or the next slot of a pseudo-random cycle
  // (`next` is the slot; a full-period linear congruential sequence modulo the largest power of two of slots that
  // fits the footprint).
  static uint64_t next_address(const AddressStream& a, uint64_t& next) {
    const uint64_t current = next;
    switch (a.pattern) {
      case AddressStream::Pattern::Fixed: return a.base;
      case AddressStream::Pattern::Stride: next = (current + a.stride) % a.footprint; return a.base + current;
      case AddressStream::Pattern::Chase: {
        const uint64_t slots = std::bit_floor(a.footprint / a.stride);
        next = (current * 1103515245 + 12345) & (slots - 1);
        return a.base + current * a.stride;
      }
    }
    return a.base;
  }

  void program_load(uint32_t wi, const WaveInstruction& in) {
    Wave& w = waves_[wi];
    const uint64_t address = next_address(w.program->streams[in.stream], w.stream_next[in.stream]);
    // Scalar loads take the scalar cache and return on the scalar path, outside the vector memory return queue.
    const bool scalar = in.kind == RequestKind::Scalar;
    const machine::MemoryHierarchy::Read read = memory_.read(w.cu, address, in.bytes, now_, scalar);
    const uint64_t ready = scalar ? read.ready : in_order(cus_[w.cu], read.ready);
    ++w.loads;
    ++w.loads_by_level[read.level];
    w.stream_ready[in.stream] = ready;
    count_request(wi, in.kind, ready);
  }

  // LDS ops of wave programs occupy the LDS one cycle ([assumption] a dword per lane, 128 bytes, at 128 B/clock); a
  // write is seen by every read that reaches the LDS after it.
  void program_lds(uint32_t wi, const WaveInstruction& in) {
    Wave& w = waves_[wi];
    uint64_t& lds_free = cus_[w.cu].lds_free;
    const uint64_t start = std::max(now_, lds_free);
    lds_free = start + 1;
    std::vector<uint32_t>& flags = workgroups_[w.workgroup].flags;
    if (in.op == WaveInstruction::Op::LdsWrite) {
      flags[in.flag] = in.count;
    } else {
      w.flag_seen[in.flag] = flags[in.flag];
    }
    ++w.lds_ops;
    count_request(wi, RequestKind::Lds, start + cfg_.lds.latency);
  }

  void bvh_return(uint32_t wi) {
    Wave& w = waves_[wi];
    w.outstanding.pop_front();
    ++w.returned;
    ComputeUnit& cu = cus_[w.cu];
    --cu.ra_queue;
    if (!cu.ra_queue_waiting.empty()) {
      const uint32_t next = cu.ra_queue_waiting.front();
      cu.ra_queue_waiting.pop_front();
      resume_at(next, now_);
    }
    if (w.waiting_bvh) advance(wi);
  }

  void finish(uint32_t wi) {
    Wave& w = waves_[wi];
    w.stage = Stage::Done;
    w.end_cycle = now_;
    Simd& s = simd_of(w);
    count_residency(s);
    --s.resident;
    if (dynamic_) s.file->end_wave(w.slot);
    ++waves_completed_;
    rays_completed_ += w.rays;
    resident_.erase(std::find(resident_.begin(), resident_.end(), wi));
    Workgroup& g = workgroups_[w.workgroup];
    --g.live;
    if (g.arrived > 0 && g.arrived == g.live) release_barrier(g);
    launch_ready(w.cu);
  }

  MachineResult result(bool cycle_limit) {
    MachineResult r;
    const uint64_t cycles = now_;
    r.cycles = cycles;
    r.rays = simulated_rays_;
    r.rays_completed = rays_completed_;
    r.waves = simulated_waves_;
    r.waves_completed = waves_completed_;
    r.deadlock = deadlock_;
    r.status = deadlock_ ? MachineStatus::Deadlocked
                         : (cycle_limit ? MachineStatus::CycleLimit : MachineStatus::Completed);
    const auto per_cycle = [cycles](double x) { return cycles > 0 ? x / static_cast<double>(cycles) : 0.0; };
    r.rays_per_1000_cycles = per_cycle(1000.0 * static_cast<double>(rays_completed_));
    r.box_tests = box_tests_;
    r.triangle_tests = triangle_tests_;
    r.ra_busy_cycles = ra_busy_;
    // Per CU: the simulated CUs' totals over their count.
    const double cus = static_cast<double>(cus_.size());
    r.ra_box_utilization =
        per_cycle(static_cast<double>(box_tests_) / cfg_.ray_accelerator.box_tests_per_clock / cus);
    r.ra_triangle_utilization =
        per_cycle(static_cast<double>(triangle_tests_) / cfg_.ray_accelerator.triangle_tests_per_clock / cus);
    r.ra_busy_fraction = per_cycle(static_cast<double>(ra_busy_) / cus);
    r.box_tests_per_clock = per_cycle(static_cast<double>(box_tests_) / cus);
    r.triangle_tests_per_clock = per_cycle(static_cast<double>(triangle_tests_) / cus);
    if (!seqs_.empty()) r.gpu = gpu_figures(r, cfg_.gpu);

    r.wave_limit_per_simd = wave_limit_;
    double wave_cycles = 0.0;
    for (ComputeUnit& cu : cus_) {
      for (Simd& s : cu.simds) {
        count_residency(s);
        wave_cycles += s.wave_cycles;
      }
    }
    r.average_active_waves_per_simd =
        per_cycle(wave_cycles / static_cast<double>(cus_.size() * cfg_.compute_unit.simds));
    r.peak_active_waves_per_simd = peak_resident_;

    uint32_t at_barrier = 0, on_alloc = 0, polling = 0;
    r.vgpr_wait_cycles = vgpr_wait_cycles_;
    for (const uint32_t wi : resident_) {
      const Wave& w = waves_[wi];
      if (w.waiting_alloc) {
        r.vgpr_wait_cycles += cycles - w.wait_start;
        ++on_alloc;
      }
      at_barrier += w.at_barrier ? 1 : 0;
      polling += w.polling ? 1 : 0;
    }
    r.waves_waited_on_vgprs = waves_waited_;
    r.failed_vgpr_allocations = failed_allocations_;

    r.node_fetches = node_fetches_;
    r.cache_hits = fetch_hits_;
    r.cache_hit_rate = node_fetches_ > 0 ? static_cast<double>(fetch_hits_) / static_cast<double>(node_fetches_) : 0;
    r.mean_node_fetch_latency =
        node_fetches_ > 0 ? static_cast<double>(fetch_latency_) / static_cast<double>(node_fetches_) : 0.0;
    r.lane_line_requests = lane_line_requests_;
    r.merged_lane_requests = merged_lane_lines_;
    r.memory_levels = memory_.counts();
    // The kernel's own scalar loads are not modelled: its runs list the vector path's levels only.
    if (!seqs_.empty()) r.memory_levels.resize(cfg_.memory.levels.size());

    const std::string rays = seqs_.empty() ? "" : " (" + std::to_string(rays_completed_) + " rays)";
    const std::string progress =
        std::to_string(waves_completed_) + " of " + std::to_string(waves_.size()) + " waves" + rays + " complete";
    if (deadlock_) {
      r.waves_blocked_at_end = static_cast<uint32_t>(resident_.size());
      r.message = "deadlock at cycle " + std::to_string(cycles) + ": all " + std::to_string(resident_.size()) +
                  " resident waves are blocked (" + std::to_string(on_alloc) +
                  " retrying S_ALLOC_VGPR against registers no wave can free, " + std::to_string(at_barrier) +
                  " at a workgroup barrier" +
                  (polling > 0 ? ", " + std::to_string(polling) + " polling an LDS flag no wave can set" : "") +
                  "); " + progress;
    } else if (cycle_limit) {
      r.message = "stopped at the cycle limit " + std::to_string(cycles) + " (limits.max_cycles), no deadlock; " +
                  progress;
    } else {
      r.message = "completed " + std::to_string(waves_completed_) + " waves" + rays + " in " + std::to_string(cycles) +
                  " cycles";
    }
    return r;
  }

  const MachineConfig& cfg_;
  std::span<const std::vector<NodeFetch>> seqs_;
  std::vector<std::vector<uint32_t>> step_begin_;  // per ray with dual steps: the fetch each step begins at
  bool dynamic_;
  machine::MemoryHierarchy memory_;
  uint32_t wave_limit_ = 0;
  uint64_t max_cycles_ = 0;
  std::vector<uint32_t> group_begin_;       // first ray of each recorded wave (group)
  std::vector<uint32_t> group_iterations_;  // per group: the most steps of its rays
  std::vector<Wave> waves_;
  std::vector<Workgroup> workgroups_;
  std::vector<ComputeUnit> cus_;    // the simulated CUs
  std::vector<uint32_t> resident_;  // launched, not ended
  uint64_t simulated_waves_ = 0;    // waves dealt to the simulated CUs
  uint64_t simulated_rays_ = 0;

  std::priority_queue<Event, std::vector<Event>, Later> queue_;
  uint64_t next_seq_ = 0;
  uint64_t pending_work_ = 0;  // queued events that are not busy-waits
  uint64_t now_ = 0;
  bool deadlock_ = false;


  uint64_t waves_completed_ = 0;
  uint64_t rays_completed_ = 0;
  uint32_t peak_resident_ = 0;
  uint64_t box_tests_ = 0;
  uint64_t triangle_tests_ = 0;
  uint64_t ra_busy_ = 0;
  uint64_t node_fetches_ = 0;
  uint64_t fetch_hits_ = 0;  // fetches whose every line was cached or in flight
  uint64_t fetch_latency_ = 0;
  uint64_t lane_line_requests_ = 0;  // nearest-level lines lanes asked for, before merging
  uint64_t merged_lane_lines_ = 0;   // of those, lines another lane of the same instruction had asked for
  uint64_t waves_waited_ = 0;
  uint64_t vgpr_wait_cycles_ = 0;
  uint64_t failed_allocations_ = 0;
};

}  // namespace

const char* to_string(MachineStatus status) {
  switch (status) {
    case MachineStatus::Completed: return "completed";
    case MachineStatus::Deadlocked: return "deadlocked";
    case MachineStatus::CycleLimit: return "cycle_limit";
  }
  return "unknown";
}

MachineResult run_machine_model(const MachineConfig& config, std::span<const std::vector<NodeFetch>> node_sequences,
                                std::span<const uint32_t> wave_begin, const ProgressCallback& progress) {
  return run_machine_model(config, node_sequences, wave_begin, std::span<const uint32_t>{}, progress);
}

MachineResult run_machine_model(const MachineConfig& config, std::span<const std::vector<NodeFetch>> node_sequences,
                                std::span<const uint32_t> wave_begin, std::span<const uint32_t> workgroup_slot,
                                const ProgressCallback& progress) {
  config.validate();
  for (size_t i = 0; i < wave_begin.size(); ++i) {
    const size_t end = i + 1 < wave_begin.size() ? wave_begin[i + 1] : node_sequences.size();
    if ((i == 0 && wave_begin[0] != 0) || end <= wave_begin[i] || end - wave_begin[i] > kWaveSize) {
      throw_bad_input("", "machine model: wave " + std::to_string(i) +
                              " boundaries must ascend from 0 with 1..32 rays per wave");
    }
  }
  if (wave_begin.empty() && !node_sequences.empty()) {
    throw_bad_input("", "machine model: rays given without waves");
  }
  const uint64_t per_workgroup = uint64_t{config.kernel.rays_per_lane} * config.kernel.workgroup_waves;
  const uint64_t workgroups = (wave_begin.size() + per_workgroup - 1) / per_workgroup;
  if (!workgroup_slot.empty() &&
      (workgroup_slot.size() != workgroups ||
       std::any_of(workgroup_slot.begin(), workgroup_slot.end(),
                   [&](uint32_t slot) { return slot >= config.gpu.compute_units(); }))) {
    throw_bad_input("", "machine model: one dispatch slot below " + std::to_string(config.gpu.compute_units()) +
                            " per workgroup (" + std::to_string(workgroups) + ") expected");
  }
  return Model(config, node_sequences, wave_begin, workgroup_slot).run(progress);
}

MachineResult run_machine_model(const MachineConfig& config, std::span<const std::vector<NodeFetch>> node_sequences) {
  return run_machine_model(config, node_sequences, detail::consecutive_waves(node_sequences.size()));
}

GpuFigures gpu_figures(const MachineResult& r, const GpuConfig& gpu) {
  GpuFigures g;
  g.name = gpu.name;
  g.compute_units = gpu.compute_units();
  g.simulated_shader_arrays = gpu.simulated_shader_arrays;
  g.simulated_cus = gpu.simulated_cus();
  g.clock_mhz = gpu.clock_mhz;
  if (r.cycles == 0) return g;
  // The simulated CUs' work per cycle, times the CUs they stand for, at the clock.
  const double per_second = static_cast<double>(g.compute_units) / g.simulated_cus * 1e6 * gpu.clock_mhz /
                            static_cast<double>(r.cycles);
  g.box_tests_per_second = static_cast<double>(r.box_tests) * per_second;
  g.triangle_tests_per_second = static_cast<double>(r.triangle_tests) * per_second;
  g.rays_per_second = static_cast<double>(r.rays_completed) * per_second;
  g.ra_utilization = r.ra_busy_fraction;
  return g;
}

std::vector<bool> simulated_waves(const MachineConfig& config, size_t waves) {
  std::vector<bool> simulated(waves);
  const uint64_t per_workgroup = uint64_t{config.kernel.rays_per_lane} * config.kernel.workgroup_waves;
  for (size_t w = 0; w < waves; ++w) {
    const auto slot = static_cast<uint32_t>(w / per_workgroup % config.gpu.compute_units());
    simulated[w] = machine::simulated_cu_of_slot(config.gpu, slot).has_value();
  }
  return simulated;
}

double MemoryLevelResult::served_fraction() const {
  return requests > 0 ? static_cast<double>(served()) / static_cast<double>(requests) : 0.0;
}

double MemoryLevelResult::bytes_per_clock(uint64_t cycles) const {
  return cycles > 0 ? static_cast<double>(bytes) / static_cast<double>(cycles) / simulated_share : 0.0;
}

double MemoryLevelResult::bandwidth_use(uint64_t cycles) const {
  return port_bytes_per_clock > 0 ? bytes_per_clock(cycles) / static_cast<double>(port_bytes_per_clock) : 0.0;
}

const char* to_string(MemoryLevelResult::Kind kind) {
  switch (kind) {
    case MemoryLevelResult::Kind::Cache: return "cache";
    case MemoryLevelResult::Kind::MergeBuffer: return "merge_buffer";
    case MemoryLevelResult::Kind::Memory: return "memory";
  }
  return "unknown";
}

namespace {

// Per level: what it is, its requests and what became of them, its bytes and the share of its port they used. The
// memory serves every request: it has no hit rate. A buffer without storage holds no lines, so it has no hits, no
// first touches and no share it served: only what it merged and what it passed on. A cache no request reached
// served no share of them (null, not 0).
nlohmann::ordered_json memory_levels_json(const std::vector<MemoryLevelResult>& levels, uint64_t cycles) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const MemoryLevelResult& l : levels) {
    nlohmann::ordered_json j = {{"name", l.name}, {"kind", to_string(l.kind)}, {"requests", l.requests}};
    if (l.kind == MemoryLevelResult::Kind::MergeBuffer) j.update({{"merged", l.merged}, {"misses", l.misses}});
    if (l.kind == MemoryLevelResult::Kind::Cache) {
      j.update({{"hits", l.hits}, {"merged", l.merged}, {"misses", l.misses}, {"first_touches", l.first_touches},
                {"served_fraction", l.requests ? nlohmann::ordered_json(l.served_fraction()) : nullptr}});
    }
    j.update({{"bytes", l.bytes}, {"bytes_per_clock", l.bytes_per_clock(cycles)},
              {"port_bytes_per_clock", l.port_bytes_per_clock}, {"bandwidth_use", l.bandwidth_use(cycles)}});
    out.push_back(std::move(j));
  }
  return out;
}

// The members every result starts with: what it is, and the machine it ran on.
nlohmann::ordered_json model_output(const MachineConfig& config) {
  return {{"model_output", "hwbvh machine model: outputs of a model, not hardware measurements"},
          {"preset", config.name},
          {"vgpr_allocation", config.vgpr.mode == VgprAllocation::Static ? "static" : "dynamic"}};
}

}  // namespace

std::string to_json(const MachineResult& r, const MachineConfig& config) {
  nlohmann::ordered_json j = model_output(config);
  j.update({
      {"status", to_string(r.status)},
      {"message", r.message},
      {"deadlock", r.deadlock},
      {"cycles", r.cycles},
      {"rays", r.rays},
      {"rays_completed", r.rays_completed},
      {"waves", r.waves},
      {"waves_completed", r.waves_completed},
      {"rays_per_1000_cycles", r.rays_per_1000_cycles},
      {"box_tests", r.box_tests},
      {"triangle_tests", r.triangle_tests},
      {"ra_busy_cycles", r.ra_busy_cycles},
      {"ra_box_utilization", r.ra_box_utilization},
      {"ra_triangle_utilization", r.ra_triangle_utilization},
      {"ra_busy_fraction", r.ra_busy_fraction},
      {"wave_limit_per_simd", r.wave_limit_per_simd},
      {"average_active_waves_per_simd", r.average_active_waves_per_simd},
      {"peak_active_waves_per_simd", r.peak_active_waves_per_simd},
      {"waves_waited_on_vgprs", r.waves_waited_on_vgprs},
      {"vgpr_wait_cycles", r.vgpr_wait_cycles},
      {"failed_vgpr_allocations", r.failed_vgpr_allocations},
      {"waves_blocked_at_end", r.waves_blocked_at_end},
      {"node_fetches", r.node_fetches},
      {"cache_hits", r.cache_hits},
      {"cache_hit_rate", r.cache_hit_rate},
      {"mean_node_fetch_latency", r.mean_node_fetch_latency},
      {"lane_line_requests", r.lane_line_requests},
      {"merged_lane_requests", r.merged_lane_requests},
      {"box_tests_per_clock", r.box_tests_per_clock},
      {"triangle_tests_per_clock", r.triangle_tests_per_clock},
      {"peak_box_tests_per_clock", config.ray_accelerator.box_tests_per_clock},
      {"peak_triangle_tests_per_clock", config.ray_accelerator.triangle_tests_per_clock},
      {"memory_levels", memory_levels_json(r.memory_levels, r.cycles)},
      {"gpu", {{"name", r.gpu.name},
               {"compute_units", r.gpu.compute_units},
               {"simulated_shader_arrays", r.gpu.simulated_shader_arrays},
               {"simulated_cus", r.gpu.simulated_cus},
               {"clock_mhz", r.gpu.clock_mhz},
               {"box_tests_per_second", r.gpu.box_tests_per_second},
               {"triangle_tests_per_second", r.gpu.triangle_tests_per_second},
               {"rays_per_second", r.gpu.rays_per_second},
               {"ra_utilization", r.gpu.ra_utilization}}},
  });
  return json_text(j);
}

ProgramRunResult run_wave_program(const MachineConfig& config, const WaveProgram& program) {
  config.validate();
  Model model(config, program);
  ProgramRunResult r;
  r.machine = model.run();
  r.waves = model.wave_results();
  return r;
}

std::string to_json(const ProgramRunResult& r, const MachineConfig& config, const WaveProgram& program) {
  nlohmann::ordered_json waves = nlohmann::ordered_json::array();
  for (const WaveRunResult& w : r.waves) {
    nlohmann::ordered_json by_level = nlohmann::ordered_json::object();
    for (size_t i = 0; i < w.loads_by_level.size(); ++i) by_level[config.memory.levels[i].name] = w.loads_by_level[i];
    waves.push_back({{"name", w.name},
                     {"copy", w.copy},
                     {"workgroup", w.workgroup},
                     {"simd", w.simd},
                     {"completed", w.completed},
                     {"start_cycle", w.start_cycle},
                     {"end_cycle", w.end_cycle},
                     {"cycles", w.end_cycle - w.start_cycle},
                     {"instructions", w.instructions},
                     {"loads", w.loads},
                     {"lds_ops", w.lds_ops},
                     {"loads_by_level", by_level}});
  }
  const MachineResult& m = r.machine;
  nlohmann::ordered_json j = model_output(config);
  j.update({
      {"program", program.name},
      {"status", to_string(m.status)},
      {"message", m.message},
      {"cycles", m.cycles},
      {"waves", m.waves},
      {"waves_completed", m.waves_completed},
      {"wave_limit_per_simd", m.wave_limit_per_simd},
      {"peak_active_waves_per_simd", m.peak_active_waves_per_simd},
      {"average_active_waves_per_simd", m.average_active_waves_per_simd},
      {"waves_waited_on_vgprs", m.waves_waited_on_vgprs},
      {"failed_vgpr_allocations", m.failed_vgpr_allocations},
      {"memory_levels", memory_levels_json(m.memory_levels, m.cycles)},
      {"per_wave", waves},
  });
  return json_text(j);
}

}  // namespace hwbvh::emu
