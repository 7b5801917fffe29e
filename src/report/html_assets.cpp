// report/html_assets.cpp — the CSS and JavaScript of the report page.
#include "report/html_assets.h"

namespace nki_agent {

const char* report_style_sheet() {
  return R"css(
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #222; background: #fff; }
h1 { font-size: 22px; margin: 0 0 8px 0; }
h2 { font-size: 18px; margin: 28px 0 8px 0; border-bottom: 1px solid #ccc; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px 0; }
p.note, .note { color: #555; font-size: 13px; max-width: 1100px; }
table { border-collapse: collapse; font-size: 13px; margin: 4px 0 12px 0; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: right; vertical-align: top; }
th { background: #f3f3f3; position: sticky; top: 0; }
td.text, th.text { text-align: left; }
tr.group-all td { font-weight: bold; background: #fafafa; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th[data-dir="asc"]::after { content: " \25B2"; }
table.sortable th[data-dir="desc"]::after { content: " \25BC"; }
tr.task { cursor: pointer; }
tr.task:hover td { background: #f5f9ff; }
tr.detail td { background: #fcfcfc; text-align: left; }
.outcome { font-weight: 600; }
.o-passed { color: #0a7d32; } .o-failed_check { color: #b3261e; } .o-compile_error { color: #b3261e; }
.o-refused { color: #8a5300; } .o-interrupted { color: #666; } .o-broken { color: #6a1b9a; }
.v-gain, .v-faster { color: #0a7d32; } .v-loss, .v-slower { color: #b3261e; }
pre { background: #f6f8fa; border: 1px solid #e1e4e8; padding: 8px; overflow: auto; max-height: 420px;
      font-size: 12px; white-space: pre-wrap; word-break: break-word; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
svg.chart { border: 1px solid #e4e4e4; max-width: 100%; height: auto; }
.controls { margin: 6px 0; font-size: 13px; }
.controls input, .controls select { font-size: 13px; padding: 2px 4px; margin-right: 10px; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 2px 14px; font-size: 13px; }
dl.facts dt { color: #555; } dl.facts dd { margin: 0; }
.event { margin: 4px 0; } .event .title { font-size: 12px; color: #444; font-weight: 600; }
.event.error .title { color: #b3261e; }
)css";
}

const char* report_script() {
  return R"js(
(function () {
  "use strict";
  // A table body's rows in groups: a task row and the detail row that follows it.
  function groups(tbody) {
    var out = [];
    for (var i = 0; i < tbody.rows.length; i++) {
      var r = tbody.rows[i];
      if (r.classList.contains("detail") && out.length) out[out.length - 1].push(r);
      else out.push([r]);
    }
    return out;
  }
  function key(row, col) {
    var cell = row.cells[col];
    if (!cell) return "";
    var v = cell.getAttribute("data-sort");
    return v !== null ? v : cell.textContent.trim();
  }
  var NUMBER = /^-?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?$/i;
  function compare(a, b) {
    if (NUMBER.test(a) && NUMBER.test(b)) return parseFloat(a) - parseFloat(b);
    return a < b ? -1 : a > b ? 1 : 0;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener("click", function () {
        var dir = th.getAttribute("data-dir") === "asc" ? "desc" : "asc";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("data-dir"); });
        th.setAttribute("data-dir", dir);
        var body = table.tBodies[0], gs = groups(body);
        gs.sort(function (a, b) {
          var c = compare(key(a[0], col), key(b[0], col));
          return dir === "asc" ? c : -c;
        });
        gs.forEach(function (g) { g.forEach(function (r) { body.appendChild(r); }); });
      });
    });
  });
  document.querySelectorAll("tr.task").forEach(function (row) {
    row.addEventListener("click", function (ev) {
      if (ev.target.closest("a, pre, details")) return;
      var d = row.nextElementSibling;
      if (d && d.classList.contains("detail")) d.hidden = !d.hidden;
    });
  });
  var table = document.getElementById("task-table");
  var text = document.getElementById("task-filter");
  var outcome = document.getElementById("outcome-filter");
  var run = document.getElementById("run-filter");
  var count = document.getElementById("task-count");
  function filter() {
    if (!table) return;
    var q = text ? text.value.toLowerCase() : "", o = outcome ? outcome.value : "", r = run ? run.value : "";
    var shown = 0, all = 0;
    groups(table.tBodies[0]).forEach(function (g) {
      var row = g[0];
      all++;
      var ok = (!o || row.getAttribute("data-outcome") === o) && (!r || row.getAttribute("data-run") === r) &&
               (!q || row.textContent.toLowerCase().indexOf(q) >= 0);
      row.hidden = !ok;
      if (!ok && g[1]) g[1].hidden = true;
      if (ok) shown++;
    });
    if (count) count.textContent = shown + " of " + all + " rows";
  }
  [text, outcome, run].forEach(function (el) { if (el) el.addEventListener("input", filter); });
  filter();
})();
)js";
}

}  // namespace nki_agent
