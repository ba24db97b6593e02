# Calls @NAME@ through the plugboard CLI and checks its answers:
#   cmake -DPLUGBOARD=<plugboard> -DPLUGINS=<directory holding @NAME@.so> -P call_test.cmake
function(expect_call args expected_code expected_output)
  execute_process(COMMAND ${PLUGBOARD} call @NAME@ --plugins ${PLUGINS} --args ${args}
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code STREQUAL "${expected_code}" OR NOT out MATCHES "${expected_output}")
    message(FATAL_ERROR "plugboard call @NAME@ --args ${args}\n"
                        "exited ${code} (expected ${expected_code}) with\n${out}${err}\n"
                        "expected output matching: ${expected_output}")
  endif()
endfunction()

expect_call([[{"name":"plugboard"}]] 0 "^Succeeded\n  greeting = Hello, plugboard!\n$")
# Args without a string "name" fail the call.
expect_call([[{"name":42}]] 1 "^Failed: args.name must be a string\n$")
