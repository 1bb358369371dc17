# baton_module(NAME DIRS dir... [DEPS module...] [ALLOWS dir...]): one folder (or a few)
# of src/baton as a static library `baton_NAME` that links the modules it DEPS on.
# Imports go one way: at configure time every `#include "baton/X/..."` of the module's
# files must name one of its own DIRS, a DIR of a module it depends on (directly or
# not), or an ALLOWS dir (included only under #ifdef, e.g. the CUDA backend); any other
# stops the configure with the file and the include.
function(baton_module name)
  cmake_parse_arguments(M "" "" "DIRS;DEPS;ALLOWS" ${ARGN})
  set(sources "")
  set(files "")
  foreach(dir IN LISTS M_DIRS)
    file(GLOB dir_sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/baton/${dir}/*.cpp)
    file(GLOB dir_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/baton/${dir}/*.cpp
         ${PROJECT_SOURCE_DIR}/src/baton/${dir}/*.h)
    list(APPEND sources ${dir_sources})
    list(APPEND files ${dir_files})
  endforeach()
  add_library(baton_${name} STATIC ${sources})
  target_include_directories(baton_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(baton_${name} PRIVATE baton_external baton_warnings)
  set(allowed ${M_DIRS} ${M_ALLOWS})
  foreach(dep IN LISTS M_DEPS)
    target_link_libraries(baton_${name} PUBLIC baton_${dep})
    get_property(dep_dirs GLOBAL PROPERTY baton_module_dirs_${dep})
    if(NOT DEFINED dep_dirs OR dep_dirs STREQUAL "")
      message(FATAL_ERROR "baton_module(${name}): declare module '${dep}' before it")
    endif()
    list(APPEND allowed ${dep_dirs})
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  # What depends on this module may include everything this module may.
  set_property(GLOBAL PROPERTY baton_module_dirs_${name} ${allowed})
  foreach(file IN LISTS files)
    file(STRINGS ${file} includes REGEX "^#include \"baton/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^#include \"baton/(.*)/[^/]*\".*$" "\\1" dir "${line}")
      if(NOT dir IN_LIST allowed)
        file(RELATIVE_PATH where ${PROJECT_SOURCE_DIR} ${file})
        message(FATAL_ERROR "${where}: ${line}: module '${name}' may include only "
                            "${allowed}; an import must go one way (docs/architecture.md)")
      endif()
    endforeach()
  endforeach()
endfunction()
