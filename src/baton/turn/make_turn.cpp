#include "baton/turn/make_turn.h"

#include <stdexcept>

#include "baton/turn/concurrent_turn.h"
#include "baton/turn/host_turn.h"
#include "baton/turn/partition_turn.h"
#include "baton/turn/serial_turn.h"

namespace baton {

std::unique_ptr<GpuTurn> make_turn(const TurnOptions& options, Stream& default_stream,
                                   std::shared_ptr<HostSegment> segment) {
  const bool host = options.scope == TurnScope::host;
  switch (options.policy) {
    case TurnPolicy::concurrent:
      return std::make_unique<ConcurrentTurn>();
    case TurnPolicy::serialize:
      if (host) return std::make_unique<HostTurn>(default_stream, options, std::move(segment));
      return std::make_unique<SerialTurn>(default_stream, options);
    case TurnPolicy::partition:
      if (host) {
        throw std::invalid_argument(
            "the partition policy splits one process's device between its engines; it has no "
            "host scope (use --turn-scope process, or --policy serialize)");
      }
      return std::make_unique<PartitionTurn>(options);
  }
  return std::make_unique<ConcurrentTurn>();
}

}  // namespace baton
