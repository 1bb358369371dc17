#include "baton/model/runner/model_runner.h"

namespace baton {

const char* part_name(LayerPart part) {
  switch (part) {
    case LayerPart::rows:
      return "rows";
    case LayerPart::qkv:
      return "qkv";
    case LayerPart::attention:
      return "attention";
    case LayerPart::out_proj:
      return "out_proj";
    case LayerPart::gate_up:
      return "gate_up";
    case LayerPart::down:
      return "down";
  }
  return "?";
}

}  // namespace baton
