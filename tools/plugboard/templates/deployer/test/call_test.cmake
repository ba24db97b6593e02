# Calls the plugin of example/registry.toml through the plugboard CLI with the deployer
# @NAME@ and checks its answers:
#   cmake -DPLUGBOARD=<plugboard> -DDEPLOYERS=<directory holding @NAME@.so>
#         -DEXAMPLE=<this project's example/> -P call_test.cmake
function(expect_call args expected_code expected_output)
  execute_process(COMMAND ${PLUGBOARD} call @NAME@-example --plugins ${EXAMPLE}
                          --registry ${EXAMPLE}/registry.toml --deployers ${DEPLOYERS}
                          --args ${args}
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code STREQUAL "${expected_code}" OR NOT out MATCHES "${expected_output}")
    message(FATAL_ERROR "plugboard call @NAME@-example --args ${args}\n"
                        "exited ${code} (expected ${expected_code}) with\n${out}${err}\n"
                        "expected output matching: ${expected_output}")
  endif()
endfunction()

expect_call([[{"name":"plugboard"}]] 0 "^Succeeded\n  greeting = Hello, plugboard!\n$")
# Args without a string "name" fail the call.
expect_call([[{"name":42}]] 1 "^Failed: args.name must be a string\n$")
