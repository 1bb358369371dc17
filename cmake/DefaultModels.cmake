# The models `make run` serves until trained default models exist: two tiny random chat
# models and one embedding model, written by `baton make-model` at build time into
# build/<preset>/default-models/ (seconds; random weights, so their text is noise).
set(baton_default_models_dir ${CMAKE_BINARY_DIR}/default-models)
set(baton_default_model_outputs "")
foreach(spec "chat-qwen2:qwen2:1" "chat-llama:llama:2" "embed-qwen3:qwen3:3")
  string(REPLACE ":" ";" parts ${spec})
  list(GET parts 0 name)
  list(GET parts 1 arch)
  list(GET parts 2 seed)
  set(dir ${baton_default_models_dir}/${name})
  add_custom_command(
    OUTPUT ${dir}/config.json
    COMMAND $<TARGET_FILE:baton> make-model --arch ${arch} --seed ${seed} --out ${dir} --force
    DEPENDS baton
    COMMENT "Writing the default model ${name} (baton make-model --arch ${arch})"
    VERBATIM)
  list(APPEND baton_default_model_outputs ${dir}/config.json)
endforeach()
add_custom_target(default_models ALL DEPENDS ${baton_default_model_outputs})
