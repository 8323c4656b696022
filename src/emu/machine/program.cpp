// Wave programs: JSON text -> WaveProgram (docs/machine-model.md, "Wave programs"). Loops are flattened into
// branches so that the engine runs a plain instruction list.
#include "hwbvh/emu/machine/program.h"

#include <algorithm>
#include <map>
#include <string>

#include "emu/machine/json_section.h"
#include "hwbvh/core/error.h"

namespace hwbvh::emu {
namespace {

using Json = nlohmann::json;
using machine::JsonSection;
using Op = WaveInstruction::Op;
constexpr machine::JsonVocabulary kWhat{"wave program", "is not a wave program key"};

// Bounds that keep a run's state small; hand-written programs are far inside them.
constexpr size_t kMaxInstructions = 1 << 16;
constexpr int kMaxNesting = 16;
constexpr uint32_t kMaxLoadBytes = 4096;
constexpr uint64_t kMaxAddress = uint64_t{1} << 48;
constexpr uint64_t kDefaultMaxCycles = 10'000'000;

const std::map<std::string, AddressStream::Pattern> kPatterns{
    {"fixed", AddressStream::Pattern::Fixed},
    {"stride", AddressStream::Pattern::Stride},
    {"chase", AddressStream::Pattern::Chase}};
const std::map<std::string, RequestKind> kKinds{
    {"load", RequestKind::Load}, {"sample", RequestKind::Sample}, {"lds", RequestKind::Lds},
    {"scalar", RequestKind::Scalar}};

class Reader {
 public:
  Reader(const std::string& origin, WaveProgram& program) : origin_(origin), program_(program) {}

  WaveDefinition wave(const Json& j, size_t index) {
    JsonSection s(j, "waves[" + std::to_string(index) + "]", origin_, kWhat);
    WaveDefinition w;
    w.name = s.text("name");
    if (w.name.empty()) s.fail(s.name("name"), "must not be empty");
    w.count = s.u32_or("count", 1);
    if (w.count == 0) s.fail(s.name("count"), "must be at least 1");
    if (s.has("streams")) {
      const Json& streams = s.members("streams");
      for (auto it = streams.begin(); it != streams.end(); ++it) {
        w.streams.push_back(stream(*it, it.key(), s.name("streams." + it.key())));
      }
    }
    wave_ = &w;
    block(s.array("program"), s.name("program"), 0);
    s.finish();
    return w;
  }

 private:
  AddressStream stream(const Json& j, const std::string& name, const std::string& path) {
    JsonSection s(j, path, origin_, kWhat);
    AddressStream a;
    a.name = name;
    const std::string pattern = s.text("pattern");
    if (!kPatterns.count(pattern)) s.fail(s.name("pattern"), "must be \"fixed\", \"stride\" or \"chase\"");
    a.pattern = kPatterns.at(pattern);
    a.base = s.u64_or("base", 0);
    if (a.pattern != AddressStream::Pattern::Fixed) {
      a.stride = s.u64("stride");
      a.footprint = s.u64("footprint");
      if (a.stride == 0 || a.footprint < a.stride) s.fail(s.name("footprint"), "must be at least stride, stride >= 1");
    }
    if (a.base >= kMaxAddress || a.footprint >= kMaxAddress - a.base) {
      s.fail(s.name("base"), "base + footprint must stay below 2^48");
    }
    s.finish();
    return a;
  }

  uint32_t find_stream(JsonSection& s, const char* key) {
    const std::string name = s.text(key);
    const auto& streams = wave_->streams;
    const auto it =
        std::find_if(streams.begin(), streams.end(), [&](const AddressStream& a) { return a.name == name; });
    if (it == streams.end()) s.fail(s.name(key), "names no stream of this wave: '" + name + "'");
    return static_cast<uint32_t>(it - streams.begin());
  }

  uint32_t find_flag(JsonSection& s) {
    const std::string name = s.text("flag");
    if (name.empty()) s.fail(s.name("flag"), "must not be empty");
    auto& flags = program_.flags;
    const auto it = std::find(flags.begin(), flags.end(), name);
    if (it != flags.end()) return static_cast<uint32_t>(it - flags.begin());
    flags.push_back(name);
    return static_cast<uint32_t>(flags.size() - 1);
  }

  RequestKind kind(JsonSection& s, const char* fallback, bool lds_allowed) {
    const std::string k = s.text_or("kind", fallback);
    if (!kKinds.count(k) || (!lds_allowed && k == "lds")) {
      s.fail(s.name("kind"), lds_allowed ? "must be \"load\", \"sample\", \"scalar\" or \"lds\""
                                         : "must be \"load\", \"sample\" or \"scalar\"");
    }
    return kKinds.at(k);
  }

  void emit(JsonSection& s, const WaveInstruction& in) {
    if (wave_->code.size() >= kMaxInstructions) {
      s.fail(s.name("op"), "makes the program longer than " + std::to_string(kMaxInstructions) + " instructions");
    }
    wave_->code.push_back(in);
  }

  void block(const Json& ops, const std::string& path, int depth) {
    if (depth > kMaxNesting) throw_bad_input(origin_, "wave program: " + path + " nests loops too deep");
    for (size_t i = 0; i < ops.size(); ++i) instruction(ops[i], path + "[" + std::to_string(i) + "]", depth);
  }

  void instruction(const Json& j, const std::string& path, int depth) {
    JsonSection s(j, path, origin_, kWhat);
    const std::string op = s.text("op");
    WaveInstruction in;
    const auto positive = [&](const char* key) {
      const uint32_t v = s.u32(key);
      if (v == 0) s.fail(s.name(key), "must be at least 1");
      return v;
    };
    if (op == "load") {
      in.op = Op::Load;
      in.stream = find_stream(s, "stream");
      in.kind = kind(s, "load", false);
      in.bytes = s.u32_or("bytes", 4);
      if (in.bytes == 0 || in.bytes > kMaxLoadBytes) s.fail(s.name("bytes"), "must be in 1..4096");
      if (wave_->streams[in.stream].pattern == AddressStream::Pattern::Chase) {
        in.depends = static_cast<int32_t>(in.stream);
      }
      if (s.has("depends_on")) in.depends = static_cast<int32_t>(find_stream(s, "depends_on"));
      emit(s, in);
    } else if (op == "wait") {
      in.op = Op::Wait;
      in.kind = kind(s, "load", true);
      in.count = s.u32_or("count", 0);
      emit(s, in);
    } else if (op == "alu") {
      in.op = Op::Alu;
      in.count = positive("count");
      emit(s, in);
    } else if (op == "lds_read" || op == "lds_write") {
      in.op = op == "lds_read" ? Op::LdsRead : Op::LdsWrite;
      in.flag = find_flag(s);
      if (in.op == Op::LdsWrite) in.count = s.u32_or("value", 1);
      emit(s, in);
    } else if (op == "alloc_vgpr") {
      in.op = Op::AllocVgpr;
      in.count = s.u32("vgprs");
      program_peak_ = std::max(program_peak_, in.count);
      emit(s, in);
    } else if (op == "sleep") {
      in.op = Op::Sleep;
      in.count = s.u32("count");
      if (in.count > 127) s.fail(s.name("count"), "must be in 0..127 (s_sleep's 7-bit argument)");
      emit(s, in);
    } else if (op == "repeat") {
      in.op = Op::RepeatInit;
      in.count = positive("count");
      in.loop = wave_->loops++;
      emit(s, in);
      WaveInstruction back{.op = Op::RepeatBranch, .loop = in.loop};
      back.target = static_cast<uint32_t>(wave_->code.size());
      block(s.array("body"), s.name("body"), depth + 1);
      emit(s, back);
    } else if (op == "until_flag") {
      // do { body; ds_read flag; s_wait dscnt/lgkmcnt 0 } while (flag == 0)
      const auto begin = static_cast<uint32_t>(wave_->code.size());
      const uint32_t flag = find_flag(s);
      const Json& body = s.array("body");
      block(body, s.name("body"), depth + 1);
      emit(s, WaveInstruction{.op = Op::LdsRead, .flag = flag});
      emit(s, WaveInstruction{.op = Op::Wait, .kind = RequestKind::Lds});
      emit(s, WaveInstruction{.op = Op::FlagBranch, .flag = flag, .target = begin, .poll = body.empty()});
    } else {
      s.fail(s.name("op"), "must be one of load, wait, alu, lds_read, lds_write, alloc_vgpr, sleep, repeat, "
                           "until_flag (not '" + op + "')");
    }
    s.finish();
  }

 public:
  uint32_t program_peak_ = 0;  // the largest alloc_vgpr

 private:
  const std::string& origin_;
  WaveProgram& program_;
  WaveDefinition* wave_ = nullptr;
};

}  // namespace

uint32_t WaveProgram::workgroup_waves() const {
  uint32_t n = 0;
  for (const WaveDefinition& w : waves) n += w.count;
  return n;
}

WaveProgram parse_wave_program(std::string_view json, const std::string& origin) {
  const Json j = machine::parse_json_object(json, origin, kWhat);
  JsonSection top(j, "", origin, kWhat);
  WaveProgram p;
  p.name = origin;
  p.description = top.text("description");
  p.vgprs = top.u32("vgprs");
  if (p.vgprs > 256) top.fail("vgprs", "must be at most 256 (an instruction addresses 256 VGPRs)");
  p.workgroups = top.u32_or("workgroups", 1);
  if (p.workgroups == 0 || p.workgroups > 4096) top.fail("workgroups", "must be in 1..4096");
  p.max_cycles = top.u64_or("max_cycles", kDefaultMaxCycles);
  if (p.max_cycles == 0) top.fail("max_cycles", "must be at least 1");
  const Json& waves = top.array("waves");
  if (waves.empty()) top.fail("waves", "must list at least one wave");
  Reader reader(origin, p);
  for (size_t i = 0; i < waves.size(); ++i) p.waves.push_back(reader.wave(waves[i], i));
  top.finish();
  if (reader.program_peak_ > p.vgprs) {
    top.fail("vgprs", "is " + std::to_string(p.vgprs) + ", less than an alloc_vgpr of " +
                          std::to_string(reader.program_peak_) + ": under static allocation a wave holds `vgprs`, "
                          "so it must cover every alloc_vgpr");
  }
  return p;
}

WaveProgram load_wave_program(const std::string& path) {
  const std::optional<std::string> text = machine::read_regular_file(path);
  if (!text) throw_bad_input(path, "no readable wave program file");
  return parse_wave_program(*text, path);
}

}  // namespace hwbvh::emu
