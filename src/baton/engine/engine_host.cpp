#include "baton/engine/engine_host.h"

#include "baton/turn/make_turn.h"

namespace baton {

EngineHost::EngineHost(std::unique_ptr<Device> device, const TurnOptions& turn_options)
    : device_(std::move(device)), turn_(make_turn(turn_options, device_->default_stream())) {}

EngineHost::~EngineHost() { stop(); }

Engine& EngineHost::add_engine(const std::string& name, std::unique_ptr<Workload> workload) {
  if (workload->kind() == BurstKind::embed) {
    if (!embedding_executor_) embedding_executor_ = std::make_unique<Worker>("embedding-executor");
    engines_.push_back(std::make_unique<Engine>(name, std::move(workload), *embedding_executor_,
                                                device_->default_stream(), *turn_));
  } else {
    engines_.push_back(std::make_unique<Engine>(name, std::move(workload),
                                                device_->create_stream(name), *turn_));
  }
  return *engines_.back();
}

void EngineHost::stop() {
  for (auto& engine : engines_) engine->stop();
  if (embedding_executor_) embedding_executor_->stop();
}

}  // namespace baton
