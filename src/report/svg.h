// report/svg.h — the report's charts as inline SVG: grouped bars (vertical or horizontal) and
// lines, drawn by our own code so the report needs no script library and no network, the same
// data always gives the same bytes, and tests can read every chart's numbers from its markup.
//
// Each chart is one <svg id="..." class="chart"> element with a <title>, axes with tick labels,
// a legend when there is more than one series, and a <title> tooltip on every bar and point that
// names its series, category and value. Every text (names from the database) is escaped here.
// Knows nothing of benchmarks: report/charts.h maps a report onto these.
#pragma once

#include <string>
#include <vector>

namespace nki_agent {

struct ChartSeries {
  std::string name;
  std::vector<double> values;  // one per category
};

struct BarChart {
  std::string id, title, x_label, y_label;
  std::vector<std::string> categories;
  std::vector<ChartSeries> series;
  bool percent = false;     // values are shares in [0, 1], shown as percentages
  bool horizontal = false;  // categories down the side (long labels)
  double y_max = 0;         // 0: from the data
  std::string empty_note;   // shown instead of bars when there is no category
};

struct LinePoint {
  double x = 0, y = 0;
};

struct LineSeries {
  std::string name;
  std::vector<LinePoint> points;   // the line
  std::vector<LinePoint> markers;  // circled points with a tooltip
};

struct LineChart {
  std::string id, title, x_label, y_label;
  std::vector<LineSeries> series;
  double x_min = 0, x_max = 1, y_min = 0, y_max = 1;
  std::vector<double> x_ticks;
  bool y_percent = false;
};

// The series' colour, from a fixed palette (cycled).
const char* series_colour(size_t index);

std::string render_bar_chart(const BarChart& chart);
std::string render_line_chart(const LineChart& chart);

}  // namespace nki_agent
