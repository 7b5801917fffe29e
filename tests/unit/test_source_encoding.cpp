// Text that must be UTF-8: the validator (RFC 3629, as JSON and Python's codec define it), the
// location of the first bad byte, Python's PEP 263 declarations, and loading a kernel's folder —
// the kernel's own bytes are diagnosed, an unreadable helper fails only where it is imported.
#include <gtest/gtest.h>

#include <fstream>

#include "core/utf8.h"
#include "runtime/kernel_call.h"
#include "runtime/python_source.h"
#include "support/python_oracle.h"

namespace nki_agent {
namespace {

constexpr size_t kNone = std::string_view::npos;

TEST(Utf8, WellFormedAndNot) {
  EXPECT_EQ(invalid_utf8_offset(""), kNone);
  EXPECT_EQ(invalid_utf8_offset("plain ascii\n"), kNone);
  EXPECT_EQ(invalid_utf8_offset("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), kNone);  // é € 😀
  EXPECT_EQ(invalid_utf8_offset("caf\xe9"), 3u);                                       // Latin-1 é
  EXPECT_EQ(invalid_utf8_offset("ab\xc0\xaf"), 2u);                                    // overlong '/'
  EXPECT_EQ(invalid_utf8_offset("ab\xe0\x80\xaf"), 2u);                                // overlong, 3 bytes
  EXPECT_EQ(invalid_utf8_offset("x\xed\xa0\x80"), 1u);                                 // a surrogate
  EXPECT_EQ(invalid_utf8_offset("x\xf4\x90\x80\x80"), 1u);                             // past U+10FFFF
  EXPECT_EQ(invalid_utf8_offset("x\xe2\x82"), 1u);                                     // truncated
  EXPECT_EQ(invalid_utf8_offset("x\x80"), 1u);                                         // a lone continuation
  EXPECT_EQ(invalid_utf8_offset(std::string("a\0b", 3)), kNone);                       // NUL is text
}

TEST(Utf8, LocationCountsCharactersAndEscapingShowsBytes) {
  const std::string text = "line one\n\xc3\xa9t\xc3\xa9 \xff\n";
  const size_t at = invalid_utf8_offset(text);
  SourceLoc loc = text_location(text, at, "f.py");
  EXPECT_EQ(loc.file, "f.py");
  EXPECT_EQ(loc.line, 2);
  EXPECT_EQ(loc.col, 5);  // "été " is four characters before it
  EXPECT_EQ(escape_invalid_utf8("caf\xe9 ok \xc3\xa9"), "caf\\xe9 ok \xc3\xa9");
  std::string out;
  for (char32_t cp : {U'A', U'\u00e9', U'\u20ac', U'\U0001F600'}) append_utf8(out, cp);
  EXPECT_EQ(out, "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
}

TEST(PythonSource, UndeclaredLatin1IsDiagnosedAtItsByte) {
  auto r = python_source_text("import x\ns = 'caf\xe9'\n", "k.py");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "nkia_not_utf8");
  EXPECT_EQ(r.error().loc.file, "k.py");
  EXPECT_EQ(r.error().loc.line, 2);
  EXPECT_EQ(r.error().loc.col, 9);
  EXPECT_NE(r.error().message.find("0xe9"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().hint.find("coding"), std::string::npos);
  // Declared UTF-8 is no excuse.
  auto d = python_source_text("# coding: utf-8\ns = '\xe9'\n", "k.py");
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, "nkia_not_utf8");
  EXPECT_EQ(d.error().loc.line, 2);
}

TEST(PythonSource, DeclaredEncodingsAreDecoded) {
  auto latin = python_source_text("# -*- coding: latin-1 -*-\ns = 'caf\xe9'\n", "k.py");
  ASSERT_TRUE(latin) << latin.error().format();
  EXPECT_EQ(*latin, "# -*- coding: latin-1 -*-\ns = 'caf\xc3\xa9'\n");
  auto iso = python_source_text("#!/usr/bin/env python\n# vim: set fileencoding=ISO-8859-1 :\nx = '\xff'\n", "k.py");
  ASSERT_TRUE(iso) << iso.error().format();
  EXPECT_NE(iso->find("x = '\xc3\xbf'"), std::string::npos);
  auto cp = python_source_text("# coding=cp1252\ns = '\x80 \x93q\x94'\n", "k.py");
  ASSERT_TRUE(cp) << cp.error().format();
  EXPECT_EQ(*cp, "# coding=cp1252\ns = '\xe2\x82\xac \xe2\x80\x9cq\xe2\x80\x9d'\n");  // € “q”
  auto bom = python_source_text("\xEF\xBB\xBFx = '\xc3\xa9'\n", "k.py");
  ASSERT_TRUE(bom);
  EXPECT_EQ(*bom, "x = '\xc3\xa9'\n");  // the byte-order mark goes, as Python's reader drops it
}

TEST(PythonSource, DeclarationsFollowPep263) {
  // On line 2 only after a comment or blank first line; never on line 3; only in a comment.
  EXPECT_FALSE(python_source_text("x = 1\n# coding: latin-1\ns = '\xe9'\n", "k.py"));
  EXPECT_FALSE(python_source_text("\n\n# coding: latin-1\ns = '\xe9'\n", "k.py"));
  EXPECT_FALSE(python_source_text("s = 'coding: latin-1 \xe9'\n", "k.py"));
  EXPECT_TRUE(python_source_text("\n# coding: latin-1\ns = '\xe9'\n", "k.py"));
}

TEST(PythonSource, EncodingsWeCannotReadAreDiagnosed) {
  auto sjis = python_source_text("# -*- coding: shift_jis -*-\ns = '\x82\xa0'\n", "k.py");
  ASSERT_FALSE(sjis);
  EXPECT_EQ(sjis.error().code, "nkia_source_encoding");
  EXPECT_EQ(sjis.error().loc.line, 1);
  EXPECT_EQ(sjis.error().loc.col, 15);
  auto undefined = python_source_text("# coding: cp1252\nab = '\x81'\n", "k.py");  // no character in cp1252
  ASSERT_FALSE(undefined);
  EXPECT_EQ(undefined.error().code, "nkia_source_encoding");
  EXPECT_EQ(undefined.error().loc.line, 2);
  EXPECT_EQ(undefined.error().loc.col, 7);
  auto ascii = python_source_text("# coding: ascii\ns = '\xe9'\n", "k.py");
  ASSERT_FALSE(ascii);
  EXPECT_EQ(ascii.error().code, "nkia_source_encoding");
  auto bom = python_source_text("\xEF\xBB\xBF# coding: latin-1\n", "k.py");
  ASSERT_FALSE(bom);
  EXPECT_EQ(bom.error().code, "nkia_source_encoding");
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(KernelFiles, TheKernelMustBeReadableItsHelpersOnlyWhenImported) {
  testing::ScratchDir dir;
  write(dir.file("k.py"), "import helpers\ndef k(x):\n    return x\n");
  write(dir.file("helpers.py"), "X = 1\nY = 'caf\xe9'\n");
  write(dir.file("decl.py"), "# -*- coding: latin-1 -*-\nZ = '\xe9'\n");
  write(dir.file("caf\xe9.py"), "W = 1\n");  // a name no import can spell
  auto files = load_kernel_files(dir.file("k.py"));
  ASSERT_TRUE(files) << files.error().format();
  EXPECT_EQ(files->files.count("caf\xe9.py"), 0u);
  EXPECT_EQ(files->files.at("decl.py"), "# -*- coding: latin-1 -*-\nZ = '\xc3\xa9'\n");
  // The unreadable helper becomes a module that raises Python's error, on its line, when imported.
  const std::string& stand_in = files->files.at("helpers.py");
  EXPECT_TRUE(is_utf8(stand_in));
  EXPECT_NE(stand_in.find("SyntaxError("), std::string::npos) << stand_in;
  EXPECT_NE(stand_in.find("(\"helpers.py\", 2, 9, None)"), std::string::npos) << stand_in;
  EXPECT_NE(stand_in.find("\nraise _e"), std::string::npos) << stand_in;
  EXPECT_NE(stand_in.find("\"nkia_not_utf8\""), std::string::npos) << stand_in;

  write(dir.file("bad.py"), "def k(x):\n    return x  # \xe9\n");
  auto bad = load_kernel_files(dir.file("bad.py"));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "nkia_not_utf8");
  EXPECT_EQ(bad.error().loc.file, dir.file("bad.py"));
  EXPECT_EQ(bad.error().loc.line, 2);
  EXPECT_EQ(bad.error().loc.col, 17);
}

TEST(KernelFiles, BinaryAndBadlyNamedKernelsAreUserErrors) {
  testing::ScratchDir dir;
  write(dir.file("x.npy"), std::string("\x93NUMPY\x01\x00v\x00{'descr': '<f4'}", 26));
  auto npy = load_kernel_files(dir.file("x.npy"));
  ASSERT_FALSE(npy);
  EXPECT_EQ(npy.error().code, "nkia_not_utf8");
  EXPECT_EQ(npy.error().loc.line, 1);
  EXPECT_EQ(npy.error().loc.col, 1);
  EXPECT_NE(npy.error().hint.find("does not look like Python source"), std::string::npos) << npy.error().hint;

  std::filesystem::create_directory(dir.file("d\xe9"));
  write(dir.file("d\xe9/k.py"), "def k(x):\n    return x\n");
  auto named = load_kernel_files(dir.file("d\xe9/k.py"));
  ASSERT_FALSE(named);
  EXPECT_EQ(named.error().code, "nkia_not_utf8");
  EXPECT_TRUE(is_utf8(named.error().message)) << named.error().message;
  EXPECT_NE(named.error().message.find("d\\xe9"), std::string::npos) << named.error().message;
}

}  // namespace
}  // namespace nki_agent
