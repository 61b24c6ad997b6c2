// Object emission, linking, loading; assembly and IR inspection.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tessera/runtime/kernel_abi.h"
#include "tessera/tir/stmt.h"
#include "test_util.h"

namespace tessera::codegen {
namespace {

using namespace tessera::ir;
using namespace tessera::tir;
using testing::AlignedArray;
using testing::Buf1D;
using testing::ModuleOf;

const DataType f32 = DataType::Float(32);
const DataType i32 = DataType::Int(32);

PrimFunc ScaleAdd(int64_t n, ForKind kind) {
  Buffer a = Buf1D("A", f32, n), b = Buf1D("B", f32, n), c = Buf1D("C", f32, n);
  Var i("i");
  PrimExpr v = BufferLoadNode::make(a, {i}) * 2.0f + BufferLoadNode::make(b, {i});
  return PrimFunc::make("scale_add", {a, b, c},
                        ForNode::make(i, 0, make_const(i32, n), kind, BufferStoreNode::make(c, v, {i})));
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "tessera-cg-test-XXXXXX").string();
    path = mkdtemp(t.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

TEST(CodegenExport, ObjectLinksToLoadableLibraryWithExtras) {
  const int64_t n = 4099;
  ModuleExtras extras;
  extras.graph_json = R"({"nodes": [], "note": "graph"})";
  extras.params_blob = std::string("\x00\x01\x02\xff params \x00 end", 18);
  std::string obj = EmitObject(ModuleOf(ScaleAdd(n, ForKind::kParallel)), driver::HostTarget(), extras);
  ASSERT_GE(obj.size(), 4u);
  EXPECT_EQ(obj.compare(0, 4, "\x7f" "ELF"), 0);
  TempDir dir;
  std::string so = (dir.path / "model.so").string();
  LinkSharedLibrary(obj, so);
  ASSERT_TRUE(std::filesystem::exists(so));

  runtime::Module m = runtime::Module::LoadFromFile(so);
  EXPECT_EQ(m.GraphJson(), extras.graph_json);
  EXPECT_EQ(m.ParamsBlob(), extras.params_blob);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m.Lookup(runtime::kParamsBlobSymbol)) % 64, 0u);
  EXPECT_EQ(*static_cast<int64_t*>(m.Lookup(runtime::kParamsSizeSymbol)), 18);
  EXPECT_NE(*static_cast<TesseraParallelLaunchFn*>(m.Lookup(runtime::kParallelLaunchSymbol)), nullptr);

  AlignedArray<float> a(n), b(n), c(n);
  a.FillUniform(-1, 1, 1);
  b.FillUniform(-1, 1, 2);
  void* args[] = {a.data(), b.data(), c.data()};
  ASSERT_EQ(m.GetKernel("scale_add")(args), 0);
  for (int64_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(c[i], a[i] * 2.0f + b[i]) << i;
}

TEST(CodegenExport, LinkFromObjectPathAndGlobalSymbolAttr) {
  PrimFunc f = ScaleAdd(64, ForKind::kSerial);
  f = PrimFunc::make(f->name, f->params, f->body, {{"global_symbol", "fused_scale_add"}});
  std::string obj = EmitObject(ModuleOf(f), driver::HostTarget());
  TempDir dir;
  std::string o = (dir.path / "k.o").string();
  std::ofstream(o, std::ios::binary).write(obj.data(), static_cast<std::streamsize>(obj.size()));
  std::string so = (dir.path / "k.so").string();
  LinkSharedLibrary(o, so);
  runtime::Module m = runtime::Module::LoadFromFile(so);
  EXPECT_TRUE(m.HasSymbol("fused_scale_add"));
  EXPECT_EQ(m.GraphJson(), "");
  EXPECT_EQ(m.ParamsBlob().size(), 0u);
}

TEST(CodegenExport, LinkErrorsAreUserErrors) {
  TempDir dir;
  EXPECT_THROW(LinkSharedLibrary((dir.path / "missing.o").string(), (dir.path / "x.so").string()), UserError);
  std::string bad = (dir.path / "bad.o").string();
  std::ofstream(bad) << "not an object file";
  try {
    LinkSharedLibrary(bad, (dir.path / "x.so").string());
    FAIL() << "linking garbage succeeded";
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("-shared -o"), std::string::npos) << msg;
    EXPECT_NE(msg.find("stderr"), std::string::npos) << msg;
  }
}

TEST(CodegenExport, Znver4AssemblyUsesZmmRegisters) {
  const int64_t n = 256;
  Buffer a = Buf1D("A", f32, n), b = Buf1D("B", f32, n), c = Buf1D("C", f32, n);
  Var i("i");
  PrimExpr idx = RampNode::make(i * 16, 1, 16);
  Stmt body = ForNode::make(i, 0, make_const(i32, n / 16), ForKind::kSerial,
                            BufferStoreNode::make(c, BufferLoadNode::make(a, {idx}) + BufferLoadNode::make(b, {idx}),
                                                  {idx}));
  target::Target t = driver::ResolveTarget("llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=znver4");
  std::string asm_text = EmitAssembly(ModuleOf(PrimFunc::make("vadd", {a, b, c}, body)), t);
  EXPECT_NE(asm_text.find("zmm"), std::string::npos) << asm_text;
  EXPECT_NE(asm_text.find("vaddps"), std::string::npos);
  // The plain scalar loop is vectorized by O3 with 512-bit registers too.
  std::string asm2 = EmitAssembly(ModuleOf(ScaleAdd(1024, ForKind::kSerial)), t);
  EXPECT_NE(asm2.find("zmm"), std::string::npos) << asm2;
}

TEST(CodegenExport, LLVMIRHasAbiAndRuntimeGlobals) {
  target::Target t = driver::ResolveTarget("llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=znver4");
  std::string ir = EmitLLVMIR(ModuleOf(ScaleAdd(100, ForKind::kParallel)), t, {}, {.opt_level = 0});
  EXPECT_NE(ir.find("define i32 @scale_add(ptr"), std::string::npos) << ir;
  EXPECT_NE(ir.find("@__tessera_parallel_launch = global ptr null"), std::string::npos) << ir;
  EXPECT_NE(ir.find("@__tessera_params_size = constant i64 0"), std::string::npos) << ir;
  EXPECT_NE(ir.find("llvm.loop.mustprogress"), std::string::npos);
  EXPECT_NE(ir.find("\"align\""), std::string::npos);  // alignment assumption
  std::string vec = EmitLLVMIR(ModuleOf(ScaleAdd(100, ForKind::kVectorized)), t, {}, {.opt_level = 0});
  EXPECT_NE(vec.find("llvm.loop.vectorize.enable"), std::string::npos) << vec;
  std::string unr = EmitLLVMIR(ModuleOf(ScaleAdd(8, ForKind::kUnrolled)), t, {}, {.opt_level = 0});
  EXPECT_NE(unr.find("llvm.loop.unroll.full"), std::string::npos) << unr;
  std::string opt = EmitLLVMIR(ModuleOf(ScaleAdd(100, ForKind::kSerial)), t);
  EXPECT_EQ(opt.find("reassoc"), std::string::npos);
  EXPECT_NE(opt.find("<16 x float>"), std::string::npos) << opt;
}

TEST(CodegenExport, UnloweredInputIsInternalError) {
  Buffer a = Buf1D("A", f32, 4);
  Var i("i");
  Stmt s = BufferStoreNode::make(a, CallNode::make(f32, "no_such_intrinsic", {PrimExpr(1.0f)}), {PrimExpr(0)});
  EXPECT_THROW(EmitLLVMIR(ModuleOf(PrimFunc::make("bad", {a}, s)), driver::HostTarget()), UnsupportedError);
  Stmt free_var = BufferStoreNode::make(a, PrimExpr(1.0f), {i});
  EXPECT_THROW(EmitLLVMIR(ModuleOf(PrimFunc::make("bad2", {a}, free_var)), driver::HostTarget()), InternalError);
}

}  // namespace
}  // namespace tessera::codegen
