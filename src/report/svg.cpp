// report/svg.cpp — bar and line charts as SVG text.
#include "report/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/markup.h"

namespace nki_agent {

namespace {

// Colour-blind-safe (Okabe–Ito), dark enough on white.
constexpr const char* kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000"};

constexpr double kWidth = 600;  // two charts side by side in a 1280-pixel window
constexpr double kTitleHeight = 28;
constexpr double kLegendLine = 18;
constexpr double kFont = 12;

// A step of 1, 2 or 5 × 10^k giving about `count` ticks up to `max`.
double nice_step(double max, int count) {
  if (max <= 0) return 1;
  const double raw = max / count;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

std::string value_text(double v, bool percent) {
  return percent ? format_number(100 * v, 1) + "%" : format_number(v, 3);
}

// A label cut to `chars` characters (on a UTF-8 boundary), for axis text.
std::string shorten(const std::string& s, size_t chars) {
  if (s.size() <= chars) return s;
  size_t n = chars;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n) + "…";
}

std::string open_svg(const std::string& id, const std::string& title, double height) {
  return fmt::format(
      "<svg id=\"{0}\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" viewBox=\"0 0 {1} {2}\" "
      "width=\"{1}\" height=\"{2}\" font-family=\"sans-serif\" font-size=\"{3}\">\n<title>{4}</title>\n"
      "<rect x=\"0\" y=\"0\" width=\"{1}\" height=\"{2}\" fill=\"#ffffff\"/>\n"
      "<text x=\"{5}\" y=\"18\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\">{4}</text>\n",
      escape_markup(id), format_number(kWidth), format_number(height), format_number(kFont), escape_markup(title),
      format_number(kWidth / 2));
}

// The legend's entries, laid out in lines that fit the chart's width: (x, line) of each.
std::vector<std::pair<double, int>> legend_layout(const std::vector<std::string>& names) {
  std::vector<std::pair<double, int>> at;
  double x = 60;
  int line = 0;
  for (const auto& n : names) {
    const double w = 28 + 7.0 * static_cast<double>(std::min<size_t>(n.size(), 41));
    if (x > 60 && x + w > kWidth - 8) {
      x = 60;
      ++line;
    }
    at.emplace_back(x, line);
    x += w;
  }
  return at;
}

// The height the legend takes (none for one series).
double legend_height(const std::vector<std::string>& names) {
  if (names.size() < 2) return 0;
  return kLegendLine * (legend_layout(names).back().second + 1) + 2;
}

std::string legend(const std::vector<std::string>& names, double y) {
  if (names.size() < 2) return {};
  const auto at = legend_layout(names);
  std::string s = "<g class=\"legend\">\n";
  for (size_t i = 0; i < names.size(); ++i) {
    const double x = at[i].first, ly = y + kLegendLine * at[i].second;
    s += fmt::format(
        "<rect x=\"{0}\" y=\"{1}\" width=\"12\" height=\"12\" fill=\"{2}\"/><text x=\"{3}\" y=\"{4}\">{5}</text>\n",
        format_number(x), format_number(ly), series_colour(i), format_number(x + 16), format_number(ly + 10),
        escape_markup(shorten(names[i], 40)));
  }
  return s + "</g>\n";
}

std::string empty(const std::string& id, const std::string& title, const std::string& note) {
  std::string s = open_svg(id, title, 120);
  s += fmt::format("<text class=\"empty\" x=\"{}\" y=\"70\" text-anchor=\"middle\" fill=\"#666\">{}</text>\n</svg>\n",
                   format_number(kWidth / 2), escape_markup(note.empty() ? "no data" : note));
  return s;
}

std::vector<std::string> names_of(const std::vector<ChartSeries>& series) {
  std::vector<std::string> n;
  for (const auto& s : series) n.push_back(s.name);
  return n;
}

double top_of(const BarChart& c) {
  if (c.percent) return c.y_max > 0 ? c.y_max : 1.0;
  double m = c.y_max;
  if (m <= 0)
    for (const auto& s : c.series)
      for (double v : s.values) m = std::max(m, v);
  if (m <= 0) return 1;
  const double step = nice_step(m, 5);
  return std::ceil(m / step) * step;
}

std::string bar_title(const ChartSeries& s, const std::string& category, double v, bool percent, size_t nseries) {
  return escape_markup((nseries > 1 ? s.name + ", " : std::string()) + category + ": " + value_text(v, percent));
}

std::string vertical(const BarChart& c) {
  const size_t ncat = c.categories.size(), nser = std::max<size_t>(1, c.series.size());
  size_t longest = 0;
  for (const auto& cat : c.categories) longest = std::max(longest, std::min<size_t>(cat.size(), 24));
  const double slot_guess = (kWidth - 80) / static_cast<double>(ncat);
  const bool rotate = static_cast<double>(longest) * 7 > slot_guess;
  const double left = 56, right = 16, top = kTitleHeight + legend_height(names_of(c.series)) + 8;
  const double label_h = rotate ? 6.0 * static_cast<double>(longest) + 16 : 22;
  const double plot_h = 200, height = top + plot_h + label_h + 22;
  const double plot_w = kWidth - left - right, slot = plot_w / static_cast<double>(ncat);
  const double bar_w = slot * 0.8 / static_cast<double>(nser);
  const double y_top = top_of(c);
  auto y_of = [&](double v) { return top + plot_h - plot_h * std::clamp(v, 0.0, y_top) / y_top; };

  std::string s = open_svg(c.id, c.title, height);
  s += legend(names_of(c.series), kTitleHeight);
  // Grid and y ticks.
  const double step = c.percent ? (y_top > 0.5 ? 0.2 : nice_step(y_top, 5)) : nice_step(y_top, 5);
  s += "<g class=\"y-axis\">\n";
  for (double v = 0; v <= y_top + 1e-9; v += step)
    s += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#ddd\"/><text x=\"{3}\" y=\"{4}\" "
        "text-anchor=\"end\">{5}</text>\n",
        format_number(left), format_number(left + plot_w), format_number(y_of(v)), format_number(left - 6),
        format_number(y_of(v) + 4), value_text(v, c.percent));
  s +=
      fmt::format("<text x=\"14\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {0})\">{1}</text>\n</g>\n",
                  format_number(top + plot_h / 2), escape_markup(c.y_label));
  // Bars.
  s += "<g class=\"bars\">\n";
  for (size_t k = 0; k < c.series.size(); ++k)
    for (size_t i = 0; i < ncat && i < c.series[k].values.size(); ++i) {
      const double v = c.series[k].values[i];
      const double x = left + slot * static_cast<double>(i) + slot * 0.1 + bar_w * static_cast<double>(k);
      s += fmt::format(
          "<rect class=\"bar\" data-series=\"{0}\" data-category=\"{1}\" data-value=\"{2}\" x=\"{3}\" y=\"{4}\" "
          "width=\"{5}\" height=\"{6}\" fill=\"{7}\"><title>{8}</title></rect>\n",
          escape_markup(c.series[k].name), escape_markup(c.categories[i]), format_number(v, 6), format_number(x),
          format_number(y_of(v)), format_number(std::max(0.5, bar_w - 1)), format_number(top + plot_h - y_of(v)),
          series_colour(k), bar_title(c.series[k], c.categories[i], v, c.percent, c.series.size()));
    }
  s += "</g>\n";
  // X axis and category labels.
  s += fmt::format("<g class=\"x-axis\">\n<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#333\"/>\n",
                   format_number(left), format_number(left + plot_w), format_number(top + plot_h));
  for (size_t i = 0; i < ncat; ++i) {
    const double x = left + slot * (static_cast<double>(i) + 0.5), y = top + plot_h + 14;
    const std::string label = escape_markup(shorten(c.categories[i], 24));
    if (rotate)
      s += fmt::format("<text x=\"{0}\" y=\"{1}\" text-anchor=\"end\" transform=\"rotate(-40 {0} {1})\">{2}</text>\n",
                       format_number(x), format_number(y), label);
    else
      s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", format_number(x), format_number(y),
                       label);
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n</g>\n</svg>\n",
                   format_number(left + plot_w / 2), format_number(height - 6), escape_markup(c.x_label));
  return s;
}

std::string horizontal(const BarChart& c) {
  const size_t ncat = c.categories.size(), nser = std::max<size_t>(1, c.series.size());
  size_t longest = 0;
  for (const auto& cat : c.categories) longest = std::max(longest, std::min<size_t>(cat.size(), 32));
  const double left = std::min(240.0, 16 + 7.0 * static_cast<double>(longest)), right = 48;
  const double top = kTitleHeight + legend_height(names_of(c.series)) + 8;
  const double bar_h = 14, slot = bar_h * static_cast<double>(nser) + 8;
  const double plot_h = slot * static_cast<double>(ncat), height = top + plot_h + 44;
  const double plot_w = kWidth - left - right;
  const double x_top = top_of(c);
  auto w_of = [&](double v) { return plot_w * std::clamp(v, 0.0, x_top) / x_top; };

  std::string s = open_svg(c.id, c.title, height);
  s += legend(names_of(c.series), kTitleHeight);
  const double step = nice_step(x_top, 5);
  s += "<g class=\"x-axis\">\n";
  for (double v = 0; v <= x_top + 1e-9; v += step)
    s += fmt::format(
        "<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#ddd\"/><text x=\"{0}\" y=\"{3}\" "
        "text-anchor=\"middle\">{4}</text>\n",
        format_number(left + w_of(v)), format_number(top), format_number(top + plot_h),
        format_number(top + plot_h + 14), value_text(v, c.percent));
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n</g>\n", format_number(left + plot_w / 2),
                   format_number(height - 8), escape_markup(c.x_label));
  s += "<g class=\"bars\">\n";
  for (size_t i = 0; i < ncat; ++i) {
    const double y0 = top + slot * static_cast<double>(i) + 4;
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", format_number(left - 6),
                     format_number(y0 + slot / 2), escape_markup(shorten(c.categories[i], 32)));
    for (size_t k = 0; k < c.series.size(); ++k) {
      if (i >= c.series[k].values.size()) continue;
      const double v = c.series[k].values[i], y = y0 + bar_h * static_cast<double>(k);
      s += fmt::format(
          "<rect class=\"bar\" data-series=\"{0}\" data-category=\"{1}\" data-value=\"{2}\" x=\"{3}\" y=\"{4}\" "
          "width=\"{5}\" height=\"{6}\" fill=\"{7}\"><title>{8}</title></rect>"
          "<text x=\"{9}\" y=\"{10}\" font-size=\"11\">{11}</text>\n",
          escape_markup(c.series[k].name), escape_markup(c.categories[i]), format_number(v, 6), format_number(left),
          format_number(y), format_number(w_of(v)), format_number(bar_h - 2), series_colour(k),
          bar_title(c.series[k], c.categories[i], v, c.percent, c.series.size()), format_number(left + w_of(v) + 4),
          format_number(y + bar_h - 4), value_text(v, c.percent));
    }
  }
  s += fmt::format("</g>\n<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#333\"/>\n</svg>\n",
                   format_number(left), format_number(top), format_number(top + plot_h));
  return s;
}

}  // namespace

const char* series_colour(size_t index) {
  return kPalette[index % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

std::string render_bar_chart(const BarChart& c) {
  if (c.categories.empty() || c.series.empty()) return empty(c.id, c.title, c.empty_note);
  return c.horizontal ? horizontal(c) : vertical(c);
}

std::string render_line_chart(const LineChart& c) {
  bool any = false;
  for (const auto& s : c.series) any = any || !s.points.empty();
  if (!any) return empty(c.id, c.title, "no data");
  std::vector<std::string> names;
  for (const auto& s : c.series) names.push_back(s.name);
  const double left = 56, right = 16, top = kTitleHeight + legend_height(names) + 8;
  const double plot_h = 220, plot_w = kWidth - left - right, height = top + plot_h + 44;
  const double xr = c.x_max > c.x_min ? c.x_max - c.x_min : 1, yr = c.y_max > c.y_min ? c.y_max - c.y_min : 1;
  auto x_of = [&](double x) { return left + plot_w * (std::clamp(x, c.x_min, c.x_max) - c.x_min) / xr; };
  auto y_of = [&](double y) { return top + plot_h - plot_h * (std::clamp(y, c.y_min, c.y_max) - c.y_min) / yr; };

  std::string s = open_svg(c.id, c.title, height);
  s += legend(names, kTitleHeight);
  const double ystep = c.y_percent ? 0.2 * yr : nice_step(yr, 5);
  s += "<g class=\"y-axis\">\n";
  for (double v = c.y_min; v <= c.y_max + 1e-9; v += ystep)
    s += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#ddd\"/><text x=\"{3}\" y=\"{4}\" "
        "text-anchor=\"end\">{5}</text>\n",
        format_number(left), format_number(left + plot_w), format_number(y_of(v)), format_number(left - 6),
        format_number(y_of(v) + 4), value_text(v, c.y_percent));
  s +=
      fmt::format("<text x=\"14\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {0})\">{1}</text>\n</g>\n",
                  format_number(top + plot_h / 2), escape_markup(c.y_label));
  s += "<g class=\"x-axis\">\n";
  for (double t : c.x_ticks)
    s += fmt::format(
        "<line x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\" stroke=\"#eee\"/><text x=\"{0}\" y=\"{3}\" "
        "text-anchor=\"middle\">{4}</text>\n",
        format_number(x_of(t)), format_number(top), format_number(top + plot_h), format_number(top + plot_h + 14),
        format_number(t));
  s += fmt::format(
      "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" stroke=\"#333\"/>\n<text x=\"{3}\" y=\"{4}\" "
      "text-anchor=\"middle\">{5}</text>\n</g>\n",
      format_number(left), format_number(left + plot_w), format_number(top + plot_h), format_number(left + plot_w / 2),
      format_number(height - 8), escape_markup(c.x_label));
  for (size_t k = 0; k < c.series.size(); ++k) {
    const auto& ser = c.series[k];
    std::string pts;
    for (const auto& p : ser.points) pts += format_number(x_of(p.x)) + "," + format_number(y_of(p.y)) + " ";
    if (!pts.empty()) pts.pop_back();
    s += fmt::format(
        "<g class=\"series\" data-series=\"{}\">\n<polyline fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"2\" points=\"{}\"/>\n",
        escape_markup(ser.name), series_colour(k), pts);
    for (const auto& m : ser.markers)
      s += fmt::format(
          "<circle class=\"point\" data-x=\"{0}\" data-y=\"{1}\" cx=\"{2}\" cy=\"{3}\" r=\"4\" fill=\"{4}\">"
          "<title>{5}{7} = {0}: {6}</title></circle>\n",
          format_number(m.x, 3), format_number(m.y, 6), format_number(x_of(m.x)), format_number(y_of(m.y)),
          series_colour(k), c.series.size() > 1 ? escape_markup(ser.name) + ", " : std::string(),
          value_text(m.y, c.y_percent), escape_markup(c.x_label));
    s += "</g>\n";
  }
  return s + "</svg>\n";
}

}  // namespace nki_agent
