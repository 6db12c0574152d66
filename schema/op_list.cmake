# Writes JET_OPS (schema/op_list.h) from model.fbs: one X(...) row per op type that a parameter
# table's `jet_op` attribute declares, in the order of union OpParams. Run at build time:
#   cmake -DFBS=schema/model.fbs -DOUT=<build>/.../op_list_generated.h -P schema/op_list.cmake
# A union member without the attribute, an attribute on a table the union does not name, or a row
# without its ten columns stops the build, naming the table.
cmake_minimum_required(VERSION 3.16)
file(READ "${FBS}" fbs)
# Comments out first: a `table` or a brace in a comment is not the schema's.
string(REGEX REPLACE "//[^\n]*" "" fbs "${fbs}")
# ";" separates CMake's list items: "|" stands for it from here on (field ends, and the separator
# of a table's op types inside jet_op).
string(REPLACE ";" "|" fbs "${fbs}")

string(REGEX MATCH "union OpParams[ \t\n]*{[^}]*}" union_text "${fbs}")
if(NOT union_text)
  message(FATAL_ERROR "${FBS}: no union OpParams")
endif()
string(REGEX REPLACE "union OpParams[ \t\n]*{([^}]*)}" "\\1" members "${union_text}")
string(REGEX REPLACE "[ \t\n]" "" members "${members}")
string(REPLACE "," ";" members "${members}")

string(REGEX MATCHALL "table[ \t\n]+[A-Za-z0-9_]+[ \t\n]*\\([ \t\n]*jet_op:[ \t\n]*\"[^\"]*\"[ \t\n]*\\)" declared "${fbs}")
set(tables_with_op)
foreach(d IN LISTS declared)
  string(REGEX REPLACE "table[ \t\n]+([A-Za-z0-9_]+).*" "\\1" table "${d}")
  string(REGEX REPLACE ".*jet_op:[ \t\n]*\"([^\"]*)\".*" "\\1" value "${d}")
  list(APPEND tables_with_op ${table})
  set(op_of_${table} "${value}")
endforeach()

set(rows "")
foreach(table IN LISTS members)
  if(table STREQUAL "")
    continue()
  endif()
  if(NOT DEFINED op_of_${table})
    message(FATAL_ERROR "${FBS}: union OpParams names ${table}, whose table has no jet_op attribute")
  endif()
  # One op type per ";"-separated part: ENUM, fn, Attrs, Name, in_place, layout, f32_params,
  # dtypes, backward, inputs. X() takes the table as its fourth column and the name as a string.
  string(REPLACE "|" ";" parts "${op_of_${table}}")
  foreach(part IN LISTS parts)
    string(REPLACE "," ";" cols "${part}")
    list(LENGTH cols n)
    if(NOT n EQUAL 10)
      message(FATAL_ERROR "${FBS}: ${table}'s jet_op \"${part}\" has ${n} columns, expected 10 "
              "(ENUM, fn, Attrs, Name, in_place, layout, f32_params, dtypes, backward, inputs)")
    endif()
    set(row "")
    set(i 0)
    foreach(c IN LISTS cols)
      string(STRIP "${c}" c)
      if(i EQUAL 3)
        set(row "${row}, ${table}, \"${c}\"")
      elseif(i EQUAL 0)
        set(row "${c}")
      else()
        set(row "${row}, ${c}")
      endif()
      math(EXPR i "${i} + 1")
    endforeach()
    string(APPEND rows "  X(${row}) \\\n")
  endforeach()
  list(REMOVE_ITEM tables_with_op ${table})
endforeach()
if(tables_with_op)
  message(FATAL_ERROR "${FBS}: ${tables_with_op} has a jet_op attribute but is not a member of union OpParams")
endif()

set(text "// Generated from schema/model.fbs's jet_op attributes by schema/op_list.cmake; edit those.\n")
string(APPEND text "#define JET_OPS(X) \\\n${rows}\n")
file(WRITE "${OUT}" "${text}")
