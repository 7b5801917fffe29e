// core/target_clones.h — one function built for several instruction sets, the best one chosen by
// the CPU when the program loads.
//
// NKIA_TARGET_CLONES before a function's definition builds it for AVX-512 (x86-64-v4), AVX2
// (x86-64-v3) and the x86-64 baseline (GCC's target_clones). Only hot loops written for the
// compiler to vectorise carry it: the tensor library's transcendental functions, nc_matmul's small
// products, the output comparison's fast pass. Elsewhere (another architecture or compiler) and
// under AddressSanitizer it is the one portable build.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define NKIA_TARGET_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define NKIA_TARGET_CLONES
#endif
