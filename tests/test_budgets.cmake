# Every test's budget, and loadlab_finish_tests(), which each CMakeLists.txt
# that adds tests calls at its end (CMake 3.25 sets a test's properties
# only from the directory that added it).
#
# A budget is two numbers: the seconds the test takes on this project's
# machine (2 cores, the rest of `make test` beside it), which ctest reads
# as the test's COST to order the queue, and its TIMEOUT, past which ctest
# stops it and fails it. The tests named in LOADLAB_TEST_BUDGETS have
# their own; the others take their kind's default:
#
#   unit tests                  1 s     (TIMEOUT 300, set where they are added)
#   everything else             20 s    (TIMEOUT as set where it is added)
#   the sanitizer build's copy  twice the plain test's seconds
#
# tests/README.md lists the longest and why each needs its time. When a
# test's measured time grows past its budget's seconds, change the table
# (and the README's list) in the same commit.

# NAME SECONDS [TIMEOUT]; NAME as in the plain build (the sanitizer build's
# copy is asan/NAME; an asan/ line gives that copy its own budget). The
# seconds are those of a make test on 2026-12-06 (ctest's own figures)
# while other builds shared the machine: about 1.5 to 2 times an idle
# run's. Only their order matters to ctest; tests under 20 s are left out.
# test_shared_build_windows, test_hardening and asan/pe/wine_images were
# cut later that day (tests/README.md): theirs are the old figures scaled
# by what the cut took off on a loaded machine, until the next run; so are
# test_bisect, test_pg_replicas, test_agent_hostile and test_series (the
# second round).
set(LOADLAB_TEST_BUDGETS
  "integration/test_bisect 25"
  "agent/test_column_report 158"
  "agent/test_agent_fleet 154"
  "agent/test_agent_update 30"
  "agent/test_agent_hostile 30"
  "agent/test_shared_build_windows 120"
  "agent/test_no_compiler 126"
  "integration/test_pg_replicas 60"
  "agent/test_elf_report 103"
  "agent/test_office_report 102"
  "integration/test_ci_gate 100"
  "integration-pg/test_hardening 60"
  "agent/test_agent_update_service 96"
  "agent/test_churn 94"
  "agent/pe_pipeline 90"
  "agent/test_shared_build 87"
  "agent/test_calibrate 81"
  "agent/pe_reorder 73"
  "agent/test_agent_windows 57"
  "agent/test_agent_service 54"
  "agent/test_program_ab 53"
  "integration/test_reports 52"
  "integration/test_cli 49"
  "agent/test_program_elf 46"
  "agent/test_program_elf_ab 42"
  "integration/test_hardening 30"
  "pe/wine_images 39"
  "asan/pe/wine_images 5"
  "web/dashboard 39"
  "integration/test_webhooks 37"
  "agent/test_rounds_noise 36"
  "integration/test_pg_notify 35"
  "integration/test_cli_help_alerts_agents 35"
  "integration/test_bodies 32"
  "integration/test_pg_store 32"
  "integration-pg/test_blobs 31"
  "integration-pg/test_series 20"
  "integration/test_blobs 29"
  "integration-pg/test_queue 28"
  "pe/wine_loader 27"
  "wine/template 26"
  "integration-pg/test_reports 25"
  "integration/test_series 15"
  "integration-pg/test_auth 25"
  "unit/agent/measure/test_measure_common 24"
  "integration/test_compare_text 23"
  "agent/test_program_zlib 23"
  "style/layout 22"
  "integration-pg/test_bodies 22"
  "integration/test_calibration 22"
  "integration-pg/test_calibration 22"
  "integration/test_queue 22"
  "agent/test_program_windows 21"
  "integration/test_retention 21"
  "agent/test_program_zlib_windows 60"
  "web/layout 45"
)

# The tests that keep a core busy or more while they run (CPU-seconds of
# the test and everything it started, reaped as a child subreaper, at
# least 0.9 of its wall seconds on an idle machine; tests/README.md, "CPU
# or waiting"): ctest's PROCESSORS 2, so that make test's ctest, which
# runs one test more than there are cores (scripts/make-test.sh), runs
# nothing but one other test beside them. Their sanitizer copies too.
set(LOADLAB_TEST_TWO_CORES
  agent/test_column_report
  agent/test_office_report
  agent/test_churn
  agent/test_program_ab
  agent/pe_reorder
  agent/test_elf_report
  integration/test_ci_gate
  integration/test_pg_replicas
  pe/wine_images
  web/dashboard
)

# loadlab_finish_tests(): for every test of the calling directory:
# - COST: its budget's seconds, plus 10000 for the tests under the "wine"
#   lock, so that `ctest -j` starts those first (longest first): they run
#   one at a time, and that chain is the longest path of the run, which
#   the other tests fill beside it in the second slot;
# - TIMEOUT from the table, where it gives one;
# - PROCESSORS 2 for those of LOADLAB_TEST_TWO_CORES;
# - under the "wine" lock, the booted template prefix (fixture
#   [asan/]wine_template, LOADLAB_WINE_TEMPLATE), but for those named in
#   LOADLAB_WINE_OWN_BOOT: test_churn and test_measure check the runner's
#   own boot (agent/runner/wine.c), test_measure under ASan too;
# - in the sanitizer build, the label "plain-only" on the tests
#   without "sanitize" (the plain build runs them; make test's one ctest
#   over both builds leaves them out).
set(LOADLAB_WINE_OWN_BOOT ${LOADLAB_TEST_NS}agent/test_churn ${LOADLAB_TEST_NS}agent/test_measure)
function(loadlab_finish_tests)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(test ${tests})
    string(REGEX REPLACE "^asan/" "" base "${test}")
    get_test_property(${test} LABELS labels)
    get_test_property(${test} RESOURCE_LOCK locks)
    # The budget: the test's own line, else its kind's default.
    set(seconds "")
    set(timeout "")
    foreach(line ${LOADLAB_TEST_BUDGETS})
      string(REPLACE " " ";" fields "${line}")
      list(GET fields 0 name)
      if(name STREQUAL base AND seconds STREQUAL "")
        list(GET fields 1 seconds)
        list(LENGTH fields n)
        if(n GREATER 2)
          list(GET fields 2 timeout)
        endif()
      endif()
      if(name STREQUAL test AND NOT test STREQUAL base)
        list(GET fields 1 own_seconds)
      endif()
    endforeach()
    if(seconds STREQUAL "")
      if("unit" IN_LIST labels)
        set(seconds 1)
      else()
        set(seconds 20)
      endif()
    endif()
    if(NOT test STREQUAL base)
      if(DEFINED own_seconds)
        set(seconds ${own_seconds})
      else()
        math(EXPR seconds "${seconds} * 2")
      endif()
      unset(own_seconds)
    endif()
    set(cost ${seconds})
    if("wine" IN_LIST locks)
      math(EXPR cost "${seconds} + 10000")
      if(NOT test IN_LIST LOADLAB_WINE_OWN_BOOT AND NOT test STREQUAL "${LOADLAB_TEST_NS}wine/template")
        set_property(TEST ${test} APPEND PROPERTY FIXTURES_REQUIRED ${LOADLAB_TEST_NS}wine_template)
        set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT "LOADLAB_WINE_TEMPLATE=${LOADLAB_WINE_TEMPLATE}")
      endif()
    endif()
    set_property(TEST ${test} PROPERTY COST ${cost})
    if(base IN_LIST LOADLAB_TEST_TWO_CORES)
      set_property(TEST ${test} PROPERTY PROCESSORS 2)
    endif()
    if(NOT timeout STREQUAL "")
      set_property(TEST ${test} PROPERTY TIMEOUT ${timeout})
    endif()
    if(LOADLAB_SANITIZE AND NOT "sanitize" IN_LIST labels)
      set_property(TEST ${test} APPEND PROPERTY LABELS plain-only)
    endif()
  endforeach()
endfunction()
