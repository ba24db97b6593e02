# Writes OUTPUT, a C++ source defining plugboard::cli::templateFiles() (scaffold.h): every
# file under TEMPLATES as {template, path, text}, where template is the first directory
# below TEMPLATES and path the rest. Run at build time:
#   cmake -DTEMPLATES=<dir> -DOUTPUT=<file.cc> -P embed_templates.cmake
set(delimiter "pb_template")  # at most 16 characters
file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE ${TEMPLATES} ${TEMPLATES}/*)
list(SORT files)
set(out "// Generated from tools/plugboard/templates/ by tools/plugboard/embed_templates.cmake.\n")
string(APPEND out "#include \"tools/plugboard/scaffold.h\"\n\nnamespace plugboard::cli {\n\n")
string(APPEND out "const std::vector<TemplateFile>& templateFiles() {\n")
string(APPEND out "  static const std::vector<TemplateFile> kFiles = {\n")
foreach(file IN LISTS files)
  string(FIND "${file}" "/" slash)
  string(SUBSTRING "${file}" 0 ${slash} kind)
  math(EXPR rest "${slash} + 1")
  string(SUBSTRING "${file}" ${rest} -1 path)
  file(READ ${TEMPLATES}/${file} text)
  string(FIND "${text}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${TEMPLATES}/${file} holds the raw string delimiter ${delimiter}")
  endif()
  string(APPEND out "      {\"${kind}\", \"${path}\", R\"${delimiter}(${text})${delimiter}\"},\n")
endforeach()
string(APPEND out "  };\n  return kFiles;\n}\n\n}  // namespace plugboard::cli\n")
# Rewritten only when it changes, so that an unchanged template rebuilds nothing.
file(WRITE ${OUTPUT}.new "${out}")
file(COPY_FILE ${OUTPUT}.new ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.new)
