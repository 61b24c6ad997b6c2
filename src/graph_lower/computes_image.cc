// FComputes of image.resize -> topi::resize and image.grid_sample -> topi::grid_sample (op/image.cc).
#include "computes.h"
#include "tessera/topi/image/grid_sample.h"
#include "tessera/topi/image/resize.h"

namespace tessera::graph_lower::detail {

void RegisterImageComputes(graph::OpRegistry& r) {
  r.SetCompute("image.resize", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    topi::ResizeParams p;
    p.axes = a.GetInts("axes");
    p.sizes = a.GetInts("sizes");
    p.scales = a.GetDoubles("scales");
    if (a.Has("roi_start")) p.roi_start = a.GetDoubles("roi_start");
    if (a.Has("roi_end")) p.roi_end = a.GetDoubles("roi_end");
    p.mode = a.GetString("mode", p.mode);
    p.coordinate_transformation_mode = a.GetString("coordinate_transformation_mode", p.coordinate_transformation_mode);
    p.nearest_mode = a.GetString("nearest_mode", p.nearest_mode);
    p.cubic_coeff_a = a.GetDouble("cubic_coeff_a", p.cubic_coeff_a);
    p.exclude_outside = a.GetInt("exclude_outside", 0) != 0;
    p.extrapolation_value = a.GetDouble("extrapolation_value", 0.0);
    p.antialias = a.GetInt("antialias", 0) != 0;
    return {topi::resize(in[0], p)};
  });
  r.SetCompute("image.grid_sample", [](const Attrs& a, const Tensors& in, const Type&) -> Tensors {
    return {topi::grid_sample(in[0], in[1], a.GetString("mode", "linear"), a.GetString("padding_mode", "zeros"),
                              a.GetInt("align_corners", 0) != 0)};
  });
}

}  // namespace tessera::graph_lower::detail
