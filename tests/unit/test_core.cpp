// nkia-shards: 2 (short tests, each of which would otherwise start a process of its own)
//
// Core: Diagnostics (text and JSON forms), SHA-256 content hashes, the thread pool, logging.
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/diagnostic.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/thread_pool.h"

namespace nki_agent {
namespace {

TEST(Diagnostic, FormatsLikeACompiler) {
  Diagnostic d = Diagnostic::error("err_unsupported_memory", "nl.exp reads a tensor in HBM",
                                   "load it into SBUF with nl.load first");
  d.at({"kernel.py", 12, 5}).with_note("in tile loop i=3");
  EXPECT_EQ(d.format(),
            "kernel.py:12:5: error[err_unsupported_memory]: nl.exp reads a tensor in HBM\n"
            "  hint: load it into SBUF with nl.load first\n"
            "  note: in tile loop i=3");
}

TEST(Diagnostic, FormatsWithoutLocationOrHint) {
  Diagnostic d = Diagnostic::error("nkia_x", "plain");
  EXPECT_EQ(d.format(), "error[nkia_x]: plain");
  d.severity = Severity::kWarning;
  d.at({"", 7, 0});
  EXPECT_EQ(d.format(), "<unknown>:7: warning[nkia_x]: plain");
}

TEST(Diagnostic, JsonRoundTrip) {
  Diagnostic d = Diagnostic::error("err_x", "message with \"quotes\"\nand a newline", "fix it");
  d.severity = Severity::kNote;
  d.at({"a/b.py", 3, 9}).with_note("n1").with_note("n2");
  nlohmann::json j = d.to_json();
  EXPECT_EQ(j["code"], "err_x");
  EXPECT_EQ(j["severity"], "note");
  EXPECT_EQ(j["location"]["line"], 3);
  Diagnostic back = Diagnostic::from_json(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(back.code, d.code);
  EXPECT_EQ(back.message, d.message);
  EXPECT_EQ(back.hint, d.hint);
  EXPECT_EQ(back.severity, d.severity);
  EXPECT_EQ(back.loc.file, "a/b.py");
  EXPECT_EQ(back.loc.line, 3);
  EXPECT_EQ(back.loc.col, 9);
  EXPECT_EQ(back.notes, d.notes);
}

TEST(Diagnostic, FromJsonToleratesJunk) {
  Diagnostic d = Diagnostic::from_json(nlohmann::json::parse(R"({"code": 5, "location": "x", "notes": [1, "ok"]})"));
  EXPECT_EQ(d.code, "");
  EXPECT_FALSE(d.loc.known());
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0], "ok");
  EXPECT_EQ(Diagnostic::from_json(nlohmann::json::array()).code, "");
}

TEST(Diagnostic, ResultCarriesErrors) {
  auto f = [](int x) -> Result<int> {
    if (x < 0) return fail("nkia_negative", "x is negative", "pass a positive x");
    return x * 2;
  };
  ASSERT_TRUE(f(2).has_value());
  EXPECT_EQ(*f(2), 4);
  auto r = f(-1);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, "nkia_negative");
  EXPECT_EQ(r.error().hint, "pass a positive x");
}

TEST(Diagnostic, AssertThrowsInternalError) {
  EXPECT_THROW(NKIA_ASSERT(1 + 1 == 3), InternalError);
  EXPECT_NO_THROW(NKIA_ASSERT(1 + 1 == 2));
}

// FIPS 180-2 test vectors.
TEST(WarningList, CountsRepeatsAndCapsDistinctOnes) {
  auto warning = [](std::string code, int line) {
    Diagnostic d = Diagnostic::error(std::move(code), "live tiles need more", "shrink them");
    d.severity = Severity::kWarning;
    d.at({"k.py", line, 0});
    return d;
  };
  WarningList l;
  EXPECT_TRUE(l.empty());
  for (int i = 0; i < 3; ++i) l.add(warning("nkia_a", 7));
  l.add(warning("nkia_a", 8));  // another line: another warning
  l.add(warning("nkia_b", 7));  // another code
  WarningList other;
  other.add(warning("nkia_a", 7), 2);
  other.add(warning("nkia_c", 1));
  l.merge(std::move(other));
  EXPECT_TRUE(other.empty());
  auto w = l.take();
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[0].message, "live tiles need more (raised 5 times)");
  EXPECT_EQ(w[1].message, "live tiles need more");
  EXPECT_EQ(w[1].loc.line, 8);
  EXPECT_EQ(w[2].code, "nkia_b");
  EXPECT_EQ(w[3].code, "nkia_c");
  EXPECT_TRUE(l.empty());
  EXPECT_TRUE(l.take().empty());

  for (int i = 0; i < static_cast<int>(kMaxWarnings) + 6; ++i) l.add(warning("nkia_a", i + 1));
  l.add(warning("nkia_a", 1));  // still counted though the list is full
  w = l.take();
  ASSERT_EQ(w.size(), kMaxWarnings);
  EXPECT_EQ(w[0].message, "live tiles need more (raised 2 times)");
  ASSERT_EQ(w.back().notes.size(), 1u);
  EXPECT_EQ(w.back().notes[0], "6 more distinct warnings were left out (at most 64 are kept)");
}

TEST(Hash, Sha256KnownAnswers) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Hash, StreamingEqualsOneShot) {
  std::string s(10000, 'x');
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>(i * 7 + 3);
  Hasher h;
  h.bytes(s.data(), 1).bytes(s.data() + 1, 4998).bytes(s.data() + 4999, s.size() - 4999);
  EXPECT_EQ(to_hex(h.finish()), sha256_hex(s));
}

TEST(Hash, FieldsAreLengthPrefixed) {
  auto key = [](std::string_view a, std::string_view b) { return to_hex(Hasher().field(a).field(b).finish()); };
  EXPECT_NE(key("ab", "c"), key("a", "bc"));
  EXPECT_EQ(key("ab", "c"), key("ab", "c"));
  EXPECT_NE(to_hex(Hasher().field(int64_t{1}).finish()), to_hex(Hasher().field(int64_t{256}).finish()));
}

TEST(ThreadPool, RunsEveryJobAndReturnsValues) {
  ThreadPool pool(3);
  EXPECT_EQ(pool.size(), 3u);
  std::vector<std::future<int>> futs;
  for (int i = 0; i < 100; ++i) futs.push_back(pool.submit([i] { return i * i; }));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(futs[i].get(), i * i);
}

TEST(ThreadPool, ExceptionsReachTheFuture) {
  ThreadPool pool(2);
  auto f = pool.submit([]() -> int { throw std::runtime_error("boom"); });
  EXPECT_THROW(f.get(), std::runtime_error);
  // The worker survives the exception.
  EXPECT_EQ(pool.submit([] { return 7; }).get(), 7);
}

TEST(ThreadPool, ParallelForCoversTheRangeAndRethrows) {
  ThreadPool pool(2);
  std::vector<std::atomic<int>> hits(257);
  pool.parallel_for(257, [&](int64_t i) { hits[i]++; });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  EXPECT_THROW(pool.parallel_for(10,
                                 [](int64_t i) {
                                   if (i == 5) throw std::invalid_argument("five");
                                 }),
               std::invalid_argument);
  pool.parallel_for(0, [](int64_t) { FAIL(); });
}

TEST(ThreadPool, DestructorDrainsTheQueue) {
  std::atomic<int> done{0};
  {
    ThreadPool pool(1);
    for (int i = 0; i < 50; ++i) pool.submit([&] { done++; });
  }
  EXPECT_EQ(done.load(), 50);
}

TEST(Log, LevelsParse) {
  EXPECT_TRUE(init_logging("debug"));
  EXPECT_EQ(logger().level(), spdlog::level::debug);
  EXPECT_FALSE(init_logging("loud"));
  EXPECT_EQ(logger().level(), spdlog::level::debug);
  EXPECT_TRUE(init_logging("warn"));
  EXPECT_EQ(logger().level(), spdlog::level::warn);
}

}  // namespace
}  // namespace nki_agent
