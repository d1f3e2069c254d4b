# The agent's `pe` experiment pipeline (agent/pipeline.c, agent/pe_*.c):
# a driver that runs pipeline_run() on a job file, and its end-to-end test
# under Wine. Included from tests/agent/CMakeLists.txt; needs nothing of
# the fleet side, so it builds whatever state agent/main.c is in.
set(PIPELINE_AGENT_DIR ${PROJECT_SOURCE_DIR}/agent)
file(GLOB PIPELINE_AGENT_SOURCES CONFIGURE_DEPENDS
     ${PIPELINE_AGENT_DIR}/pipeline.c ${PIPELINE_AGENT_DIR}/pe_*.c ${PIPELINE_AGENT_DIR}/measure_*.c ${PIPELINE_AGENT_DIR}/churn.c)
add_executable(pipeline_driver ${CMAKE_CURRENT_LIST_DIR}/pipeline_driver.c ${PIPELINE_AGENT_SOURCES})
target_include_directories(pipeline_driver PRIVATE ${PIPELINE_AGENT_DIR})
target_link_libraries(pipeline_driver PRIVATE loadlab_common PkgConfig::CRYPTO)

# The column's job (10 DLLs x 20 exports x 2 globals, every variant, 3 warm
# runs) through the driver, under Wine; asserts what each variant's
# verification must show. Label "pe": it needs mingw-w64 and Wine.
add_test(NAME agent/pe_pipeline
  COMMAND ${LOADLAB_PYTHON} -B ${CMAKE_CURRENT_LIST_DIR}/test_pe_pipeline.py
          $<TARGET_FILE:pipeline_driver> ${CMAKE_CURRENT_BINARY_DIR}/pe_pipeline_work)
set_tests_properties(agent/pe_pipeline PROPERTIES LABELS "agent;pe" TIMEOUT 300
  ENVIRONMENT "LOADLAB_SOURCE_DIR=${PROJECT_SOURCE_DIR};LOADLAB_BUILD_DIR=${PROJECT_BINARY_DIR};PYTHONPATH=${PROJECT_SOURCE_DIR}/tests/integration")
set_tests_properties(agent/pe_pipeline PROPERTIES RESOURCE_LOCK wine)
