#include "baton/turn/make_turn.h"

#include "baton/turn/concurrent_turn.h"
#include "baton/turn/partition_turn.h"
#include "baton/turn/serial_turn.h"

namespace baton {

std::unique_ptr<GpuTurn> make_turn(const TurnOptions& options, Stream& default_stream) {
  switch (options.policy) {
    case TurnPolicy::concurrent:
      return std::make_unique<ConcurrentTurn>();
    case TurnPolicy::serialize:
      return std::make_unique<SerialTurn>(default_stream, options);
    case TurnPolicy::partition:
      return std::make_unique<PartitionTurn>(options);
  }
  return std::make_unique<ConcurrentTurn>();
}

}  // namespace baton
