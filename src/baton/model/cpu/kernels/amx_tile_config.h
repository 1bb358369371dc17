// The AMX tile configuration that LDTILECFG loads (Intel SDM, palette 1): the one layout
// baton's tile kernel and the benchmark's tile peak both use, eight tiles of 16 rows by
// 64 bytes (16 x 16 f32, or 16 x 32 bf16).
// Thread-safety: a plain value; the tile state it configures is per thread.
#pragma once

#include <cstdint>

namespace baton {

struct alignas(64) AmxTileConfig {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {};  // bytes a row, per tile
  std::uint8_t rows[16] = {};    // rows, per tile
};

// Tiles 0-7 at 16 rows of 64 bytes, the rest unused.
constexpr AmxTileConfig full_tiles_config() {
  AmxTileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.colsb[t] = 64;
    config.rows[t] = 16;
  }
  return config;
}

}  // namespace baton
