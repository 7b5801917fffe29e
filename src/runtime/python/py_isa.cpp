// The `_nkia_core` instructions: each converts its Python operands (to_access, the operator and
// engine names) and calls its nki/isa.h function, raising what it returns. Nothing else: the
// instructions' rules are in the core.
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <optional>

#include "nki/isa_collective.h"
#include "nki/isa_matmul_modes.h"
#include "nki/isa_random.h"
#include "nki/isa_scalar.h"
#include "nki/isa_select.h"
#include "nki/isa_vector.h"
#include "runtime/python/py_core.h"
#include "runtime/python/replay.h"

namespace py = pybind11;

namespace nki_agent {

namespace {

// The names come from the operator and engine tables (tensor/ops.h, nki/opcodes.h); these raise
// the kernel's error for a name that is none.
BinaryOp parse_binary(const std::string& name) {
  if (auto op = binary_op_from_name(name)) return *op;
  raise(nki_error("nkia_unsupported_operator", fmt::format("'{}' is not an arithmetic operator", name),
                  "use an nl operator such as nl.add, nl.multiply, nl.maximum or nl.subtract"));
}

UnaryOp parse_unary(const std::string& name) {
  if (auto op = unary_op_from_name(name)) return *op;
  raise(nki_error("nkia_unsupported_operator", fmt::format("'{}' is not an activation function", name),
                  "use an nl function such as nl.exp, nl.tanh, nl.gelu or nl.copy"));
}

MatmulPerfMode parse_perf_mode(const std::string& name) {
  if (auto pm = parse_matmul_perf_mode(name)) return *pm;
  raise(nki_error("nkia_bad_operand", fmt::format("unknown matmul perf_mode '{}'", name),
                  "use nisa.matmul_perf_mode.double_row (legacy: perf_mode=\"double_row_gen3\"), or leave "
                  "perf_mode out for the ordinary mode"));
}

// The engines an instruction's engine= may name, as the nisa engine constants spell them (not the
// hardware names engine_from_name also reads, and not the DMA queues).
Engine parse_engine(const std::string& name) {
  for (Engine e : {Engine::kVector, Engine::kScalar, Engine::kGpSimd, Engine::kTensor})
    if (engine_name(e) == name) return e;
  raise(nki_error("nkia_unknown_engine", fmt::format("unknown engine '{}'", name),
                  "use nisa.vector_engine, nisa.scalar_engine or nisa.gpsimd_engine"));
}

// A reduction by the name of its operator (nl.add, nl.maximum, ...) or its own (sum, max, ...);
// a mean is no reduction operator of an instruction.
std::optional<ReduceOp> reduce_by_name(const std::string& name) {
  const std::optional<ReduceOp> op = reduce_op_from_name(name);
  if (op && *op == ReduceOp::kMean) return std::nullopt;
  return op;
}

// tensor_reduce's operator: any reduction.
ReduceOp parse_reduce(const std::string& name) {
  if (auto op = reduce_by_name(name)) return *op;
  raise(nki_error("nkia_unsupported_operator", fmt::format("'{}' is not a reduction operator", name),
                  "reduce with nl.add, nl.maximum, nl.minimum, nl.multiply, nl.logical_and or nl.logical_or"));
}

// activation's reduce_op: the Scalar engine reduces with a sum, a maximum or a minimum only.
ReduceOp parse_activation_reduce(const std::string& name) {
  const std::optional<ReduceOp> op = reduce_by_name(name);
  if (op && (*op == ReduceOp::kSum || *op == ReduceOp::kMax || *op == ReduceOp::kMin)) return *op;
  raise(nki_error("nkia_unsupported_operator", fmt::format("'{}' is not an activation reduction", name),
                  "reduce with nl.add (or nl.maximum / nl.minimum)"));
}

// An operand that is "a number or a [P, 1] tile" (nki/isa_vector.h): the number (`value`), or the
// tile admitted as the operand `role`. None is neither when `none_ok` (an optional operand), else it
// is refused as a tile would be.
ScalarOperand scalar_or_tile(py::handle h, const char* role, double value_if_tile = 0, bool none_ok = false) {
  ScalarOperand s;
  if (py::isinstance<py::float_>(h) || py::isinstance<py::int_>(h)) {
    s.value = h.cast<double>();
  } else {
    s.value = value_if_tile;
    if (!(none_ok && h.is_none())) s.tile = to_access(h, role);
  }
  return s;
}

std::optional<Access> opt_access(py::handle h, const char* role) {
  if (h.is_none()) return std::nullopt;
  return to_access(h, role);
}

// An instruction's optional operand or scalar operand among its recorded operands (issue): pushed
// when present, taken back in the same order on the way in.
bool push_operand(std::vector<Access>& ops, std::optional<Access> a) {
  if (!a) return false;
  ops.push_back(std::move(*a));
  return true;
}
std::optional<Access> take_operand(bool present, std::span<const Access> o, size_t& k) {
  return present ? std::optional<Access>(o[k++]) : std::nullopt;
}

// Affine expressions cross as (constant, [(axis, coef), ...]).
AffineExpr affine(int64_t constant, const std::vector<std::pair<int, int64_t>>& terms) {
  AffineExpr e;
  e.constant = constant;
  e.terms = terms;
  return e;
}

}  // namespace

void register_isa(py::module_& m) {
  m.def(
      "dma_copy",
      [](py::handle dst, py::handle src, const std::string& rmw) {
        ExecContext& ctx = instruction_exec("dma_copy");
        const std::optional<BinaryOp> op = rmw.empty() ? std::nullopt : std::optional<BinaryOp>(parse_binary(rmw));
        check(issue<2>(ctx, {to_access(dst, "dst"), to_access(src, "src")},
                       [op, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                         return isa_dma_copy(c, o[0], o[1], loc, op);
                       }));
      },
      py::arg("dst"), py::arg("src"), py::arg("rmw") = "");
  // nki.collectives' data movement (nki/isa_collective.h; _nkia.collectives runs the operations).
  m.def("collective_snapshot", [](py::handle src) -> py::object {
    const ExecContext& ctx = exec_or_raise("collective");
    if (!ctx.compute) return py::reinterpret_borrow<py::object>(src);  // nothing is copied: the view itself
    return py::cast(collective_snapshot(to_access(src, "srcs")));
  });
  m.def(
      "collective_receive",
      [](py::handle dst, py::handle part, py::handle own, const std::string& op) {
        ExecContext& ctx = exec_or_raise("collective");
        const std::optional<Access> mine = own.is_none() ? std::nullopt : std::optional<Access>(to_access(own, "srcs"));
        check(isa_collective_receive(ctx, to_access(dst, "dsts"), to_access(part, "srcs"), mine ? &*mine : nullptr,
                                     op.empty() ? std::nullopt : std::optional<BinaryOp>(parse_binary(op)),
                                     caller_loc()));
      },
      py::arg("dst"), py::arg("part"), py::arg("own") = py::none(), py::arg("op") = "");
  m.def("rank_argument", [](const std::shared_ptr<NkiTensor>& t) { return rank_argument_copy(*t); });
  m.def("dma_transpose", [](py::handle dst, py::handle src, const std::vector<int>& axes) {
    ExecContext& ctx = instruction_exec("dma_transpose");
    check(issue<2>(ctx, {to_access(dst, "dst"), to_access(src, "src")},
                   [axes, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                     return isa_dma_transpose(c, o[0], o[1], axes, loc);
                   }));
  });
  m.def("dma_transpose_axes", [](int rank) {
    const std::span<const int> axes = dma_transpose_axes(rank);
    return std::vector<int>(axes.begin(), axes.end());
  });
  m.def("tensor_tensor", [](py::handle dst, py::handle a, py::handle b, const std::string& op) {
    ExecContext& ctx = instruction_exec("tensor_tensor");
    check(issue<3>(ctx, {to_access(dst, "dst"), to_access(a, "data1"), to_access(b, "data2")},
                   [bop = parse_binary(op), loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                     return isa_tensor_tensor(c, o[0], o[1], o[2], bop, loc);
                   }));
  });
  m.def("tensor_scalar", [](py::handle dst, py::handle src, const std::string& op, double scalar, bool reverse) {
    ExecContext& ctx = instruction_exec("tensor_scalar");
    check(issue<2>(
        ctx, {to_access(dst, "dst"), to_access(src, "data")},
        [bop = parse_binary(op), scalar, reverse, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
          return isa_tensor_scalar(c, o[0], o[1], bop, scalar, reverse, loc);
        }));
  });
  m.def("tensor_scalar_tile",
        [](py::handle dst, py::handle src, const std::string& op, py::handle operand, bool reverse) {
          ExecContext& ctx = instruction_exec("tensor_scalar");
          const BinaryOp bop = parse_binary(op);
          check(issue<3>(ctx, {to_access(dst, "dst"), to_access(src, "data"), to_access(operand, "operand")},
                         [bop, reverse, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                           return isa_tensor_scalar_tile(c, o[0], o[1], bop, o[2], reverse, loc);
                         }));
        });
  m.def("iota", [](py::handle dst, int64_t constant, std::vector<std::pair<int, int64_t>> terms) {
    ExecContext& ctx = instruction_exec("iota");
    check(issue<1>(ctx, {to_access(dst, "dst")},
                   [expr = affine(constant, terms), loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                     return isa_iota(c, o[0], expr, loc);
                   }));
  });
  m.def("affine_select", [](py::handle dst, int64_t constant, std::vector<std::pair<int, int64_t>> terms,
                            const std::string& cmp, py::handle on_true, double on_false) {
    ExecContext& ctx = instruction_exec("affine_select");
    Access d = to_access(dst, "dst");
    const BinaryOp op = parse_binary(cmp);
    check(issue<2>(
        ctx, {std::move(d), to_access(on_true, "on_true_tile")},
        [expr = affine(constant, terms), op, on_false, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
          return isa_affine_select(c, o[0], expr, op, o[1], on_false, loc);
        }));
  });
  // scale: a number, or a [P, 1] tile.
  m.def(
      "activation",
      [](py::handle dst, const std::string& op, py::handle src, py::handle bias, py::handle scale,
         py::handle reduce_res, const std::string& reduce_op) {
        ExecContext& ctx = instruction_exec("activation");
        // Operands: bias, the scale tile and reduce_res where given, then dst and data.
        std::vector<Access> ops;
        if (!bias.is_none()) ops.push_back(to_access(bias, "bias"));
        const bool has_bias = !ops.empty();
        ScalarOperand s = scalar_or_tile(scale, "scale", 1.0);
        const bool has_scale = s.tile.has_value();
        if (has_scale) ops.push_back(std::move(*s.tile));
        std::optional<UnaryOp> fn;
        if (op != "copy" && op != "identity") fn = parse_unary(op);
        std::optional<ReduceOp> rop;
        if (!reduce_res.is_none()) {
          rop = parse_activation_reduce(reduce_op);
          ops.push_back(to_access(reduce_res, "reduce_res"));
        }
        ops.push_back(to_access(dst, "dst"));
        ops.push_back(to_access(src, "data"));
        check(issue(ctx, std::move(ops),
                    [has_bias, has_scale, rop, fn, value = s.value, loc = caller_loc()](ExecContext& c,
                                                                                        std::span<const Access> o) {
                      size_t k = 0;
                      std::optional<Access> b, scale_tile;
                      std::optional<ActivationReduce> reduce_to;
                      if (has_bias) b = o[k++];
                      if (has_scale) scale_tile = o[k++];
                      if (rop) reduce_to = ActivationReduce{o[k++], *rop};
                      return isa_activation(c, o[k], fn, o[k + 1], b, value, loc, scale_tile, reduce_to);
                    }));
      },
      py::arg("dst"), py::arg("op"), py::arg("src"), py::arg("bias"), py::arg("scale"),
      py::arg("reduce_res") = py::none(), py::arg("reduce_op") = "add");
  // perf_mode: "" (the ordinary mode) or "double_row" (nki/isa_matmul_modes.h).
  m.def(
      "nc_matmul",
      [](py::handle dst, py::handle stationary, py::handle moving, const std::string& mode,
         const std::string& perf_mode) {
        ExecContext& ctx = instruction_exec("nc_matmul");
        Accumulate acc = mode == "accumulate"  ? Accumulate::kAccumulate
                         : mode == "overwrite" ? Accumulate::kOverwrite
                                               : Accumulate::kAuto;
        const MatmulPerfMode pm = parse_perf_mode(perf_mode);
        check(issue<3>(ctx, {to_access(dst, "dst"), to_access(stationary, "stationary"), to_access(moving, "moving")},
                       [pm, acc, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                         return pm == MatmulPerfMode::kDoubleRow
                                    ? isa_nc_matmul_double_row(c, o[0], o[1], o[2], acc, loc)
                                    : isa_nc_matmul(c, o[0], o[1], o[2], acc, loc);
                       }));
      },
      py::arg("dst"), py::arg("stationary"), py::arg("moving"), py::arg("mode"), py::arg("perf_mode") = "");
  // tiling: none, or (row, column, rows, columns) of tile_position and tile_size.
  m.def(
      "nc_matmul_mx",
      [](py::handle dst, py::handle stationary, py::handle moving, py::handle stationary_scale, py::handle moving_scale,
         const std::string& mode, std::optional<std::vector<int64_t>> tiling) {
        ExecContext& ctx = instruction_exec("nc_matmul_mx");
        const Accumulate acc = mode == "accumulate"  ? Accumulate::kAccumulate
                               : mode == "overwrite" ? Accumulate::kOverwrite
                                                     : Accumulate::kAuto;
        MxTiling t;
        if (tiling && tiling->size() == 4) t = MxTiling{(*tiling)[0], (*tiling)[1], (*tiling)[2], (*tiling)[3], true};
        check(issue<5>(ctx,
                       {to_access(dst, "dst"), to_access(stationary, "stationary"), to_access(moving, "moving"),
                        to_access(stationary_scale, "stationary_scale"), to_access(moving_scale, "moving_scale")},
                       [acc, t, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                         return isa_nc_matmul_mx(c, o[0], o[1], o[2], o[3], o[4], acc, t, loc);
                       }));
      },
      py::arg("dst"), py::arg("stationary"), py::arg("moving"), py::arg("stationary_scale"), py::arg("moving_scale"),
      py::arg("mode"), py::arg("tiling") = py::none());
  m.def(
      "quantize_mx",
      [](py::handle dst, py::handle src, py::handle dst_scale) {
        ExecContext& ctx = instruction_exec("quantize_mx");
        check(issue<3>(ctx, {to_access(dst, "dst"), to_access(src, "src"), to_access(dst_scale, "dst_scale")},
                       [loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                         return isa_quantize_mx(c, o[0], o[1], o[2], loc);
                       }));
      },
      py::arg("dst"), py::arg("src"), py::arg("dst_scale"));
  // Checks the operands, then allocates the float32 PSUM result and multiplies into it: so that a bad
  // operand reports its own rule, not a consequence of the result's shape.
  m.def(
      "nc_matmul_new",
      [](py::handle stationary, py::handle moving, const std::string& perf_mode) {
        ExecContext& ctx = instruction_exec("nc_matmul");
        const MatmulPerfMode pm = parse_perf_mode(perf_mode);
        Access s = to_access(stationary, "stationary"), mv = to_access(moving, "moving");
        check(pm == MatmulPerfMode::kDoubleRow ? check_matmul_double_row_inputs(ctx, s, mv)
                                               : check_matmul_inputs(ctx, s, mv));
        auto dst = check(launch_or_raise("nc_matmul").new_matmul_result(s, mv, pm, caller_loc()));
        if (Recording* r = current_recording()) r->add_created(dst);
        check(issue<3>(ctx, {whole(dst), std::move(s), std::move(mv)},
                       [pm, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                         return pm == MatmulPerfMode::kDoubleRow
                                    ? isa_nc_matmul_double_row(c, o[0], o[1], o[2], Accumulate::kOverwrite, loc)
                                    : isa_nc_matmul(c, o[0], o[1], o[2], Accumulate::kOverwrite, loc);
                       }));
        return dst;
      },
      py::arg("stationary"), py::arg("moving"), py::arg("perf_mode") = "");
  // The operand rules of a matmul, at its call (a legacy matmul lands later, where it is used).
  m.def(
      "check_matmul_inputs",
      [](py::handle stationary, py::handle moving, const std::string& perf_mode) {
        ExecContext& ctx = instruction_exec("nc_matmul");
        Access s = to_access(stationary, "stationary"), mv = to_access(moving, "moving");
        check(parse_perf_mode(perf_mode) == MatmulPerfMode::kDoubleRow ? check_matmul_double_row_inputs(ctx, s, mv)
                                                                       : check_matmul_inputs(ctx, s, mv));
      },
      py::arg("stationary"), py::arg("moving"), py::arg("perf_mode") = "");
  m.def("check_transpose", [](py::handle src, const std::string& engine) {
    check(check_transpose_input(to_access(src, "data"), parse_engine(engine)));
  });
  m.def("nc_transpose", [](py::handle dst, py::handle src, const std::string& engine) {
    ExecContext& ctx = instruction_exec("nc_transpose");
    const Engine e = parse_engine(engine);
    check(issue<2>(ctx, {to_access(dst, "dst"), to_access(src, "data")},
                   [e, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                     return isa_nc_transpose(c, o[0], o[1], e, loc);
                   }));
  });
  m.def("tensor_reduce", [](py::handle dst, const std::string& op, py::handle src, std::vector<int> axes, bool negate) {
    ExecContext& ctx = instruction_exec("tensor_reduce");
    const ReduceOp rop = parse_reduce(op);
    check(issue<2>(ctx, {to_access(dst, "dst"), to_access(src, "data")},
                   [rop, axes, negate, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                     return isa_tensor_reduce(c, o[0], rop, o[1], axes, negate, loc);
                   }));
  });
  m.def("tensor_tensor_scan", [](py::handle dst, py::handle d0, py::handle d1, py::handle initial,
                                 const std::string& op0, const std::string& op1, bool rev0, bool rev1) {
    ExecContext& ctx = instruction_exec("tensor_tensor_scan");
    ScalarOperand init = scalar_or_tile(initial, "initial");
    const BinaryOp b0 = parse_binary(op0), b1 = parse_binary(op1);
    std::vector<Access> ops{to_access(dst, "dst"), to_access(d0, "data0"), to_access(d1, "data1")};
    const bool tile = init.tile.has_value();
    if (tile) ops.push_back(std::move(*init.tile));
    check(issue(
        ctx, std::move(ops),
        [tile, value = init.value, b0, b1, rev0, rev1, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
          return isa_tensor_tensor_scan(c, o[0], o[1], o[2], value, tile ? std::optional<Access>(o[3]) : std::nullopt,
                                        b0, b1, rev0, rev1, loc);
        }));
  });
  m.def("bn_stats", [](py::handle dst, py::handle src) {
    ExecContext& ctx = instruction_exec("bn_stats");
    check(issue<2>(
        ctx, {to_access(dst, "dst"), to_access(src, "data")},
        [loc = caller_loc()](ExecContext& c, std::span<const Access> o) { return isa_bn_stats(c, o[0], o[1], loc); }));
  });
  m.def("bn_aggr", [](py::handle dst, py::handle src) {
    ExecContext& ctx = instruction_exec("bn_aggr");
    check(issue<2>(
        ctx, {to_access(dst, "dst"), to_access(src, "data")},
        [loc = caller_loc()](ExecContext& c, std::span<const Access> o) { return isa_bn_aggr(c, o[0], o[1], loc); }));
  });
  // steps: [(operator name, operand: a number, a [P, 1] tile or None, reverse), ...]
  m.def("tensor_scalar_ops", [](py::handle dst, py::handle src, py::list steps) {
    ExecContext& ctx = instruction_exec("tensor_scalar");
    std::vector<ScalarStep> parsed;
    for (py::handle h : steps) {
      auto t = h.cast<py::tuple>();
      ScalarStep st;
      const std::string name = t[0].cast<std::string>();
      if (auto op = binary_op_from_name(name))
        st.op = *op;
      else
        st.unary = parse_unary(name);
      const py::handle operand = t[1];
      ScalarOperand o = scalar_or_tile(operand, "operand", st.value, /*none_ok=*/true);
      st.value = o.value;
      st.tile = std::move(o.tile);
      if (operand.is_none() && !st.unary)
        raise(nki_error("nkia_bad_operand", fmt::format("tensor_scalar operator '{}' needs an operand", name),
                        "pass operand0 (and operand1 with op1): a number or a [P, 1] tile"));
      st.reverse = t[2].cast<bool>();
      parsed.push_back(std::move(st));
    }
    // Operands: dst, data, then each step's tile where it has one.
    std::vector<Access> ops{to_access(dst, "dst"), to_access(src, "data")};
    std::vector<bool> tiles;
    for (ScalarStep& st : parsed) {
      tiles.push_back(push_operand(ops, std::move(st.tile)));
      st.tile.reset();
    }
    check(issue(ctx, std::move(ops), [parsed, tiles, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
      std::vector<ScalarStep> with_tiles = parsed;
      size_t k = 2;
      for (size_t i = 0; i < with_tiles.size(); ++i) with_tiles[i].tile = take_operand(tiles[i], o, k);
      return isa_tensor_scalar_ops(c, o[0], o[1], with_tiles, loc);
    }));
  });
  m.def("max8", [](py::handle dst, py::handle src) {
    ExecContext& ctx = instruction_exec("max8");
    check(issue<2>(
        ctx, {to_access(dst, "dst"), to_access(src, "src")},
        [loc = caller_loc()](ExecContext& c, std::span<const Access> o) { return isa_max8(c, o[0], o[1], loc); }));
  });
  m.def("find_index8", [](py::handle dst, py::handle data, py::handle vals) {
    ExecContext& ctx = instruction_exec("nc_find_index8");
    check(issue<3>(ctx, {to_access(dst, "dst"), to_access(data, "data"), to_access(vals, "vals")},
                   [loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                     return isa_find_index8(c, o[0], o[1], o[2], loc);
                   }));
  });
  m.def("match_replace8", [](py::handle dst, py::handle data, py::handle vals, double imm, py::handle idx) {
    ExecContext& ctx = instruction_exec("nc_match_replace8");
    std::vector<Access> ops{to_access(dst, "dst"), to_access(data, "data"), to_access(vals, "vals")};
    const bool has_idx = push_operand(ops, opt_access(idx, "dst_idx"));
    check(issue(ctx, std::move(ops), [imm, has_idx, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
      size_t k = 3;
      return isa_match_replace8(c, o[0], o[1], o[2], imm, take_operand(has_idx, o, k), loc);
    }));
  });
  m.def("stream_shuffle", [](py::handle dst, py::handle src, std::vector<int64_t> mask) {
    ExecContext& ctx = instruction_exec("nc_stream_shuffle");
    check(issue<2>(ctx, {to_access(dst, "dst"), to_access(src, "src")},
                   [mask, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                     return isa_stream_shuffle(c, o[0], o[1], mask, loc);
                   }));
  });
  m.def("range_select", [](py::handle dst, py::handle on_true, const std::string& cmp0, const std::string& cmp1,
                           py::handle bound0, py::handle bound1, double start, double on_false, py::handle reduce_res) {
    ExecContext& ctx = instruction_exec("range_select");
    const BinaryOp c0 = parse_binary(cmp0), c1 = parse_binary(cmp1);
    std::vector<Access> ops{to_access(dst, "dst"), to_access(on_true, "on_true_tile"), to_access(bound0, "bound0"),
                            to_access(bound1, "bound1")};
    const bool has_res = push_operand(ops, opt_access(reduce_res, "reduce_res"));
    check(issue(ctx, std::move(ops),
                [c0, c1, start, on_false, has_res, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                  size_t k = 4;
                  return isa_range_select(c, o[0], o[1], c0, c1, o[2], o[3], start, on_false,
                                          take_operand(has_res, o, k), loc);
                }));
  });
  m.def("select_reduce", [](py::handle dst, py::handle pred, py::handle on_true, py::handle on_false, bool reverse,
                            py::handle reduce_res) {
    ExecContext& ctx = instruction_exec("select_reduce");
    ScalarOperand f = scalar_or_tile(on_false, "on_false");
    std::vector<Access> ops{to_access(dst, "dst"), to_access(pred, "predicate"), to_access(on_true, "on_true")};
    const bool has_tile = push_operand(ops, std::move(f.tile));
    const bool has_res = push_operand(ops, opt_access(reduce_res, "reduce_res"));
    check(issue(
        ctx, std::move(ops),
        [value = f.value, has_tile, has_res, reverse, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
          size_t k = 3;
          const std::optional<Access> tile = take_operand(has_tile, o, k);
          return isa_select_reduce(c, o[0], o[1], o[2], value, tile, reverse, take_operand(has_res, o, k), loc);
        }));
  });
  m.def("copy_predicated", [](py::handle dst, py::handle src, py::handle pred, bool reverse) {
    ExecContext& ctx = instruction_exec("tensor_copy_predicated");
    ScalarOperand s = scalar_or_tile(src, "src");
    std::vector<Access> ops{to_access(dst, "dst"), to_access(pred, "predicate")};
    const bool has_tile = push_operand(ops, std::move(s.tile));
    check(issue(ctx, std::move(ops),
                [value = s.value, has_tile, reverse, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                  size_t k = 2;
                  return isa_copy_predicated(c, o[0], take_operand(has_tile, o, k), value, o[1], reverse, loc);
                }));
  });
  m.def("gather_flattened", [](py::handle dst, py::handle data, py::handle indices) {
    ExecContext& ctx = instruction_exec("gather_flattened");
    check(issue<3>(ctx, {to_access(dst, "dst"), to_access(data, "data"), to_access(indices, "indices")},
                   [loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                     return isa_gather_flattened(c, o[0], o[1], o[2], loc);
                   }));
  });
  m.def("local_gather", [](py::handle dst, py::handle src, py::handle index, int64_t num_elem_per_idx,
                           std::optional<int64_t> num_valid_indices) {
    ExecContext& ctx = instruction_exec("local_gather");
    check(
        issue<3>(ctx, {to_access(dst, "dst"), to_access(src, "src_buffer"), to_access(index, "index")},
                 [num_elem_per_idx, num_valid_indices, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                   return isa_local_gather(c, o[0], o[1], o[2], num_elem_per_idx, num_valid_indices, loc);
                 }));
  });
  m.def("sequence_bounds", [](py::handle dst, py::handle segment_ids) {
    ExecContext& ctx = instruction_exec("sequence_bounds");
    check(issue<2>(ctx, {to_access(dst, "dst"), to_access(segment_ids, "segment_ids")},
                   [loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                     return isa_sequence_bounds(c, o[0], o[1], loc);
                   }));
  });
  m.def("nonzero_with_count", [](py::handle dst, py::handle src, int64_t index_offset, int64_t padding_val) {
    ExecContext& ctx = instruction_exec("nonzero_with_count");
    check(issue<2>(ctx, {to_access(dst, "dst"), to_access(src, "src")},
                   [index_offset, padding_val, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                     return isa_nonzero_with_count(c, o[0], o[1], index_offset, padding_val, loc);
                   }));
  });
  m.def("rng", [](py::handle dst, const std::string& engine) {
    ExecContext& ctx = exec_or_raise("rng");
    const std::optional<Engine> e = engine_from_name(engine);
    if (!e)
      raise(nki_error("nkia_unknown_engine", fmt::format("'{}' is not an engine", engine),
                      "pass engine=nisa.engine.vector or nisa.engine.gpsimd"));
    check(isa_rng(ctx, to_access(dst, "dst"), *e, caller_loc()));
  });
  m.def("rand_uniform", [](py::handle dst) {
    ExecContext& ctx = exec_or_raise("rand");
    check(isa_rand_uniform(ctx, to_access(dst, "dst"), caller_loc()));
  });
  m.def("set_rng_seed", [](py::handle seed) {
    ExecContext& ctx = exec_or_raise("set_rng_seed");
    check(isa_set_rng_seed(ctx, to_access(seed, "seed"), caller_loc()));
  });
  m.def("dropout", [](py::handle dst, py::handle data, py::handle prob) {
    ExecContext& ctx = exec_or_raise("dropout");
    check(isa_dropout(ctx, to_access(dst, "dst"), to_access(data, "data"), scalar_or_tile(prob, "prob"), caller_loc()));
  });
  m.def("tensor_scalar_cumulative", [](py::handle dst, py::handle src, const std::string& op0, const std::string& op1,
                                       py::handle imm0, py::handle imm1, const std::string& start) {
    ExecContext& ctx = exec_or_raise("tensor_scalar_cumulative");
    const CumulativeStart from = start == "load_reduce" ? CumulativeStart::kLoad
                                 : start == "reduce"    ? CumulativeStart::kContinue
                                                        : CumulativeStart::kReset;
    check(isa_tensor_scalar_cumulative(ctx, to_access(dst, "dst"), to_access(src, "src"), parse_binary(op0),
                                       parse_binary(op1), scalar_or_tile(imm0, "imm0"),
                                       scalar_or_tile(imm1, "imm1", 0, /*none_ok=*/true), from, caller_loc()));
  });
  m.def("dma_transpose_gather", [](py::handle dst, py::handle rows, py::handle index, bool skip_oob) {
    ExecContext& ctx = instruction_exec("dma_transpose");
    check(issue<3>(ctx, {to_access(dst, "dst"), to_access(rows, "src"), to_access(index, "index")},
                   [skip_oob, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                     return isa_dma_transpose_gather(c, o[0], o[1], o[2], skip_oob, loc);
                   }));
  });
  m.def(
      "dma_indirect",
      [](py::handle tile, py::handle rows, py::handle index, bool gather, bool skip_oob, const std::string& rmw) {
        ExecContext& ctx = instruction_exec("dma_copy");
        const std::optional<BinaryOp> op = rmw.empty() ? std::nullopt : std::optional<BinaryOp>(parse_binary(rmw));
        check(issue<3>(ctx,
                       {to_access(tile, gather ? "dst" : "src"), to_access(rows, gather ? "src" : "dst"),
                        to_access(index, "index")},
                       [gather, skip_oob, op, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                         return isa_dma_indirect(c, o[0], o[1], o[2], gather, skip_oob, loc, op);
                       }));
      },
      py::arg("tile"), py::arg("rows"), py::arg("index"), py::arg("gather"), py::arg("skip_oob"), py::arg("rmw") = "");
  m.def("partition_reduce", [](py::handle dst, const std::string& op, py::handle data) {
    ExecContext& ctx = instruction_exec("tensor_partition_reduce");
    const BinaryOp bop = parse_binary(op);
    check(issue<2>(ctx, {to_access(dst, "dst"), to_access(data, "data")},
                   [bop, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                     return isa_partition_reduce(c, o[0], bop, o[1], loc);
                   }));
  });
  m.def("memset", [](py::handle dst, double value, const std::string& engine) {
    ExecContext& ctx = instruction_exec("memset");
    const Engine e = parse_engine(engine);
    check(issue<1>(ctx, {to_access(dst, "dst")},
                   [value, e, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                     return isa_memset(c, o[0], value, e, loc);
                   }));
  });
  m.def("tensor_copy", [](py::handle dst, py::handle src, const std::string& engine) {
    ExecContext& ctx = instruction_exec("tensor_copy");
    const Engine e = parse_engine(engine);
    check(issue<2>(ctx, {to_access(dst, "dst"), to_access(src, "src")},
                   [e, loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                     return isa_tensor_copy(c, o[0], o[1], e, loc);
                   }));
  });
  // `t[...] = value`: the copy on the Vector engine, value being the source the compiler folds
  // into the instruction that produced it (no compiler-allocated tile in direct allocation).
  m.def("assign", [](py::handle dst, py::handle value) {
    ExecContext& ctx = instruction_exec("tensor_copy");
    Access d = to_access(dst, "dst"), v = to_access(value, "value");
    check(issue<2>(ctx, {std::move(d), std::move(v)}, [loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
      return isa_tensor_copy(c, o[0], o[1], Engine::kVector, loc);
    }));
  });
  // ---- Vector-engine fused instructions (nki/isa_vector.h) ------------------------------------
  m.def("reciprocal", [](py::handle dst, py::handle data) {
    ExecContext& ctx = instruction_exec("reciprocal");
    check(issue<2>(ctx, {to_access(dst, "dst"), to_access(data, "data")},
                   [loc = caller_loc()](ExecContext& c, std::span<const Access> o) {
                     return isa_reciprocal(c, o[0], o[1], loc);
                   }));
  });
  // operand0: a number or a [P, 1] tile; op0 and op1 binary operators (nl.add, nl.multiply, ...).
  m.def("scalar_tensor_tensor", [](py::handle dst, py::handle data, const std::string& op0, py::handle operand0,
                                   bool reverse0, const std::string& op1, py::handle data1, bool reverse1) {
    ExecContext& ctx = instruction_exec("scalar_tensor_tensor");
    const BinaryOp b0 = parse_binary(op0), b1 = parse_binary(op1);
    ScalarOperand s0 = scalar_or_tile(operand0, "operand0");
    std::vector<Access> ops{to_access(dst, "dst"), to_access(data, "data"), to_access(data1, "operand1")};
    const bool has_tile = push_operand(ops, std::move(s0.tile));
    check(issue(ctx, std::move(ops),
                [b0, b1, value = s0.value, has_tile, reverse0, reverse1, loc = caller_loc()](
                    ExecContext& c, std::span<const Access> o) {
                  size_t k = 3;
                  return isa_scalar_tensor_tensor(c, o[0], o[1], b0, ScalarOperand{value, take_operand(has_tile, o, k)},
                                                  reverse0, b1, o[2], reverse1, loc);
                }));
  });
}

}  // namespace nki_agent
