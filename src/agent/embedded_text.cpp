// agent/embedded_text.cpp — lookups in the generated table of agent/embedded_text.h.
#include "agent/embedded_text.h"

#include <algorithm>

namespace nki_agent {

const std::string_view* find_embedded_text(std::string_view path) {
  const auto& texts = embedded_agent_texts();
  auto it = std::find_if(texts.begin(), texts.end(), [&](const EmbeddedText& t) { return t.path == path; });
  return it == texts.end() ? nullptr : &it->text;
}

}  // namespace nki_agent
