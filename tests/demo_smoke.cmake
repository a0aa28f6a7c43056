# ctest demo_smoke: runs zarrkit_demo (-DDEMO=path) on a tiny array. It must exit 0 (it exits
# 2 when a read returns values other than those written), print every section and the summary
# with a line per access pattern, and report how many reads it checked.
execute_process(
  COMMAND ${DEMO} --shape 8,24,40 --crops 6 --crop-size 5 --repeats 2 --cold-repeats 1 --threads 2
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "zarrkit_demo exited with ${rc}\n${out}\n${err}")
endif()
foreach(expected
    "1. One chunk shape for every pattern" "2. Chunks shaped for each pattern" "3. Cold reads by pattern"
    "4. Data that compresses" "5. Read" "Which layout wins which access pattern"
    "read all, noisy, warm" "z-planes, warm" "y-planes, cold" "x-planes, cold" "crops, cold"
    "read all, quantised, cold")
  string(FIND "${out}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "zarrkit_demo's output lacks \"${expected}\":\n${out}")
  endif()
endforeach()
if(NOT out MATCHES "verified: ([1-9][0-9]*) reads, ([1-9][0-9]*) values, every one equal to what was written")
  message(FATAL_ERROR "zarrkit_demo did not report its checks:\n${out}")
endif()
message(STATUS "zarrkit_demo checked ${CMAKE_MATCH_1} reads (${CMAKE_MATCH_2} values)")
