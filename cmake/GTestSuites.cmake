# baton_add_gtest_suites(TARGET [TIMEOUT seconds] [FIRST suite...] [PROPERTIES ...]): one
# CTest test per GoogleTest suite of TARGET (`Suite.*`), found when ctest runs by `TARGET
# --gtest_list_tests`. One process per test, as gtest_discover_tests makes, paid a
# process start (0.3-0.4 s where the binary links cuBLAS) some 600 times per run; per
# suite it is paid some 120 times, and a failure still names its suite and prints the
# test's output. A suite whose every test skipped itself is reported as skipped (its
# program exits 77: tests/skip_aware_main.cpp; a failed test still fails it). The
# FIRST suites (the longest) start before the rest: on two cores a suite of minutes that
# starts last is a tail nothing else fills (a fresh clone has no CTest cost data).
function(baton_add_gtest_suites target)
  cmake_parse_arguments(arg "" "TIMEOUT" "PROPERTIES;FIRST" ${ARGN})
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 900)
  endif()
  set(script ${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake)
  string(REPLACE ";" " " properties "${arg_PROPERTIES}")
  string(REPLACE ";" "|" first "${arg_FIRST}")
  file(GENERATE OUTPUT ${script} CONTENT "
set(binary \"$<TARGET_FILE:${target}>\")
if(NOT EXISTS \"\${binary}\")
  add_test(${target}_NOT_BUILT \"\${binary}\")
  return()
endif()
execute_process(COMMAND \"\${binary}\" --gtest_list_tests
                OUTPUT_VARIABLE listing RESULT_VARIABLE status TIMEOUT 60)
if(NOT status EQUAL 0)
  message(FATAL_ERROR \"${target} --gtest_list_tests failed (\${status}):\\n\${listing}\")
endif()
string(REPLACE \"\\n\" \";\" lines \"\${listing}\")
foreach(line IN LISTS lines)
  if(line MATCHES \"^([^ #][^ ]*)\\\\.\")
    set(suite \"\${CMAKE_MATCH_1}\")
    add_test(\"\${suite}\" \"\${binary}\" \"--gtest_filter=\${suite}.*\")
    set_tests_properties(\"\${suite}\" PROPERTIES TIMEOUT ${arg_TIMEOUT}
      SKIP_RETURN_CODE 77 ${properties})
    if(\"\${suite}\" MATCHES \"^(${first})$\")
      set_tests_properties(\"\${suite}\" PROPERTIES COST 1000)
    endif()
  endif()
endforeach()
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
endfunction()
