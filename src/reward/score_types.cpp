// reward/score_types.cpp — the JSON of a reward result.
#include "reward/score_types.h"

namespace nki_agent {

nlohmann::json components_to_json(const RewardComponents& c) {
  return {{"format", c.format},
          {"compile", c.compile},
          {"correct", c.correct},
          {"speedup", c.speedup ? nlohmann::json(*c.speedup) : nlohmann::json(nullptr)},
          {"coverage", c.coverage}};
}

nlohmann::json KernelScore::to_json() const {
  nlohmann::json j = {
      {"components", components_to_json(components)}, {"flags", flags}, {"verify", verify}, {"scores", scores}};
  if (error) j["error"] = {{"code", error->code}, {"message", error->message}};
  return j;
}

nlohmann::json RewardResult::to_json() const {
  nlohmann::json j = {
      {"status", status},
      {"score", score ? nlohmann::json(*score) : nlohmann::json(nullptr)},
      {"preset", preset},
      {"scores", scores},
      {"components", components_to_json(components)},
      {"flags", flags},
      {"verify", verify.is_null() ? nlohmann::json::object() : verify},
      {"error", error ? nlohmann::json{{"code", error->code}, {"message", error->message}} : nlohmann::json(nullptr)},
      {"cached", cached},
      {"timings", {{"total_s", total_seconds}, {"verify_s", verify_seconds}, {"queue_s", queue_seconds}}}};
  if (!extracted_from.empty()) j["extracted_from"] = extracted_from;
  if (turns.size() > 1) {
    j["turns"] = nlohmann::json::array();
    for (const auto& t : turns) {
      nlohmann::json tj = t.to_json();
      auto it = t.scores.find(preset);
      tj["score"] = it != t.scores.end() ? nlohmann::json(it->second) : nlohmann::json(nullptr);
      j["turns"].push_back(std::move(tj));
    }
  }
  return j;
}

RewardResult RewardResult::failure(Diagnostic error) {
  RewardResult r;
  r.status = "error";
  r.error = std::move(error);
  return r;
}

}  // namespace nki_agent
