// write_file_atomically keeps what the output path names: a regular file is replaced whole through a temporary, a
// symlink keeps pointing at its updated target, a character device or FIFO is written in place (and a failed
// write reported), a directory is refused and left as it was.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "blob/scratch_dir.h"
#include "fixtures/fifo_reader.h"
#include "hwbvh/core/error.h"
#include "hwbvh/core/file_io.h"

namespace hwbvh {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::span<const std::byte> bytes_of(const std::string& text) { return std::as_bytes(std::span(text)); }

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// No "<name>.tmp-..." file is left anywhere under `dir`.
void expect_no_temporaries(const std::filesystem::path& dir) {
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    EXPECT_THAT(e.path().filename().string(), Not(HasSubstr(".tmp-")));
}

// The Error `write` throws (a test failure when it throws none).
Error error_of(const std::function<void()>& write) {
  try {
    write();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error thrown";
  return Error(ErrorKind::Runtime, "", "");
}

TEST(WriteFileAtomically, ReplacesARegularFileWholeAndKeepsItsMode) {
  const test::ScratchDir dir;
  const auto file = dir.write("out.bin", "old contents that are longer than the new ones");
  std::filesystem::permissions(file, std::filesystem::perms(0640));
  write_file_atomically(file, bytes_of("new"));
  EXPECT_EQ(read_text(file), "new");
  EXPECT_EQ(std::filesystem::status(file).permissions(), std::filesystem::perms(0640));
  write_file_atomically(dir / "fresh.bin", bytes_of("fresh"));
  EXPECT_EQ(read_text(dir / "fresh.bin"), "fresh");
  expect_no_temporaries(dir.path());
}

TEST(WriteFileAtomically, WritesThroughASymlinkAndKeepsTheLink) {
  const test::ScratchDir dir;
  const auto target = dir.write("real/out.bin", "old");
  std::filesystem::create_symlink("real/out.bin", dir / "link.bin");  // relative to the link's folder
  std::filesystem::create_directories(dir / "links");
  std::filesystem::create_symlink("../link.bin", dir / "links/chained.bin");  // a link to the link
  write_file_atomically(dir / "links/chained.bin", bytes_of("through two links"));
  for (const char* link : {"link.bin", "links/chained.bin"}) EXPECT_TRUE(std::filesystem::is_symlink(dir / link));
  EXPECT_EQ(std::filesystem::read_symlink(dir / "link.bin"), "real/out.bin");
  EXPECT_EQ(read_text(target), "through two links");

  // A dangling link: its target is created, the link kept.
  std::filesystem::create_symlink("real/new.bin", dir / "dangling.bin");
  write_file_atomically(dir / "dangling.bin", bytes_of("created"));
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "dangling.bin"));
  EXPECT_EQ(read_text(dir / "real/new.bin"), "created");
  expect_no_temporaries(dir.path());

  // A link loop is refused, not followed for ever.
  std::filesystem::create_symlink("loop-b", dir / "loop-a");
  std::filesystem::create_symlink("loop-a", dir / "loop-b");
  const Error e = error_of([&] { write_file_atomically(dir / "loop-a", bytes_of("x")); });
  EXPECT_THAT(e.what(), HasSubstr("oo many levels of symbolic links"));  // strerror(ELOOP): "Too many ..."
}

TEST(WriteFileAtomically, WritesStraightToACharacterDevice) {
  write_file_atomically("/dev/null", bytes_of("discarded"));
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
}

TEST(WriteFileAtomically, ReportsAFailedWriteToADevice) {
  const Error e = error_of([] { write_file_atomically("/dev/full", bytes_of("no room")); });
  EXPECT_EQ(e.kind(), ErrorKind::Runtime);
  EXPECT_EQ(e.file(), "/dev/full");
  EXPECT_THAT(e.what(), HasSubstr("No space left on device"));
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/full"));
}

TEST(WriteFileAtomically, AFifoReceivesTheBytes) {
  const test::ScratchDir dir;
  const auto fifo = dir / "pipe";
  test::FifoReader reader(fifo);
  const std::string sent(100000, 'x');  // more than a pipe's buffer: the reader must drain it as it comes
  write_file_atomically(fifo, bytes_of(sent));
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
  const std::string received = reader.finish();
  EXPECT_EQ(received.size(), sent.size());
  EXPECT_TRUE(received == sent);
}

// /dev/stdout and the other /proc/self/fd links name open files: a pipe is written in place, a regular file
// replaced under its own name.
TEST(WriteFileAtomically, FollowsTheLinksToOpenFiles) {
  int pipe_ends[2];
  ASSERT_EQ(::pipe(pipe_ends), 0);
  write_file_atomically("/proc/self/fd/" + std::to_string(pipe_ends[1]), bytes_of("through a pipe"));
  ::close(pipe_ends[1]);
  char received[64] = {};
  EXPECT_EQ(::read(pipe_ends[0], received, sizeof received), 14);
  ::close(pipe_ends[0]);
  EXPECT_STREQ(received, "through a pipe");

  const test::ScratchDir dir;
  const auto file = dir.write("out.bin", "old");
  const int fd = ::open(file.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  write_file_atomically("/proc/self/fd/" + std::to_string(fd), bytes_of("new"));
  ::close(fd);
  EXPECT_EQ(read_text(file), "new");
  expect_no_temporaries(dir.path());
}

TEST(WriteFileAtomically, RefusesADirectoryAndLeavesItUntouched) {
  const test::ScratchDir dir;
  dir.write("out/inside.txt", "kept");
  std::filesystem::create_symlink("out", dir / "link-to-dir");
  for (const char* name : {"out", "link-to-dir"}) {
    const Error e = error_of([&] { write_file_atomically(dir / name, bytes_of("x")); });
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << name;
    EXPECT_THAT(e.what(), HasSubstr("the output path is a directory")) << name;
  }
  EXPECT_TRUE(std::filesystem::is_directory(dir / "out"));
  EXPECT_EQ(read_text(dir / "out/inside.txt"), "kept");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir / "out"), {}), 1);
  expect_no_temporaries(dir.path());
}

TEST(WriteFileAtomically, AMissingFolderIsARuntimeErrorNamingTheFile) {
  const test::ScratchDir dir;
  const Error e = error_of([&] { write_file_atomically(dir / "no-such-dir/out.bin", bytes_of("x")); });
  EXPECT_EQ(e.kind(), ErrorKind::Runtime);
  EXPECT_THAT(e.what(), HasSubstr("out.bin"));
  EXPECT_TRUE(dir.files().empty());
}

// AtomicOutput, piece by piece: nothing under the name until commit(), nothing at all when dropped uncommitted.
TEST(AtomicOutput, ShowsTheFileOnlyOnCommitAndLeavesNothingWhenDropped) {
  const test::ScratchDir dir;
  const auto file = dir.write("out.bin", "old");
  {
    AtomicOutput out(file);
    out.write(bytes_of("new "));
    out.write(bytes_of("contents"));
    EXPECT_EQ(read_text(file), "old");
    out.commit();
  }
  EXPECT_EQ(read_text(file), "new contents");
  {
    AtomicOutput out(dir / "dropped.bin");
    out.write(bytes_of("partial"));
  }  // an error before commit: the temporary goes
  EXPECT_FALSE(std::filesystem::exists(dir / "dropped.bin"));
  expect_no_temporaries(dir.path());
  EXPECT_EQ(AtomicOutput(dir / "new.bin").scratch_directory(), dir.path());
  EXPECT_EQ(AtomicOutput("/dev/null").scratch_directory(), std::filesystem::temp_directory_path());
}

// A ScratchFile holds what was appended, copies it into an output, and leaves no name behind.
TEST(ScratchFile, CopiesWhatWasAppendedAndLeavesNoFile) {
  const test::ScratchDir dir;
  ScratchFile scratch(dir.path());
  std::string expected;
  for (int i = 0; i < 3000; ++i) {  // several copy chunks
    const std::string line = std::string(700, static_cast<char>('a' + i % 26)) + "\n";
    scratch.append(bytes_of(line));
    expected += line;
  }
  EXPECT_EQ(scratch.size(), expected.size());
  EXPECT_TRUE(dir.files().empty());  // unnamed
  {
    AtomicOutput out(dir / "copy.txt");
    out.write(bytes_of("head\n"));
    scratch.copy_to(out);
    out.commit();
  }
  EXPECT_EQ(read_text(dir / "copy.txt"), "head\n" + expected);
  scratch.clear();
  EXPECT_EQ(scratch.size(), 0u);
  scratch.append(bytes_of("again"));
  AtomicOutput out(dir / "again.txt");
  scratch.copy_to(out);
  out.commit();
  EXPECT_EQ(read_text(dir / "again.txt"), "again");
}

}  // namespace
}  // namespace hwbvh
