// report/html_assets.h — the report page's fixed style sheet and script, inlined into every
// report (report/html.h). The script only sorts and filters tables and opens a task's details: it
// reads the page's own markup (data-* attributes), holds no data and loads nothing.
#pragma once

namespace nki_agent {

const char* report_style_sheet();
const char* report_script();

}  // namespace nki_agent
