# cmake -DHOST=<plugboard-host> -DVERSION=<version> -DOUT=<file> -P HostManPage.cmake
#
# Writes the man page of plugboard-host from its --help text: the first line is the usage,
# the rest the description. plugboard-host has a few arguments and no options table, so its
# --help stays the one place they are written.
execute_process(COMMAND ${HOST} --help OUTPUT_VARIABLE help RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${HOST} --help failed: ${result}")
endif()
string(REPLACE "\\" "\\e" help "${help}")
string(REPLACE "-" "\\-" help "${help}")
string(REGEX REPLACE "\n\\." "\n\\\\&." help "${help}")
string(REGEX MATCH "^usage: [^\n]*" usage "${help}")
string(REPLACE "usage: " "" usage "${usage}")
string(FIND "${help}" "\n" first_newline)
math(EXPR description_start "${first_newline} + 1")
string(SUBSTRING "${help}" ${description_start} -1 description)
file(WRITE ${OUT} ".TH PLUGBOARD\\-HOST 1 \"\" \"plugboard ${VERSION}\" \"plugboard manual\"
.nh
.ad l
.SH NAME
plugboard\\-host \\- serve one plugin over the out\\-of\\-process protocol
.SH SYNOPSIS
${usage}
.SH DESCRIPTION
${description}.SH SEE ALSO
.BR plugboard (1)
")
