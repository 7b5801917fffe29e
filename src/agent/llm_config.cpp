// Loading and checking model endpoint configurations (agent/llm_config.h).
//
// Every source fills a Layer of optional settings; the layers are applied in order, and only then
// do the provider-dependent defaults (base_url, api_key_env) fall in, so that naming a Claude
// model in a flag is enough to reach Anthropic.
#include "agent/llm_config.h"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>

namespace nki_agent {

namespace {

namespace fs = std::filesystem;

struct Layer {
  std::optional<std::string> provider, base_url, model, api_key_env;
  std::optional<double> temperature, timeout_s, connect_timeout_s, backoff_initial_s, backoff_max_s;
  std::optional<double> price_input_per_mtok, price_output_per_mtok;
  std::optional<int> max_tokens, max_retries;
  std::optional<bool> stream;
};

template <typename T>
void take(std::optional<T>& into, const std::optional<T>& from) {
  if (from) into = from;
}

void apply(Layer& into, const Layer& l) {
  take(into.provider, l.provider);
  take(into.base_url, l.base_url);
  take(into.model, l.model);
  take(into.api_key_env, l.api_key_env);
  take(into.temperature, l.temperature);
  take(into.timeout_s, l.timeout_s);
  take(into.connect_timeout_s, l.connect_timeout_s);
  take(into.backoff_initial_s, l.backoff_initial_s);
  take(into.backoff_max_s, l.backoff_max_s);
  take(into.price_input_per_mtok, l.price_input_per_mtok);
  take(into.price_output_per_mtok, l.price_output_per_mtok);
  take(into.max_tokens, l.max_tokens);
  take(into.max_retries, l.max_retries);
  take(into.stream, l.stream);
}

Diagnostic config_error(std::string message, const std::string& file, const toml::source_region& where,
                        std::string hint = {}) {
  Diagnostic d = Diagnostic::error("nkia_llm_config", std::move(message), std::move(hint));
  d.loc.file = file;
  d.loc.line = static_cast<int>(where.begin.line);
  d.loc.col = static_cast<int>(where.begin.column);
  return d;
}

// Reads one [llm] or [models.NAME] table into a layer.
Result<Layer> read_table(const toml::table& t, const std::string& table_name, const std::string& file) {
  Layer l;
  for (const auto& [k, node] : t) {
    const std::string key(k.str());
    const std::string where = fmt::format("{}.{}", table_name, key);
    auto wrong_type = [&](const char* want) {
      return fail(config_error(fmt::format("{}: {} must be {}", file, where, want), file, node.source()));
    };
    auto str = [&](std::optional<std::string>& out) -> Result<void> {
      if (auto v = node.value_exact<std::string>()) {
        out = *v;
        return {};
      }
      return wrong_type("a string");
    };
    auto num = [&](std::optional<double>& out) -> Result<void> {
      if (auto f = node.value_exact<double>())
        out = *f;
      else if (auto i = node.value_exact<int64_t>())
        out = static_cast<double>(*i);
      else
        return wrong_type("a number");
      return {};
    };
    auto integer = [&](std::optional<int>& out) -> Result<void> {
      auto i = node.value_exact<int64_t>();
      if (!i || *i < -1'000'000'000 || *i > 1'000'000'000) return wrong_type("an integer");
      out = static_cast<int>(*i);
      return {};
    };
    Result<void> r;
    if (key == "provider")
      r = str(l.provider);
    else if (key == "base_url")
      r = str(l.base_url);
    else if (key == "model")
      r = str(l.model);
    else if (key == "api_key_env")
      r = str(l.api_key_env);
    else if (key == "temperature")
      r = num(l.temperature);
    else if (key == "max_tokens")
      r = integer(l.max_tokens);
    else if (key == "timeout_s")
      r = num(l.timeout_s);
    else if (key == "connect_timeout_s")
      r = num(l.connect_timeout_s);
    else if (key == "max_retries")
      r = integer(l.max_retries);
    else if (key == "backoff_initial_s")
      r = num(l.backoff_initial_s);
    else if (key == "backoff_max_s")
      r = num(l.backoff_max_s);
    else if (key == "price_input_per_mtok")
      r = num(l.price_input_per_mtok);
    else if (key == "price_output_per_mtok")
      r = num(l.price_output_per_mtok);
    else if (key == "stream") {
      if (auto b = node.value_exact<bool>())
        l.stream = *b;
      else
        r = wrong_type("true or false");
    } else if (key == "api_key" || key == "key" || key == "apikey") {
      // Refused even when the value is empty: a key in a file ends up in backups and commits.
      return fail(config_error(fmt::format("{}: {} — API keys are not read from files", file, where), file,
                               node.source(), "remove it and export the key in the variable named by api_key_env"));
    } else {
      return fail(config_error(
          fmt::format("{}: unknown key {}", file, where), file, node.source(),
          "known keys: provider, base_url, model, api_key_env, temperature, max_tokens, stream, timeout_s, "
          "connect_timeout_s, max_retries, backoff_initial_s, backoff_max_s, price_input_per_mtok, "
          "price_output_per_mtok"));
    }
    if (!r) return fail(std::move(r.error()));
  }
  return l;
}

// The file's [llm] layer, then the [models.NAME] layer; every [models.*] table is checked.
Result<Layer> read_file(const std::string& file, const std::string& name) {
  toml::table root;
  try {
    root = toml::parse_file(file);
  } catch (const toml::parse_error& e) {
    return fail(config_error(fmt::format("{}: not valid TOML: {}", file, e.description()), file, e.source(),
                             "fix the TOML syntax (https://toml.io)"));
  }
  Layer l;
  if (const toml::node* n = root.get("llm")) {
    const toml::table* t = n->as_table();
    if (!t) return fail(config_error(fmt::format("{}: llm must be a table", file), file, n->source()));
    auto layer = read_table(*t, "llm", file);
    if (!layer) return fail(std::move(layer.error()));
    apply(l, *layer);
  }
  if (const toml::node* n = root.get("models")) {
    const toml::table* models = n->as_table();
    if (!models)
      return fail(
          config_error(fmt::format("{}: models must be a table of [models.NAME] tables", file), file, n->source()));
    std::optional<Layer> chosen;
    for (const auto& [k, m] : *models) {
      const std::string model_name(k.str());
      const toml::table* t = m.as_table();
      if (!t)
        return fail(config_error(fmt::format("{}: models.{} must be a table", file, model_name), file, m.source()));
      auto layer = read_table(*t, "models." + model_name, file);
      if (!layer) return fail(std::move(layer.error()));
      if (model_name == name) chosen = std::move(*layer);
    }
    if (chosen) apply(l, *chosen);
  }
  return l;
}

Result<Layer> read_env(const GetenvFn& getenv_fn) {
  Layer l;
  auto get = [&](const char* var) -> std::optional<std::string> {
    auto v = getenv_fn(var);
    if (v && v->empty()) return std::nullopt;  // VAR= (set but empty) means unset
    return v;
  };
  l.provider = get("NKIA_LLM_PROVIDER");
  l.base_url = get("NKIA_LLM_BASE_URL");
  l.model = get("NKIA_LLM_MODEL");
  if (auto v = get("NKIA_LLM_TEMPERATURE")) {
    char* end = nullptr;
    const double d = std::strtod(v->c_str(), &end);
    if (end == v->c_str() || *end != '\0')
      return fail("nkia_llm_config", fmt::format("NKIA_LLM_TEMPERATURE={} is not a number", *v));
    l.temperature = d;
  }
  if (auto v = get("NKIA_LLM_MAX_TOKENS")) {
    char* end = nullptr;
    const long n = std::strtol(v->c_str(), &end, 10);
    if (end == v->c_str() || *end != '\0' || n <= 0 || n > 100'000'000)
      return fail("nkia_llm_config", fmt::format("NKIA_LLM_MAX_TOKENS={} is not a positive integer", *v));
    l.max_tokens = static_cast<int>(n);
  }
  return l;
}

Layer flag_layer(const LlmOverrides& f) {
  Layer l;
  l.provider = f.provider;
  l.base_url = f.base_url;
  l.model = f.model;
  l.temperature = f.temperature;
  l.max_tokens = f.max_tokens;
  l.stream = f.stream;
  l.timeout_s = f.timeout_s;
  l.max_retries = f.max_retries;
  l.price_input_per_mtok = f.price_input_per_mtok;
  l.price_output_per_mtok = f.price_output_per_mtok;
  return l;
}

// Which file to read: "" for none.
Result<std::string> config_file(const std::string& config_path, const GetenvFn& getenv_fn) {
  std::error_code ec;
  std::string explicit_path = config_path;
  std::string origin = "the config path given";
  if (explicit_path.empty()) {
    if (auto v = getenv_fn("NKIA_CONFIG"); v && !v->empty()) {
      explicit_path = *v;
      origin = "$NKIA_CONFIG";
    }
  }
  if (!explicit_path.empty()) {
    if (!fs::is_regular_file(explicit_path, ec))
      return fail("nkia_llm_config", fmt::format("config file {} ({}) does not exist", explicit_path, origin),
                  "give the path of a TOML file with [models.NAME] tables, or none at all");
    return explicit_path;
  }
  if (auto home = getenv_fn("HOME"); home && !home->empty()) {
    const fs::path p = fs::path(*home) / ".config" / "nki-agent" / "config.toml";
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return std::string();
}

}  // namespace

Result<LlmConfig> load_llm_config(const std::string& name, const std::string& config_path, const GetenvFn& getenv_fn,
                                  const LlmOverrides& flags) {
  Layer l;
  auto file = config_file(config_path, getenv_fn);
  if (!file) return fail(std::move(file.error()));
  if (!file->empty()) {
    auto from_file = read_file(*file, name);
    if (!from_file) return fail(std::move(from_file.error()));
    apply(l, *from_file);
  }
  auto env = read_env(getenv_fn);
  if (!env) return fail(std::move(env.error()));
  apply(l, *env);
  apply(l, flag_layer(flags));

  LlmConfig c;
  c.name = name;
  c.model = l.model.value_or(name);
  if (c.name.empty()) c.name = c.model;
  c.provider = l.provider.value_or(c.model.rfind("claude", 0) == 0 ? "anthropic" : "openai");
  const bool anthropic = c.provider == "anthropic";
  c.base_url = l.base_url.value_or(anthropic ? "https://api.anthropic.com/v1" : "https://api.openai.com/v1");
  c.api_key_env = l.api_key_env.value_or(anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
  c.temperature = l.temperature.value_or(c.temperature);
  c.max_tokens = l.max_tokens.value_or(c.max_tokens);
  c.stream = l.stream.value_or(c.stream);
  c.timeout_s = l.timeout_s.value_or(c.timeout_s);
  c.connect_timeout_s = l.connect_timeout_s.value_or(c.connect_timeout_s);
  c.max_retries = l.max_retries.value_or(c.max_retries);
  c.backoff_initial_s = l.backoff_initial_s.value_or(c.backoff_initial_s);
  c.backoff_max_s = l.backoff_max_s.value_or(c.backoff_max_s);
  c.price_input_per_mtok = l.price_input_per_mtok.value_or(c.price_input_per_mtok);
  c.price_output_per_mtok = l.price_output_per_mtok.value_or(c.price_output_per_mtok);
  auto ok = validate_llm_config(c);
  if (ok) ok = check_llm_key(c, llm_api_key(c, getenv_fn));
  if (!ok) {
    if (!file->empty()) ok.error().with_note(fmt::format("configuration file: {}", *file));
    return fail(std::move(ok.error()));
  }
  return c;
}

std::string llm_api_key(const LlmConfig& config, const GetenvFn& getenv_fn) {
  if (config.api_key_env.empty()) return {};
  auto v = getenv_fn(config.api_key_env);
  if (!v) return {};
  std::string k = *v;
  const auto not_space = [](unsigned char ch) { return !std::isspace(ch); };
  k.erase(k.begin(), std::find_if(k.begin(), k.end(), not_space));
  k.erase(std::find_if(k.rbegin(), k.rend(), not_space).base(), k.end());
  return k;
}

Result<void> validate_llm_config(const LlmConfig& c) {
  auto bad = [&](std::string what, std::string hint = {}) {
    return fail("nkia_llm_config", fmt::format("model '{}': {}", c.name, what), std::move(hint));
  };
  if (c.provider != "openai" && c.provider != "anthropic")
    return bad(fmt::format("unknown provider '{}'", c.provider),
               "provider is \"openai\" (any OpenAI-compatible server) or \"anthropic\"");
  if (c.base_url.rfind("http://", 0) != 0 && c.base_url.rfind("https://", 0) != 0)
    return bad(fmt::format("base_url '{}' is not an http:// or https:// URL", c.base_url),
               "e.g. base_url = \"http://127.0.0.1:8000/v1\"");
  if (c.model.empty()) return bad("no model id", "set model in [models.NAME] or pass one");
  auto finite_in = [](double v, double lo, double hi) { return std::isfinite(v) && v >= lo && v <= hi; };
  if (!finite_in(c.temperature, 0, 2)) return bad(fmt::format("temperature {} is outside [0, 2]", c.temperature));
  if (c.max_tokens <= 0) return bad(fmt::format("max_tokens {} is not positive", c.max_tokens));
  if (!finite_in(c.timeout_s, 1e-3, 86400)) return bad(fmt::format("timeout_s {} is outside (0, 86400]", c.timeout_s));
  if (!finite_in(c.connect_timeout_s, 1e-3, 86400))
    return bad(fmt::format("connect_timeout_s {} is outside (0, 86400]", c.connect_timeout_s));
  if (c.max_retries < 0 || c.max_retries > 100)
    return bad(fmt::format("max_retries {} is outside [0, 100]", c.max_retries));
  if (!finite_in(c.backoff_initial_s, 0, 3600) || !finite_in(c.backoff_max_s, 0, 3600))
    return bad("backoff_initial_s and backoff_max_s must lie in [0, 3600]");
  if (!finite_in(c.price_input_per_mtok, 0, 1e6) || !finite_in(c.price_output_per_mtok, 0, 1e6))
    return bad("prices must be non-negative");
  return {};
}

Result<void> check_llm_key(const LlmConfig& c, const std::string& api_key) {
  if (!api_key.empty()) return {};
  const size_t scheme = c.base_url.find("://");
  const size_t from = scheme == std::string::npos ? 0 : scheme + 3;
  std::string host = c.base_url.substr(from, c.base_url.find_first_of(":/?#", from) - from);
  for (auto& ch : host) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (host != "api.openai.com" && host != "api.anthropic.com") return {};  // a server of one's own
  const std::string local = fmt::format(
      "or, for a server of your own, give its URL with --base-url, NKIA_LLM_BASE_URL or base_url in "
      "a [models.{}] table of ~/.config/nki-agent/config.toml",
      c.name);
  if (c.api_key_env.empty())
    return fail("nkia_llm_config",
                fmt::format("model '{}': {} needs an API key, and api_key_env names no variable to read it from",
                            c.name, c.base_url),
                fmt::format("set api_key_env in [models.{}] to the variable that holds the key, {}", c.name, local));
  return fail("nkia_llm_config",
              fmt::format("model '{}': {} needs an API key, and {} is not set", c.name, c.base_url, c.api_key_env),
              fmt::format("export {}=<your key>, {}", c.api_key_env, local));
}

}  // namespace nki_agent
