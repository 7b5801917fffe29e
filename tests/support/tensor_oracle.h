// tests/support/tensor_oracle.h — one batch of differential cases for tests/oracle/tensor_ops.py:
// inputs are .npy files in a scratch folder (narrow floats as their exact float32 values), the
// cases a JSON list, the answers r<id>.npy plus results.json. Shared by the tensor op and view tests.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "support/python_oracle.h"
#include "tensor/npy.h"

namespace nki_agent::testing {

class TensorOracle {
 public:
  std::string input(const Tensor& t) {
    std::string name = "in" + std::to_string(n_inputs_++) + ".npy";
    NpyOptions opts;
    opts.narrow_as = NarrowAs::kFloat32;  // bf16 / fp8 / tf32 values as exact float32
    auto r = npy_save(dir_.file(name), t, opts);
    if (!r) throw std::runtime_error("npy_save: " + r.error().format());
    return name;
  }
  int add(nlohmann::json c) {
    const int id = static_cast<int>(cases_.size());
    c["id"] = id;
    cases_.push_back(std::move(c));
    return id;
  }
  ::testing::AssertionResult run() {
    {
      std::ofstream f(dir_.file("cases.json"));
      f << cases_.dump();
    }
    const auto r = run_python(oracle_script("tensor_ops.py"), {dir_.path()});
    if (r.exit_code != 0) return ::testing::AssertionFailure() << "oracle failed:\n" << r.output;
    std::ifstream f(dir_.file("results.json"));
    try {
      results_ = nlohmann::json::parse(f);
    } catch (const std::exception& e) {
      return ::testing::AssertionFailure() << "results.json: " << e.what() << "\n" << r.output;
    }
    return ::testing::AssertionSuccess();
  }
  const nlohmann::json& meta(int id) const { return results_.at(std::to_string(id)); }
  bool failed(int id) const { return meta(id).contains("error"); }
  std::string error(int id) const { return failed(id) ? meta(id)["error"].get<std::string>() : std::string(); }
  Tensor answer(int id) const {
    if (failed(id)) throw std::runtime_error("oracle case " + std::to_string(id) + ": " + error(id));
    auto r = npy_load(dir_.file("r" + std::to_string(id) + ".npy"));
    if (!r) throw std::runtime_error("npy_load: " + r.error().format());
    return *r;
  }
  size_t size() const { return cases_.size(); }

 private:
  ScratchDir dir_;
  nlohmann::json cases_ = nlohmann::json::array();
  nlohmann::json results_;
  int n_inputs_ = 0;
};

}  // namespace nki_agent::testing
