// Relay as a language in the graph IR (arXiv 1904.08368 §3): algebraic data types (TypeData,
// constructors, match), global functions that call each other (GlobalVar), closures — their text
// form (printer.h / parser.h round trips), their type inference (IncompleteType holes refined by
// Unify), the verifier, FreeVars and the prelude.
#include <gtest/gtest.h>

#include <string>

#include "tessera/graph/expr_util.h"
#include "tessera/graph/functor.h"
#include "tessera/graph/infer_type.h"
#include "tessera/graph/parser.h"
#include "tessera/graph/prelude.h"
#include "tessera/graph/printer.h"
#include "tessera/graph/verify.h"
#include "tessera/support/error.h"

namespace tessera::graph {
namespace {

const std::string kVec = "Tensor[(4,), float32]";

// Sums a list of [4] tensors recursively, builds one from %x, and picks an Option.
const std::string kProgram = PreludeText() + R"(
def @sum(%xs: List[Tensor[(4,), float32]], %zero: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
  match (%xs) {
    Cons(%h, %t) => add(%h, @sum(%t, %zero)),
    Nil => %zero,
  }
}

def @main(%x: Tensor[(4,), float32], %c: Tensor[(), bool]) {
  %0 = multiply(%x, 0f);
  let %l = Cons(%x, Cons(exp(%x), Nil()));
  let %o = if (%c) { Some(%l) } else { None() };
  %1 = match (%o) {
    Some(Cons(%first, _)) => %first,
    _ => %0,
  };
  add(@sum(%l, %0), %1)
}
)";

std::string StripTypes(std::string t) {
  for (size_t at; (at = t.find(" /* ty=")) != std::string::npos;) t.erase(at, t.find("*/", at) + 2 - at);
  return t;
}

// The UserError message of ParseModule(text), or "" when it parses.
std::string ParseError(const std::string& text) {
  try {
    ParseModule(text, "prog.ir");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "no '" << (needle) << "' in:\n" << (haystack)

TEST(ADT, ProgramWithTypesMatchesGlobalsAndClosuresRoundTripsThroughText) {
  const IRModule mod = ParseModule(kProgram, "prog.ir");
  const std::string text = PrintModule(mod);
  EXPECT_CONTAINS(text, "type List[A] {\n  Cons(A, List[A]),\n  Nil,\n}");
  EXPECT_CONTAINS(text, "type Option[A] {\n  Some(A),\n  None,\n}");
  EXPECT_CONTAINS(text, "match (%xs) {\n    Cons(%h, %t) => {");
  EXPECT_CONTAINS(text, "@sum(%t, %zero)");
  EXPECT_CONTAINS(text, "Some(Cons(%first, _)) => {");
  EXPECT_CONTAINS(text, "Nil() /* ty=List[_] */");
  EXPECT_CONTAINS(text, "%3 = Cons(%x, %2) /* ty=List[Tensor[(4,), float32]] */;\n  let %l = %3;");
  // A fixed point: the printed text parses back to a module that prints the same.
  EXPECT_EQ(PrintModule(ParseModule(text, "printed.ir")), text);
  EXPECT_TRUE(VerifyModule(mod, {.require_types = true}).empty());
}

TEST(ADT, ConstructorsBindTypeParamsFromTheirFieldsAndUnifyFillsTheRest) {
  const IRModule mod = ParseModule(kProgram, "prog.ir");
  // main: the let %l is a List of [4] tensors; Nil() alone is List[_]; the If joins Some(List[T])
  // with None() (Option[_]) into Option[List[T]].
  std::map<std::string, std::string> types;
  PostOrderVisit(mod.main()->body, [&](const Expr& e) {
    if (const auto* l = e->as<LetNode>()) types["%" + l->var->name_hint] = l->var->checked_type()->str();
    if (const auto* m = e->as<MatchNode>())
      for (const auto& c : m->clauses)
        for (const Var& v : c.pattern->BoundVars()) types["%" + v->name_hint] = v->checked_type()->str();
  });
  EXPECT_EQ(types["%l"], "List[" + kVec + "]");
  EXPECT_EQ(types["%o"], "Option[List[" + kVec + "]]");
  EXPECT_EQ(types["%first"], kVec);
  EXPECT_EQ(mod.main()->checked_type()->as<FuncTypeNode>()->ret_type->str(), kVec);
  // @sum's pattern variables: the head a tensor, the tail a list.
  PostOrderVisit(mod.Lookup("sum")->body, [&](const Expr& e) {
    if (const auto* m = e->as<MatchNode>())
      for (const auto& c : m->clauses)
        for (const Var& v : c.pattern->BoundVars()) types["%" + v->name_hint] = v->checked_type()->str();
  });
  EXPECT_EQ(types["%h"], kVec);
  EXPECT_EQ(types["%t"], "List[" + kVec + "]");
}

TEST(ADT, UnifyRefinesHolesAndRefusesConflicts) {
  const Type vec = TensorTypeNode::make(std::vector<int64_t>{4}, DataType::Float(32));
  const Type hole = ADTTypeNode::make("List", {IncompleteTypeNode::make()});
  const Type full = ADTTypeNode::make("List", {vec});
  EXPECT_EQ(Unify(hole, full)->str(), full->str());
  EXPECT_EQ(Unify(full, hole)->str(), full->str());
  EXPECT_EQ(Unify(full, full), full);
  EXPECT_EQ(Unify(full, ADTTypeNode::make("Option", {vec})), nullptr);
  EXPECT_EQ(Unify(full, ADTTypeNode::make("List", {TensorTypeNode::make(std::vector<int64_t>{5}, DataType::Float(32))})),
            nullptr);
  EXPECT_TRUE(IsIncomplete(hole));
  EXPECT_FALSE(IsIncomplete(full));
  // Nested: Option[(List[_], _)] with Option[(List[T], T)].
  const Type a = ADTTypeNode::make("Option", {TupleTypeNode::make({hole, IncompleteTypeNode::make()})});
  const Type b = ADTTypeNode::make("Option", {TupleTypeNode::make({full, vec})});
  EXPECT_EQ(Unify(a, b)->str(), b->str());
}

TEST(ADT, ClosuresCaptureFreeVariablesAndAreTypedAsFunctions) {
  const std::string text = R"(
def @main(%x: Tensor[(4,), float32]) {
  let %scale = fn (%y: Tensor[(4,), float32]) { multiply(%y, %x) };
  let %twice = fn (%f: fn (Tensor[(4,), float32]) -> Tensor[(4,), float32], %v: Tensor[(4,), float32]) {
    %f(%f(%v))
  };
  %twice(%scale, %x)
}
)";
  const IRModule mod = ParseModule(text, "closures.ir");
  EXPECT_EQ(mod.main()->checked_type()->as<FuncTypeNode>()->ret_type->str(), kVec);
  const auto* outer = mod.main()->body->as<LetNode>();
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->var->checked_type()->str(), "fn (" + kVec + ") -> " + kVec);
  // %scale captures %x; %twice captures nothing.
  const std::vector<Var> scale_free = FreeVars(*outer->value->as<FunctionNode>());
  ASSERT_EQ(scale_free.size(), 1u);
  EXPECT_EQ(scale_free[0]->name_hint, "x");
  const auto* inner = outer->body->as<LetNode>();
  ASSERT_NE(inner, nullptr);
  EXPECT_TRUE(FreeVars(*inner->value->as<FunctionNode>()).empty());
  EXPECT_EQ(PrintModule(ParseModule(PrintModule(mod), "printed.ir")), PrintModule(mod));
}

TEST(ADT, ARecursiveLetIsTypedByItsSignatureAndRoundTrips) {
  // A let-bound fn names itself in its body (a recursive closure, or a loop): its var is typed by the
  // signature; without a return type the recursive call is a type error asking for one.
  const std::string text = R"(
def @main(%n: Tensor[(), int64]) {
  let %count = fn (%k: Tensor[(), int64]) -> Tensor[(), int64] {
    if (equal(%k, 0i64)) { 0i64 } else { add(1i64, %count(subtract(%k, 1i64))) }
  };
  %count(%n)
}
)";
  const IRModule mod = ParseModule(text, "rec.ir");
  const auto* let = mod.main()->body->as<LetNode>();
  ASSERT_NE(let, nullptr);
  EXPECT_EQ(let->var->checked_type()->str(), "fn (Tensor[(), int64]) -> Tensor[(), int64]");
  EXPECT_TRUE(VerifyModule(mod, {.require_types = true}).empty());
  EXPECT_EQ(PrintModule(ParseModule(PrintModule(mod), "printed.ir")), PrintModule(mod));
  std::string untyped = text;
  untyped.erase(untyped.find(" -> Tensor[(), int64] {"), std::string(" -> Tensor[(), int64]").size());
  EXPECT_CONTAINS(ParseError(untyped), "variable %count has no type");
}

TEST(ADT, TypeErrorsNameWhatIsWrong) {
  const std::string head = PreludeText() + "def @main(%x: Tensor[(4,), float32]) {\n";
  EXPECT_CONTAINS(ParseError(head + "  Cons(%x, Cons(%x, %x))\n}\n"), "field 1 of Cons(");
  EXPECT_CONTAINS(ParseError(head + "  Cons(%x, Cons(%x, %x))\n}\n"), "where List expects List[Tensor[(4,), float32]]");
  EXPECT_CONTAINS(ParseError(head + "  Cons(%x)\n}\n"), "constructor Cons of type List takes 2 field(s), got 1");
  EXPECT_CONTAINS(ParseError(head + "  match (Some(%x)) { Cons(%h, _) => %h }\n}\n"),
                  "pattern Cons(...) of type List matches a value of type Option[Tensor[(4,), float32]]");
  EXPECT_CONTAINS(ParseError(head + "  match (Some(%x)) { Some(%h) => %h, None => Nil() }\n}\n"),
                  "match clauses have different types: clause 1 has List[_]");
  EXPECT_CONTAINS(ParseError(head + "  match (Some(%x)) { Some(%h, %k) => %h }\n}\n"),
                  "pattern Some has 2 sub-pattern(s); the constructor has 1 field(s)");
  EXPECT_CONTAINS(ParseError(head + "  Cons\n}\n"), "constructor Cons used as a value");
  EXPECT_CONTAINS(ParseError(head + "  @nowhere(%x)\n}\n"), "unknown global function @nowhere");
  EXPECT_CONTAINS(ParseError(head + "  let %l: Tree = Nil();\n  %x\n}\n"), "unknown type 'Tree'");
  EXPECT_CONTAINS(ParseError(head + "  let %l: List = Nil();\n  %x\n}\n"), "type List takes 1 type argument(s), got 0");
  EXPECT_CONTAINS(ParseError("type Bad[A] { Leaf(B) }\n"), "unknown type 'B'");
  try {
    TypeDataNode::make("Bad", {"A"}, {{"Leaf", {TypeVarNode::make("B")}}});
    ADD_FAILURE() << "no error for a constructor naming an undeclared type parameter";
  } catch (const UserError& e) {
    EXPECT_CONTAINS(e.what(), "names the type parameter B, which Bad does not declare");
  }
  EXPECT_CONTAINS(ParseError(PreludeText() + "type Other { Nil }\n"),
                  "constructor Nil of type Other is also a constructor of type List");
  // A recursive global needs its return type.
  EXPECT_CONTAINS(ParseError("def @f(%x: Tensor[(4,), float32]) { @f(%x) }\n"),
                  "@f is called recursively and has no return type");
  // A closure called with an argument of another type.
  EXPECT_CONTAINS(
      ParseError("def @main(%x: Tensor[(4,), float32]) {\n  let %f = fn (%y: Tensor[(2,), float32]) { %y };\n  %f(%x)\n}\n"),
      "does not match parameter type Tensor[(2,), float32]");
}

TEST(ADT, MutualRecursionBetweenGlobalsTypeChecksWithDeclaredReturnTypes) {
  // @even / @odd over a List (its length's parity), each naming the other before it is defined.
  const std::string text = PreludeText() + R"(
def @even(%l: List[Tensor[(), bool]]) -> Tensor[(), bool] {
  match (%l) {
    Cons(_, %t) => @odd(%t),
    Nil => True,
  }
}

def @odd(%l: List[Tensor[(), bool]]) -> Tensor[(), bool] {
  match (%l) {
    Cons(_, %t) => @even(%t),
    Nil => False,
  }
}

def @main(%b: Tensor[(), bool]) {
  @even(Cons(%b, Cons(%b, Nil())))
}
)";
  const IRModule mod = ParseModule(text, "parity.ir");
  EXPECT_EQ(mod.main()->checked_type()->as<FuncTypeNode>()->ret_type->str(), "Tensor[(), bool]");
  EXPECT_TRUE(VerifyModule(mod, {.require_types = true}).empty());
  EXPECT_EQ(PrintModule(ParseModule(PrintModule(mod), "printed.ir")), PrintModule(mod));
}

TEST(ADT, VerifierNamesUnknownGlobalsAndDoublyBoundPatternVariables) {
  IRModule mod;
  AddPrelude(&mod);
  const Type vec = TensorTypeNode::make(std::vector<int64_t>{4}, DataType::Float(32));
  Var x = VarNode::make("x", vec);
  mod.Add("main", FunctionNode::make({x}, CallNode::make(GlobalVarNode::make("missing"), {x})));
  const auto problems = VerifyModule(mod);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "@main: @missing names no function of the module");

  Var h = VarNode::make("h");
  Constructor cons = mod.FindConstructor("Cons");
  ASSERT_NE(cons, nullptr);
  EXPECT_EQ(cons->tag, 0);
  EXPECT_EQ(mod.FindConstructor("None")->tag, 1);
  ClausePattern twice = ClausePatternNode::Ctor(cons, {ClausePatternNode::Bind(h), ClausePatternNode::Bind(h)});
  Expr list = CallNode::make(cons, {x, CallNode::make(mod.FindConstructor("Nil"), {})});
  IRModule bad = IRModule::WithTypesOf(mod);
  bad.Add("main", FunctionNode::make({x}, MatchNode::make(list, {{twice, h}})));
  const auto p2 = VerifyModule(bad);
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_EQ(p2[0], "@main: pattern binds %h twice");
  // A constructor of a type the module does not define.
  IRModule untyped;
  untyped.Add("main", FunctionNode::make({x}, list));
  EXPECT_CONTAINS(VerifyModule(untyped).at(0), "constructor Cons of type List, which the module does not define");
}

TEST(ADT, TypeDefinitionsSurviveEveryPassThatRebuildsTheModule) {
  IRModule mod = ParseModule(kProgram, "prog.ir");
  IRModule typed = InferType(mod);
  EXPECT_NE(typed.FindTypeDef("List"), nullptr);
  EXPECT_NE(typed.FindTypeDef("Option"), nullptr);
  EXPECT_EQ(StripTypes(PrintModule(typed)), StripTypes(PrintModule(mod)));
}

}  // namespace
}  // namespace tessera::graph
