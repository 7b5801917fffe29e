// nkia-label: slow
// The HTML report in a real browser: headless Chromium (Debian package `chromium`) renders the
// fixture report (test_report_fixture.h) to a screenshot that is not blank, and its DOM after the
// page's script ran holds the summary tables, every chart, the comparison and the filtered task
// count (which only the script writes). Skipped when chromium is not installed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "report/html.h"
#include "report/report.h"
#include "support/cli_runner.h"
#include "support/test_files.h"
#include "test_report_fixture.h"

namespace fs = std::filesystem;

namespace nki_agent {
namespace {

bool have_chromium() {
  return std::system("command -v chromium > /dev/null 2>&1") == 0;
}

// Runs chromium with a profile folder under `dir` (removed with it); stderr (GPU and dbus chatter)
// dropped; stdout returned.
std::string chromium(const fs::path& dir, const std::string& args) {
  static int profiles = 0;
  const std::string profile = (dir / ("profile-" + std::to_string(++profiles))).string();
  const std::string cmd =
      "timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars "
      "--no-first-run --user-data-dir=" +
      profile + " " + args + " 2>/dev/null";
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    out = testing::read_all(p);
    ::pclose(p);
  }
  return out;
}

uint32_t be32(const std::string& s, size_t at) {
  return (static_cast<uint32_t>(static_cast<unsigned char>(s[at])) << 24) |
         (static_cast<uint32_t>(static_cast<unsigned char>(s[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<unsigned char>(s[at + 2])) << 8) |
         static_cast<uint32_t>(static_cast<unsigned char>(s[at + 3]));
}

TEST(ReportBrowser, ChromiumRendersTheReportWithEveryPart) {
  if (!have_chromium()) GTEST_SKIP() << "chromium is not installed (apt-get install chromium)";
  const fs::path dir = fs::temp_directory_path() / ("nkia_report_browser_" + std::to_string(::getpid()));
  const std::string db = testing::write_report_fixture(dir);
  ASSERT_FALSE(db.empty());
  const std::string page = (dir / "report.html").string();
  auto r = testing::run_cli("report " + db + " --run A --run B -o " + page, testing::Stderr::kMerge);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string blank = (dir / "blank.html").string();
  {
    std::ofstream f(blank);
    f << "<!DOCTYPE html><html><body></body></html>\n";
  }

  // The screenshot: a PNG of the window's size, far larger than a blank page's (a one-colour PNG
  // compresses to almost nothing).
  const std::string shot = (dir / "report.png").string(), blank_shot = (dir / "blank.png").string();
  chromium(dir, "--window-size=1280,2000 --screenshot=" + shot + " file://" + page);
  chromium(dir, "--window-size=1280,2000 --screenshot=" + blank_shot + " file://" + blank);
  const std::string png = testing::read_text(shot), blank_png = testing::read_text(blank_shot);
  ASSERT_GT(png.size(), 24u) << "no screenshot written";
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  EXPECT_EQ(be32(png, 16), 1280u);
  EXPECT_EQ(be32(png, 20), 2000u);
  ASSERT_GT(blank_png.size(), 24u);
  EXPECT_GT(png.size(), 10 * blank_png.size()) << png.size() << " bytes against a blank page's " << blank_png.size();

  // The DOM after the script ran.
  const std::string dom = chromium(dir, "--dump-dom file://" + page);
  ASSERT_FALSE(dom.empty());
  for (const char* id : {"summary-0", "summary-1", "chart-pass-level", "chart-pass-category", "chart-fast-p",
                         "chart-speedup", "chart-turns", "chart-failures", "comparison", "comparison-1",
                         "chart-compare-1", "comparison-table-1", "task-table"})
    EXPECT_NE(dom.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_NE(dom.find("16 of 16 rows"), std::string::npos) << "the page's script did not run";
  // The hostile message stayed text: no element was made of it.
  EXPECT_EQ(dom.find("<img"), std::string::npos);

  // The script at work: a copy of the page with a probe that sorts the task table by speedup
  // (twice: descending), opens the first row and filters on broken tasks, and writes what it saw.
  std::string html = testing::read_text(page);
  const std::string probe = R"(<script>
(function () {
  var t = document.getElementById("task-table"), th = t.tHead.rows[0].cells[7];
  th.click(); th.click();
  var first = t.tBodies[0].rows[0], speed = first.cells[7].getAttribute("data-sort");
  var paired = first.nextElementSibling.classList.contains("detail");
  first.click();
  var opened = !first.nextElementSibling.hidden;
  var f = document.getElementById("outcome-filter");
  f.value = "broken";
  f.dispatchEvent(new Event("input"));
  document.body.setAttribute("data-probe", [speed, paired, opened, document.getElementById("task-count").textContent].join("|"));
})();
</script>
</body>)";
  html.replace(html.rfind("</body>"), 7, probe);
  const std::string probed = (dir / "probed.html").string();
  {
    std::ofstream f(probed);
    f << html;
  }
  const std::string dom2 = chromium(dir, "--dump-dom file://" + probed);
  EXPECT_NE(dom2.find("data-probe=\"3|true|true|1 of 16 rows\""), std::string::npos)
      << dom2.substr(0, std::min<size_t>(dom2.size(), 400));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nki_agent
