// agent/embedded_text.h — the agent's text data, compiled into the binary at build time.
//
// nkia_embed() (cmake/embed_files.cmake) turns data/docs/*.toml (the lookup database, agent/docs_db.h),
// prompts/README.md and prompts/<version>/*.md (agent/prompts.h) into one generated table, so the
// agent never looks for them on disk and a binary always carries the prompts it reports.
#pragma once

#include <string_view>
#include <vector>

namespace nki_agent {

struct EmbeddedText {
  std::string_view path;  // relative to the source tree: "data/docs/api.toml", "prompts/v1/task.md"
  std::string_view text;
};

// Every embedded file, sorted by path.
const std::vector<EmbeddedText>& embedded_agent_texts();

// The text of one embedded file, or nullptr when there is none.
const std::string_view* find_embedded_text(std::string_view path);

}  // namespace nki_agent
