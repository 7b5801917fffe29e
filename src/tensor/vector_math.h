// tensor/vector_math.h — float32 transcendental functions over arrays (o[i] = f(a[i]), o may be a),
// computed in float64 and rounded once: the engines' exp, log, tanh, sigmoid, sin, cos and the
// activations made of them, fast enough for 100-million-element tensors. See vector_math.cpp for
// accuracy.
#pragma once

#include <cstdint>

namespace nki_agent {

void vexp_f32(const float* a, float* o, int64_t n);
void vlog_f32(const float* a, float* o, int64_t n);
void vtanh_f32(const float* a, float* o, int64_t n);
void vsigmoid_f32(const float* a, float* o, int64_t n);
void vsilu_f32(const float* a, float* o, int64_t n);          // x sigmoid(x)
void vgelu_tanh_f32(const float* a, float* o, int64_t n);     // x sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3))
void vgelu_sigmoid_f32(const float* a, float* o, int64_t n);  // x sigmoid(1.702 x)
void vsoftplus_f32(const float* a, float* o, int64_t n);      // log(1 + exp(x))
void vmish_f32(const float* a, float* o, int64_t n);          // x tanh(softplus(x))
void vsin_f32(const float* a, float* o, int64_t n);
void vcos_f32(const float* a, float* o, int64_t n);

}  // namespace nki_agent
