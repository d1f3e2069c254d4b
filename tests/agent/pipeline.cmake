# The agent's experiment pipeline (agent/family/pipeline.c and the `pe`
# family, agent/family/pe/):
# a driver that runs pipeline_run() on a job file, and its end-to-end test
# under Wine. Included from tests/agent/CMakeLists.txt; calls nothing of
# the fleet side (agent/main.c is not in loadlab_agent_core).
add_executable(pipeline_driver ${CMAKE_CURRENT_LIST_DIR}/pipeline_driver.c)
target_link_libraries(pipeline_driver PRIVATE loadlab_agent_core)

# The column's job (10 DLLs x 20 exports x 2 globals, every variant, 3 warm
# runs) through the driver, under Wine; asserts what each variant's
# verification must show. Label "pe": it needs mingw-w64 and Wine.
add_test(NAME ${LOADLAB_TEST_NS}agent/pe_pipeline
  COMMAND ${LOADLAB_PYTHON} -B ${CMAKE_CURRENT_LIST_DIR}/test_pe_pipeline.py
          $<TARGET_FILE:pipeline_driver> ${CMAKE_CURRENT_BINARY_DIR}/pe_pipeline_work)
set_tests_properties(${LOADLAB_TEST_NS}agent/pe_pipeline PROPERTIES LABELS "agent;pe" TIMEOUT 300
  ENVIRONMENT "LOADLAB_SOURCE_DIR=${PROJECT_SOURCE_DIR};LOADLAB_BUILD_DIR=${PROJECT_BINARY_DIR};PYTHONPATH=${PROJECT_SOURCE_DIR}/tests/integration")
set_tests_properties(${LOADLAB_TEST_NS}agent/pe_pipeline PROPERTIES RESOURCE_LOCK wine)
