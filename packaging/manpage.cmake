# Makes guard.1.gz: help2man over `guard --help` and `guard --version`, with a
# SUBCOMMANDS section holding each subcommand's own --help, verbatim, and the
# sections of manpage_sections.h2m (ENVIRONMENT, EXIT STATUS, EXAMPLES,
# FILES). Help is made 72 columns wide (help_format.h), so that the page
# reads within 80 with man's indentation.
#   cmake -DGUARD=path/to/guard -DHELP2MAN=help2man -DOUT=guard.1.gz -P manpage.cmake
get_filename_component(dir "${OUT}" DIRECTORY)
# help2man and CLI11 name the program by its argv[0]: a wrapper gives it
# "guard", not the build tree's path.
file(WRITE "${dir}/bin/guard" "#!/bin/bash\nexport COLUMNS=72\nexec -a guard \"${GUARD}\" \"$@\"\n")
file(CHMOD "${dir}/bin/guard" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
set(GUARD "${dir}/bin/guard")
execute_process(COMMAND "${GUARD}" --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "guard --help failed (${rc})")
endif()
# The subcommands are the indented words under "Subcommands:" (CLI11).
string(REGEX REPLACE ".*\nSubcommands:\n" "" list "${help}")
string(REGEX MATCHALL "(^|\n)  [a-z][a-z-]*" names "${list}")
set(extra "[SUBCOMMANDS]\n")
foreach(name ${names})
  string(STRIP "${name}" name)
  execute_process(COMMAND "${GUARD}" ${name} --help OUTPUT_VARIABLE sub RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "guard ${name} --help failed (${rc})")
  endif()
  # roff: a backslash is \e; a line starting with . or ' is protected by \&.
  string(REPLACE "\\" "\\e" sub "${sub}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" sub "${sub}")
  string(APPEND extra ".SS \"guard ${name}\"\n.nf\n${sub}\n.fi\n")
endforeach()
file(READ "${SECTIONS}" sections)
string(APPEND extra "${sections}")
file(WRITE "${dir}/guard.h2m" "${extra}")
execute_process(
  COMMAND "${HELP2MAN}" --no-info --section=1
          "--name=run a coding agent with every file change saved first"
          "--include=${dir}/guard.h2m" "--output=${dir}/guard.1" "${GUARD}"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed (${rc})")
endif()
execute_process(COMMAND gzip -9 -n -f "${dir}/guard.1" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip failed (${rc})")
endif()
