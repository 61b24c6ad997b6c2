#include "context.h"

namespace tessera::frontend::onnx_import {

std::string ConverterKey(const std::string& domain, const std::string& op_type) {
  return domain.empty() || domain == "ai.onnx" ? op_type : domain + ":" + op_type;
}

const Converter* FindConverter(const std::string& domain, const std::string& op_type) {
  static const ConverterTable* table = [] {
    auto* t = new ConverterTable();
    RegisterMathConverters(*t);
    RegisterNNConverters(*t);
    RegisterTensorConverters(*t);
    RegisterLogicConverters(*t);
    RegisterReduceConverters(*t);
    RegisterActivationConverters(*t);
    RegisterShapeConverters(*t);
    RegisterImageConverters(*t);
    RegisterConvTransposeConverters(*t);
    RegisterLossConverters(*t);
    RegisterAttentionConverters(*t);
    RegisterGatherScatterConverters(*t);
    RegisterQuantizeConverters(*t);
    RegisterEinsumConverters(*t);
    RegisterRotaryConverters(*t);
    RegisterTrainingConverters(*t);
    RegisterGradientConverters(*t);
    RegisterControlConverters(*t);
    RegisterCol2ImConverters(*t);
    RegisterCenterCropPadConverters(*t);
    RegisterAffineGridConverters(*t);
    RegisterMaxUnpoolConverters(*t);
    RegisterDetConverters(*t);
    RegisterImageDecoderConverters(*t);
    RegisterTfIdfConverters(*t);
    RegisterRandomConverters(*t);
    RegisterRoiAlignConverters(*t);
    RegisterDeformConvConverters(*t);
    RegisterTensorScatterConverters(*t);
    RegisterBitCastConverters(*t);
    RegisterDftConverters(*t);
    RegisterWindowConverters(*t);
    RegisterQLinearConverters(*t);
    RegisterCausalConvConverters(*t);
    RegisterLinearAttentionConverters(*t);
    RegisterRnnConverters(*t);
    RegisterSequenceConverters(*t);
    RegisterOptionalConverters(*t);
    RegisterDataDependentConverters(*t);
    RegisterMLConverters(*t);
    return t;
  }();
  auto it = table->find(ConverterKey(domain, op_type));
  return it == table->end() ? nullptr : &it->second;
}

}  // namespace tessera::frontend::onnx_import
