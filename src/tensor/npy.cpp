// tensor/npy.cpp — the .npy reader (preamble, header literal parser, payload decode) and writer.
#include "tensor/npy.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>

#include "tensor/strided.h"

namespace nki_agent {

// The payload is copied byte for byte between files and storage.
static_assert(std::endian::native == std::endian::little, "npy.cpp assumes a little-endian host");

namespace {

constexpr std::array<uint8_t, 6> kMagic = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t kPreambleV1 = 10;      // magic, 2 version bytes, uint16 header length
constexpr size_t kPreambleV2 = 12;      // magic, 2 version bytes, uint32 header length
constexpr size_t kHeaderAlign = 64;     // NumPy's ARRAY_ALIGN: the data starts on this boundary
constexpr size_t kMaxHeaderV1 = 65535;  // what the uint16 length of version 1.0 can hold
// NumPy leaves room to rewrite the first (C order) dimension in place with up to this many digits;
// we add the same spaces so untagged files are byte-identical to np.save's.
constexpr size_t kGrowthAxisDigits = 21;
// Deepest nesting of brackets the header parser follows. NumPy headers nest two deep (a dict
// holding a tuple); structured descrs a few more. The limit keeps hostile input off the stack.
constexpr int kMaxNesting = 32;
constexpr std::string_view kTagWord = "nki_agent";
constexpr size_t kExcerptChars = 120;  // how much header text a Diagnostic quotes

// ---- file element types -------------------------------------------------------------------------

enum class FileType : uint8_t { kF4, kF2, kF8, kI1, kI2, kI4, kI8, kU1, kU2, kU4, kU8, kB1 };

struct FileTypeInfo {
  FileType type;
  char kind;       // NumPy's kind letter
  int size;        // bytes per element in the file
  DType loaded;    // the tensor dtype it loads as
  bool converted;  // the bytes are converted (64-bit types), not copied
};

constexpr std::array<FileTypeInfo, 12> kFileTypes = {{
    {FileType::kF4, 'f', 4, DType::kFloat32, false},
    {FileType::kF2, 'f', 2, DType::kFloat16, false},
    {FileType::kF8, 'f', 8, DType::kFloat32, true},
    {FileType::kI1, 'i', 1, DType::kInt8, false},
    {FileType::kI2, 'i', 2, DType::kInt16, false},
    {FileType::kI4, 'i', 4, DType::kInt32, false},
    {FileType::kI8, 'i', 8, DType::kInt32, true},
    {FileType::kU1, 'u', 1, DType::kUInt8, false},
    {FileType::kU2, 'u', 2, DType::kUInt16, false},
    {FileType::kU4, 'u', 4, DType::kUInt32, false},
    {FileType::kU8, 'u', 8, DType::kInt32, true},
    {FileType::kB1, 'b', 1, DType::kBool, false},
}};

constexpr std::string_view kSupportedDescrs = "<f4 <f2 <f8 <i1 <i2 <i4 <i8 <u1 <u2 <u4 <u8 |b1 |i1 |u1";

const FileTypeInfo& file_type_info(FileType t) {
  return kFileTypes[static_cast<size_t>(t)];
}

std::string descr_of(FileType t) {
  const FileTypeInfo& fi = file_type_info(t);
  return fmt::format("{}{}{}", fi.size == 1 ? '|' : '<', fi.kind, fi.size);
}

// The file type that carries a tensor dtype's raw bits.
FileType carrier_of(DType d) {
  switch (d) {
    case DType::kFloat32:
    case DType::kTFloat32: return FileType::kF4;
    case DType::kBFloat16: return FileType::kU2;
    case DType::kFloat16: return FileType::kF2;
    case DType::kFloat8E4M3:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E5M2: return FileType::kU1;
    case DType::kInt8: return FileType::kI1;
    case DType::kInt16: return FileType::kI2;
    case DType::kInt32: return FileType::kI4;
    case DType::kUInt8: return FileType::kU1;
    case DType::kUInt16: return FileType::kU2;
    case DType::kUInt32: return FileType::kU4;
    case DType::kBool: return FileType::kB1;
    case DType::kFloat8E8M0: return FileType::kU1;
    // The packed x4 types travel as their bits, as the unsigned integer of their size.
    case DType::kFloat8E4M3FNx4:
    case DType::kFloat8E5M2x4: return FileType::kU4;
    case DType::kFloat4E2M1FNx4: return FileType::kU2;
  }
  return FileType::kU1;
}

// ---- diagnostics --------------------------------------------------------------------------------

tl::unexpected<Diagnostic> npy_fail(std::string_view name, std::string code, std::string message,
                                    std::string hint = {}) {
  Diagnostic d = Diagnostic::error(std::move(code), std::move(message), std::move(hint));
  d.at(SourceLoc{std::string(name), 0, 0});
  return fail(std::move(d));
}

// Header text quoted in messages: printable ASCII kept, the rest escaped, long text cut.
std::string excerpt(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size() && out.size() < kExcerptChars; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f)
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  if (out.size() >= kExcerptChars) out += "...";
  return out;
}

// ---- header literal parser ----------------------------------------------------------------------
// The Python literal subset NumPy writes: dicts, tuples, lists, strings in either quote style,
// integers (with an optional sign, and Python 2's 'L' suffix), True, False, None; whitespace and
// trailing commas anywhere Python allows them.

struct PyLit {
  enum class Kind : uint8_t { kStr, kInt, kBool, kNone, kTuple, kList, kDict };
  Kind kind = Kind::kNone;
  std::string str;           // kStr
  int64_t num = 0;           // kInt, kBool
  bool overflow = false;     // kInt outside int64
  std::vector<PyLit> items;  // kTuple, kList; kDict: key, value, key, value, ...
};

class LiteralParser {
 public:
  explicit LiteralParser(std::string_view text) : s_(text) {}

  // Parses the top-level dict and what may follow it (whitespace and # comments).
  std::optional<PyLit> parse_header(std::vector<std::string>& comments) {
    skip_ws();
    if (peek() != '{') return error("the header does not start with '{'");
    std::optional<PyLit> v = value(0);
    if (!v) return std::nullopt;
    while (true) {
      skip_ws();
      if (pos_ >= s_.size()) break;
      if (s_[pos_] != '#') return error("unexpected text after the header dict");
      const size_t end = std::min(s_.find('\n', pos_), s_.size());
      comments.emplace_back(s_.substr(pos_ + 1, end - pos_ - 1));
      pos_ = end;
    }
    return v;
  }

  const std::string& error_message() const { return error_; }

 private:
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  static bool is_ident(char c) { return c == '_' || is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_ws() {
    while (pos_ < s_.size() && is_space(s_[pos_])) ++pos_;
  }
  std::nullopt_t error(std::string what) {
    if (error_.empty()) error_ = fmt::format("{} (at byte {} of the header)", what, pos_);
    return std::nullopt;
  }

  std::optional<PyLit> value(int depth) {
    if (depth > kMaxNesting) return error(fmt::format("brackets nest deeper than {}", kMaxNesting));
    skip_ws();
    if (pos_ >= s_.size()) return error("the header ends where a value was expected");
    const char c = s_[pos_];
    if (c == '{') return sequence(depth, '}', PyLit::Kind::kDict);
    if (c == '(') return sequence(depth, ')', PyLit::Kind::kTuple);
    if (c == '[') return sequence(depth, ']', PyLit::Kind::kList);
    if (c == '\'' || c == '"') return string();
    if (is_digit(c) || c == '-' || c == '+') return integer();
    if (is_ident(c)) {
      const size_t start = pos_;
      while (pos_ < s_.size() && is_ident(s_[pos_])) ++pos_;
      const std::string_view word = s_.substr(start, pos_ - start);
      PyLit v;
      if (word == "True" || word == "False") {
        v.kind = PyLit::Kind::kBool;
        v.num = word == "True";
      } else if (word != "None") {
        pos_ = start;
        return error(fmt::format("unexpected name '{}'", excerpt(word)));
      }
      return v;
    }
    return error(fmt::format("unexpected character '{}'", excerpt(s_.substr(pos_, 1))));
  }

  std::optional<PyLit> sequence(int depth, char close, PyLit::Kind kind) {
    PyLit v;
    v.kind = kind;
    ++pos_;  // the opening bracket
    bool saw_comma = false;
    while (true) {
      skip_ws();
      if (peek() == close) {
        ++pos_;
        break;
      }
      if (!v.items.empty() && !saw_comma) return error(fmt::format("expected ',' or '{}'", close));
      std::optional<PyLit> item = value(depth + 1);
      if (!item) return std::nullopt;
      if (kind == PyLit::Kind::kDict) {
        if (item->kind != PyLit::Kind::kStr) return error("a header dict key is not a string");
        for (size_t k = 0; k < v.items.size(); k += 2)
          if (v.items[k].str == item->str) return error(fmt::format("duplicate key '{}'", excerpt(item->str)));
        skip_ws();
        if (peek() != ':') return error("expected ':' after a dict key");
        ++pos_;
        v.items.push_back(std::move(*item));
        item = value(depth + 1);
        if (!item) return std::nullopt;
      }
      v.items.push_back(std::move(*item));
      skip_ws();
      saw_comma = peek() == ',';
      if (saw_comma) ++pos_;
    }
    // Python needs the comma in a one-element tuple: (5) is just 5.
    if (kind == PyLit::Kind::kTuple && v.items.size() == 1 && !saw_comma) return v.items[0];
    return v;
  }

  std::optional<PyLit> string() {
    const char quote = s_[pos_++];
    PyLit v;
    v.kind = PyLit::Kind::kStr;
    while (true) {
      if (pos_ >= s_.size() || s_[pos_] == '\n') return error("unterminated string");
      char c = s_[pos_++];
      if (c == quote) break;
      if (c == '\\') {
        if (pos_ >= s_.size()) return error("unterminated string");
        const char e = s_[pos_++];
        if (e == '\\' || e == '\'' || e == '"')
          c = e;
        else
          return error(fmt::format("unsupported escape '\\{}' in a string", excerpt(std::string_view(&e, 1))));
      }
      v.str += c;
    }
    return v;
  }

  std::optional<PyLit> integer() {
    PyLit v;
    v.kind = PyLit::Kind::kInt;
    bool negative = false;
    while (peek() == '-' || peek() == '+') {
      if (s_[pos_] == '-') negative = !negative;
      ++pos_;
      skip_ws();
    }
    if (!is_digit(peek())) return error("expected digits after a sign");
    // Accumulate as a negative number so INT64_MIN fits.
    int64_t acc = 0;
    while (is_digit(peek())) {
      const int d = s_[pos_++] - '0';
      if (acc < (std::numeric_limits<int64_t>::min() + d) / 10)
        v.overflow = true;
      else
        acc = acc * 10 - d;
    }
    if (peek() == 'L' || peek() == 'l') ++pos_;  // Python 2 long, as old NumPy wrote it
    if (is_ident(peek()) || peek() == '.') return error("not an integer");
    if (!negative) {
      if (acc == std::numeric_limits<int64_t>::min())
        v.overflow = true;
      else
        acc = -acc;
    }
    v.num = acc;
    return v;
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string error_;
};

// ---- header interpretation ----------------------------------------------------------------------

struct Header {
  int major = 1;
  size_t data_offset = 0;  // bytes before the payload
  FileType ftype = FileType::kF4;
  DType dtype = DType::kFloat32;  // what the tensor will be (the tag's dtype, if any)
  bool fortran = false;
  Shape shape;
  int64_t numel = 0;
  uint64_t data_bytes = 0;  // payload size in the file
};

// Reads the fixed preamble: magic, version, header length. `bytes` is the start of the file (at
// least 12 bytes when the file has them) and `total` the whole file's size.
Result<Header> parse_preamble(std::span<const uint8_t> bytes, uint64_t total, std::string_view name) {
  const size_t have = bytes.size();
  const size_t cmp = std::min(have, kMagic.size());
  if (cmp > 0 && std::memcmp(bytes.data(), kMagic.data(), cmp) != 0)
    return npy_fail(name, "nkia_npy_bad_magic", "not a .npy file: it does not start with \"\\x93NUMPY\"",
                    "write the file with numpy.save or nki_agent's npy_save");
  if (total < kPreambleV1)
    return npy_fail(name, "nkia_npy_truncated_header",
                    fmt::format("the file is {} bytes, shorter than the 10-byte .npy preamble", total),
                    "the file was cut short; write it again");
  Header h;
  h.major = bytes[6];
  const int minor = bytes[7];
  if ((h.major != 1 && h.major != 2 && h.major != 3) || minor != 0)
    return npy_fail(name, "nkia_npy_unsupported_version",
                    fmt::format(".npy format version {}.{} is not supported (1.0, 2.0 and 3.0 are)", h.major, minor),
                    "save the array with numpy.save, which writes version 1.0 unless the header needs more");
  uint64_t header_len;
  size_t preamble;
  if (h.major == 1) {
    preamble = kPreambleV1;
    header_len = uint64_t{bytes[8]} | uint64_t{bytes[9]} << 8;
  } else {
    preamble = kPreambleV2;
    if (total < kPreambleV2)
      return npy_fail(
          name, "nkia_npy_truncated_header",
          fmt::format("the file is {} bytes, shorter than the 12-byte preamble of .npy version {}.0", total, h.major),
          "the file was cut short; write it again");
    header_len = uint64_t{bytes[8]} | uint64_t{bytes[9]} << 8 | uint64_t{bytes[10]} << 16 | uint64_t{bytes[11]} << 24;
  }
  if (preamble + header_len > total)
    return npy_fail(name, "nkia_npy_truncated_header",
                    fmt::format("the header is declared as {} bytes but the file has only {} bytes after the "
                                "{}-byte preamble",
                                header_len, total - preamble, preamble),
                    "the file was cut short or is not a .npy file; write it again");
  h.data_offset = static_cast<size_t>(preamble + header_len);
  return h;
}

// Reads the nki_agent tag out of the header's comments, if there is one.
Result<std::optional<DType>> parse_tag(const std::vector<std::string>& comments, std::string_view name) {
  std::optional<DType> tag;
  for (const std::string& raw : comments) {
    std::string_view c = raw;
    while (!c.empty() && (c.front() == ' ' || c.front() == '\t')) c.remove_prefix(1);
    while (!c.empty() && (c.back() == ' ' || c.back() == '\t' || c.back() == '\r')) c.remove_suffix(1);
    if (!c.starts_with(kTagWord)) continue;  // someone else's comment
    c.remove_prefix(kTagWord.size());
    if (!c.empty() && c.front() != ' ' && c.front() != '\t') continue;  // "nki_agentX": not ours
    while (!c.empty() && (c.front() == ' ' || c.front() == '\t')) c.remove_prefix(1);
    constexpr std::string_view kKey = "dtype=";
    const std::string hint =
        "the tag reads '# nki_agent dtype=NAME' with NAME one of bfloat16, tfloat32, "
        "float8_e4m3, float8_e4m3fn, float8_e5m2";
    if (!c.starts_with(kKey) || c.find_first_of(" \t") != std::string_view::npos)
      return npy_fail(name, "nkia_npy_bad_tag", fmt::format("malformed nki_agent tag '{}'", excerpt(raw)), hint);
    if (tag) return npy_fail(name, "nkia_npy_bad_tag", "the header has more than one nki_agent tag", hint);
    const std::string_view dname = c.substr(kKey.size());
    const std::optional<DType> d = dtype_from_name(dname);
    if (!d)
      return npy_fail(name, "nkia_npy_bad_tag",
                      fmt::format("the nki_agent tag names an unknown dtype '{}'", excerpt(dname)), hint);
    tag = d;
  }
  return tag;
}

// Maps a descr string to a file type, or says why it is not supported.
Result<FileType> parse_descr(std::string_view descr, std::string_view name) {
  const std::string supported = fmt::format("supported: {}", kSupportedDescrs);
  std::string_view body = descr;
  char order = '|';
  if (!body.empty() && (body[0] == '<' || body[0] == '>' || body[0] == '|' || body[0] == '=')) {
    order = body[0];
    body.remove_prefix(1);
  }
  const char kind = body.empty() ? '\0' : body[0];
  if (kind == 'O')
    return npy_fail(name, "nkia_npy_object_array",
                    fmt::format("the file holds a Python object array (descr '{}'), which cannot be loaded "
                                "without running pickle",
                                excerpt(descr)),
                    fmt::format("convert it to a numeric array before saving; {}", supported));
  int size = 0;
  bool digits_ok = body.size() >= 2 && body.size() <= 4;
  for (size_t i = 1; i < body.size() && digits_ok; ++i) {
    if (body[i] < '0' || body[i] > '9')
      digits_ok = false;
    else
      size = size * 10 + (body[i] - '0');
  }
  std::optional<FileType> found;
  if (digits_ok)
    for (const FileTypeInfo& fi : kFileTypes)
      if (fi.kind == kind && fi.size == size) found = fi.type;
  if (!found) {
    std::string what;
    switch (kind) {
      case 'c': what = "complex numbers"; break;
      case 'U': what = "unicode strings"; break;
      case 'S':
      case 'a': what = "byte strings"; break;
      case 'V': what = "raw void records (ml_dtypes types such as bfloat16 save as these)"; break;
      case 'M': what = "datetimes"; break;
      case 'm': what = "timedeltas"; break;
      case 'f': what = "a float width the simulator lacks"; break;
      case 'i':
      case 'u': what = "an integer width the simulator lacks"; break;
      default: what = "an unknown type"; break;
    }
    return npy_fail(name, "nkia_npy_unsupported_dtype",
                    fmt::format("unsupported dtype '{}' ({}); {}", excerpt(descr), what, supported),
                    kind == 'V' ? "save narrow floats as their bits: numpy.save(path, a.view(numpy.uint16)) for "
                                  "bfloat16, a.view(numpy.uint8) for float8"
                                : "convert the array to a supported dtype with astype() before saving");
  }
  if (order == '>' && file_type_info(*found).size > 1)
    return npy_fail(
        name, "nkia_npy_big_endian",
        fmt::format("the file holds big-endian data (descr '{}'); only little-endian is supported", excerpt(descr)),
        "save a little-endian copy: numpy.save(path, a.astype(a.dtype.newbyteorder('<')))");
  return *found;
}

// Parses the header text and fills in type, order, shape and sizes; checks the payload against
// the `available` bytes after the header.
Result<void> parse_header_text(Header& h, std::string_view text, uint64_t available, std::string_view name) {
  const std::string header_hint =
      "the header must be a dict like {'descr': '<f4', 'fortran_order': False, "
      "'shape': (2, 3), } as numpy.save writes it";
  LiteralParser parser(text);
  std::vector<std::string> comments;
  const std::optional<PyLit> dict = parser.parse_header(comments);
  if (!dict)
    return npy_fail(name, "nkia_npy_bad_header",
                    fmt::format("malformed header: {}; header text: \"{}\"", parser.error_message(), excerpt(text)),
                    header_hint);
  if (dict->kind != PyLit::Kind::kDict)
    return npy_fail(name, "nkia_npy_bad_header", "the header is not a dict", header_hint);
  const PyLit* descr = nullptr;
  const PyLit* fortran = nullptr;
  const PyLit* shape = nullptr;
  for (size_t k = 0; k + 1 < dict->items.size(); k += 2) {
    const std::string& key = dict->items[k].str;
    const PyLit* v = &dict->items[k + 1];
    if (key == "descr")
      descr = v;
    else if (key == "fortran_order")
      fortran = v;
    else if (key == "shape")
      shape = v;
    else
      return npy_fail(name, "nkia_npy_bad_header", fmt::format("unexpected key '{}' in the header dict", excerpt(key)),
                      header_hint);
  }
  const std::array<std::pair<const PyLit*, const char*>, 3> required = {
      {{descr, "descr"}, {fortran, "fortran_order"}, {shape, "shape"}}};
  for (const auto& [p, key] : required)
    if (!p)
      return npy_fail(name, "nkia_npy_bad_header", fmt::format("the header dict has no '{}' key", key), header_hint);

  // descr: a string for plain arrays; a list means a structured dtype.
  if (descr->kind == PyLit::Kind::kList)
    return npy_fail(name, "nkia_npy_unsupported_dtype",
                    fmt::format("structured (record) dtypes are not supported; supported: {}", kSupportedDescrs),
                    "save each field as its own array");
  if (descr->kind != PyLit::Kind::kStr)
    return npy_fail(name, "nkia_npy_bad_header", "'descr' is not a string", header_hint);
  Result<FileType> ft = parse_descr(descr->str, name);
  if (!ft) return tl::unexpected(ft.error());
  h.ftype = *ft;
  h.dtype = file_type_info(h.ftype).loaded;

  if (fortran->kind != PyLit::Kind::kBool)
    return npy_fail(name, "nkia_npy_bad_header", "'fortran_order' is not True or False", header_hint);
  h.fortran = fortran->num != 0;

  if (shape->kind != PyLit::Kind::kTuple)
    return npy_fail(name, "nkia_npy_bad_header", "'shape' is not a tuple", header_hint);
  // Every stride the tensor may use must fit in int64: multiply the dimensions (zeros counted as
  // ones, since contiguous strides skip them) and the element size without overflow.
  h.shape.clear();
  int64_t span = file_type_info(h.ftype).size;
  bool overflow = false;
  for (const PyLit& d : shape->items) {
    if (d.kind != PyLit::Kind::kInt)
      return npy_fail(name, "nkia_npy_bad_header", "'shape' holds something other than integers", header_hint);
    if (d.overflow || d.num < 0)
      return npy_fail(name, "nkia_npy_bad_shape",
                      d.overflow ? "a dimension in 'shape' does not fit in 64 bits"
                                 : fmt::format("negative dimension {} in 'shape'", d.num),
                      "the file is corrupt");
    if (__builtin_mul_overflow(span, std::max<int64_t>(d.num, 1), &span)) overflow = true;
    h.shape.push_back(d.num);
  }
  if (overflow)
    return npy_fail(name, "nkia_npy_bad_shape",
                    fmt::format("shape {} is too large: its size in bytes overflows 64 bits", shape_str(h.shape)),
                    "the file is corrupt");
  h.numel = shape_numel(h.shape);
  h.data_bytes = static_cast<uint64_t>(h.numel) * static_cast<uint64_t>(file_type_info(h.ftype).size);

  Result<std::optional<DType>> tag = parse_tag(comments, name);
  if (!tag) return tl::unexpected(tag.error());
  if (*tag) {
    const DType td = **tag;
    if (carrier_of(td) != h.ftype)
      return npy_fail(name, "nkia_npy_bad_tag",
                      fmt::format("the nki_agent tag says {} but descr is '{}'; {} is stored as '{}'", dtype_name(td),
                                  excerpt(descr->str), dtype_name(td), descr_of(carrier_of(td))),
                      "the file was edited inconsistently; write it again with npy_save");
    h.dtype = td;
  }

  if (available != h.data_bytes) {
    const std::string what =
        fmt::format("shape {} of '{}' needs {} data bytes", shape_str(h.shape), descr_of(h.ftype), h.data_bytes);
    if (available < h.data_bytes)
      return npy_fail(name, "nkia_npy_size_mismatch",
                      fmt::format("truncated data: {} but the file has only {} after the header", what, available),
                      "the file was cut short; write it again");
    return npy_fail(
        name, "nkia_npy_size_mismatch",
        fmt::format("{} but the file has {} after the header ({} extra)", what, available, available - h.data_bytes),
        "the file is corrupt or is not a single .npy array (an .npz archive is a zip file)");
  }
  return {};
}

// Reads a header out of its text: v1/v2 are latin-1 and v3 utf-8, but every byte we interpret is
// ASCII, so the bytes are parsed as they are.
Result<Header> parse_header(std::span<const uint8_t> bytes, uint64_t total, std::string_view name) {
  Result<Header> h = parse_preamble(bytes, total, name);
  if (!h) return h;
  const size_t start = h->major == 1 ? kPreambleV1 : kPreambleV2;
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + start, h->data_offset - start);
  Result<void> r = parse_header_text(*h, text, total - h->data_offset, name);
  if (!r) return tl::unexpected(r.error());
  return h;
}

// The tensor a payload is decoded into: C order for the file's shape, or for the reversed shape
// when the file is in Fortran order (finish() then transposes it back).
Tensor alloc_for(const Header& h) {
  Shape storage_shape = h.shape;
  if (h.fortran) std::reverse(storage_shape.begin(), storage_shape.end());
  return Tensor::empty(storage_shape, h.dtype);
}

Tensor finish(Tensor t, const Header& h) {
  if (h.fortran && t.ndim() > 1) return t.transpose().copy();
  return t;
}

// Whether the payload bytes are the storage bytes, so the file can be read straight into storage.
bool payload_is_storage(const Header& h) {
  return !file_type_info(h.ftype).converted && h.ftype != FileType::kB1;
}

// Decodes the payload `src` (exactly h.data_bytes bytes) into the storage of `t` (from alloc_for).
Result<void> decode_into(const Header& h, const uint8_t* src, Tensor& t, std::string_view name) {
  auto* dst = static_cast<uint8_t*>(t.data());
  const auto n = static_cast<size_t>(h.numel);
  switch (h.ftype) {
    case FileType::kF8:
      for (size_t i = 0; i < n; ++i) {
        double d;
        std::memcpy(&d, src + 8 * i, 8);
        const float f = f32_from_f64(d);
        std::memcpy(dst + 4 * i, &f, 4);
      }
      break;
    case FileType::kI8:
    case FileType::kU8:
      for (size_t i = 0; i < n; ++i) {
        uint64_t raw;
        std::memcpy(&raw, src + 8 * i, 8);
        const bool is_signed = h.ftype == FileType::kI8;
        const auto v = static_cast<int64_t>(raw);
        const bool fits = is_signed
                              ? (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max())
                              : raw <= static_cast<uint64_t>(std::numeric_limits<int32_t>::max());
        if (!fits)
          return npy_fail(name, "nkia_npy_value_range",
                          fmt::format("element {} (in file order) is {}, outside the int32 range that '{}' data "
                                      "is converted to",
                                      i, is_signed ? std::to_string(v) : std::to_string(raw), descr_of(h.ftype)),
                          "the simulator has no 64-bit integers; save the array as int32 after checking its range");
        const auto w = static_cast<int32_t>(v);
        std::memcpy(dst + 4 * i, &w, 4);
      }
      break;
    case FileType::kB1:
      for (size_t i = 0; i < n; ++i) dst[i] = src[i] != 0;  // NumPy reads any nonzero byte as True
      break;
    default:
      if (n > 0) std::memcpy(dst, src, static_cast<size_t>(h.data_bytes));
      break;
  }
  return {};
}

// ---- writing ------------------------------------------------------------------------------------

struct WritePlan {
  std::vector<uint8_t> preamble_and_header;
  bool as_f32 = false;  // payload is load_f32 of each element, else raw bytes
};

WritePlan plan_write(const Tensor& t, NpyOptions opts) {
  if (!t.defined()) throw std::invalid_argument("npy: cannot write an undefined tensor");
  WritePlan plan;
  const DType d = t.dtype();
  std::string descr;
  std::string tag;
  if (dtype_is_numpy_foreign(d) && opts.narrow_as == NarrowAs::kFloat32) {
    plan.as_f32 = true;
    descr = descr_of(FileType::kF4);
  } else {
    descr = descr_of(carrier_of(d));
    if (dtype_is_numpy_foreign(d)) tag = fmt::format(" # {} dtype={}", kTagWord, dtype_name(d));
  }
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i) shape += fmt::format("{}{}", i ? ", " : "", t.shape()[i]);
  shape += t.shape().size() == 1 ? ",)" : ")";
  // The same text as NumPy's _write_array_header: sorted keys, reprs, a trailing ", ".
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape);
  header += tag;
  if (t.ndim() > 0) {
    const size_t digits = std::to_string(t.shape()[0]).size();
    header.append(kGrowthAxisDigits - std::min(digits, kGrowthAxisDigits), ' ');
  }
  // Pad with spaces and a final '\n' so the data starts on a 64-byte boundary. Like NumPy, a header
  // that is already aligned still gets a full 64 bytes of padding.
  auto wrap = [&](size_t preamble) {
    const size_t hlen = header.size() + 1;
    const size_t pad = kHeaderAlign - (preamble + hlen) % kHeaderAlign;
    return hlen + pad;
  };
  size_t preamble = kPreambleV1;
  size_t total_header = wrap(kPreambleV1);
  int major = 1;
  if (total_header > kMaxHeaderV1) {
    preamble = kPreambleV2;
    total_header = wrap(kPreambleV2);
    major = 2;
  }
  auto& out = plan.preamble_and_header;
  out.reserve(preamble + total_header);
  out.insert(out.end(), kMagic.begin(), kMagic.end());
  out.push_back(static_cast<uint8_t>(major));
  out.push_back(0);
  for (size_t b = 0; b < preamble - kMagic.size() - 2; ++b)
    out.push_back(static_cast<uint8_t>(total_header >> (8 * b)));
  out.insert(out.end(), header.begin(), header.end());
  out.resize(preamble + total_header - 1, ' ');
  out.push_back('\n');
  return plan;
}

// Hands the payload of `t` in C order to sink(bytes, n), one row at a time.
template <typename Sink>
void write_payload(const Tensor& t, bool as_f32, Sink&& sink) {
  const int64_t isz = t.itemsize();
  const DType d = t.dtype();
  std::vector<uint8_t> buf;
  for_each_row({&t}, [&](const RowPtrs& p, int64_t n, const int64_t* st) {
    const auto* s = static_cast<const uint8_t*>(p[0]);
    if (!as_f32 && st[0] == 1) {
      sink(s, static_cast<size_t>(n * isz));
      return;
    }
    const size_t osz = as_f32 ? 4 : static_cast<size_t>(isz);
    buf.resize(static_cast<size_t>(n) * osz);
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t* e = s + i * st[0] * isz;
      uint8_t* o = buf.data() + static_cast<size_t>(i) * osz;
      if (as_f32) {
        const float f = load_f32(e, d);
        std::memcpy(o, &f, 4);
      } else {
        std::memcpy(o, e, osz);
      }
    }
    sink(buf.data(), buf.size());
  });
}

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

}  // namespace

// ---- public API ---------------------------------------------------------------------------------

Result<Tensor> npy_parse(std::span<const uint8_t> bytes, std::string_view name_for_messages) {
  Result<Header> h = parse_header(bytes, bytes.size(), name_for_messages);
  if (!h) return tl::unexpected(h.error());
  Tensor t = alloc_for(*h);
  Result<void> r = decode_into(*h, bytes.data() + h->data_offset, t, name_for_messages);
  if (!r) return tl::unexpected(r.error());
  return finish(std::move(t), *h);
}

Result<Tensor> npy_view(const std::shared_ptr<ExternalMemory>& memory, int64_t offset, int64_t size,
                        std::string_view name_for_messages) {
  if (!memory || offset < 0 || size < 0 || offset > memory->byte_size() || size > memory->byte_size() - offset)
    throw std::invalid_argument("npy_view: bytes outside their memory");
  const std::span<const uint8_t> bytes(memory->bytes() + offset, static_cast<size_t>(size));
  Result<Header> h = parse_header(bytes, bytes.size(), name_for_messages);
  if (!h) return tl::unexpected(h.error());
  const int64_t at = offset + static_cast<int64_t>(h->data_offset);
  constexpr uintptr_t kAlign = 64;  // what a Storage in external memory needs
  const bool aligned =
      reinterpret_cast<uintptr_t>(memory->bytes()) % kAlign == 0 && static_cast<uintptr_t>(at) % kAlign == 0;
  if (!payload_is_storage(*h) || h->fortran || !aligned) return npy_parse(bytes, name_for_messages);
  auto storage = std::make_shared<Storage>(memory, at, static_cast<int64_t>(h->data_bytes));
  return Tensor(std::move(storage), h->dtype, h->shape, contiguous_strides(h->shape), 0);
}

Result<Tensor> npy_load(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found)
    return npy_fail(path, "nkia_npy_not_found", fmt::format("no such file: {}", path),
                    "check the path; relative paths are resolved from the current directory");
  if (status.type() == std::filesystem::file_type::directory)
    return npy_fail(path, "nkia_npy_unreadable", fmt::format("{} is a directory, not a .npy file", path));
  FilePtr f(std::fopen(path.c_str(), "rb"));
  if (!f)
    return npy_fail(path, "nkia_npy_unreadable", fmt::format("cannot open {}: {}", path, std::strerror(errno)),
                    "check the file's permissions");
  auto read_error = [&] {
    const std::string why =
        std::ferror(f.get()) ? std::strerror(errno) : "the file ended early (changed while reading?)";
    return npy_fail(path, "nkia_npy_unreadable", fmt::format("error reading {}: {}", path, why));
  };
  if (std::fseek(f.get(), 0, SEEK_END) != 0) return read_error();
  const long end = std::ftell(f.get());
  if (end < 0 || std::fseek(f.get(), 0, SEEK_SET) != 0) return read_error();
  const auto total = static_cast<uint64_t>(end);

  // Preamble, then the header it declares (bounded by the file size), then the payload once its
  // size has been checked.
  std::vector<uint8_t> head(static_cast<size_t>(std::min<uint64_t>(total, kPreambleV2)));
  if (std::fread(head.data(), 1, head.size(), f.get()) != head.size()) return read_error();
  Result<Header> pre = parse_preamble(head, total, path);
  if (!pre) return tl::unexpected(pre.error());
  const size_t already = head.size();
  head.resize(pre->data_offset);
  if (head.size() > already &&
      std::fread(head.data() + already, 1, head.size() - already, f.get()) != head.size() - already)
    return read_error();
  if (head.size() < already && std::fseek(f.get(), static_cast<long>(head.size()), SEEK_SET) != 0) return read_error();
  Result<Header> h = parse_header(head, total, path);
  if (!h) return tl::unexpected(h.error());

  Tensor t = alloc_for(*h);
  const auto nbytes = static_cast<size_t>(h->data_bytes);
  if (payload_is_storage(*h)) {
    if (nbytes > 0 && std::fread(t.data(), 1, nbytes, f.get()) != nbytes) return read_error();
  } else {
    std::vector<uint8_t> payload(nbytes);
    if (std::fread(payload.data(), 1, nbytes, f.get()) != nbytes) return read_error();
    Result<void> r = decode_into(*h, payload.data(), t, path);
    if (!r) return tl::unexpected(r.error());
  }
  return finish(std::move(t), *h);
}

std::vector<uint8_t> npy_serialize(const Tensor& t, NpyOptions opts) {
  WritePlan plan = plan_write(t, opts);
  std::vector<uint8_t> out = std::move(plan.preamble_and_header);
  out.reserve(out.size() + static_cast<size_t>(t.numel()) * (plan.as_f32 ? 4 : static_cast<size_t>(t.itemsize())));
  write_payload(t, plan.as_f32, [&](const uint8_t* p, size_t n) { out.insert(out.end(), p, p + n); });
  return out;
}

size_t npy_serialized_size(const Tensor& t, NpyOptions opts) {
  const WritePlan plan = plan_write(t, opts);
  return plan.preamble_and_header.size() +
         static_cast<size_t>(t.numel()) * (plan.as_f32 ? 4 : static_cast<size_t>(t.itemsize()));
}

void npy_serialize_append(const Tensor& t, std::string& out, NpyOptions opts) {
  const WritePlan plan = plan_write(t, opts);
  out.append(reinterpret_cast<const char*>(plan.preamble_and_header.data()), plan.preamble_and_header.size());
  write_payload(t, plan.as_f32, [&](const uint8_t* p, size_t n) { out.append(reinterpret_cast<const char*>(p), n); });
}

std::string npy_header_before_storage(const Tensor& t, NpyOptions opts) {
  const WritePlan plan = plan_write(t, opts);
  if (plan.as_f32 || !t.is_contiguous()) return {};
  return std::string(plan.preamble_and_header.begin(), plan.preamble_and_header.end());
}

Result<void> npy_save(const std::string& path, const Tensor& t, NpyOptions opts) {
  const WritePlan plan = plan_write(t, opts);
  FilePtr f(std::fopen(path.c_str(), "wb"));
  auto unwritable = [&] {
    return npy_fail(path, "nkia_npy_unwritable", fmt::format("cannot write {}: {}", path, std::strerror(errno)),
                    "check that the folder exists and is writable, and that the disk has space");
  };
  if (!f) return unwritable();
  bool ok = std::fwrite(plan.preamble_and_header.data(), 1, plan.preamble_and_header.size(), f.get()) ==
            plan.preamble_and_header.size();
  write_payload(t, plan.as_f32, [&](const uint8_t* p, size_t n) {
    if (ok && std::fwrite(p, 1, n, f.get()) != n) ok = false;
  });
  if (!ok) return unwritable();
  if (std::fclose(f.release()) != 0) return unwritable();
  return {};
}

}  // namespace nki_agent
