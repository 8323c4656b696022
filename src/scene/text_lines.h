#pragma once
// Lexing shared by the OBJ and MTL readers. Both formats are one whitespace-separated statement per line, both
// must reject binary garbage up front, and both report the line of the first problem. The rules here are strict
// on purpose: the loader is fuzzed, and a lenient parse of a broken file silently produces a different scene.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace hwbvh::scene {

/// Throws BadInput naming `file` when `text` is not a text file: a NUL or other control byte (tab, CR and LF
/// excepted, and a DOS end-of-file byte, Ctrl-Z, as the very last byte), or mostly invalid UTF-8 (more than 1 byte
/// in 16). Occasional non-UTF-8 bytes, e.g. Latin-1 names, are accepted (see valid_utf8).
void require_text(std::string_view text, const std::string& file);

/// Splits text into statements the way OBJ tools do: "\n", "\r\n" and a lone "\r" each end a line; a `#` at the
/// start of a line or after a space or tab starts a comment that runs to the end of the line (a `#` inside a word,
/// as in `usemtl mat#2`, does not); a line whose last non-blank character is a backslash continues on the next
/// line. A UTF-8 byte-order mark at the start and a Ctrl-Z at the end are skipped.
class LineScanner {
 public:
  explicit LineScanner(std::string_view text);
  /// The next statement without comment and terminator (continued lines joined by a space); false at the end.
  bool next(std::string_view& line);
  /// 1-based number of the (first) line of the statement last returned by next().
  [[nodiscard]] std::size_t line_number() const { return line_number_; }
  /// Bytes of the text not scanned yet.
  [[nodiscard]] std::size_t remaining() const { return rest_.size(); }

 private:
  std::string_view next_physical();                         // the next line, without terminator and comment
  std::string_view join_continued(std::string_view line);  // `line` and the lines that continue it, in joined_

  std::string_view rest_;
  std::size_t line_number_ = 0;
  std::size_t physical_lines_ = 0;
  std::string joined_;  // continued lines, only built when there are any
};

/// Splits `line` at spaces and tabs into `tokens` (cleared first; views into `line`).
void split_tokens(std::string_view line, std::vector<std::string_view>& tokens);

/// `s` without leading and trailing spaces and tabs.
std::string_view trim(std::string_view s);

/// The text after the first token of `line`, trimmed (a statement's argument when it may contain spaces).
std::string_view after_keyword(std::string_view line);

enum class NumberParse { Ok, NotANumber, NotFinite };

/// Parses a decimal number, [+-](digits[.digits] | .digits)[(e|E)[+-]digits], to a float (rounded once, from
/// the exact decimal value). NaN and infinity spellings and values beyond the float range give NotFinite, so
/// they are reported as such rather than as garbage; values below the float range round to zero.
NumberParse parse_float(std::string_view token, float& value);

/// Parses [+-]digits to an int64; false for anything else, including values beyond the int64 range.
bool parse_integer(std::string_view token, int64_t& value);

/// `text` with every byte that is not part of valid UTF-8 replaced by U+FFFD (the replacement character), so
/// that names from Latin-1 files can be written to JSON. Valid text is returned unchanged.
std::string valid_utf8(std::string_view text);

/// A token in single quotes for messages: bytes outside printable ASCII escaped as \xNN, long tokens shortened.
std::string quote(std::string_view token);

/// Throws BadInput as "<file>: line <n>: <problem>".
[[noreturn]] void fail_at_line(const std::string& file, std::size_t line, const std::string& problem);

/// `text` without a leading UTF-8 byte-order mark.
std::string_view without_bom(std::string_view text);

enum class ReadStatus { Ok, NotFound, Failed };
struct FileRead {
  ReadStatus status = ReadStatus::Failed;
  std::string bytes;    ///< the whole file when status is Ok
  std::string problem;  ///< why not, otherwise ("file not found", "is a directory", ...)
};

/// Reads a whole regular file as bytes. Failures are returned, not thrown, so that each caller decides what a
/// missing file means (an error for the OBJ and for textures, ignored for an MTL library).
FileRead read_file(const std::filesystem::path& path);

/// The file name's extension in lowercase ASCII (".glb" for "scene.GLB"); empty when it has none.
std::string lower_extension(const std::filesystem::path& path);

/// Resolves a file name written inside an OBJ or MTL file against the directory of that file. Backslashes, as
/// Windows exporters write them, are taken as directory separators.
std::filesystem::path resolve_relative(const std::filesystem::path& dir, std::string_view name);

}  // namespace hwbvh::scene
