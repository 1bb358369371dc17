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

bool is_piece_size(int units, int align) {
  const int tiles = units / align;
  return units % align == 0 && (tiles & (tiles - 1)) == 0;
}

std::vector<int> piece_sizes(const PartCut& cut) {
  std::vector<int> sizes;
  for (int units = cut.align; units < cut.units; units *= 2) sizes.push_back(units);
  sizes.push_back(cut.units);
  return sizes;
}

}  // namespace baton
