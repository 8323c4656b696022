#include "scene/text_lines.h"

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <system_error>

#include "hwbvh/core/error.h"

namespace hwbvh::scene {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Length of the valid UTF-8 sequence starting at text[i] (a byte >= 0x80), or 0 when it is not one: bad lead or
// continuation byte, truncated, overlong, surrogate or beyond U+10FFFF.
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  const std::size_t length =
      (lead & 0xE0u) == 0xC0u ? 2 : (lead & 0xF0u) == 0xE0u ? 3 : (lead & 0xF8u) == 0xF0u ? 4 : 0;
  if (length == 0) return 0;
  constexpr uint32_t kSmallest[5] = {0, 0, 0x80, 0x800, 0x10000};  // smaller code points here are overlong
  uint32_t code = lead & (0x7Fu >> length);
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const auto byte = static_cast<unsigned char>(text[i + k]);
    if ((byte & 0xC0u) != 0x80u) return 0;
    code = (code << 6) | (byte & 0x3Fu);
  }
  if (code < kSmallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

// 1-based line holding text[offset], counting line ends as LineScanner does.
std::size_t line_of_offset(std::string_view text, std::size_t offset) {
  std::size_t line = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n' || (text[i] == '\r' && (i + 1 >= text.size() || text[i + 1] != '\n'))) ++line;
  }
  return line;
}

// NaN and infinity as C libraries print them ("nan", "inf", "infinity", "nan(...)", MSVC's "1.#INF", "1.#QNAN",
// "-1.#IND"), without the sign.
bool is_non_finite_spelling(std::string_view body) {
  std::string lower(body.substr(0, 16));
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
  return lower == "nan" || lower == "inf" || lower == "infinity" || lower.starts_with("nan(") ||
         body.find(".#") != std::string_view::npos;
}

// Decimal exponent of the leading significant digit of a number whose digits are int_digits.frac_digits times
// 10^exponent; the sign tells whether a value beyond the double range overflowed or underflowed.
int64_t leading_exponent(std::string_view int_digits, std::string_view frac_digits, int64_t exponent) {
  const std::size_t int_start = int_digits.find_first_not_of('0');
  if (int_start != std::string_view::npos) {
    return exponent + static_cast<int64_t>(int_digits.size() - int_start) - 1;
  }
  const std::size_t frac_start = std::min(frac_digits.find_first_not_of('0'), frac_digits.size());
  return exponent - static_cast<int64_t>(frac_start) - 1;
}

// Whether the last character that is not a space or tab is a backslash: the line continues on the next.
bool continued(std::string_view line) {
  if (line.empty() || (line.back() != '\\' && line.back() != ' ' && line.back() != '\t')) return false;  // most lines
  std::size_t end = line.size();
  while (end > 0 && (line[end - 1] == ' ' || line[end - 1] == '\t')) --end;
  return end > 0 && line[end - 1] == '\\';
}

}  // namespace

void require_text(std::string_view text, const std::string& file) {
  if (text.ends_with('\x1A')) text.remove_suffix(1);  // a DOS end-of-file byte
  std::size_t invalid_utf8 = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(c));
      fail_at_line(file, line_of_offset(text, i),
                   std::string("control byte ") + byte + ": binary data, not a text file");
    }
    if (c < 0x80) {
      ++i;
      continue;
    }
    const std::size_t length = utf8_length(text, i);
    if (length == 0) ++invalid_utf8;
    i += std::max<std::size_t>(length, 1);
  }
  if (invalid_utf8 * 16 > text.size()) throw_bad_input(file, "mostly invalid UTF-8: binary data, not a text file");
}

LineScanner::LineScanner(std::string_view text) : rest_(without_bom(text)) {
  if (rest_.ends_with('\x1A')) rest_.remove_suffix(1);
}

// Plain loops below rather than find_first_of: with a character set, that calls memchr once per character. A '#'
// stops the scan only to be looked at: most lines have none, and then cost what they did before comments counted.
inline std::string_view LineScanner::next_physical() {
  std::size_t end = 0;
  std::size_t comment = std::string_view::npos;
  while (true) {
    while (end < rest_.size() && rest_[end] != '\n' && rest_[end] != '\r' && rest_[end] != '#') ++end;
    if (end == rest_.size() || rest_[end] != '#') break;
    if (end == 0 || rest_[end - 1] == ' ' || rest_[end - 1] == '\t') {
      comment = end;
      while (end < rest_.size() && rest_[end] != '\n' && rest_[end] != '\r') ++end;
      break;
    }
    ++end;
  }
  const std::string_view line = rest_.substr(0, std::min(end, comment));
  std::size_t skip = end;
  if (skip < rest_.size()) skip += rest_.compare(skip, 2, "\r\n") == 0 ? 2 : 1;
  rest_.remove_prefix(skip);
  ++physical_lines_;
  return line;
}

bool LineScanner::next(std::string_view& line) {
  if (rest_.empty()) return false;
  line = next_physical();
  line_number_ = physical_lines_;
  if (continued(line)) line = join_continued(line);
  return true;
}

// Continued lines are rare: only they are copied.
std::string_view LineScanner::join_continued(std::string_view line) {
  joined_.clear();
  do {
    const std::string_view part = trim(line);
    joined_.append(part.substr(0, part.size() - 1)).push_back(' ');
    line = rest_.empty() ? std::string_view{} : next_physical();
  } while (continued(line));
  joined_.append(line);
  return joined_;
}

void split_tokens(std::string_view line, std::vector<std::string_view>& tokens) {
  tokens.clear();
  const auto blank = [](char c) { return c == ' ' || c == '\t'; };
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && blank(line[i])) ++i;
    if (i == line.size()) return;
    const std::size_t begin = i;
    while (i < line.size() && !blank(line[i])) ++i;
    tokens.push_back(line.substr(begin, i - begin));
  }
}

std::string_view trim(std::string_view s) {
  const std::size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(" \t") - begin + 1);
}

std::string_view after_keyword(std::string_view line) {
  line = trim(line);
  const std::size_t end = line.find_first_of(" \t");
  return end == std::string_view::npos ? std::string_view{} : trim(line.substr(end));
}

NumberParse parse_float(std::string_view token, float& value) {
  const bool has_sign = !token.empty() && (token[0] == '+' || token[0] == '-');
  const std::string_view body = token.substr(has_sign ? 1 : 0);
  // Spellings of NaN and infinity are looked for only once the grammar has failed: numbers stay cheap.
  const auto rejected = [&] { return is_non_finite_spelling(body) ? NumberParse::NotFinite : NumberParse::NotANumber; };

  // The grammar is checked here rather than left to from_chars, which also takes "inf", "nan" and the like and
  // rejects a leading '+'.
  std::size_t i = 0;
  while (i < body.size() && is_digit(body[i])) ++i;
  const std::string_view int_digits = body.substr(0, i);
  std::string_view frac_digits;
  if (i < body.size() && body[i] == '.') {
    const std::size_t begin = ++i;
    while (i < body.size() && is_digit(body[i])) ++i;
    frac_digits = body.substr(begin, i - begin);
  }
  if (int_digits.empty() && frac_digits.empty()) return rejected();
  int64_t exponent = 0;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    const bool negative = i < body.size() && body[i] == '-';
    if (i < body.size() && (body[i] == '+' || body[i] == '-')) ++i;
    const std::size_t begin = i;
    for (; i < body.size() && is_digit(body[i]); ++i) {
      exponent = std::min<int64_t>(exponent * 10 + (body[i] - '0'), 1'000'000'000);  // saturates, still out of range
    }
    if (i == begin) return rejected();
    if (negative) exponent = -exponent;
  }
  if (i != body.size()) return rejected();

  double parsed = 0.0;
  const bool negative = has_sign && token[0] == '-';
  const auto [end, error] = std::from_chars(body.data(), body.data() + body.size(), parsed);
  if (error == std::errc::result_out_of_range) {
    if (leading_exponent(int_digits, frac_digits, exponent) > 0) return NumberParse::NotFinite;
    value = negative ? -0.0f : 0.0f;
    return NumberParse::Ok;
  }
  if (error != std::errc{} || end != body.data() + body.size()) return NumberParse::NotANumber;
  if (parsed > static_cast<double>(FLT_MAX)) return NumberParse::NotFinite;
  value = static_cast<float>(negative ? -parsed : parsed);
  return NumberParse::Ok;
}

bool parse_integer(std::string_view token, int64_t& value) {
  const std::size_t skip = token.starts_with('+') ? 1 : 0;
  const std::string_view digits = token.substr(skip);
  if (digits.empty() || !(is_digit(digits[0]) || (digits[0] == '-' && skip == 0))) return false;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return error == std::errc{} && end == digits.data() + digits.size();
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = static_cast<unsigned char>(text[i]) < 0x80 ? 1 : utf8_length(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string quote(std::string_view token) {
  constexpr std::size_t kMaxShown = 40;
  std::string out = "'";
  for (const char c : token.substr(0, kMaxShown)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7F) {
      out += c;
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02X", static_cast<unsigned>(byte));
      out += escaped;
    }
  }
  if (token.size() > kMaxShown) out += "...";
  return out + "'";
}

void fail_at_line(const std::string& file, std::size_t line, const std::string& problem) {
  throw_bad_input(file, "line " + std::to_string(line) + ": " + problem);
}

std::string_view without_bom(std::string_view text) {
  return text.starts_with("\xEF\xBB\xBF") ? text.substr(3) : text;
}

std::string lower_extension(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

FileRead read_file(const std::filesystem::path& path) {
  FileRead result;
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (status.type() == std::filesystem::file_type::not_found) {
    result.status = ReadStatus::NotFound;
    result.problem = "file not found";
  } else if (error) {
    result.problem = "cannot access file: " + error.message();
  } else if (std::filesystem::is_directory(status)) {
    result.problem = "is a directory, not a file";
  } else if (!std::filesystem::is_regular_file(status)) {
    result.problem = "not a regular file";  // devices and pipes could block or never end
  } else {
    std::ifstream in(path, std::ios::binary);
    const auto size = std::filesystem::file_size(path, error);
    if (!in.is_open() || error) {
      result.problem = "cannot open file for reading";
    } else {
      result.bytes.resize(size);
      in.read(result.bytes.data(), static_cast<std::streamsize>(size));
      if (static_cast<std::uintmax_t>(in.gcount()) != size) {
        result.problem = "read error";
      } else {
        result.status = ReadStatus::Ok;
      }
    }
  }
  return result;
}

std::filesystem::path resolve_relative(const std::filesystem::path& dir, std::string_view name) {
  std::string generic(name);
  std::replace(generic.begin(), generic.end(), '\\', '/');
  return (dir / generic).lexically_normal();
}

}  // namespace hwbvh::scene
