// agent/llm_config.h — where an LlmConfig comes from: defaults, a TOML file, the environment, flags.
//
// Sources, later ones winning:
//   1. defaults: provider "anthropic" when the model id starts with "claude", else "openai"; the
//      provider's public base_url and key variable (OPENAI_API_KEY / ANTHROPIC_API_KEY);
//   2. a TOML file: the path given, else $NKIA_CONFIG, else ~/.config/nki-agent/config.toml when it
//      exists (a path given or named by $NKIA_CONFIG must exist). An optional [llm] table holds
//      settings shared by all models; [models.NAME] holds one model's. When no table is named
//      NAME, NAME is the model id. Unknown keys are errors, and so is an API key: keys come from
//      the environment only (the variable named by api_key_env);
//   3. NKIA_LLM_PROVIDER, NKIA_LLM_BASE_URL, NKIA_LLM_MODEL, NKIA_LLM_TEMPERATURE, NKIA_LLM_MAX_TOKENS;
//   4. flags (LlmOverrides).
// Other top-level tables of the file belong to other parts of nki-agent and are not read here.
// A configuration that would reach a provider's public API without a key in the environment is
// refused (check_llm_key).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "agent/llm.h"

namespace nki_agent {

// Settings given on the command line; unset fields leave the other sources' values.
struct LlmOverrides {
  std::optional<std::string> provider;
  std::optional<std::string> base_url;
  std::optional<std::string> model;
  std::optional<double> temperature;
  std::optional<int> max_tokens;
  std::optional<bool> stream;
  std::optional<double> timeout_s;
  std::optional<int> max_retries;
  std::optional<double> price_input_per_mtok;
  std::optional<double> price_output_per_mtok;
};

// Reads an environment variable; returns nullopt when it is not set. Tests pass a fake one.
using GetenvFn = std::function<std::optional<std::string>(const std::string&)>;

// The configuration of the model called `name` (see the file comment). Errors: nkia_llm_config.
Result<LlmConfig> load_llm_config(const std::string& name, const std::string& config_path, const GetenvFn& getenv_fn,
                                  const LlmOverrides& flags);

// The API key from the variable named by config.api_key_env, whitespace trimmed; "" when unset
// (local servers need none).
std::string llm_api_key(const LlmConfig& config, const GetenvFn& getenv_fn);

// Checks what a client needs: a known provider, an http(s) base_url, a model id, sane numbers.
// Errors: nkia_llm_config. make_llm_client calls it too.
Result<void> validate_llm_config(const LlmConfig& config);

// Refuses a provider's public API (api.openai.com, api.anthropic.com) without a key: every call
// would be turned away, or, with no route to it, retried until the deadline. The Diagnostic
// (nkia_llm_config) names the variable to set, and how to point the model at a server of one's
// own instead. load_llm_config and make_llm_client call it.
Result<void> check_llm_key(const LlmConfig& config, const std::string& api_key);

}  // namespace nki_agent
