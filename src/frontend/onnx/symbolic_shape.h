// Shape values with symbolic entries (dynamic shapes): what ONNX's shape arithmetic computes from
// a tensor whose dims are symbolic (ImportOptions::keep_symbolic_dims).
//
// An exporter writes `x.view(b, s, 12, 64)` as Shape(x) -> Gather(i) -> Unsqueeze -> Concat ->
// Reshape, and `arange(s)` as Shape -> Gather -> Range. With static dims those fold at import
// (const_eval.h); with symbolic ones the importer keeps the value as a list of graph::Dim
// (Value::dims: static extents and symbol names) through the ops that only move elements, so
// that Reshape's shape and Range's limit are known at import up to the symbols, and the graph
// stays symbolic without any run-time shape computation (ONNX Runtime's symbolic shape inference
// and torch.compile's SymInts do the same).
//
// Element-moving ops (Gather, Unsqueeze, Squeeze, Concat, Slice, Reshape, Flatten, Identity) are
// run by their own converters' constant folding over a stand-in constant: each symbol is
// encoded as a sentinel integer no shape takes, decoded from the result. Cast keeps the dims.
// A -1 among the elements (`x.view(b, -1)`) is kept as the pseudo-dim "-1", which no symbol name
// can be (SymbolName), for Reshape to infer. Any other use of a symbolic shape value needs it as a run-time tensor (ShapeOf in the VM),
// which is an UnsupportedError naming the node (Value::dims, ExprOf).
#pragma once

#include "context.h"

namespace tessera::frontend::onnx_import {

/// Converts `node` when some input is a symbolic shape value and the op only moves elements (see
/// above); returns false otherwise, leaving the node to its converter.
bool ConvertShapeValueNode(ImportState& state, NodeContext& ctx, const Converter& convert);

}  // namespace tessera::frontend::onnx_import
